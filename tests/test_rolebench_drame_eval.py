"""`speech-drame bench --scorer drame-eval:...` (the paper's RoleBench) with the tiny DRAME-Eval
adapter: end to end, killed and resumed, and a second leaderboard of the demo systems."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import soundfile as sf
from conftest import REPO, kill_bench_after_first_rows, save_tiny_evaluator, tone

from speech_drame.cli import main
from speech_drame.rolebench import run
from speech_drame.rolebench.results_log import read_rows

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTION = "You are a lighthouse keeper. A storm cuts the power. You say:"
DIMS = ["content_pass", "audio_quality", "human_likeness", "appropriateness"]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory) -> Path:
    """An (untrained) DRAME-Eval folder: tiny base from seed 1, a fresh LoRA adapter."""
    return save_tiny_evaluator(tmp_path_factory.mktemp("drame_eval"))


def _systems(root: Path, n: int, broken: bool = True) -> Path:
    """Scenarios q0..q{n-1}; systems a and b answer all with tones, ``broken`` lacks q1 and
    has an unreadable q2."""
    (root / "scenarios.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "question": QUESTION}) + "\n" for i in range(n))
    )
    for k, name in enumerate(("a", "b")):
        (root / "systems" / name).mkdir(parents=True)
        for i in range(n):
            samples = tone(0.6 + 0.1 * i, freq=150 + 40 * k + 10 * i, seed=10 * k + i)
            sf.write(root / "systems" / name / f"q{i}.wav", samples, 16_000)
    if broken:
        (root / "systems" / "broken").mkdir()
        sf.write(root / "systems" / "broken" / "q0.wav", tone(0.7, seed=99), 16_000)
        (root / "systems" / "broken" / "q2.wav").write_bytes(b"RIFF not a wave file")
    return root


def _args(root: Path, evaluator: Path, *extra: str) -> list[str]:
    return ["bench", "--scenarios", str(root / "scenarios.jsonl"), "--systems-dir",
            str(root / "systems"), "--out", str(root / "run"), "--scorer",
            f"drame-eval:{evaluator}", "--no-plots", "--resamples", "50", "--quiet",
            *extra]  # fmt: skip


def test_bench_scores_with_drame_eval_end_to_end(evaluator, tmp_path, capsys) -> None:
    from speech_drame.scorers.base import ClipInput
    from speech_drame.scorers.drame_eval import DrameEvalScorer

    root = _systems(tmp_path, 3)
    assert main(_args(root, evaluator, "--batch-size", "2")) == 1  # broken: missing, unreadable
    printed = capsys.readouterr()
    doc = json.loads((root / "run" / "leaderboard.json").read_text())
    scorer = DrameEvalScorer.from_pretrained(evaluator, batch_size=1)
    assert doc["scorer"] == scorer.id and doc["scorer"].startswith("drame-eval-")
    assert "DRAME-Eval" in doc["scorer_description"] and doc["rule"] == "all"
    for name in ("a", "b"):
        e = doc["systems"][name]
        assert e["n_scored"] == 3 and e["coverage"]["share"] == 1.0
        assert set(e["dimensions"]) == set(DIMS[1:]) and "content_pass" in e
    broken = doc["systems"]["broken"]
    assert broken["missing"] == ["q1"] and broken["coverage"]["scored"] == 1
    (failure,) = broken["failed"]
    assert failure["scenario"] == "q2" and failure["error_kind"] == "input"
    assert broken["content_pass"]["mean"] <= 1 / 3  # missing and failed count as not passing
    assert "DRAME-Eval" in printed.out and "drame-eval-" in printed.out

    rows = read_rows(root / "run" / "results.jsonl")
    assert len(rows) == 8 and {r["scorer"] for r in rows} == {scorer.id}
    row = next(r for r in rows if (r["system"], r["scenario"]) == ("b", "q2"))
    path = root / "systems" / "b" / "q2.wav"
    (direct,) = scorer.score([ClipInput("x", str(path), {"question": QUESTION})])
    for d in DIMS[1:]:
        assert row["scores"][d] == pytest.approx(direct.scores[d], abs=1e-5)
        assert row["distributions"][d] == pytest.approx(direct.distributions[d], abs=1e-5)
    assert row["content_pass"] == pytest.approx(direct.content_pass, abs=1e-5)
    assert row["audio"]["seconds"] == pytest.approx(0.8, abs=1e-3)
    assert row["label_mass"] == pytest.approx(direct.label_mass, abs=1e-6)
    assert row["decoding"] == "expectation" and "expectation decoding" in doc["scorer_description"]

    # the untrained model puts ~0.5% on the labels: every score is flagged, none dropped
    flagged = doc["systems"]["b"]["unreliable"]
    assert doc["systems"]["b"]["min_label_mass"] == 0.5
    assert {(u["scenario"], u["dimension"]) for u in flagged} == {
        (f"q{i}", d) for i in range(3) for d in DIMS
    }  # fmt: skip
    assert all(u["label_mass"] < 0.5 for u in flagged)
    assert "| Unreliable |" in printed.out and "Unreliable (label mass below 0.5" in printed.out
    assert "28 score(s) with label mass below 0.5: unreliable" in printed.err  # 7 clips x 4

    # the threshold is applied to the stored mass: nothing is scored again
    assert main(_args(root, evaluator, "--min-label-mass", "0.001")) == 1
    again = capsys.readouterr()
    assert "0 scored now, 8 already done" in again.err and "label mass below" not in again.err
    doc = json.loads((root / "run" / "leaderboard.json").read_text())
    assert all(e["unreliable"] == [] for e in doc["systems"].values())
    assert len(read_rows(root / "run" / "results.jsonl")) == 8

    # official decoding is another scorer id: its rows never mix with the expectation's (on
    # this model no label survives its top-k, so every clip is a model failure, not a score)
    assert main(_args(root, evaluator, "--decoding", "official")) == 1
    assert "8 scored now (8 failed)" in capsys.readouterr().err
    rows = read_rows(root / "run" / "results.jsonl")
    official = [r for r in rows if r["scorer"] != scorer.id]
    assert len(rows) == 16 and len(official) == 8
    assert all(r["error_kind"] in ("model", "input") and "scores" not in r for r in official)
    assert sum("survives official decoding" in r["error"] for r in official) == 7


def test_a_sigkilled_drame_eval_run_resumes_without_lost_or_duplicate_rows(
    evaluator, tmp_path
) -> None:
    root = _systems(tmp_path, 6, broken=False)
    args = _args(root, evaluator, "--batch-size", "1", "--workers", "1")  # rows every 2 clips
    results = root / "run" / "results.jsonl"
    kill_bench_after_first_rows(args, results, timeout=300)
    before = read_rows(results)
    assert 0 < len(before) < 12
    assert main(args) == 0
    after = read_rows(results)
    keys = [tuple(r[k] for k in run.KEY_FIELDS) for r in after]
    assert len(keys) == len(set(keys)) == 12
    assert after[: len(before)] == before
    assert not any("error" in r for r in after)


def test_a_second_demo_leaderboard_with_the_tiny_drame_eval(evaluator, tmp_path_factory, capsys):
    """The demo RoleBench systems (the ones `make demo` renders under build/demo_rolebench,
    rendered the same way when absent) ranked by DRAME-Eval instead of the LiteScorer."""
    from speech_drame.rolebench.demo import DEMO_SYSTEMS, render_demo_rolebench

    built = REPO / "build" / "demo_rolebench"
    if (built / "scenarios.jsonl").is_file() and all(
        (built / "systems" / name).is_dir() for name in DEMO_SYSTEMS
    ):
        scenario_file = built / "scenarios.jsonl"
        systems = {name: str(built / "systems" / name) for name in DEMO_SYSTEMS}
    else:
        scenario_file, systems = render_demo_rolebench(tmp_path_factory.mktemp("demo_rolebench"))
    n_scenarios = len(scenario_file.read_text().splitlines())
    out = tmp_path_factory.mktemp("demo_drame_eval") / "run"
    argv = ["bench", "--scenarios", str(scenario_file), "--out", str(out), "--scorer",
            f"drame-eval:{evaluator}", "--batch-size", "8", "--resamples", "200", "--quiet"]  # fmt: skip
    for name, folder in systems.items():
        argv += ["--system", f"{name}={folder}"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    doc = json.loads((out / "leaderboard.json").read_text(), parse_constant=pytest.fail)
    assert sorted(doc["ranking"]) == sorted(DEMO_SYSTEMS) == sorted(doc["systems"])
    assert [e["rank"] for e in doc["leaderboard"]] == list(range(1, len(DEMO_SYSTEMS) + 1))
    averages = [doc["systems"][s]["average"]["mean"] for s in doc["ranking"]]
    assert averages == sorted(averages, reverse=True)
    for e in doc["systems"].values():
        assert e["n_scored"] == n_scenarios and e["coverage"]["share"] == 1.0
        assert not e["missing"] and not e["failed"] and not e["not_scored"]
        assert set(e["dimensions"]) == set(DIMS[1:])
        for stat in [*e["dimensions"].values(), e["average"], e["content_pass"]]:
            assert stat["ci"][0] <= stat["mean"] <= stat["ci"][1]
        for stat in [*e["dimensions"].values(), e["average"]]:
            assert 1.0 <= stat["mean"] <= 5.0
    table = (out / "leaderboard.md").read_text()
    assert table.startswith("Scorer `drame-eval-") and table in printed  # what the numbers are
    assert "\n| Rank | System | Coverage | Content Pass |" in table
    assert f"{n_scenarios}/{n_scenarios} (100%)" in table
    lines = (out / "leaderboard.csv").read_text().splitlines()
    assert len(lines) == 1 + len(DEMO_SYSTEMS)
    for png in ("bars.png", "radar.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
