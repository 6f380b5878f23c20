"""TRACE: typed-tie fusion, HCoT loading and evaluation, rule and chat judges, end to end."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from judge_server import chat_body, reply
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from speech_drame.features.cache import FeatureCache
from speech_drame.judges import ChatClient
from speech_drame.protocols.chat_answers import VerdictError
from speech_drame.protocols.trace.hcot import (
    PairLabels,
    evaluate,
    load_labels,
    reconstruct_overall,
    write_labels,
)
from speech_drame.protocols.trace.judges import (
    ChatTraceJudge,
    RuleJudge,
    typed_decision,
)
from speech_drame.protocols.trace.labels import (
    LABELS,
    MISSING_CONTENT,
    MISSING_OTHER,
    MissingContentLabel,
    MissingLabel,
    fuse,
    fuse_labels,
    parse_label,
)

CODE = {"1": "1", "2": "2", "G": "both_good", "B": "both_bad"}
# Expected overall label for every (content, paralinguistics) pair, one character per voice
# quality label in the order 1, 2, G, B: 16 rows x 4 = all 64 triples, written by hand from
# each rule's text.
CONTENT_FIRST = {
    # released: both_bad only if content AND paralinguistics are both_bad; else the first
    # winner in content > paralinguistics > voice quality; no winner: both_good iff content
    # is both_good, else both_bad
    ("1", "1"): "1111", ("1", "2"): "1111", ("1", "G"): "1111", ("1", "B"): "1111",
    ("2", "1"): "2222", ("2", "2"): "2222", ("2", "G"): "2222", ("2", "B"): "2222",
    ("G", "1"): "1111", ("G", "2"): "2222", ("G", "G"): "12GG", ("G", "B"): "12GG",
    ("B", "1"): "1111", ("B", "2"): "2222", ("B", "G"): "12BB", ("B", "B"): "BBBB",
}  # fmt: skip
ACCEPTABILITY_CAP = {
    # content and paralinguistics gate equally: both_bad on either, or different winners on
    # them, and nobody may win; else the first winner; no winner: both_good
    ("1", "1"): "1111", ("1", "2"): "BBBB", ("1", "G"): "1111", ("1", "B"): "BBBB",
    ("2", "1"): "BBBB", ("2", "2"): "2222", ("2", "G"): "2222", ("2", "B"): "BBBB",
    ("G", "1"): "1111", ("G", "2"): "2222", ("G", "G"): "12GG", ("G", "B"): "BBBB",
    ("B", "1"): "BBBB", ("B", "2"): "BBBB", ("B", "G"): "BBBB", ("B", "B"): "BBBB",
}  # fmt: skip
CONTENT_FIRST_GATED = {
    # this package's earlier rule: both_bad on content OR paralinguistics gives both_bad; else
    # the first winner in content > paralinguistics > voice quality; no winner: both_good
    ("1", "1"): "1111", ("1", "2"): "1111", ("1", "G"): "1111", ("1", "B"): "BBBB",
    ("2", "1"): "2222", ("2", "2"): "2222", ("2", "G"): "2222", ("2", "B"): "BBBB",
    ("G", "1"): "1111", ("G", "2"): "2222", ("G", "G"): "12GG", ("G", "B"): "BBBB",
    ("B", "1"): "BBBB", ("B", "2"): "BBBB", ("B", "G"): "BBBB", ("B", "B"): "BBBB",
}  # fmt: skip
TABLES = {
    "content_first": CONTENT_FIRST,
    "acceptability_cap": ACCEPTABILITY_CAP,
    "content_first_gated": CONTENT_FIRST_GATED,
}


@pytest.mark.parametrize("policy", sorted(TABLES))
def test_fusion_covers_every_combination_of_the_label_space(policy):
    table = TABLES[policy]
    assert len(table) == 16
    combos = list(itertools.product("12GB", repeat=3))
    assert len(combos) == 64
    for c, vq, p in combos:
        got = fuse(CODE[c], CODE[vq], CODE[p], policy)
        assert got == CODE[table[(c, p)]["12GB".index(vq)]], (policy, c, vq, p)


def test_the_fixed_content_first_rule_differs_from_the_old_one_on_22_triples():
    differ = [
        combo
        for combo in itertools.product(LABELS, repeat=3)
        if fuse(*combo, "content_first") != fuse(*combo, "content_first_gated")
    ]
    assert len(differ) == 22  # the count the issue names
    # the old rule let a both_bad content or paralinguistics veto a winner elsewhere
    assert all("both_bad" in (c, p) for c, _, p in differ)
    assert fuse("1", "both_good", "both_bad", "content_first") == "1"
    assert fuse("1", "both_good", "both_bad", "content_first_gated") == "both_bad"


def rating_min(*labels: str) -> str:
    """Acceptability vectors (response 1 ok, response 2 ok), combined by element-wise min."""
    vec = {"1": (1, 0), "2": (0, 1), "both_good": (1, 1), "both_bad": (0, 0)}
    back = {v: k for k, v in vec.items()}
    return back[tuple(min(vec[x][i] for x in labels) for i in range(2))]


def test_acceptability_cap_equals_a_rating_min_derivation():
    """An independent derivation: cap = min(content, paralinguistics); the first winner in
    content > paralinguistics > voice quality (else content) is then capped."""
    for c, vq, p in itertools.product(LABELS, repeat=3):
        lead = next((x for x in (c, p, vq) if x in ("1", "2")), c)
        assert fuse(c, vq, p, "acceptability_cap") == rating_min(lead, c, p), (c, vq, p)


def test_missing_content_label_fuses_by_the_chosen_rule():
    for policy in TABLES:
        for vq, p in itertools.product(LABELS, repeat=2):
            labels = {"voice_quality": vq, "paralinguistics": p}
            assert fuse_labels(labels, policy) == "both_bad"
            assert fuse_labels({**labels, "content": None}, policy, "both_bad") == "both_bad"
            with pytest.raises(MissingContentLabel, match="missing dimension 'content'"):
                fuse_labels(labels, policy, "exclude")
    with pytest.raises(MissingLabel, match="missing dimension 'voice_quality'"):
        fuse_labels({"content": "1", "paralinguistics": "1"}, "content_first", missing_other="fail")
    with pytest.raises(ValueError, match="unknown missing-content rule 'skip'"):
        fuse_labels({"content": "1"}, "content_first", "skip")  # type: ignore[arg-type]


# A missing voice-quality or paralinguistics label (None), written by hand from the released
# fusion, where the missing label is an unknown value: never a winner, never both_good or
# both_bad in the SpeakBench rule; unacceptable for both in S2S-Arena's RatingMin cap.
# Rows: content label; one character per label of the dimension still present (1, 2, G, B).
NO_VOICE_QUALITY = {  # characters: paralinguistics
    "content_first": {"1": "1111", "2": "2222", "G": "12GG", "B": "12BB"},
    "acceptability_cap": {"1": "1B1B", "2": "B22B", "G": "12GB", "B": "BBBB"},
    "content_first_gated": {"1": "111B", "2": "222B", "G": "12GB", "B": "BBBB"},
}
NO_PARALINGUISTICS = {  # characters: voice quality
    "content_first": {"1": "1111", "2": "2222", "G": "12GG", "B": "12BB"},
    "acceptability_cap": {"1": "BBBB", "2": "BBBB", "G": "BBBB", "B": "BBBB"},
    "content_first_gated": {"1": "1111", "2": "2222", "G": "12GG", "B": "BBBB"},
}
NEITHER = {"content_first": "12GB", "acceptability_cap": "BBBB", "content_first_gated": "12GB"}


@pytest.mark.parametrize("policy", sorted(TABLES))
def test_missing_voice_quality_or_paralinguistics_names_no_winner_by_hand(policy):
    order = ("1", "2", "G", "B")
    for c in order:
        for i, x in enumerate(order):
            no_vq = {"content": CODE[c], "paralinguistics": CODE[x]}
            assert fuse(CODE[c], None, CODE[x], policy) == CODE[NO_VOICE_QUALITY[policy][c][i]]
            assert fuse_labels(no_vq, policy) == CODE[NO_VOICE_QUALITY[policy][c][i]]
            no_para = {"content": CODE[c], "voice_quality": CODE[x], "paralinguistics": None}
            assert fuse_labels(no_para, policy) == CODE[NO_PARALINGUISTICS[policy][c][i]]
            for labels in (no_vq, no_para):
                with pytest.raises(MissingLabel, match="missing dimension '"):
                    fuse_labels(labels, policy, missing_other="fail")
        assert fuse_labels({"content": CODE[c]}, policy) == CODE[NEITHER[policy][order.index(c)]]
    with pytest.raises(MissingLabel, match="missing dimensions 'voice_quality', 'paral"):
        fuse_labels({"content": "1"}, policy, missing_other="fail")
    # fail is checked before the missing-content rule: such a pair fails whatever its content
    with pytest.raises(MissingLabel, match="'paralinguistics'"):
        fuse_labels({"voice_quality": "1"}, policy, missing_other="fail")
    with pytest.raises(ValueError, match="unknown missing-label rule 'skip'"):
        fuse_labels({"content": "1"}, policy, missing_other="skip")  # type: ignore[arg-type]


def test_labels_are_parsed_strictly():
    assert parse_label(1) == "1" and parse_label("both_good") == "both_good"
    for bad in ("tie", "both-good", 0, 3, True, None, "1.0"):
        with pytest.raises(ValueError, match="is not one of"):
            parse_label(bad, "x")
    with pytest.raises(ValueError, match="unknown fusion policy"):
        fuse("1", "1", "1", "majority")  # type: ignore[arg-type]


def test_hcot_loader_reads_the_published_format_and_names_bad_lines(tmp_path):
    good = tmp_path / "hcot.jsonl"
    rows = [
        {"id": "a", "content": "1", "voice_quality": "both_good", "paralinguistics": "2",
         "overall": "1"},
        {"content": "both_bad", "voice_quality": "2", "paralinguistics": "both_bad",
         "overall": "both_bad"},
    ]  # fmt: skip
    good.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = load_labels(good)
    assert [p.id for p in pairs] == ["a", "2"]
    assert pairs[0].labels == {k: v for k, v in rows[0].items() if k != "id"}
    assert load_labels(write_labels(pairs, tmp_path / "copy.jsonl")) == pairs

    cases = {
        "bad_label": ({**rows[0], "overall": "tie"}, r"bad\.jsonl:1 overall: 'tie'"),
        "missing": ({"id": "x", "overall": "1"}, r"bad\.jsonl:1: missing content"),
    }
    for record, match in cases.values():
        (tmp_path / "bad.jsonl").write_text(json.dumps(record) + "\n")
        with pytest.raises(ValueError, match=match):
            load_labels(tmp_path / "bad.jsonl")
    (tmp_path / "dup.jsonl").write_text((json.dumps(rows[0]) + "\n") * 2)
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        load_labels(tmp_path / "dup.jsonl")
    overall_only = tmp_path / "overall.jsonl"
    overall_only.write_text(json.dumps({"id": "a", "overall": "2"}) + "\n")
    assert load_labels(overall_only, require_dimensions=False)[0].labels == {"overall": "2"}


def random_labels(n: int, seed: int, policy: str = "content_first") -> list[PairLabels]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c, vq, p = (LABELS[k] for k in rng.integers(0, 4, size=3))
        labels = {"content": c, "voice_quality": vq, "paralinguistics": p}
        out.append(PairLabels(f"p{i}", {**labels, "overall": fuse(c, vq, p, policy)}))
    return out


def perturb(pairs: list[PairLabels], share: float, seed: int) -> list[PairLabels]:
    rng = np.random.default_rng(seed)
    out = []
    for p in pairs:
        labels = dict(p.labels)
        for key in labels:
            if rng.random() < share:
                labels[key] = LABELS[rng.integers(0, 4)]
        out.append(PairLabels(p.id, labels))
    return out


def test_evaluation_matches_reference_computations():
    gold = random_labels(120, seed=1)
    pred = perturb(gold, 0.35, seed=2)[:-5]  # five pairs without a usable verdict
    other = perturb(gold, 0.5, seed=3)
    ev = evaluate(pred, gold, other)

    assert ev.n_gold == 120 and ev.n_evaluated == 115
    assert ev.missing == [f"p{i}" for i in range(115, 120)]
    kept = gold[:115]
    for name in ("content", "voice_quality", "paralinguistics", "overall"):
        g = [p[name] for p in kept]
        q = [p[name] for p in pred]
        assert ev.accuracy[name] == pytest.approx(
            np.mean([a == b for a, b in zip(g, q, strict=True)])
        )
        assert ev.kappa[name] == pytest.approx(cohen_kappa_score(g, q))
        assert ev.counts[name] == 115

    g = [p["overall"] for p in kept]
    q = [p["overall"] for p in pred]
    o = [p["overall"] for p in other[:115]]
    bad = [i for i, x in enumerate(g) if x == "both_bad"]
    assert ev.winner_on_bad["n"] == len(bad) > 0
    assert ev.winner_on_bad["rate"] == pytest.approx(np.mean([q[i] in ("1", "2") for i in bad]))
    won = [i for i, x in enumerate(g) if x in ("1", "2")]
    assert ev.winner_slice["accuracy"] == pytest.approx(np.mean([q[i] == g[i] for i in won]))
    tied = [i for i, p in enumerate(kept) if p["content"] in ("both_good", "both_bad")]
    assert ev.content_tie_resolution["rate"] == pytest.approx(
        np.mean([q[i] in ("1", "2") for i in tied])
    )
    assert sum(sum(row.values()) for row in ev.confusion.values()) == 115

    a = np.array([x == y for x, y in zip(q, g, strict=True)])
    b = np.array([x == y for x, y in zip(o, g, strict=True)])
    n01, n10 = int((a & ~b).sum()), int((~a & b).sum())
    assert (ev.mcnemar["exact"]["b"], ev.mcnemar["exact"]["c"]) == (n01, n10)
    assert ev.mcnemar["exact"]["pvalue"] == pytest.approx(
        stats.binomtest(n01, n01 + n10, 0.5).pvalue
    )
    chi = (abs(n01 - n10) - 1) ** 2 / (n01 + n10)
    assert ev.mcnemar["chi2"]["statistic"] == pytest.approx(chi)
    assert ev.mcnemar["chi2"]["pvalue"] == pytest.approx(stats.chi2.sf(chi, 1))
    assert ev.mcnemar["accuracy"] > ev.mcnemar["other_accuracy"]


def test_evaluation_rejects_unknown_ids_and_handles_overall_only_judges():
    gold = random_labels(10, seed=4)
    with pytest.raises(ValueError, match="not in the gold labels"):
        evaluate([PairLabels("zzz", {"overall": "1"})], gold)
    overall_only = [PairLabels(p.id, {"overall": p["overall"]}) for p in gold]
    ev = evaluate(overall_only, gold)
    assert ev.accuracy == {"overall": 1.0} and ev.winner_on_bad["hits"] == 0


def test_hand_counted_winner_on_bad_and_content_ties():
    g = ["both_bad", "both_bad", "1", "2", "both_good"]
    c = ["both_bad", "both_good", "1", "both_good", "2"]
    gold = [
        PairLabels(str(i), {"content": c[i], "voice_quality": "1", "paralinguistics": "1",
                            "overall": g[i]})
        for i in range(5)
    ]  # fmt: skip
    pred = [
        PairLabels(str(i), {"overall": x}) for i, x in enumerate(["1", "both_bad", "1", "1", "2"])
    ]
    ev = evaluate(pred, gold)
    assert ev.winner_on_bad == {"rate": 0.5, "hits": 1, "n": 2}
    assert ev.winner_slice == {"accuracy": 0.5, "n": 2}
    # human content ties: pairs 0, 1, 3 -> the judge named a winner on 0 and 3
    assert ev.content_tie_resolution == {"rate": pytest.approx(2 / 3), "hits": 2, "n": 3}


def test_logistic_model_reconstructs_fused_overall_but_not_noise():
    gold = random_labels(400, seed=5)
    fitted = reconstruct_overall(gold)
    assert fitted["cv_accuracy"] > 0.9 and fitted["folds"] == 5
    rng = np.random.default_rng(6)
    noise = [PairLabels(p.id, {**p.labels, "overall": LABELS[rng.integers(0, 4)]}) for p in gold]
    assert reconstruct_overall(noise)["cv_accuracy"] < 0.45


# --- judges ------------------------------------------------------------------------------


def test_typed_decision_follows_acceptability_then_comparison():
    assert typed_decision(False, False, 5, 1, 0.1) == "both_bad"
    assert typed_decision(False, True, 5, 1, 0.1) == "2"  # acceptability beats the score
    assert typed_decision(True, True, 3.0, 3.05, 0.1) == "both_good"
    assert typed_decision(True, True, 3.0, 3.5, 0.1) == "2"


def blueprint_record(transcript="hello there friend", ovrl=3.2, f0_std=2.5, rate=4.0, rel=0.5):
    return {  # words_per_s 2.5 is inside the accepted rate range
        "duration_s": 2.0,
        "content": {"transcript": transcript, "asr_avg_logprob": -0.3, "no_speech_prob": 0.01,
                    "relevance": rel},
        "voice_quality": {"dnsmos_sig": 3.5, "dnsmos_bak": 4.0, "dnsmos_ovrl": ovrl,
                          "dnsmos_p808": 3.3, "dnsmos_variant": "plain",
                          "dnsmos_model": "DNSMOS P.835 test"},
        "paralinguistics": {
            "f0_median_hz": 120.0, "f0_std_st": f0_std, "f0_range_st": 3 * f0_std,
            "loudness_mean_db": -25.0, "loudness_std_db": 6.0, "loudness_range_db": 18.0,
            "syllables_per_s": rate, "words_per_s": 2.5, "pause_ratio": 0.1,
            "pauses_per_min": 10.0, "mean_pause_s": 0.3, "voiced_ratio": 0.6,
            "f0_jitter_st": 0.2,
        },
    }  # fmt: skip


def test_rule_judge_decides_each_dimension_from_the_blueprint():
    judge = RuleJudge()
    same = blueprint_record()
    decisions, raw = judge.decide("say hello", same, same)
    assert raw is None and {d.label for d in decisions.values()} == {"both_good"}
    noisy = blueprint_record(ovrl=1.8)
    off_topic = blueprint_record(rel=0.02)
    monotone = blueprint_record(f0_std=0.1)
    decisions, _ = judge.decide("say hello", noisy, same)
    assert decisions["voice_quality"].label == "2" and decisions["content"].label == "both_good"
    decisions, _ = judge.decide("say hello", same, off_topic)
    assert decisions["content"].label == "1"
    decisions, _ = judge.decide("say hello", monotone, monotone)
    assert decisions["paralinguistics"].label == "both_bad"
    livelier = blueprint_record(f0_std=6.0)  # expressiveness 8 vs 4.5: beyond the margin
    decisions, _ = judge.decide("say hello", same, livelier)
    assert decisions["paralinguistics"].label == "2"


GOOD_ANSWER = {
    "content": {"label": "1", "reason": "answers the question"},
    "voice_quality": {"label": "both_good", "reason": "both clean"},
    "paralinguistics": {"label": "both_bad", "reason": "both monotone"},
}
BAD_ANSWERS = {
    "malformed": (chat_body('{"content": {"label": "1"'), r"not valid JSON"),
    "refusal_text": (chat_body("I can't compare these."), r"not valid JSON"),
    "refusal_field": (chat_body(None, refusal="Sorry, I cannot."), r"refusal: Sorry"),
    "not_an_object": (
        chat_body(json.dumps({**GOOD_ANSWER, "voice_quality": "1"})),
        r"voice_quality is '1', expected an object with a label",
    ),
    "bad_label": (
        chat_body(json.dumps({**GOOD_ANSWER, "content": {"label": "tie", "reason": ""}})),
        r"'tie' is not one of",
    ),
    "http_400": ({"error": "bad request"}, r"request failed: HTTP 400"),
}


def test_chat_judge_sends_textual_blueprints_and_reads_labels(server):  # noqa: F811
    server.routes["good"] = lambda p, n: reply(
        chat_body(f"```json\n{json.dumps(GOOD_ANSWER)}\n```")
    )
    judge = ChatTraceJudge(ChatClient(server.url, "good", timeout=5.0, max_retries=0))
    decisions, raw = judge.decide("Tell me a joke, sounding cheerful.",
                                  blueprint_record(), blueprint_record(ovrl=2.0))  # fmt: skip
    assert {d: x.label for d, x in decisions.items()} == {
        "content": "1", "voice_quality": "both_good", "paralinguistics": "both_bad"
    }  # fmt: skip
    assert decisions["paralinguistics"].reason == "both monotone" and "```json" in raw
    payload = server.requests[0]
    text = payload["messages"][1]["content"]
    assert isinstance(text, str) and "OVRL 3.2" in text and "OVRL 2.0" in text
    assert "Tell me a joke, sounding cheerful." in text and "overall" in text.lower()
    assert payload["temperature"] == 0.0


@pytest.mark.parametrize("kind", sorted(BAD_ANSWERS))
def test_chat_judge_failures_keep_their_reason(server, kind):  # noqa: F811
    body, match = BAD_ANSWERS[kind]
    status = 400 if kind == "http_400" else 200
    server.routes[kind] = lambda p, n: reply(body, status)
    judge = ChatTraceJudge(ChatClient(server.url, kind, timeout=5.0, max_retries=0))
    with pytest.raises(VerdictError, match=match):
        judge.decide("hi", blueprint_record(), blueprint_record())


# --- end to end on the demo set ------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from speech_drame.protocols.trace.demo import build_demo

    root = tmp_path_factory.mktemp("trace_demo")
    manifest, hcot = build_demo(root)
    return root, manifest, hcot


def test_offline_trace_runs_end_to_end_and_reuses_the_feature_cache(demo):
    from speech_drame.protocols.trace.demo import PAIRS
    from speech_drame.protocols.trace.protocol import load_pairs, run_trace

    root, manifest, hcot = demo
    pairs = load_pairs(manifest)
    gold = {p.id: p for p in load_labels(hcot)}
    first = run_trace(pairs, RuleJudge(), "content_first", cache=root / "cache")
    assert first.failures == {} and len(first.labels) == len(PAIRS)
    for p in first.labels:
        dims = [p[d] for d in ("content", "voice_quality", "paralinguistics")]
        assert p["overall"] == fuse(*dims, "content_first")
    # content decisions on right-vs-wrong pairs follow the construction
    for (a, b), p in zip(PAIRS, first.labels, strict=True):
        if a.right != b.right:
            assert p["content"] == gold[p.id]["content"]
        if a.clean != b.clean:
            noisy = "1" if not a.clean else "2"
            assert p["voice_quality"] != noisy
    ev = evaluate(first.labels, list(gold.values()))
    assert ev.n_evaluated == len(PAIRS) and ev.accuracy["content"] >= 6 / 7
    assert ev.missing_content == {"rule": "both_bad", "definition": MISSING_CONTENT["both_bad"],
                                  "n": 0, "ids": [], "changed": []}  # fmt: skip

    cache = FeatureCache(root / "cache")
    second = run_trace(pairs, RuleJudge(), "acceptability_cap", cache=cache)
    assert cache.misses == 0 and cache.hits > 0  # every feature read back from the cache
    assert second.blueprints == first.blueprints
    for a, b in zip(first.labels, second.labels, strict=True):
        assert {d: a[d] for d in ("content", "voice_quality", "paralinguistics")} == {
            d: b[d] for d in ("content", "voice_quality", "paralinguistics")
        }
        assert b["overall"] == fuse(b["content"], b["voice_quality"], b["paralinguistics"],
                                    "acceptability_cap")  # fmt: skip


def test_unreadable_audio_and_bad_verdicts_are_counted_failures(demo, server):  # noqa: F811
    from speech_drame.protocols.trace.protocol import Pair, load_pairs, run_trace

    root, manifest, _ = demo
    pairs = load_pairs(manifest)[:3]
    broken = Pair("broken", "hi", str(root / "missing.wav"), pairs[0].audio_2)
    answers = [json.dumps(GOOD_ANSWER), "not json", json.dumps(GOOD_ANSWER)]
    server.routes["mixed"] = lambda p, n: reply(chat_body(answers[n]))
    judge = ChatTraceJudge(ChatClient(server.url, "mixed", timeout=5.0, max_retries=0))
    run = run_trace([*pairs, broken], judge, cache=root / "cache")
    assert sorted(run.failures) == ["broken", pairs[1].id]
    assert "missing.wav" in run.failures["broken"] and "audio_1" in run.failures["broken"]
    assert "not valid JSON" in run.failures[pairs[1].id] and run.raw[pairs[1].id] == "not json"
    assert [p.id for p in run.labels] == [pairs[0].id, pairs[2].id]
    assert run.to_dict()["judge_description"] == ChatTraceJudge.description
    assert "STAND-IN" not in ChatTraceJudge.description
    # content 1 wins although paralinguistics is both_bad (released content_first)
    assert run.labels[0]["overall"] == "1"
    assert server.count("mixed") == 3  # no request for the pair whose audio failed
    assert "Response 1 blueprint" in server.requests[0]["messages"][1]["content"]


def test_cli_runs_and_evaluates_the_demo(demo, tmp_path, capsys):
    from speech_drame.cli import main

    root, manifest, hcot = demo
    cache = str(root / "cache")
    for policy in ("content_first", "acceptability_cap"):
        assert main(["trace", "run", str(manifest), "--policy", policy, "--feature-cache", cache,
                     "--out", str(tmp_path / f"{policy}.jsonl"),
                     "--json-out", str(tmp_path / f"{policy}.json")]) == 0  # fmt: skip
    first = load_labels(tmp_path / "content_first.jsonl")
    assert len(first) == len(load_labels(hcot))
    report = json.loads((tmp_path / "content_first.json").read_text())
    assert report["policy"] == "content_first" and report["n_failures"] == 0
    code = main(["trace", "evaluate", str(tmp_path / "content_first.jsonl"), "--hcot", str(hcot),
                 "--other", str(tmp_path / "acceptability_cap.jsonl"), "--reconstruct",
                 "--json-out", str(tmp_path / "eval.json")])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "winner-on-bad" in out and "McNemar" in out and "logistic reconstruction" in out
    saved = json.loads((tmp_path / "eval.json").read_text())
    assert saved["accuracy"] == evaluate(first, load_labels(hcot)).accuracy
    code = main(["trace", "evaluate", str(tmp_path / "content_first.jsonl"), "--hcot", str(hcot),
                 "--other", str(tmp_path / "acceptability_cap.jsonl"), "--reconstruct", "--json"])  # fmt: skip
    assert code == 0 and json.loads(capsys.readouterr().out) == saved  # --json: the same, printed
    assert main(["trace", "evaluate", str(tmp_path / "missing.jsonl"), "--hcot", str(hcot)]) == 2


def test_cli_demo_says_what_it_wrote_and_its_next_commands_run(demo, tmp_path, monkeypatch, capsys):
    import shlex

    from speech_drame.cli import main

    root, _, _ = demo
    monkeypatch.setenv("SPEECH_DRAME_CACHE", str(root / "cache"))  # the same clips: cache hits
    out = tmp_path / "trace demo"  # a space: the printed commands must quote it
    assert main(["trace", "demo", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{out / 'pairs.jsonl'}" in printed and "proxy labels" in printed
    n_clips = len(list((out / "audio").glob("*.wav")))
    assert f"7 pairs ({n_clips} response clips in {out / 'audio'})" in printed
    commands = [
        line.strip() for line in printed.splitlines() if line.strip().startswith("speech-drame ")
    ]
    assert [shlex.split(c)[1:3] for c in commands] == [["trace", "run"], ["trace", "evaluate"]]
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0
    assert "winner-on-bad" in capsys.readouterr().out


def test_cli_evaluate_writes_strict_json_when_a_rate_is_undefined(tmp_path, capsys):
    """No gold pair is both_bad: the winner-on-bad rate is undefined (NaN), written as null."""
    from speech_drame.cli import main

    gold = [p for p in random_labels(40, seed=5) if p["overall"] != "both_bad"]
    write_labels(gold, tmp_path / "gold.jsonl")
    write_labels(perturb(gold, 0.2, seed=6), tmp_path / "pred.jsonl")
    out = tmp_path / "eval.json"
    assert main(["trace", "evaluate", str(tmp_path / "pred.jsonl"), "--hcot",
                 str(tmp_path / "gold.jsonl"), "--json-out", str(out)]) == 0  # fmt: skip

    def refuse(name):
        raise ValueError(f"bare {name} in {out.name}")

    saved = json.loads(out.read_text(), parse_constant=refuse)
    assert saved["winner_on_bad"] == {"rate": None, "hits": 0, "n": 0}


# --- released conventions: demo gold, missing content, blueprint cues ----------------------


def test_demo_gold_follows_the_released_content_first_rule(demo):
    _, _, hcot = demo
    gold = load_labels(hcot)
    # by hand from the construction: pair2 (content both_bad, paralinguistics 1) and pair4
    # (paralinguistics both_bad, voice quality 1) name winners now; pair6 is bad on both gates
    assert [p["overall"] for p in gold] == ["1", "1", "1", "2", "1", "2", "both_bad"]
    for p in gold:
        dims = (p["content"], p["voice_quality"], p["paralinguistics"])
        assert p["overall"] == fuse(*dims, "content_first")


NO_CONTENT = {k: v for k, v in GOOD_ANSWER.items() if k != "content"}


def test_a_verdict_without_content_follows_the_missing_content_rule(demo, server):  # noqa: F811
    from speech_drame.protocols.trace.protocol import load_pairs, run_trace

    root, manifest, _ = demo
    pairs = load_pairs(manifest)[:2]
    answers = [json.dumps(GOOD_ANSWER), json.dumps({**NO_CONTENT, "content": None})] * 2
    server.routes["nocontent"] = lambda p, n: reply(chat_body(answers[n]))
    judge = ChatTraceJudge(ChatClient(server.url, "nocontent", timeout=5.0, max_retries=0))
    released = run_trace(pairs, judge, cache=root / "cache")
    assert released.failures == {} and released.missing_content == [pairs[1].id]
    assert dict(released.labels[1].labels) == {"voice_quality": "both_good",
                                               "paralinguistics": "both_bad",
                                               "overall": "both_bad"}  # fmt: skip
    report = released.to_dict()
    assert report["missing_content_rule"] == "both_bad" and report["n_missing_content"] == 1
    assert report["missing_content_definition"] == MISSING_CONTENT["both_bad"]
    assert "released SpeakBench" in report["policy_definition"]
    excluded = run_trace(pairs, judge, cache=root / "cache", missing_content="exclude")
    assert excluded.failures == {pairs[1].id: "missing dimension 'content'"}
    assert [p.id for p in excluded.labels] == [pairs[0].id]
    assert excluded.missing_content == [pairs[1].id]


def test_a_verdict_without_paralinguistics_follows_the_missing_other_rule(demo, server):  # noqa: F811
    from speech_drame.protocols.trace.protocol import load_pairs, run_trace

    root, manifest, _ = demo
    pairs = load_pairs(manifest)[:2]
    no_para = {**GOOD_ANSWER, "content": {"label": "both_bad", "reason": "both off topic"},
               "voice_quality": {"label": "2", "reason": "1 is noisy"}}  # fmt: skip
    no_para.pop("paralinguistics")
    answers = [json.dumps(GOOD_ANSWER), json.dumps(no_para)] * 3
    server.routes["nopara"] = lambda p, n: reply(chat_body(answers[n]))
    judge = ChatTraceJudge(ChatClient(server.url, "nopara", timeout=5.0, max_retries=0))
    released = run_trace(pairs, judge, cache=root / "cache")
    # content both_bad, paralinguistics unknown: no both_bad veto, voice quality names 2
    assert released.failures == {} and released.missing_other == {pairs[1].id: ["paralinguistics"]}
    assert dict(released.labels[1].labels) == {"content": "both_bad", "voice_quality": "2",
                                               "overall": "2"}  # fmt: skip
    report = released.to_dict()
    assert report["missing_other_rule"] == "no-winner" and report["n_missing_other"] == 1
    capped = run_trace(pairs, judge, "acceptability_cap", cache=root / "cache")
    assert capped.labels[1]["overall"] == "both_bad"
    failed = run_trace(pairs, judge, cache=root / "cache", missing_other="fail")
    assert failed.failures == {pairs[1].id: "missing dimension 'paralinguistics'"}
    assert [p.id for p in failed.labels] == [pairs[0].id]
    assert failed.to_dict()["missing_other_definition"] == MISSING_OTHER["fail"]


def test_evaluation_applies_the_missing_content_rule_by_hand():
    dims = {"content": "1", "voice_quality": "1", "paralinguistics": "1"}
    gold = [
        PairLabels("p0", {**dims, "overall": "1"}),
        PairLabels("p1", {**dims, "overall": "both_bad"}),
        PairLabels("p2", {**dims, "overall": "2"}),
        PairLabels("p3", {**dims, "overall": "both_good"}),
    ]
    pred = [
        PairLabels("p0", {**dims, "overall": "1"}),
        PairLabels("p1", {"voice_quality": "1", "paralinguistics": "1", "overall": "1"}),
        PairLabels("p2", {"voice_quality": "2", "paralinguistics": "2", "overall": "both_bad"}),
        PairLabels("p3", {"overall": "both_good"}),  # overall-only judge: not a missing label
    ]
    ev = evaluate(pred, gold)  # released: p1 becomes both_bad (right), p2 stays wrong
    assert ev.n_evaluated == 4 and ev.accuracy["overall"] == 0.75
    assert ev.missing_content["ids"] == ["p1", "p2"] and ev.missing_content["changed"] == ["p1"]
    assert ev.counts["content"] == 1 and ev.confusion["both_bad"]["both_bad"] == 1
    ev = evaluate(pred, gold, missing_content="exclude")
    assert ev.n_evaluated == 2 and ev.accuracy["overall"] == 1.0 and ev.missing == []
    assert ev.missing_content == {"rule": "exclude", "definition": MISSING_CONTENT["exclude"],
                                  "n": 2, "ids": ["p1", "p2"]}  # fmt: skip


def test_cli_states_the_conventions_it_used(demo, tmp_path, capsys):
    from speech_drame.cli import main

    root, manifest, hcot = demo
    out = tmp_path / "labels.jsonl"
    assert main(["trace", "run", str(manifest), "--feature-cache", str(root / "cache"),
                 "--out", str(out), "--json-out", str(tmp_path / "run.json")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "judge rule: STAND-IN: fixed thresholds" in printed
    assert "fusion content_first: released SpeakBench fusion" in printed
    assert "missing content both_bad: released TRACE convention" in printed
    assert "blueprint emotion: absent: no offline speech-emotion model" in printed
    assert "missing other no-winner: released TRACE convention" in printed
    assert "blueprint dnsmos: personalised: DNSMOS P.835 personalised model" in printed
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["judge"] == "rule" and run["judge_description"].startswith("STAND-IN")
    assert run["dnsmos_variant"] == "personalised" and "released TRACE" in run["dnsmos_definition"]
    assert run["blueprint_cues"]["dnsmos"].startswith("personalised: DNSMOS P.835 personalised")
    assert run["missing_other_rule"] == "no-winner" and run["n_missing_other"] == 0
    assert run["missing_other_definition"] == MISSING_OTHER["no-winner"]
    assert {bp["voice_quality"]["dnsmos_variant"] for bp in run["blueprints"].values()} == {
        "personalised"
    }
    assert main(["trace", "run", str(manifest), "--feature-cache", str(root / "cache"),
                 "--dnsmos", "plain", "--missing-other", "fail", "--out", str(tmp_path / "p.jsonl"),
                 "--json-out", str(tmp_path / "plain.json")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "missing other fail: this package's earlier convention" in printed
    assert "blueprint dnsmos: plain: DNSMOS P.835 non-personalised model" in printed
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert plain["dnsmos_variant"] == "plain" and plain["missing_other_rule"] == "fail"
    assert {bp["voice_quality"]["dnsmos_variant"] for bp in plain["blueprints"].values()} == {
        "plain"
    }
    assert run["blueprint_cues"]["accent"].startswith("absent: ")
    pred = [p for p in load_labels(out, require_dimensions=False) if p.id != "pair0"]
    pred.append(PairLabels("pair0", {"voice_quality": "1", "paralinguistics": "1",
                                     "overall": "1"}))  # fmt: skip
    write_labels(pred, tmp_path / "edited.jsonl")
    for rule, line in (("exclude", "1 prediction(s) excluded"),
                       ("both_bad", "1 prediction(s) overall set to both_bad (1 changed)")):  # fmt: skip
        assert main(["trace", "evaluate", str(tmp_path / "edited.jsonl"), "--hcot", str(hcot),
                     "--missing-content", rule, "--json-out", str(tmp_path / f"{rule}.json")]) == 0  # fmt: skip
        assert (
            f"missing content: {rule} ({MISSING_CONTENT[rule]}); {line}" in capsys.readouterr().out
        )
        saved = json.loads((tmp_path / f"{rule}.json").read_text())
        assert saved["missing_content"]["ids"] == ["pair0"]
        assert saved["n_evaluated"] == (6 if rule == "exclude" else 7)


def demo_blueprint(root, name="audio/q0-right-clean-lively.wav"):
    from speech_drame.features.blueprint import extract_blueprint

    return extract_blueprint(root / name, {"question": "hi"}, cache=root / "cache")


def test_blueprint_names_its_dnsmos_model_the_absent_cues_and_the_30_s_cut(demo):
    import dataclasses

    from speech_drame.protocols.trace.blueprint import render_text, trace_blueprint

    root, _, _ = demo
    bp = demo_blueprint(root)
    record = trace_blueprint(bp)
    assert record["voice_quality"]["dnsmos_p808"] == round(bp.quality.p808, 2)
    assert "non-personalised" in record["voice_quality"]["dnsmos_model"]
    assert set(record["not_measured"]) == {"emotion", "accent"} and "audio_note" not in record
    text = render_text(record)
    assert "Not measured: emotion scores and accent scores" in text
    assert "non-personalised" in text and "P.808" in text and "Note:" not in text
    cut = dataclasses.replace(
        bp, truncated=True, audio=dataclasses.replace(bp.audio, truncated=True,
                                                      original_seconds=41.25),
    )  # fmt: skip
    note = trace_blueprint(cut)["audio_note"]
    assert note.startswith("the response lasts 41.2 s") and "first 30 s" in note
    assert f"Note: {note}" in render_text(trace_blueprint(cut))


EMOTIONS = {0: "angry", 1: "happy", 2: "neutral"}


def tiny_emotion_model(folder, sampling_rate=8000, id2label=EMOTIONS):
    """A random 1-layer wav2vec2 audio classifier saved to ``folder`` (no download)."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForSequenceClassification,
    )

    torch.manual_seed(0)
    config = Wav2Vec2Config(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        conv_dim=(8, 8), conv_kernel=(10, 3), conv_stride=(5, 2), num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2, classifier_proj_size=8, num_labels=len(id2label),
        id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    Wav2Vec2ForSequenceClassification(config).save_pretrained(folder)
    Wav2Vec2FeatureExtractor(sampling_rate=sampling_rate, do_normalize=True).save_pretrained(folder)
    return folder


def test_emotion_model_plug_in_adds_scores_to_the_blueprint(demo, tmp_path):
    import torch
    from scipy.signal import resample_poly
    from transformers import Wav2Vec2ForSequenceClassification

    from speech_drame.audio import load_audio
    from speech_drame.protocols.trace.affect import AudioClassifier
    from speech_drame.protocols.trace.blueprint import render_text
    from speech_drame.protocols.trace.protocol import load_pairs, pair_blueprints

    root, manifest, _ = demo
    folder = tiny_emotion_model(tmp_path / "emo")
    clf = AudioClassifier.from_folder(folder, "emotion")
    clip = root / "audio/q0-right-clean-lively.wav"
    scores = clf.scores(load_audio(clip))
    # reference: resample 16 -> 8 kHz, normalise, forward, softmax, all written out here
    x = resample_poly(load_audio(clip).samples, 1, 2)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    model = Wav2Vec2ForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(torch.tensor(x, dtype=torch.float32)[None]).logits[0].double()
    expected = torch.softmax(logits, -1).numpy()
    assert list(scores) == ["angry", "happy", "neutral"]
    assert np.allclose(list(scores.values()), expected, atol=1e-5)

    cache = FeatureCache(root / "cache")
    pairs = load_pairs(manifest)[:1]
    records, errors = pair_blueprints(pairs, cache, classifiers=[clf])
    assert errors == {}
    record = records[(pairs[0].audio_1, pairs[0].instruction)]
    emotion = record["paralinguistics"]["emotion"]
    assert emotion["model"] == str(folder) and sum(emotion["scores"].values()) == pytest.approx(
        1.0, abs=0.01
    )
    assert list(record["not_measured"]) == ["accent"]
    assert "emotion scores (emo): " in render_text(record)
    clf.scores = None  # a second run must read the scores from the cache
    again, _ = pair_blueprints(pairs, cache, classifiers=[clf])
    assert again == records


def test_emotion_model_folder_errors_name_the_folder(tmp_path):
    from speech_drame.protocols.trace.affect import AudioClassifier

    with pytest.raises(FileNotFoundError, match="nowhere: no config.json"):
        AudioClassifier.from_folder(tmp_path / "nowhere", "emotion")
    folder = tiny_emotion_model(tmp_path / "unnamed", id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match="unnamed: the model's id2label must name each"):
        AudioClassifier.from_folder(folder, "emotion")


def test_personalised_dnsmos_is_cached_per_clip_beside_the_plain_features(demo, monkeypatch):
    from dataclasses import asdict

    from speech_drame.audio import SCORED_SECONDS, load_audio
    from speech_drame.features import quality
    from speech_drame.features.blueprint import extract_blueprint
    from speech_drame.protocols.trace.protocol import load_pairs, pair_blueprints

    root, manifest, _ = demo
    pair = load_pairs(manifest)[0]
    key = (pair.audio_1, pair.instruction)
    cache = FeatureCache(root / "cache")
    records, errors = pair_blueprints([pair], cache)  # personalised by default
    assert errors == {}
    bp = extract_blueprint(pair.audio_1, {"question": pair.instruction}, cache=cache)
    expected = quality.dnsmos(load_audio(pair.audio_1, max_seconds=SCORED_SECONDS), "personalised")
    vq = records[key]["voice_quality"]
    assert vq["dnsmos_variant"] == "personalised" and "personalised model" in vq["dnsmos_model"]
    assert [vq[f"dnsmos_{k}"] for k in ("sig", "bak", "ovrl", "p808")] == [
        round(v, 2) for v in (expected.sig, expected.bak, expected.ovrl, expected.p808)
    ]
    assert abs(expected.ovrl - bp.quality.ovrl) > 0.05  # a different model, not a relabel
    assert cache.get("dnsmos-personalised", quality.VERSION, bp.sha256) == pytest.approx(
        asdict(expected)
    )
    assert cache.get("dnsmos", quality.VERSION, bp.sha256) == asdict(bp.quality)  # plain kept
    plain, _ = pair_blueprints([pair], cache, dnsmos="plain")
    assert plain[key]["voice_quality"]["dnsmos_ovrl"] == round(bp.quality.ovrl, 2)
    assert plain[key]["voice_quality"]["dnsmos_variant"] == "plain"

    def fail(*args, **kwargs):
        raise AssertionError("DNSMOS recomputed instead of read from the cache")

    monkeypatch.setattr(quality, "dnsmos", fail)
    again, _ = pair_blueprints([pair], cache)
    assert again == records
    with pytest.raises(ValueError, match="unknown DNSMOS variant 'p835'"):
        pair_blueprints([pair], cache, dnsmos="p835")  # type: ignore[arg-type]


def test_rule_judge_takes_the_ovrl_floor_of_the_blueprints_variant():
    from speech_drame.protocols.trace.judges import RuleThresholds

    floors = RuleThresholds().min_ovrl
    between = (floors["plain"] + floors["personalised"]) / 2
    good, mid = blueprint_record(ovrl=3.5), blueprint_record(ovrl=between)
    decisions, _ = RuleJudge().decide("hi", mid, good)  # plain: both acceptable, 3.5 clearly better
    assert decisions["voice_quality"].label == "2"
    assert "acceptable: yes / yes" in decisions["voice_quality"].reason
    for bp in (good, mid):
        bp["voice_quality"]["dnsmos_variant"] = "personalised"
    decisions, _ = RuleJudge().decide("hi", mid, good)
    assert "acceptable: no / yes" in decisions["voice_quality"].reason
    mid["voice_quality"]["dnsmos_variant"] = "plain"
    with pytest.raises(ValueError, match=r"one DNSMOS variant .* got \['personalised', 'plain'\]"):
        RuleJudge().decide("hi", mid, good)
    del mid["voice_quality"]["dnsmos_variant"]
    with pytest.raises(ValueError, match="dnsmos_variant"):
        RuleJudge().decide("hi", mid, good)


def test_a_classifier_folder_whose_weights_change_gets_a_new_cache_key(tmp_path):
    import os

    from speech_drame.protocols.trace.affect import folder_fingerprint

    (tmp_path / "config.json").write_text('{"id2label": {"0": "happy"}}')
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"a" * 64)
    first = folder_fingerprint(tmp_path)
    (tmp_path / "notes.txt").write_text("not a weight file")
    assert folder_fingerprint(tmp_path) == first
    weights.write_bytes(b"b" * 64)  # same size, new content, written later
    os.utime(weights, ns=(0, weights.stat().st_mtime_ns + 1_000_000_000))
    second = folder_fingerprint(tmp_path)
    assert second != first
    (tmp_path / "config.json").write_text('{"id2label": {"0": "sad"}}')
    assert folder_fingerprint(tmp_path) not in (first, second)
