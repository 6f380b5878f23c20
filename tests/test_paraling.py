"""SpeechParaling-Bench: queries, play order, scoring arithmetic, chat and offline judges."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import soundfile as sf
from conftest import tone
from judge_server import chat_body, reply
from scipy import stats
from test_judges import audio_parts, decode_wav, texts

from speech_drame.judges import ChatClient
from speech_drame.protocols.paraling.judges import (
    ChatPairJudge,
    OfflineComparator,
    presentation_orders,
)
from speech_drame.protocols.paraling.protocol import build_report, run_paraling
from speech_drame.protocols.paraling.queries import (
    Query,
    build_query,
    load_queries,
    write_queries,
)
from speech_drame.protocols.paraling.scoring import (
    Judgment,
    UnitResult,
    group_scores,
    position_bias,
    weighted_baseline,
    winner_role,
)
from speech_drame.scorers.base import ClipInput

# --- queries -------------------------------------------------------------------------------


def test_builder_uses_the_fixed_prefix_for_the_reading_tasks():
    common = build_query({"id": "a", "task": "paralanguage_control", "subtask": "common",
                          "sentence": "It is late.", "dimensions": {"emotion": "angry",
                                                                     "volume": "loud"}})  # fmt: skip
    assert common.instruction == (
        "Please read this sentence with an angry emotion and a loud volume: It is late."
    )
    assert common.dimensions == ("emotion", "volume") and common.targets["volume"] == "loud"
    abstract = build_query({"id": "b", "task": "paralanguage_control", "subtask": "abstract",
                            "sentence": "Hi.", "style": "a sleepy, dreamy voice"})  # fmt: skip
    assert abstract.instruction == "Please read this sentence in a sleepy, dreamy voice: Hi."
    trans = build_query({"id": "c", "task": "dynamic_variation", "subtask": "transitional",
                         "sentence": "Oh no.", "dimension": "emotion", "from": "calm",
                         "to": "scared"})  # fmt: skip
    assert trans.instruction == (
        "Please read this sentence with the emotion changing from calm to scared: Oh no."
    )
    prog = build_query({"id": "d", "task": "dynamic_variation", "subtask": "progressive",
                        "sentence": "Go.", "dimension": "speed", "from": "slow", "to": "fast",
                        "direction": "increase"})  # fmt: skip
    assert prog.instruction == (
        "Please read this sentence with the speed increasing from slow to fast: Go."
    )
    situ = build_query({"id": "e", "task": "situational_adaptation", "utterance": " Ugh, again? ",
                        "dimensions": {"attitude": "annoyed"}})  # fmt: skip
    assert situ.instruction == "Ugh, again?" and situ.sentence == "" and situ.audio is None


@pytest.mark.parametrize(
    "spec,match",
    [
        ({"id": "x", "task": "karaoke"}, "no reading instruction"),
        ({"id": "x", "task": "dynamic_variation", "subtask": "transitional", "sentence": "a",
          "dimension": "pitch", "from": "high", "to": "high"}, "two distinct"),
        ({"id": "x", "task": "dynamic_variation", "subtask": "progressive", "sentence": "a",
          "dimension": "pitch", "from": "low", "to": "high", "direction": "up"}, "direction"),
        ({"id": "x", "task": "paralanguage_control", "subtask": "common", "sentence": "",
          "dimensions": {"speed": "fast"}}, "needs the sentence"),
        ({"task": "paralanguage_control"}, "without an id"),
    ],
)  # fmt: skip
def test_builder_rejects_incomplete_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        build_query(spec)


@pytest.mark.parametrize("bad", ["../outside", "/tmp/abs", "a/b", ".."])
def test_query_ids_that_are_not_file_names_are_refused(tmp_path, bad):
    spec = {"id": bad, "task": "paralanguage_control", "subtask": "abstract",
            "sentence": "Hi.", "style": "a calm voice"}  # fmt: skip
    with pytest.raises(ValueError, match=r"query id .* cannot be a file name"):
        build_query(spec)
    good = build_query({**spec, "id": "q1"}).to_dict()
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": bad}) + "\n")
    with pytest.raises(ValueError, match=r"q\.jsonl:2: .*cannot be a file name"):
        load_queries(path)


def test_cli_build_speak_refuses_an_id_that_leaves_the_folder(tmp_path, capsys):
    from speech_drame.cli import main

    spec = {"id": "../escaped", "task": "paralanguage_control", "subtask": "abstract",
            "sentence": "Hi there.", "style": "a calm voice"}  # fmt: skip
    (tmp_path / "specs.jsonl").write_text(json.dumps(spec) + "\n")
    speak = tmp_path / "spoken"
    argv = ["paraling", "build", str(tmp_path / "specs.jsonl"), "--out",
            str(tmp_path / "q.jsonl"), "--speak", str(speak)]  # fmt: skip
    assert main(argv) == 2
    assert "'../escaped' cannot be a file name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["specs.jsonl"]


def test_query_files_round_trip_with_relative_audio(tmp_path):
    q = build_query({"id": "e", "task": "situational_adaptation", "utterance": "Hello?",
                     "dimensions": {"age": "child"}})  # fmt: skip
    audio = tmp_path / "audio" / "e.wav"
    audio.parent.mkdir()
    sf.write(audio, tone(0.5), 16_000)
    path = write_queries([Query(**{**q.to_dict(), "dimensions": ("age",), "audio": str(audio)})],
                         tmp_path / "sub" / "queries.jsonl")  # fmt: skip
    assert json.loads(path.read_text())["audio"] == "../audio/e.wav"
    (back,) = load_queries(path)
    assert back.audio is not None and sf.info(back.audio).frames == 8000
    assert back.dimensions == ("age",) and back.instruction == "Hello?"
    path.write_text(path.read_text() + path.read_text())
    with pytest.raises(ValueError, match="duplicate query ids"):
        load_queries(path)
    path.write_text('{"id": "z", "task": "situational_adaptation", "dimensions": ["age"]}\n')
    with pytest.raises(ValueError, match=r"queries\.jsonl:1: .*instruction"):
        load_queries(path)


# --- order -------------------------------------------------------------------------------


def test_order_is_reproducible_balanced_and_seed_dependent():
    ids = [f"q{i:02d}" for i in range(21)]
    a = presentation_orders(ids, "model-x", seed=7)
    assert a == presentation_orders(list(reversed(ids)), "model-x", seed=7)
    assert sum(a.values()) == 10  # exactly half (rounded down) put the baseline first
    assert a != presentation_orders(ids, "model-x", seed=8)
    assert a != presentation_orders(ids, "model-y", seed=7)
    # over many seeds every query is played baseline-first about half the time
    share = np.mean([list(presentation_orders(ids, "m", s).values()) for s in range(400)], 0)
    assert np.all(np.abs(share - 10 / 21) < 0.1)


def test_winner_index_maps_back_to_the_systems():
    assert winner_role(0, True) == winner_role(0, False) == "tie"
    assert winner_role(1, True) == "baseline" and winner_role(2, True) == "candidate"
    assert winner_role(1, False) == "candidate" and winner_role(2, False) == "baseline"
    with pytest.raises(ValueError, match="not in 0, 1, 2"):
        winner_role(3, True)


# --- scoring -------------------------------------------------------------------------------


def position_of(winner, baseline_first):
    """The play-order winner index of a system-role winner (None for a failed verdict)."""
    if winner is None:
        return None
    return 0 if winner == "tie" else (1 if (winner == "baseline") == baseline_first else 2)


def judgments(candidate, winners, task="paralanguage_control", dims=("emotion",)):
    """One-unit judgments with the given winners (None = failed verdict); even queries are
    played baseline first."""
    out = []
    for i, w in enumerate(winners):
        baseline_first = i % 2 == 0
        unit = UnitResult(dims, w, position_of(w, baseline_first))
        error = None if w else "not valid JSON"
        out.append(Judgment(f"q{i}", task, dims, candidate, baseline_first, [unit], error=error))
    return out


def test_points_ties_failures_and_the_weighted_baseline_by_hand():
    # strong: 3 wins + 1 tie = 3.5 / 4; weak: 1 tie = 0.5 / 4 with one failed verdict excluded
    js = judgments("strong", ["candidate", "candidate", "tie", "candidate"])
    js += judgments("weak", ["baseline", "tie", "baseline", "baseline", None])
    group = group_scores(js, lambda j, u: [j.task], "skip")["paralanguage_control"]
    assert group["candidates"]["strong"] == {
        "points": 3.5, "n": 4, "valid": 4, "failures": 0, "score": 87.5}  # fmt: skip
    assert group["candidates"]["weak"] == {
        "points": 0.5, "n": 4, "valid": 4, "failures": 1, "score": 12.5}  # fmt: skip
    # baseline: 12.5 % against strong, 87.5 % against weak; weights 3.5/4 and 0.5/4
    assert group["baseline"]["pairwise"] == {"strong": 12.5, "weak": 87.5}
    assert group["baseline"]["weights"] == {"strong": 0.875, "weak": 0.125}
    assert group["baseline"]["score"] == pytest.approx(12.5 * 0.875 + 87.5 * 0.125)  # 21.875
    # the unweighted mean would be 50: beating a weak candidate counts for less
    assert group["baseline"]["score"] < 50


def test_weighted_baseline_edge_cases():
    assert weighted_baseline({"a": 40.0, "b": 100.0}, {"a": 6.0, "b": 2.0}) == pytest.approx(
        40 * 0.75 + 100 * 0.25
    )
    # every candidate at 0 points: equal weights (the released scorer), not 0/0
    assert weighted_baseline({"a": 100.0, "b": 50.0}, {"a": 0.0, "b": 0.0}) == 75.0
    assert math.isnan(weighted_baseline({}, {}))
    with pytest.raises(ValueError, match="candidates differ"):
        weighted_baseline({"a": 1.0}, {"b": 1.0})


@pytest.mark.parametrize("failed_as", ["loss", "skip"])
def test_a_baseline_that_wins_every_verdict_scores_100(failed_as):
    """Every candidate at 0 points: equation 3 takes equal weights, and the baseline has 100."""
    js = judgments("a", ["baseline", "baseline"]) + judgments("b", ["baseline", None])
    group = group_scores(js, lambda j, u: ["all"], failed_as)["all"]
    assert group["baseline"]["score"] == 100.0 and "equal" in group["baseline"]["note"]
    assert group["baseline"]["weights"] == {"a": 0.5, "b": 0.5}
    assert {c: s["score"] for c, s in group["candidates"].items()} == {"a": 0.0, "b": 0.0}


def test_scores_stay_in_0_100_and_group_by_dimension():
    rng = np.random.default_rng(0)
    js = []
    for c in ("a", "b", "c"):
        outcomes = rng.choice(["baseline", "candidate", "tie"], size=30).tolist()
        js += judgments(c, outcomes, dims=("emotion", "speed"))
        js += judgments(c, outcomes[:10], task="dynamic_variation", dims=("pitch",))
    report = build_report(js, "base")
    assert (
        report["failed_as"]["value"] == "loss" and "released" in report["failed_as"]["definition"]
    )
    for group in [*report["by_task"].values(), *report["by_dimension"].values()]:
        scores = [s["score"] for s in group["candidates"].values()] + [group["baseline"]["score"]]
        assert all(0.0 <= s <= 100.0 for s in scores)
        assert sum(group["baseline"]["weights"].values()) == pytest.approx(1.0)
    assert set(report["by_dimension"]) == {"emotion", "speed", "pitch"}
    assert report["by_dimension"]["emotion"] == report["by_task"]["paralanguage_control"]
    assert report["overall"]["candidates"]["a"]["n"] == 40


def test_position_bias_counts_first_played_wins():
    js = [
        Judgment(str(i), "t", ("d",), "c", first, [UnitResult(("d",), w, position_of(w, first))])
        for i, (first, w) in enumerate(
            [(True, "baseline"), (False, "candidate"), (True, "candidate"), (False, "tie")]
        )
    ]
    js.append(Judgment("5", "t", ("d",), "c", True, [UnitResult(("d",))], error="refusal"))
    bias = position_bias(js)
    assert bias == {"n": 4, "first_wins": 2, "second_wins": 1, "ties": 1,
                    "first_win_rate": pytest.approx(2 / 3), "baseline_first_share": 0.5}  # fmt: skip


def test_human_ranking_agreement_is_spearman_over_the_rated_systems():
    rng = np.random.default_rng(3)
    js = []
    for c in ("a", "b", "c", "d"):
        js += judgments(c, rng.choice(["baseline", "candidate", "tie"], size=20).tolist())
    overall = build_report(js, "base")["overall"]
    auto = {**{c: s["score"] for c, s in overall["candidates"].items()},
            "base": overall["baseline"]["score"]}  # fmt: skip
    human = {"a": 3.0, "b": 1.0, "c": 4.0, "d": 2.0, "base": 2.5}
    got = build_report(js, "base", human)["human_agreement"]
    names = sorted(human)
    ref = stats.spearmanr([auto[k] for k in names], [human[k] for k in names]).statistic
    assert got["spearman"] == pytest.approx(ref) and got["n_systems"] == 5
    with pytest.raises(ValueError, match="did not score"):
        build_report(js, "base", {"zzz": 1.0, "a": 2.0})


def _refuse_nan(name):
    raise ValueError(f"bare {name} in the run JSON")


def test_undefined_statistics_are_null_with_a_reason_and_never_lose_the_run(tmp_path):
    from speech_drame.protocols.paraling.protocol import ParalingRun

    js = judgments("a", ["candidate", "tie"]) + judgments("b", [None, None])  # b: all failed
    lost = build_report(js, "base", {"a": 3.0, "b": 1.0, "base": 2.0})  # released: b lost all
    assert lost["overall"]["candidates"]["b"]["score"] == 0.0
    assert "every unit counted as a loss" in lost["overall"]["candidates"]["b"]["note"]
    report = build_report(js, "base", {"a": 3.0, "b": 1.0, "base": 2.0}, failed_as="skip")
    assert report["overall"]["candidates"]["b"]["note"] == "no valid verdict"
    assert math.isnan(report["human_agreement"]["spearman"])
    assert "no automatic score for b" in report["human_agreement"]["note"]
    run = ParalingRun("base", ["a", "b"], "offline", 0, "skip", js, report)
    doc = json.loads(run.write(tmp_path / "run.json").read_text(), parse_constant=_refuse_nan)
    assert doc["report"]["overall"]["candidates"]["b"]["score"] is None
    assert doc["report"]["human_agreement"]["spearman"] is None
    empty = build_report(judgments("a", [None]), "base", {"a": 1.0, "base": 2.0}, failed_as="skip")
    assert empty["grounded_share_note"] == "no valid verdict"
    assert empty["position_bias"]["note"] == "no valid verdict"
    assert "undefined" in empty["human_agreement"]["note"]


# --- chat judge --------------------------------------------------------------------------


def prompt_text(payload):
    return "".join(p.get("text", "") for p in payload["messages"][1]["content"])


def target_dimensions(payload):
    """The verdict units the chat prompt lists under "Target dimensions:"."""
    lines = prompt_text(payload).split("Target dimensions:\n", 1)[1].splitlines()
    return [line[2:].split(" (", 1)[0] for line in lines[: lines.index("")]]


def verdict(labels, winner=1, scores=(3, 1)):
    """A chat verdict giving every unit in ``labels`` the same scores and winner."""
    block = {"score_1": scores[0], "score_2": scores[1], "winner": winner}
    return {"response_1": "Response 1 rises in pitch at 0.4-0.9 s.",
            "response_2": "Response 2 stays flat throughout.",
            "comparison": "Pitch: response 1 is higher, a significant difference.",
            "verdicts": {label: dict(block) for label in labels}}  # fmt: skip


def answering(winner=1):
    """A route answering every query with ``winner`` on each unit its prompt lists."""
    return lambda p, n: reply(chat_body(json.dumps(verdict(target_dimensions(p), winner))))


P1 = verdict(["pitch"])  # the first query judged below has one unit, pitch
BAD_VERDICTS = {
    "malformed": chat_body('{"response_1": "x", "verdicts": '),
    "refusal_text": chat_body("Sorry, I can't evaluate audio."),
    "refusal_field": chat_body(None, refusal="I cannot help with that."),
    "winner_out_of_range": chat_body(json.dumps(
        {**P1, "verdicts": {"pitch": {**P1["verdicts"]["pitch"], "winner": 3}}})),
    "winner_missing": chat_body(json.dumps(
        {**P1, "verdicts": {"pitch": {"score_1": 3, "score_2": 1}}})),
    "rating_out_of_range": chat_body(json.dumps(
        {**P1, "verdicts": {"pitch": {**P1["verdicts"]["pitch"], "score_2": 4}}})),
    "dimension_missing": chat_body(json.dumps({**P1, "verdicts": {}})),
    "dimension_unexpected": chat_body(json.dumps(verdict(["pitch", "speed"]))),
    "reasoning_missing": chat_body(json.dumps({k: v for k, v in P1.items() if k != "comparison"})),
    "empty": chat_body(""),
}  # fmt: skip


@pytest.fixture
def tiny_responses(tmp_path):
    """Two queries; the baseline answers with 1.0 s clips, the candidate with 1.5 s clips."""
    queries = [
        build_query({"id": "p1", "task": "paralanguage_control", "subtask": "common",
                     "sentence": "Hello there.", "dimensions": {"pitch": "high"}}),
        build_query({"id": "s1", "task": "situational_adaptation", "utterance": "I lost my keys.",
                     "dimensions": {"emotion": "anxious"}}),
    ]  # fmt: skip
    sf.write(tmp_path / "s1.wav", tone(0.5), 16_000)
    queries[1] = Query(**{**queries[1].to_dict(), "dimensions": ("emotion",),
                          "audio": str(tmp_path / "s1.wav")})  # fmt: skip
    for system, seconds in (("base", 1.0), ("cand", 1.5)):
        (tmp_path / system).mkdir()
        for q in queries:
            sf.write(tmp_path / system / f"{q.id}.wav", tone(seconds), 16_000)
    return queries, tmp_path


def test_chat_judge_plays_in_the_recorded_order_and_maps_the_winner_back(server, tiny_responses):  # noqa: F811
    queries, root = tiny_responses
    server.routes["good"] = answering(winner=1)
    judge = ChatPairJudge(ChatClient(server.url, "good", timeout=5.0, max_retries=0))
    for seed in range(6):  # find a seed that plays the two queries in different orders
        orders = presentation_orders(["p1", "s1"], "cand", seed)
        if orders["p1"] != orders["s1"]:
            break
    run = run_paraling(queries, root, "base", ["cand"], judge, seed=seed)
    assert run.report["n_failures"] == 0 and len(server.requests) == 2
    assert run.report["judge"]["stand_in"] is False
    for j, payload in zip(run.judgments, server.requests, strict=True):
        assert payload["temperature"] == 1.0  # as the released judge
        parts = audio_parts(payload)
        lengths = [len(decode_wav(p)[0]) / 16_000 for p in parts]
        # the two responses only: the query is given as text (released default)
        assert lengths == ([1.0, 1.5] if j.baseline_first else [1.5, 1.0])
        (unit,) = j.units  # one target dimension each
        # the judge named the first-played response
        assert unit.winner == ("baseline" if j.baseline_first else "candidate")
        first, second = ("baseline", "candidate") if j.baseline_first else ("candidate", "baseline")
        assert unit.ratings == {first: {"score": 3}, second: {"score": 1}} and j.grounded
    text = prompt_text(server.requests[0])
    assert "Paralinguistic Compliance (the main criterion)" in text and "timestamps" in text
    assert "Sentence: Hello there." in text and "- pitch (pitch: high)" in text
    assert "Do not favour the first or the second" in text
    text = prompt_text(server.requests[1])
    assert "Paralinguistic Alignment" in text and "Content Relevance" in text
    assert "What the user said (transcript): I lost my keys." in text
    assert "- emotion (emotion: anxious)" in text
    assert run.report["position_bias"]["first_wins"] == 2


def test_chat_judge_sends_the_spoken_query_only_when_asked(server, tiny_responses):  # noqa: F811
    queries, root = tiny_responses
    server.routes["good"] = answering(winner=0)
    client = ChatClient(server.url, "good", timeout=5.0, max_retries=0)
    judge = ChatPairJudge(client, query_audio=True, temperature=0.2)
    with pytest.raises(ValueError, match=r"queries \['p1'\] have none"):  # p1 has no audio
        run_paraling(queries, root, "base", ["cand"], judge)
    assert server.requests == []
    run = run_paraling(queries[1:], root, "base", ["cand"], judge)
    ((payload,), (j,)) = server.requests, run.judgments
    lengths = [len(decode_wav(p)[0]) / 16_000 for p in audio_parts(payload)]
    assert lengths[0] == 0.5 and sorted(lengths[1:]) == [1.0, 1.5]  # the spoken query first
    assert payload["temperature"] == 0.2 and j.units[0].winner == "tie"
    assert "query as text and audio" in run.report["judge"]["description"]


@pytest.mark.parametrize("kind", sorted(BAD_VERDICTS))
def test_unusable_verdicts_are_counted_failures_never_ties(server, tiny_responses, kind):  # noqa: F811
    queries, root = tiny_responses
    answers = [BAD_VERDICTS[kind], chat_body(json.dumps(verdict(["emotion"], winner=0)))]
    server.routes[kind] = lambda p, n: reply(answers[n])
    judge = ChatPairJudge(ChatClient(server.url, kind, timeout=5.0, max_retries=0))
    run = run_paraling(queries, root, "base", ["cand"], judge, seed=0)
    failed, ok = run.judgments
    assert failed.query_id == "p1" and not failed.ok and failed.error
    assert [u.winner for u in failed.units] == [None] and ok.units[0].winner == "tie"
    report = run.report
    assert report["n_failures"] == 1 and list(report["failures"]) == ["cand/p1"]
    assert (report["n_units"], report["n_failed_units"]) == (2, 1)
    # released: the failed unit stays in the denominator as a loss; skip: it leaves it
    cand = report["overall"]["candidates"]["cand"]
    assert (cand["n"], cand["failures"], cand["points"], cand["score"]) == (2, 1, 0.5, 25.0)
    skipped = build_report(run.judgments, "base", failed_as="skip")["overall"]["candidates"]
    assert (skipped["cand"]["n"], skipped["cand"]["score"]) == (1, 50.0)


def test_only_usable_verdicts_are_cached(server, tiny_responses, tmp_path):  # noqa: F811
    queries, root = tiny_responses
    asked_p1 = []
    good = answering()

    def route(payload, n):
        if "Hello there." in prompt_text(payload):  # p1: unusable first, usable when asked again
            asked_p1.append(n)
            if len(asked_p1) == 1:
                return reply(BAD_VERDICTS["winner_out_of_range"])
        return good(payload, n)

    server.routes["good"] = route
    cache = tmp_path / "judge-cache"

    def run():
        client = ChatClient(server.url, "good", timeout=5.0, max_retries=0, cache_dir=cache)
        return run_paraling(queries, root, "base", ["cand"], ChatPairJudge(client), seed=0)

    assert run().report["n_failures"] == 1 and len(server.requests) == 2
    assert run().report["n_failures"] == 0 and len(server.requests) == 3  # p1 asked again
    assert run().report["n_failures"] == 0 and len(server.requests) == 3  # both cached now


def _judge_by_length(payload, n):
    """A chat judge (archetype JSON mode) that prefers the longer (1.5 s) responses."""
    (part,) = audio_parts(payload)
    long = len(decode_wav(part)[0]) > 16_000
    answer = {"content_pass": True, "audio_quality": 4, "human_likeness": 4,
              "appropriateness": 5 if long else 2}  # fmt: skip
    return reply(chat_body(json.dumps(answer)))


def test_offline_comparator_with_a_chat_judge_scorer_from_the_cli(server, tiny_responses, capsys):  # noqa: F811
    """`--scorer judge:MODEL@URL`: every response is scored once as an archetype clip whose
    prompt is the query text; a response the judge cannot score fails its judgments."""
    from speech_drame.cli import main

    queries, root = tiny_responses
    path = write_queries(queries, root / "queries.jsonl")
    server.routes["lengths"] = _judge_by_length
    out = root / "run.json"
    common = ["paraling", "run", str(path), "--responses", str(root), "--baseline", "base",
              "--candidates", "cand", "--timeout", "5", "--max-retries", "0", "--no-feature-cache"]  # fmt: skip
    argv = [*common, "--scorer", f"judge:lengths@{server.url}"]
    assert main([*argv, "--json-out", str(out)]) == 0, capsys.readouterr().err
    assert "scorer: chat judge lengths" in capsys.readouterr().err
    assert server.count("lengths") == 4 * 5  # 2 systems x 2 queries, 5 runs each (the default)
    asked = {texts(p) for p in server.requests}
    assert any("Hello there." in t for t in asked) and any("I lost my keys." in t for t in asked)
    run = json.loads(out.read_text())
    assert run["judge"].startswith("offline:judge-") and run["report"]["n_failures"] == 0
    assert (
        run["report"]["judge"]["stand_in"] and "STAND-IN" in run["report"]["judge"]["description"]
    )
    for j in run["judgments"]:
        (unit,) = j["units"]
        assert unit["winner"] == "candidate" and j["grounded"]
        assert unit["ratings"]["candidate"]["paralinguistics"] == pytest.approx(3.0)
        assert unit["ratings"]["baseline"]["paralinguistics"] == pytest.approx(0.75)
        assert unit["ratings"]["baseline"]["content"] == pytest.approx(3.0)
    # the chat judge options reach the scorer; --seed stays the play order's, beside --exemplar-seed
    n = server.count("lengths")
    again = [*argv, "--runs", "2", "--seed", "4", "--exemplar-seed", "9", "--json-out", str(out)]
    assert main(again) == 0, capsys.readouterr().err
    assert "mean of 2 runs" in capsys.readouterr().err
    assert server.count("lengths") == n + 4 * 2
    assert json.loads(out.read_text())["seed"] == 4

    server.routes["broken"] = lambda p, n: reply(chat_body("{oops"))
    # every judgment failed: listed, exit 1
    assert main([*common, "--scorer", f"judge:broken@{server.url}"]) == 1
    err = capsys.readouterr().err
    assert "failed cand/p1: response 1" in err and "not valid JSON" in err
    # --scorer is the offline comparator's: refused with the chat pair judge, before any request
    n = server.count()
    assert main([*argv, "--judge", "chat", "--endpoint", server.url, "--model", "lengths"]) == 2
    assert "--scorer is the offline comparator's" in capsys.readouterr().err
    assert server.count() == n


@pytest.mark.parametrize(
    ("human", "match"),
    [({"cand": 2.0}, "at least 2 systems, got 1"), ({"cand": 2.0, "zzz": 1.0}, "did not score")],
)
def test_unusable_human_scores_are_refused_before_any_judging(server, tiny_responses, human, match):  # noqa: F811
    """A human score set the report could not use would otherwise fail only after judging,
    losing every verdict of the run."""
    queries, root = tiny_responses
    server.routes["good"] = answering()
    judge = ChatPairJudge(ChatClient(server.url, "good", timeout=5.0, max_retries=0))
    with pytest.raises(ValueError, match=match):
        run_paraling(queries, root, "base", ["cand"], judge, seed=0, human=human)
    assert server.requests == []


def test_missing_responses_are_failures_without_a_request(server, tiny_responses):  # noqa: F811
    queries, root = tiny_responses
    (root / "cand" / "p1.wav").unlink()
    server.routes["good"] = answering()
    judge = ChatPairJudge(ChatClient(server.url, "good", timeout=5.0, max_retries=0))
    run = run_paraling(queries, root, "base", ["cand"], judge)
    assert "cand: missing response" in run.report["failures"]["cand/p1"]
    assert len(server.requests) == 1


# --- offline, end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from speech_drame.protocols.paraling.demo import build_demo, demo_queries

    root = tmp_path_factory.mktemp("paraling_demo")
    subset = [q for q in demo_queries() if q.id in ("pc-common-01", "dv-trans-01", "sa-01")]
    return root, build_demo(root, subset)


def test_offline_protocol_runs_end_to_end_on_the_demo_set(demo):
    from speech_drame.features.cache import FeatureCache
    from speech_drame.protocols.paraling.demo import BASELINE, CANDIDATES
    from speech_drame.protocols.paraling.rule_scorer import rule_aspect_scores

    root, path = demo
    queries = load_queries(path)
    assert {q.task for q in queries} == {"paralanguage_control", "dynamic_variation",
                                         "situational_adaptation"}  # fmt: skip
    assert all(q.audio and sf.info(q.audio).duration > 1.0 for q in queries)
    judge = OfflineComparator(rule_aspect_scores, margin=0.25)
    run = run_paraling(queries, root / "responses", BASELINE, list(CANDIDATES), judge, seed=3,
                       cache=root / "cache")  # fmt: skip
    assert run.report["n_failures"] == 0 and len(run.judgments) == 6
    # units: pc-common-01 emotion, speed; dv-trans-01 one; sa-01 emotion, age
    assert run.report["n_units"] == 2 * 5 and run.report["judge"]["stand_in"]
    for j in run.judgments:
        query = next(q for q in queries if q.id == j.query_id)
        assert [u.dimensions for u in j.units] == list(query.units)
        assert j.grounded and " s;" in j.analysis  # speech spans from voice activity
        for unit in j.units:
            ratings = [sum(unit.ratings[r].values()) for r in ("baseline", "candidate")]
            diff = ratings[1] - ratings[0]
            assert unit.winner == (
                "tie" if abs(diff) <= 0.25 else "candidate" if diff > 0 else "baseline"
            )
            if j.candidate == "noisy":  # same words and delivery in noise: never more fluent
                assert unit.ratings["candidate"]["fluency"] < unit.ratings["baseline"]["fluency"]
    assert run.report["overall"]["candidates"]["noisy"]["score"] <= 50.0

    cache = FeatureCache(root / "cache")
    again = run_paraling(queries, root / "responses", BASELINE, list(CANDIDATES), judge, seed=3,
                         cache=cache)  # fmt: skip
    assert cache.misses == 0 and again.to_dict() == run.to_dict()


def test_cli_builds_queries_and_runs_the_offline_protocol(demo, tmp_path, capsys):
    from speech_drame.cli import main
    from speech_drame.protocols.paraling.demo import DEMO_SPECS

    specs = tmp_path / "specs.jsonl"
    specs.write_text("".join(json.dumps(s) + "\n" for s in DEMO_SPECS))
    assert main(["paraling", "build", str(specs), "--out", str(tmp_path / "q.jsonl")]) == 0
    built = load_queries(tmp_path / "q.jsonl")
    assert [q.id for q in built] == [s["id"] for s in DEMO_SPECS]

    root, path = demo
    human = tmp_path / "human.json"
    human.write_text(json.dumps({"plain": 2.0, "expressive": 3.0, "noisy": 1.0}))
    code = main(["paraling", "run", str(path), "--responses", str(root / "responses"),
                 "--baseline", "plain", "--candidates", "expressive", "noisy",
                 "--feature-cache", str(root / "cache"), "--human", str(human),
                 "--json-out", str(tmp_path / "run.json")])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "dynamic_variation" in out and "Spearman vs human ranking" in out
    assert "judge: offline comparator on blueprint rule features: a STAND-IN" in out
    assert "--failed-as loss: a failed verdict unit counts as a candidate loss" in out
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["seed"] == 0 and len(saved["judgments"]) == 6 and saved["judge"] == "offline"
    assert saved["report"]["judge"]["stand_in"] and saved["failed_as"] == "loss"
    code = main(["paraling", "run", str(path), "--responses", str(root / "responses"),
                 "--baseline", "plain", "--candidates", "expressive", "noisy",
                 "--feature-cache", str(root / "cache"), "--human", str(human), "--json"])  # fmt: skip
    assert code == 0 and json.loads(capsys.readouterr().out) == saved  # --json prints the run
    bad = ["paraling", "run", str(path), "--responses", str(root / "responses"),
           "--baseline", "plain", "--candidates", "plain"]  # fmt: skip
    assert main(bad) == 2


def test_offline_comparator_on_a_lite_scorer_through_the_scorer_contract(demo):
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.protocols.paraling.demo import BASELINE, CANDIDATES
    from speech_drame.protocols.paraling.scorer_aspects import ScorerAspects
    from speech_drame.scorers.base import ScorerError
    from speech_drame.scorers.lite import LiteScorer, TrainingOptions, train_lite_model

    root, path = demo
    queries = load_queries(path)
    systems = [BASELINE, *CANDIDATES]
    clips = [(s, q) for q in queries for s in systems]
    batch = extract_blueprints(
        [str(root / "responses" / s / f"{q.id}.wav") for s, q in clips],
        contexts=[{"question": q.instruction} for _, q in clips],
        cache=root / "cache",
        progress=False,
    )
    assert not batch.errors
    # synthetic annotators: noise ruins quality, the expressive system fits the instruction
    quality = {"plain": [4, 4, 5], "expressive": [4, 4, 4], "noisy": [1, 2, 1]}
    fit = {"plain": [2, 3, 2], "expressive": [5, 4, 5], "noisy": [2, 2, 3]}
    labels = {
        "audio_quality": [quality[s] for s, _ in clips],
        "human_likeness": [quality[s] for s, _ in clips],
        "appropriateness": [fit[s] for s, _ in clips],
        "content_pass": [[True, True, True] for _ in clips],
    }
    model = train_lite_model(batch.blueprints, labels, "archetype", TrainingOptions(epochs=150))
    scorer = LiteScorer(model, cache=root / "cache", workers=1)
    judge = OfflineComparator(scorer, margin=0.25)
    assert not judge.needs_blueprints and judge.name == f"offline:{scorer.id}"
    run = run_paraling(queries, root / "responses", BASELINE, list(CANDIDATES), judge,
                       cache=root / "cache")  # fmt: skip
    assert run.report["n_failures"] == 0 and run.judge == f"offline:{scorer.id}"
    for j, unit in ((jj, u) for jj in run.judgments for u in jj.units):
        base, cand = unit.ratings["baseline"], unit.ratings["candidate"]
        assert all(0.0 <= v <= 3.0 for v in [*base.values(), *cand.values()])
        assert j.grounded and "scored 0.00-" in j.analysis
        if j.candidate == "noisy":
            assert cand["fluency"] < base["fluency"] and unit.winner == "baseline"
        else:
            assert cand["paralinguistics"] > base["paralinguistics"]
    scores = run.report["overall"]["candidates"]
    assert scores["noisy"]["score"] == 0.0 and scores["expressive"]["score"] > 50.0
    # the mapping is the scorer's own scores of the response, the unit's query text as the
    # prompt: each target dimension of a query is rated with its own prompt
    for j in (j for j in run.judgments if j.candidate == "expressive"):
        query = next(q for q in queries if q.id == j.query_id)
        audio = root / "responses" / "expressive" / f"{query.id}.wav"
        prompts = [query.unit_prompt(u.dimensions) for u in j.units]
        assert len(set(prompts)) == len(prompts)
        clips = scorer.score([ClipInput("x", audio, {"question": p}) for p in prompts])
        for unit, clip in zip(j.units, clips, strict=True):
            assert unit.ratings["candidate"]["content"] == pytest.approx(3 * clip.content_pass)
            assert unit.ratings["candidate"]["paralinguistics"] == pytest.approx(
                3 * (clip.scores["appropriateness"] - 1) / 4
            )
    without_pass = train_lite_model(batch.blueprints[:3], {
        "audio_quality": labels["audio_quality"][:3]}, "archetype", TrainingOptions(epochs=1))  # fmt: skip
    with pytest.raises(ScorerError, match="archetype scorer with Content Pass"):
        ScorerAspects(LiteScorer(without_pass))


def test_cli_lite_scorer_run_with_human_scores_is_written_when_the_baseline_sweeps(
    demo, tmp_path, capsys
):
    """The `--scorer lite --human` crash: a scorer under which the baseline wins every verdict
    (candidates at 0 points) gave the baseline NaN, Spearman raised and nothing was written."""
    from speech_drame.cli import main
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.protocols.paraling.demo import BASELINE, CANDIDATES
    from speech_drame.scorers.lite import TrainingOptions, train_lite_model

    root, path = demo
    queries = load_queries(path)
    clips = [(s, q) for q in queries for s in (BASELINE, *CANDIDATES)]
    batch = extract_blueprints(
        [str(root / "responses" / s / f"{q.id}.wav") for s, q in clips],
        contexts=[{"question": q.instruction} for _, q in clips],
        cache=root / "cache",
        progress=False,
    )
    best = [[5, 5, 5] if s == BASELINE else [1, 1, 1] for s, _ in clips]
    labels = {"audio_quality": best, "human_likeness": best, "appropriateness": best,
              "content_pass": [[s == BASELINE] * 3 for s, _ in clips]}  # fmt: skip
    scorer = train_lite_model(batch.blueprints, labels, "archetype", TrainingOptions(epochs=150))
    scorer.save(tmp_path / "lite" / "archetype")
    human = tmp_path / "human.json"
    human.write_text(json.dumps({"plain": 2.0, "expressive": 3.0, "noisy": 1.0}))
    out = tmp_path / "run.json"
    code = main(["paraling", "run", str(path), "--responses", str(root / "responses"),
                 "--baseline", BASELINE, "--candidates", *CANDIDATES,
                 "--scorer", f"lite:{tmp_path / 'lite'}", "--feature-cache", str(root / "cache"),
                 "--human", str(human), "--json-out", str(out)])  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "scorer: LiteScorer" in printed.err
    doc = json.loads(out.read_text(), parse_constant=_refuse_nan)
    assert doc["judge"].startswith("offline:lite-")
    overall = doc["report"]["overall"]
    assert {c: s["score"] for c, s in overall["candidates"].items()} == {
        "expressive": 0.0, "noisy": 0.0}  # fmt: skip
    assert overall["baseline"]["score"] == 100.0
    rho = stats.spearmanr([100.0, 0.0, 0.0], [2.0, 3.0, 1.0]).statistic
    assert doc["report"]["human_agreement"]["spearman"] == pytest.approx(rho)
    assert "Spearman vs human ranking" in printed.out


def test_offline_comparator_fails_a_judgment_on_an_unusable_rating():
    """A scorer that cannot rate a response (an undefined feature) or returns NaN fails the
    judgment with the reason; before, NaN silently made the second response the winner."""
    from speech_drame.protocols.chat_answers import VerdictError
    from speech_drame.protocols.paraling.judges import Response

    query = build_query({"id": "q", "task": "paralanguage_control", "subtask": "abstract",
                         "sentence": "Hi.", "style": "a calm voice"})  # fmt: skip

    def nan_fluency(q, unit, bp):
        return {"content": 2.0, "fluency": math.nan, "paralinguistics": 2.0}

    def refusing(q, unit, bp):
        raise ValueError("feature prosody.f0_slope_st is undefined")

    first, second = Response("a.wav", object()), Response("b.wav", object())
    for scorer, match in ((nan_fluency, r"response 1 \(a\.wav\): \['fluency'\] undefined"),
                          (refusing, r"response 1 \(a\.wav\): feature prosody\.f0_slope_st")):  # fmt: skip
        with pytest.raises(VerdictError, match=match):
            OfflineComparator(scorer).compare(query, first, second)


def test_cli_demo_says_what_to_run_next(tmp_path, capsys):
    import shlex

    from speech_drame.cli import build_parser
    from speech_drame.protocols.paraling.demo import BASELINE, CANDIDATES, next_steps

    out = tmp_path / "para demo"
    text = next_steps(out)
    (command,) = [
        line.strip() for line in text.splitlines() if line.strip().startswith("speech-drame ")
    ]
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert args.action == "run" and args.queries == str(out / "queries.jsonl")
    assert args.responses == str(out / "responses")
    assert args.baseline == BASELINE and args.candidates == list(CANDIDATES)
