"""SpeechParaling-Bench verdict units and failure conventions, scored by hand.

A chat judge (a small HTTP server) gives a winner per target dimension; two candidates are
judged on multi-dimension queries, with an unusable answer and a missing response. Every
figure of the report is checked against the arithmetic written out below.
"""

from __future__ import annotations

import json

import pytest
import soundfile as sf
from conftest import tone
from judge_server import chat_body, reply
from test_judges import audio_parts, decode_wav
from test_paraling import prompt_text, target_dimensions

from speech_drame.protocols.paraling.queries import build_query, write_queries

SECONDS = {1.0: "base", 1.5: "A", 2.0: "B"}  # each system answers with clips of its own length
SPECS = [
    {"id": "pc1", "task": "paralanguage_control", "subtask": "common", "sentence": "We won.",
     "dimensions": {"emotion": "happy", "speed": "fast"}},
    {"id": "pc2", "task": "paralanguage_control", "subtask": "common", "sentence": "Quiet now.",
     "dimensions": {"volume": "whisper"}},
    {"id": "sa1", "task": "situational_adaptation", "utterance": "My knees hurt again today.",
     "dimensions": {"emotion": "sad", "age": "elderly"}},
    {"id": "dv1", "task": "dynamic_variation", "subtask": "transitional",
     "sentence": "I smiled, then I read it.", "dimension": "emotion", "from": "happy",
     "to": "sad"},
]  # fmt: skip
KEY_TEXT = {"pc1": "We won.", "pc2": "Quiet now.", "sa1": "My knees hurt", "dv1": "I smiled"}
# the judge's verdict per (candidate, query, unit), by system role; "FAIL": an unusable answer
OUTCOMES = {
    ("A", "pc1"): {"emotion": "candidate", "speed": "baseline"},
    ("A", "pc2"): {"volume": "baseline"},
    ("A", "sa1"): {"emotion": "tie", "age": "candidate"},
    ("A", "dv1"): {"emotion": "candidate"},
    ("B", "pc1"): {"emotion": "baseline", "speed": "tie"},
    ("B", "pc2"): {"volume": "baseline"},
    ("B", "sa1"): "FAIL",
    # B/dv1: no response file, a failure without a request
}


def judge_route(payload, n):
    """Answer from :data:`OUTCOMES`, telling the systems apart by their clip lengths."""
    text = prompt_text(payload)
    (qid,) = [q for q, key in KEY_TEXT.items() if key in text]
    first, second = (SECONDS[len(decode_wav(p)[0]) / 16_000] for p in audio_parts(payload))
    candidate = first if first != "base" else second
    outcome = OUTCOMES[(candidate, qid)]
    if outcome == "FAIL":
        return reply(chat_body("I'd rather not say."))
    verdicts = {}
    for label in target_dimensions(payload):
        role = outcome[label]
        winner = 0 if role == "tie" else (1 if (first == "base") == (role == "baseline") else 2)
        verdicts[label] = {"score_1": 2, "score_2": 2, "winner": winner}
    answer = {"response_1": "steady at 0.2-0.8 s", "response_2": "steady at 0.1-0.9 s",
              "comparison": "as scripted", "verdicts": verdicts}  # fmt: skip
    return reply(chat_body(json.dumps(answer)))


@pytest.fixture
def fixture_run(tmp_path, server):  # noqa: F811
    queries = [build_query(s) for s in SPECS]
    path = write_queries(queries, tmp_path / "queries.jsonl")
    for seconds, system in SECONDS.items():
        (tmp_path / system).mkdir()
        for q in queries:
            if (system, q.id) != ("B", "dv1"):
                sf.write(tmp_path / system / f"{q.id}.wav", tone(seconds), 16_000)
    server.routes["fixture"] = judge_route
    argv = ["paraling", "run", str(path), "--responses", str(tmp_path), "--baseline", "base",
            "--candidates", "A", "B", "--judge", "chat", "--endpoint", server.url,
            "--model", "fixture", "--timeout", "5", "--max-retries", "0"]  # fmt: skip
    return tmp_path, argv


def pct(points, n):
    return 100.0 * points / n


def eq3(pairwise, totals):
    """Equation 3 written out: weights are the candidates' point totals, normalised."""
    if sum(totals) == 0:
        return sum(pairwise) / len(pairwise)
    return sum(p * t for p, t in zip(pairwise, totals, strict=True)) / sum(totals)


# Points by hand from OUTCOMES (win 1, tie 0.5, loss 0), per unit:
#   A: pc1 emotion 1, speed 0; pc2 volume 0; sa1 emotion 0.5, age 1; dv1 emotion 1 -> 3.5 / 6
#   B: pc1 emotion 0, speed 0.5; pc2 volume 0; sa1 emotion, age failed; dv1 emotion failed
#      -> 0.5 points, 3 valid units, 3 failed units
# group -> (A points, A units, B points, B valid units, B failed units)
GROUPS = {
    "all": (3.5, 6, 0.5, 3, 3),
    "paralanguage_control": (1.0, 3, 0.5, 3, 0),
    "situational_adaptation": (1.5, 2, 0.0, 0, 2),
    "dynamic_variation": (1.0, 1, 0.0, 0, 1),
    "emotion": (2.5, 3, 0.0, 1, 2),  # pc1, sa1 and the dynamic variation verdict
    "speed": (0.0, 1, 0.5, 1, 0),
    "volume": (0.0, 1, 0.0, 1, 0),  # every candidate 0 points: equal weights
    "age": (1.0, 1, 0.0, 0, 1),
}


def expected(group, failed_as):
    """(A score, B score or None, baseline score) of ``group`` under ``failed_as``."""
    a_points, a_n, b_points, b_valid, b_failed = GROUPS[group]
    b_n = b_valid + b_failed if failed_as == "loss" else b_valid
    a = pct(a_points, a_n)
    if not b_n:  # skip and no valid B verdict: B has no score and leaves equation 3
        return a, None, eq3([100 - a], [a_points])
    b = pct(b_points, b_n)
    return a, b, eq3([100 - a, 100 - b], [a_points, b_points])


@pytest.mark.parametrize("failed_as", ["loss", "skip"])
def test_multi_dimension_queries_with_failures_scored_by_hand(fixture_run, failed_as, capsys):
    from speech_drame.cli import main

    root, argv = fixture_run
    out = root / f"run-{failed_as}.json"
    assert main([*argv, "--failed-as", failed_as, "--json-out", str(out)]) == 1  # failures
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())["report"]
    assert report["failed_as"]["value"] == failed_as
    assert f"--failed-as {failed_as}: {report['failed_as']['definition']}" in printed
    assert "one verdict per target dimension" in report["verdict_unit"]
    assert report["judge"]["stand_in"] is False and "judge: chat audio-LLM judge" in printed
    # 8 comparisons (B/dv1 without a request), 12 units; B: sa1 (2 units) and dv1 (1) failed
    assert (report["n_judgments"], report["n_failures"]) == (8, 2)
    assert (report["n_units"], report["n_failed_units"]) == (12, 3)
    assert set(report["failures"]) == {"B/sa1", "B/dv1"}
    assert "B: missing response" in report["failures"]["B/dv1"]
    assert "failures: 2/8 comparisons, 3/12 verdict units (A 0, B 3)" in printed

    groups = {"all": report["overall"], **report["by_task"], **report["by_dimension"]}
    assert set(groups) == set(GROUPS)
    for name, group in groups.items():
        a, b, base = expected(name, failed_as)
        cands = group["candidates"]
        assert cands["A"]["score"] == pytest.approx(a), name
        assert cands["B"]["failures"] == GROUPS[name][4], name
        if b is None:
            assert cands["B"]["score"] is None and cands["B"]["note"] == "no valid verdict"
        else:
            assert cands["B"]["score"] == pytest.approx(b), name
        assert group["baseline"]["score"] == pytest.approx(base), name
    # the figures that differ between the conventions, spelled out
    overall_b = report["overall"]["candidates"]["B"]["score"]
    assert overall_b == pytest.approx(100 * 0.5 / (6 if failed_as == "loss" else 3))
    assert report["by_dimension"]["volume"]["baseline"]["weights"] == {"A": 0.5, "B": 0.5}
    assert report["by_dimension"]["volume"]["baseline"]["score"] == 100.0
    weights = report["overall"]["baseline"]["weights"]
    assert weights == pytest.approx({"A": 3.5 / 4, "B": 0.5 / 4})


def test_verdict_units_and_their_prompts():
    pc, pc2, sa, dv = (build_query(s) for s in SPECS)
    assert pc.units == (("emotion",), ("speed",)) and sa.units == (("emotion",), ("age",))
    assert dv.units == (("emotion",),) and pc2.units == (("volume",),)
    assert pc.unit_prompt(("speed",)) == "Please read this sentence with a fast speed: We won."
    assert sa.unit_prompt(("age",)) == "My knees hurt again today. [age: elderly]"
    assert pc2.unit_prompt(("volume",)) == pc2.instruction and dv.unit_prompt(dv.units[0]) == (
        dv.instruction
    )
    with pytest.raises(ValueError, match="repeated dimensions"):
        type(pc)(**{**pc.to_dict(), "dimensions": ("emotion", "emotion")})


def test_rule_scorer_rates_each_dimension_on_its_own_target():
    """One response, two units: content and fluency are shared, paralinguistics reads the
    unit's target (happy -> F0 spread, fast -> speaking rate), each by its own rule."""
    from types import SimpleNamespace

    from speech_drame.protocols.paraling.rule_scorer import CUES, rule_aspect_scores

    pc = build_query(SPECS[0])
    bp = SimpleNamespace(
        transcript=SimpleNamespace(text="We won."),
        quality=SimpleNamespace(ovrl=2.0),
        words_per_second=3.0,
        prosody=SimpleNamespace(f0_std_st=4.5),
        context={},
    )
    emotion, speed = (rule_aspect_scores(pc, unit, bp) for unit in pc.units)
    assert emotion["content"] == speed["content"] == 3.0  # the transcript is the sentence
    assert emotion["fluency"] == speed["fluency"] == pytest.approx(3 * (2.0 - 1.5) / 1.0)
    _, lo, hi = CUES["happy"]
    assert emotion["paralinguistics"] == pytest.approx(3 * (4.5 - lo) / (hi - lo))
    _, lo, hi = CUES["fast"]
    assert speed["paralinguistics"] == pytest.approx(3 * (3.0 - lo) / (hi - lo))
    assert emotion["paralinguistics"] != speed["paralinguistics"]
