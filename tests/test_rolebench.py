"""RoleBench: leaderboard, failures listed, resume, shards, SIGKILL recovery, multi-turn."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX, kill_bench_after_first_rows

from speech_drame.cli import main
from speech_drame.features.blueprint import extract_blueprints
from speech_drame.rolebench import report, run, scenarios
from speech_drame.rolebench.multiturn import aggregate_turns
from speech_drame.rolebench.results_log import ResultsLog, read_rows
from speech_drame.scorers.lite import TrainingOptions, train_lite_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SR = 16_000
QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"
PROFILE = "John Dashwood, a cautious, rather selfish gentleman"
SCENE = "John weighs how much to give his stepmother and sisters"
IDS = ("s1", "s2", "s3")


def _noisy(x: np.ndarray, level: float, seed: int) -> np.ndarray:
    y = x + (level * np.random.default_rng(seed).standard_normal(len(x))).astype(np.float32)
    return 0.9 * y / np.abs(y).max()


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> dict[str, Path]:
    """Three systems (clean, noisy, broken: one missing, one unreadable), scenario files and a
    tiny scorer per mode trained on the clean and noisy responses."""
    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    root = tmp_path_factory.mktemp("rolebench")
    clean = [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))[:3]]
    systems = root / "systems"
    for name in ("clean", "noisy", "broken"):
        (systems / name).mkdir(parents=True)
    for i, (sid, x) in enumerate(zip(IDS, clean, strict=True)):
        sf.write(systems / "clean" / f"{sid}.wav", 0.9 * x / np.abs(x).max(), SR)
        sf.write(systems / "noisy" / f"{sid}.wav", _noisy(x, 0.15, i), SR)
    shutil.copy(systems / "clean" / "s1.wav", systems / "broken" / "s1.wav")
    (systems / "broken" / "s3.wav").write_bytes(b"RIFF garbage, not a wave file")
    archetype = root / "archetype.jsonl"
    archetype.write_text("".join(json.dumps({"id": s, "question": QUESTION}) + "\n" for s in IDS))
    dialogues = [
        {"dialogue_id": "d1", "profile": PROFILE, "scene": SCENE, "traits": PROFILE,
         "turns": [{"turn": 1, "scenario_id": "s2"}, {"turn": 0, "scenario_id": "s1"}]},
        {"dialogue_id": "d2", "profile": PROFILE, "scene": SCENE, "traits": PROFILE,
         "turns": [{"turn": 0, "scenario_id": "s3"}]},
    ]  # fmt: skip
    multi = root / "dialogues.jsonl"
    multi.write_text("".join(json.dumps(d) + "\n" for d in dialogues))
    cache = tmp_path_factory.getbasetemp() / "librivox-features"  # shared with test_space
    paths = [str(systems / s / f"{i}.wav") for s in ("clean", "noisy") for i in IDS]
    noisy = [s == "noisy" for s in ("clean", "noisy") for _ in IDS]
    quality = [[2, 1, 2] if n else [5, 4, 5] for n in noisy]
    scorers = root / "scorers"
    for mode, ctx in (
        ("archetype", {"question": QUESTION}),
        ("realism", {"profile": PROFILE, "scene": SCENE, "traits": PROFILE}),
    ):
        batch = extract_blueprints(paths, [ctx] * len(paths), cache, progress=False)
        assert not batch.errors
        labels = (
            {"audio_quality": quality, "content_pass": [[True, True, not n] for n in noisy]}
            if mode == "archetype"
            else {"pitch_variation": quality, "local_story_fit": quality}
        )
        opts = TrainingOptions(epochs=60, seed=0)
        train_lite_model(batch.blueprints, labels, mode, opts).save(scorers / mode)
    return {"root": root, "systems": systems, "archetype": archetype, "multi": multi,
            "cache": cache, "scorers": scorers}  # fmt: skip


def _bench(b: dict[str, Path], out: Path, *extra: str, scenarios: str = "archetype") -> int:
    return main([
        "bench", "--scenarios", str(b[scenarios]), "--systems-dir", str(b["systems"]),
        "--out", str(out), "--scorer", str(b["scorers"]), "--feature-cache", str(b["cache"]),
        "--resamples", "200", *extra,
    ])  # fmt: skip


def test_leaderboard_lists_failures_and_ranks_clean_above_noisy(bench, tmp_path, capsys) -> None:
    human = tmp_path / "human.json"
    human.write_text(json.dumps({"clean": 4.0, "noisy": 2.0, "broken": 3.0}))
    out = tmp_path / "run"
    assert _bench(bench, out, "--human", str(human)) == 1  # broken: one missing, one unreadable
    printed = capsys.readouterr()
    doc = json.loads((out / "leaderboard.json").read_text())
    systems = doc["systems"]
    assert systems["broken"]["missing"] == ["s2"]
    (failure,) = systems["broken"]["failed"]
    assert failure["scenario"] == "s3" and "unreadable" in failure["error"]
    assert systems["broken"]["n_scored"] == 1 and systems["clean"]["n_scored"] == 3
    q = {s: systems[s]["dimensions"]["audio_quality"] for s in ("clean", "noisy")}
    assert q["clean"]["mean"] > q["noisy"]["mean"] + 1.0
    for stat in q.values():
        assert stat["ci"][0] <= stat["mean"] <= stat["ci"][1]
    rows = read_rows(out / "results.jsonl")
    clean_rows = [r for r in rows if r["system"] == "clean"]
    want = np.mean([r["scores"]["audio_quality"] for r in clean_rows])
    assert q["clean"]["mean"] == pytest.approx(want)
    passed = np.mean([r["content_pass"] >= 0.5 for r in clean_rows])
    assert systems["clean"]["content_pass"]["mean"] == pytest.approx(passed)
    avg = systems["noisy"]["average"]["mean"]
    dims = systems["noisy"]["dimensions"]
    assert avg == pytest.approx(np.mean([d["mean"] for d in dims.values()]))
    assert doc["ranking"][-1] == "noisy"
    assert doc["human_agreement"]["n_systems"] == 3
    assert "missing response for scenario s2" in printed.out
    assert "unreadable" in (out / "leaderboard.md").read_text()
    header = (out / "leaderboard.csv").read_text().splitlines()[0].split(",")
    assert header[:8] == ["rank", "system", "coverage", "n_scenarios", "n_scored", "n_missing",
                          "n_failed", "n_not_scored"]  # fmt: skip
    assert "audio_quality_ci_low" in header and "content_pass" in header
    for png in ("bars.png", "radar.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # a rerun scores nothing and adds no row; a changed file is scored again
    assert _bench(bench, out, "--no-plots") == 1
    assert "0 scored now, 8 already done" in capsys.readouterr().err
    assert len(read_rows(out / "results.jsonl")) == len(rows) == 8
    assert len({(r["system"], r["scenario"]) for r in rows}) == 8


def test_results_log_drops_and_cuts_a_torn_final_line(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsLog(path) as log:
        log.append({"a": 1})
        log.append({"a": 2})
    with path.open("ab") as handle:
        handle.write(b'{"a": 3, "tor')
    assert read_rows(path) == [{"a": 1}, {"a": 2}]
    with ResultsLog(path) as log:
        log.append({"a": 4})
    assert read_rows(path) == [{"a": 1}, {"a": 2}, {"a": 4}]
    path.write_bytes(b'{"a": 1}\nnot json\n')
    with pytest.raises(ValueError, match=r"r.jsonl:2: not a JSON row"):
        read_rows(path)


def test_shards_partition_the_work_and_merge_without_duplicates(bench, tmp_path, capsys) -> None:
    items = list(range(11))
    parts = [run.shard(items, r, 3) for r in range(3)]
    assert sorted(sum(parts, [])) == items and all(parts)
    with pytest.raises(ValueError, match="rank 3 of 3"):
        run.shard(items, 3, 3)
    out = tmp_path / "run"
    assert _bench(bench, out, "--rank", "0", "--world-size", "2", "--no-plots") == 0
    assert not (out / "leaderboard.json").exists()  # shard 1 has not finished yet
    assert len(read_rows(out / "results.rank0.jsonl")) == 4
    # the last shard to finish merges and reports (status 1: the broken system's problems)
    assert _bench(bench, out, "--rank", "1", "--world-size", "2", "--no-plots") == 1
    assert (out / "leaderboard.json").exists() and not list(out.glob("results.rank*.jsonl"))
    merged = read_rows(out / "results.jsonl")
    keys = [tuple(r[k] for k in run.KEY_FIELDS) for r in merged]
    assert len(keys) == len(set(keys)) == 8
    capsys.readouterr()
    assert _bench(bench, out, "--no-plots") == 1
    assert "0 scored now, 8 already done" in capsys.readouterr().err
    assert read_rows(out / "results.jsonl") == merged


def test_a_sigkilled_run_resumes_with_no_lost_or_duplicate_rows(bench, tmp_path) -> None:
    systems = tmp_path / "systems"
    (systems / "v").mkdir(parents=True)
    for i, sid in enumerate(IDS):
        x = sf.read(bench["systems"] / "clean" / f"{sid}.wav", dtype="float32")[0]
        sf.write(systems / "v" / f"{sid}.wav", _noisy(x, 0.05, 100 + i), SR)
    out, cache = tmp_path / "run", tmp_path / "cache"  # a cold cache: real extraction work
    args = ["bench", "--scenarios", str(bench["archetype"]), "--systems-dir", str(systems),
            "--out", str(out), "--scorer", str(bench["scorers"]), "--feature-cache", str(cache),
            "--no-plots", "--resamples", "50", "--batch-size", "1", "--workers", "1"]  # fmt: skip
    results = out / "results.jsonl"
    kill_bench_after_first_rows(args, results, timeout=60)
    before = read_rows(results)
    assert 0 < len(before) < 3
    assert main(args) == 0
    after = read_rows(results)
    keys = [tuple(r[k] for k in run.KEY_FIELDS) for r in after]
    assert len(keys) == len(set(keys)) == 3
    assert after[: len(before)] == before


def test_multi_turn_dialogues_are_aggregated_from_turn_scores(bench, tmp_path) -> None:
    out = tmp_path / "run"
    status = _bench(bench, out, "--aggregation", "recency", "--decay", "0.5", "--no-plots",
                    scenarios="multi")  # fmt: skip
    assert status == 1  # the broken system lacks s2 and cannot read s3
    doc = json.loads((out / "leaderboard.json").read_text())
    assert doc["multi_turn"] is True
    broken = doc["systems"]["broken"]
    assert broken["n_dialogues_scored"] == 0
    assert broken["incomplete_dialogues"] == ["d1", "d2"]
    rows = {(r["system"], r["scenario"]): r.get("scores") for r in read_rows(out / "results.jsonl")}
    clean = doc["systems"]["clean"]
    assert clean["n_dialogues_scored"] == 2 and clean["aggregation"] == "recency"
    d1 = aggregate_turns([rows["clean", "s1"], rows["clean", "s2"]], "recency", decay=0.5)
    d2 = rows["clean", "s3"]
    for dim, stat in clean["dimensions"].items():
        assert stat["mean"] == pytest.approx((d1[dim] + d2[dim]) / 2)


def test_demo_systems_render_once_per_scenario(tmp_path) -> None:
    from speech_drame.rolebench.demo import DEMO_SYSTEMS, render_demo_rolebench

    scenario_file, systems = render_demo_rolebench(tmp_path, n_scenarios=1)
    (scenario,) = [json.loads(line) for line in scenario_file.read_text().splitlines()]
    assert scenario["question"].endswith("You say:")
    assert sorted(systems) == sorted(DEMO_SYSTEMS) and len(systems) >= 4
    wavs = [Path(systems[name]) / f"{scenario['id']}.wav" for name in sorted(systems)]
    infos = [sf.info(w) for w in wavs]
    assert {i.samplerate for i in infos} == {SR}
    assert len({round(i.duration, 2) for i in infos}) == len(wavs)  # voices and deliveries differ
    stamps = [w.stat().st_mtime_ns for w in wavs]
    render_demo_rolebench(tmp_path, n_scenarios=1)
    assert [w.stat().st_mtime_ns for w in wavs] == stamps  # a rerun keeps the renderings


def test_scenarios_from_an_evalbench_config_and_split(official_dataset_dir, official_samples_dir):
    for config, folder in (("realism", "realism_data"), ("archetype", "archetype_data")):
        got = scenarios.load_dataset_scenarios(official_dataset_dir, config, "test")
        lines = (official_samples_dir / folder / "test.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
        assert got.mode == config and not got.multi_turn
        by_id = {s.id: s.context for s in got.scenarios}
        # one scenario per prompt: archetype's two systems' clips of one question are one
        names = {r["id"].removesuffix(".wav").rsplit("_", 1)[0] if config == "archetype"
                 else r["id"]: r for r in records}  # fmt: skip
        assert set(by_id) == set(names) and len(by_id) == (1 if config == "archetype" else 2)
        for name, r in names.items():
            want = (
                {"question": r["question"]}
                if config == "archetype"
                else {"profile": r["char_profile"], "scene": r["local_scene"],
                      "traits": r["char_style"]}
            )  # fmt: skip
            assert by_id[name] == want
    with pytest.raises(ValueError, match="field 'question' must be a non-empty string"):
        scenarios.scenario_from_row({"id": "x", "question": " "}, "archetype", "row 0")


@pytest.mark.parametrize("bad", ["../outside", "/etc/passwd", "sub/x", "..", ""])
def test_scenario_ids_that_are_not_file_names_are_refused(tmp_path, bad) -> None:
    single = tmp_path / "single.jsonl"
    single.write_text(json.dumps({"id": "ok", "question": QUESTION}) + "\n"
                      + json.dumps({"id": bad, "question": QUESTION}) + "\n")  # fmt: skip
    with pytest.raises(ValueError, match=r"single\.jsonl:2: field 'id'"):
        scenarios.load_scenario_file(single)
    multi = tmp_path / "multi.jsonl"
    dialogue = {"dialogue_id": "d1", "profile": PROFILE, "scene": SCENE, "traits": "Cautious",
                "turns": [{"turn": 0, "scenario_id": bad}]}  # fmt: skip
    multi.write_text(json.dumps(dialogue) + "\n")
    with pytest.raises(ValueError, match=r"multi\.jsonl:1 .*turns\[0\]"):
        scenarios.load_scenario_file(multi)
    (tmp_path / "sys").mkdir()
    (tmp_path / "outside.wav").write_bytes(b"RIFF")
    with pytest.raises(ValueError, match="cannot be a file name"):
        run.find_response(tmp_path / "sys", "../outside")


def test_leaderboard_json_is_strict_with_reasons_beside_undefined_values(tmp_path) -> None:
    scenario_set = scenarios.ScenarioSet("archetype", (
        scenarios.Scenario("s1", "archetype", {"question": QUESTION}),
        scenarios.Scenario("s2", "archetype", {"question": QUESTION}),
    ))  # fmt: skip
    plan = run.Plan(
        [run.WorkItem(sys_, s, tmp_path / f"{s.id}.wav", "h")
         for sys_ in ("a", "b", "c") for s in scenario_set.scenarios],
        {"a": [], "b": [], "c": []},
    )  # fmt: skip
    key = {"scorer": "x", "sha256": "h", "context": scenarios.context_hash({"question": QUESTION})}
    rows = [
        {"system": it.system, "scenario": it.scenario.id, **key,
         "scores": {"audio_quality": 3.0}, "content_pass": 0.9}
        if it.system != "c"
        else {"system": "c", "scenario": it.scenario.id, **key,
              "error": "unreadable", "error_kind": "input", "stage": "input"}
        for it in plan.items
    ]  # fmt: skip
    table = report.system_table(rows, scenario_set, plan, "x", n_resamples=50)
    agreement = report.human_agreement(table, {"a": 1.0, "b": 2.0, "c": 3.0})
    paths = report.write_reports(table, tmp_path / "run", agreement=agreement,
                                 plots=False)  # fmt: skip

    def refuse(name):
        raise ValueError(f"bare {name} in leaderboard.json")

    doc = json.loads(paths["json"].read_text(), parse_constant=refuse)
    c = doc["systems"]["c"]
    assert c["average"]["mean"] is None and "no scored" in c["average"]["note"]
    assert doc["human_agreement"]["spearman"] is None
    assert "undefined" in doc["human_agreement"]["note"]
    assert "c" in doc["human_agreement"]["note"]
    assert "undefined" in paths["markdown"].read_text()


def test_low_label_mass_is_listed_and_counted_at_the_threshold_given(tmp_path) -> None:
    """Rows with label mass: a score below the threshold is listed as unreliable (and kept in
    the statistics); rows without it (a LiteScorer) get no column and no list."""
    scenario_set = scenarios.ScenarioSet("archetype", (
        scenarios.Scenario("s1", "archetype", {"question": QUESTION}),
        scenarios.Scenario("s2", "archetype", {"question": QUESTION}),
    ))  # fmt: skip
    plan = run.Plan([run.WorkItem(sys_, s, tmp_path / f"{s.id}.wav", "h")
                     for sys_ in ("a", "b") for s in scenario_set.scenarios],
                    {"a": [], "b": []})  # fmt: skip
    key = {"scorer": "x", "sha256": "h", "context": scenarios.context_hash({"question": QUESTION})}
    mass = {("a", "s1"): 0.9, ("a", "s2"): 0.3, ("b", "s1"): 0.45, ("b", "s2"): 0.8}
    rows = [{"system": it.system, "scenario": it.scenario.id, **key,
             "scores": {"audio_quality": 3.0},
             "label_mass": {"audio_quality": mass[it.system, it.scenario.id]}}
            for it in plan.items]  # fmt: skip

    def flagged(threshold):
        table = report.system_table(rows, scenario_set, plan, "x", n_resamples=20,
                                    min_label_mass=threshold)  # fmt: skip
        return table, {s: [(u["scenario"], u["label_mass"]) for u in e["unreliable"]]
                       for s, e in table.items()}  # fmt: skip

    table, lists = flagged(0.5)
    assert lists == {"a": [("s2", 0.3)], "b": [("s1", 0.45)]}
    assert table["a"]["dimensions"]["audio_quality"]["mean"] == 3.0  # kept in the statistics
    markdown, csv_text = report.to_markdown(table), report.to_csv(table)
    assert "| Not scored | Unreliable |" in markdown
    assert "Unreliable (label mass below 0.5; kept in the statistics):" in markdown
    assert "- a: s2, Audio Quality: label mass 0.300" in markdown
    assert csv_text.splitlines()[0].split(",")[8] == "n_unreliable"
    assert {r.split(",")[1]: r.split(",")[8] for r in csv_text.splitlines()[1:]} == {
        "a": "1", "b": "1"
    }  # fmt: skip
    assert flagged(0.4)[1] == {"a": [("s2", 0.3)], "b": []}
    assert flagged(0.2)[1] == {"a": [], "b": []}
    with pytest.raises(ValueError, match=r"min_label_mass must be in \[0, 1\], got -0.1"):
        flagged(-0.1)
    for row in rows:
        del row["label_mass"]
    table = report.system_table(rows, scenario_set, plan, "x", n_resamples=20)
    assert all("unreliable" not in e for e in table.values())
    assert "Unreliable" not in report.to_markdown(table)
    assert "n_unreliable" not in report.to_csv(table)


def test_two_explicit_shard_processes_end_with_one_merged_leaderboard(bench, tmp_path) -> None:
    """`--rank r --world-size 2` in two real processes, no accelerate: the last one to finish
    merges the shard files and writes the leaderboard; the other says it left that to it."""
    out = tmp_path / "run"
    args = ["bench", "--scenarios", str(bench["archetype"]), "--systems-dir", str(bench["systems"]),
            "--out", str(out), "--scorer", str(bench["scorers"]), "--feature-cache", str(bench["cache"]),
            "--no-plots", "--resamples", "50", "--world-size", "2"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    env = {k: v for k, v in env.items() if not k.startswith(("ACCELERATE_", "WORLD_SIZE"))}
    procs = [
        subprocess.Popen([sys.executable, "-m", "speech_drame.cli", *args, "--rank", str(rank)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for rank in (0, 1)
    ]  # fmt: skip
    done = [p.communicate(timeout=600) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 1], done  # the merger reports the broken system's problems
    merger = [i for i, p in enumerate(procs) if p.returncode == 1]
    assert len(merger) == 1
    assert "| rank |" in done[merger[0]][0] or "leaderboard" in done[merger[0]][0]
    waiting = done[1 - merger[0]][1]
    assert "the last shard to finish merges" in waiting
    assert not list(out.glob("results.rank*.jsonl")) and not list(out.glob("shard.rank*"))
    rows = read_rows(out / "results.jsonl")
    keys = [tuple(r[k] for k in run.KEY_FIELDS) for r in rows]
    assert len(keys) == len(set(keys)) == 8
    doc = json.loads((out / "leaderboard.json").read_text())
    assert doc["systems"]["clean"]["n_scored"] == 3
    assert doc["systems"]["broken"]["missing"] == ["s2"]


def test_rank_without_world_size_is_refused(bench, tmp_path, capsys) -> None:
    assert _bench(bench, tmp_path / "run", "--rank", "1") == 2
    assert "--rank needs --world-size" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("human", "message"),
    [
        ({"clean": 4.0, "typo": 2.0}, r"did not score: \['typo'\]"),
        ({"clean": 4.0, "noisy": "high"}, r"'noisy' is 'high', not a finite number"),
        ({"clean": 4.0}, r"need human scores of at least 2 systems, got 1"),
        ({}, r"need human scores of at least 2 systems, got 0"),
        ([4.0, 2.0], r"a JSON object of system -> score, got list"),
    ],
)
def test_bad_human_scores_stop_the_run_before_any_scoring(bench, tmp_path, capsys, human, message):
    path = tmp_path / "human.json"
    path.write_text(json.dumps(human))
    out = tmp_path / "run"
    assert _bench(bench, out, "--human", str(path)) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (out / "results.jsonl").exists()  # nothing was scored


# --- the scorer contract: a fake scorer, no audio decoded -------------------------------------


class FakeScorer:
    """A :class:`~speech_drame.scorers.base.Scorer` that rates a file by its bytes; ``plan``
    gives, per clip id ``system/scenario``, outcomes to use up first: ``"model"`` or ``"input"``
    (a failure of that kind) or ``"raise"`` (the whole call raises, like an out-of-memory)."""

    config = "archetype"
    dimensions = ("audio_quality", "human_likeness", "appropriateness")
    content_pass = True
    id = "fake-1"
    description = "a fake scorer that rates files by their bytes"
    training_data = None
    batch_size = 2

    def __init__(self, plan: dict[str, list[str]] | None = None) -> None:
        self.plan = {k: list(v) for k, v in (plan or {}).items()}
        self.calls: list[str] = []
        self.contexts: dict[str, dict[str, str]] = {}

    def score(self, clips, *, progress: bool = False):
        from speech_drame.scorers.base import ClipScores

        out = []
        for clip in clips:
            self.calls.append(clip.id)
            self.contexts[clip.id] = dict(clip.context)
            todo = self.plan.get(clip.id)
            outcome = todo.pop(0) if todo else "ok"
            if outcome == "raise":
                raise RuntimeError("CUDA out of memory (fake)")
            if outcome in ("model", "input"):
                out.append(
                    ClipScores.failure(clip.id, f"{clip.id}: fake {outcome} failure", outcome)
                )
                continue
            data = Path(clip.audio).read_bytes()
            value = 1.0 + (sum(data) % 401) / 100.0
            out.append(ClipScores(
                clip.id, scores=dict.fromkeys(self.dimensions, value),
                distributions=dict.fromkeys(self.dimensions, [0.2] * 5),
                content_pass=0.9 if b"pass" in data else 0.1,
            ))  # fmt: skip
        return out


def _fake_setup(root: Path, systems: dict[str, dict[str, bytes]], questions: dict[str, str]):
    scenario_file = root / "scenarios.jsonl"
    scenario_file.write_text(
        "".join(json.dumps({"id": sid, "question": q}) + "\n" for sid, q in questions.items())
    )
    for name, files in systems.items():
        (root / "systems" / name).mkdir(parents=True, exist_ok=True)
        for sid, data in files.items():
            (root / "systems" / name / f"{sid}.wav").write_bytes(data)
    return scenario_file


def _fake_bench(monkeypatch, scorer: FakeScorer, root: Path, *extra: str) -> int:
    from speech_drame.commands import bench as bench_command

    monkeypatch.setattr(bench_command, "scorer_from_args", lambda *a, **k: scorer)
    return main(["bench", "--scenarios", str(root / "scenarios.jsonl"), "--systems-dir",
                 str(root / "systems"), "--out", str(root / "run"), "--scorer", "fake",
                 "--no-plots", "--resamples", "20", "--quiet", *extra])  # fmt: skip


def test_fixing_a_question_rescores_that_scenario_only(monkeypatch, tmp_path, capsys) -> None:
    questions = {"q1": QUESTION, "q2": "You are a firefigter. You say:"}
    files = {"q1": b"pass one", "q2": b"pass two"}
    _fake_setup(tmp_path, {"a": files, "b": files}, questions)
    scorer = FakeScorer()
    assert _fake_bench(monkeypatch, scorer, tmp_path) == 0
    assert sorted(scorer.calls) == ["a/q1", "a/q2", "b/q1", "b/q2"]
    assert scorer.contexts["a/q2"] == {"question": questions["q2"]}
    questions["q2"] = "You are a firefighter. You say:"  # the typo fixed
    _fake_setup(tmp_path, {}, questions)
    scorer.calls.clear()
    assert _fake_bench(monkeypatch, scorer, tmp_path) == 0
    assert sorted(scorer.calls) == ["a/q2", "b/q2"]
    assert scorer.contexts["a/q2"] == {"question": questions["q2"]}
    assert "2 scored now, 2 already done" in capsys.readouterr().err
    rows = read_rows(tmp_path / "run" / "results.jsonl")
    assert len(rows) == 6 and all(r["context"] for r in rows)
    assert "context" in run.KEY_FIELDS


def test_a_reverted_response_uses_its_stored_row(monkeypatch, tmp_path, capsys) -> None:
    _fake_setup(tmp_path, {"a": {"q1": b"pass v1"}, "b": {"q1": b"pass b"}}, {"q1": QUESTION})
    scorer = FakeScorer()
    path = tmp_path / "systems" / "a" / "q1.wav"
    means = []
    for content in (b"pass v1", b"pass version 2", b"pass v1"):  # edited, then reverted
        path.write_bytes(content)
        assert _fake_bench(monkeypatch, scorer, tmp_path) == 0
        doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
        assert doc["systems"]["a"]["not_scored"] == [] and doc["systems"]["a"]["n_scored"] == 1
        means.append(doc["systems"]["a"]["average"]["mean"])
    assert scorer.calls.count("a/q1") == 2  # the reverted file was not scored again
    assert means[2] == means[0] != means[1]
    assert "0 scored now, 2 already done" in capsys.readouterr().err


def test_a_response_without_a_result_is_not_scored_and_a_problem(monkeypatch, tmp_path, capsys):
    _fake_setup(tmp_path, {"a": {"q1": b"pass", "q2": b"pass 2"}}, {"q1": QUESTION, "q2": QUESTION})
    scorer = FakeScorer()
    assert _fake_bench(monkeypatch, scorer, tmp_path) == 0
    (tmp_path / "systems" / "a" / "q2.wav").write_bytes(b"changed, and this run scores nothing")
    monkeypatch.setattr(run, "run_shard", lambda *a, **k: run.RunSummary(0, 0, 0))
    capsys.readouterr()
    assert _fake_bench(monkeypatch, scorer, tmp_path) == 1
    printed = capsys.readouterr()
    assert "1 response(s) missing, failed or not scored" in printed.err
    assert "not scored (no result for the current file): q2" in printed.out
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert doc["systems"]["a"]["not_scored"] == ["q2"]
    assert doc["systems"]["a"]["coverage"] == {"scored": 1, "total": 2, "unit": "scenario",
                                               "share": 0.5}  # fmt: skip
    (row,) = csv_rows(tmp_path / "run" / "leaderboard.csv")
    assert row["n_not_scored"] == "1" and row["coverage"] == "0.5"


def csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_transient_failures_are_scored_again_input_failures_with_retry_failed(
    monkeypatch, tmp_path, capsys
) -> None:
    ids = {"q1": QUESTION, "q2": QUESTION, "q3": QUESTION, "q4": QUESTION}
    _fake_setup(tmp_path, {"a": {q: b"pass " + q.encode() for q in ids}}, ids)
    # q1: an out-of-memory-like model failure once; q2: unreadable the first time; q3 and q4
    # share a chunk whose first call raises
    scorer = FakeScorer({"a/q1": ["model"], "a/q2": ["input"], "a/q3": ["raise"]})
    chunks = ("--batch-size", "2", "--workers", "1")  # q1 and q2, then q3 and q4
    assert _fake_bench(monkeypatch, scorer, tmp_path, *chunks) == 1
    assert "4 scored now (4 failed), 0 already done" in capsys.readouterr().err
    rows = read_rows(tmp_path / "run" / "results.jsonl")
    kinds = {r["scenario"]: (r.get("error_kind"), r.get("stage")) for r in rows}
    assert kinds == {"q1": ("model", "model"), "q2": ("input", "input"),
                     "q3": ("model", "scorer"), "q4": ("model", "scorer")}  # fmt: skip
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert len(doc["systems"]["a"]["failed"]) == 4

    scorer.calls.clear()
    assert _fake_bench(monkeypatch, scorer, tmp_path, *chunks) == 1  # the input failure stays
    assert sorted(scorer.calls) == ["a/q1", "a/q3", "a/q4"]
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    ((failure),) = doc["systems"]["a"]["failed"]
    assert failure["scenario"] == "q2" and failure["error_kind"] == "input"

    scorer.calls.clear()
    assert _fake_bench(monkeypatch, scorer, tmp_path, *chunks, "--retry-failed") == 0
    assert scorer.calls == ["a/q2"]
    rows = read_rows(tmp_path / "run" / "results.jsonl")
    assert len(rows) == 8  # append-only: every attempt is kept, the latest wins
    latest = run.read_results(tmp_path / "run")
    assert len(latest) == 4 and not any("error" in r for r in latest)
    scorer.calls.clear()
    assert _fake_bench(monkeypatch, scorer, tmp_path, "--retry-failed") == 0
    assert scorer.calls == []  # nothing left to retry


def test_merging_shards_appends_newer_rows_and_skips_verbatim_copies(tmp_path) -> None:
    from speech_drame.rolebench.results_log import ResultsLog

    base = {"system": "a", "scenario": "q1", "context": "c", "scorer": "s", "sha256": "h"}
    failed = {**base, "error": "out of memory", "error_kind": "model", "stage": "model"}
    scored = {**base, "scores": {"audio_quality": 4.0}}
    with ResultsLog(tmp_path / "results.jsonl") as log:
        log.append(failed)
    with ResultsLog(tmp_path / "results.rank0.jsonl") as log:
        log.append(failed)  # already merged (a merge killed before the shard file was removed)
        log.append(scored)  # the rerun's result
    assert run.read_results(tmp_path) == [scored]
    assert run.merge_shards(tmp_path) == 1
    assert read_rows(tmp_path / "results.jsonl") == [failed, scored]
    assert run.read_results(tmp_path) == [scored]
    assert run.pending([], run.read_results(tmp_path), "s") == []


def test_the_leaderboard_counts_every_scenario_or_only_common_ones(monkeypatch, tmp_path, capsys):
    ids = {f"q{i}": QUESTION for i in range(4)}
    full = {q: (b"pass " if q != "q3" else b"fail ") + q.encode() for q in ids}
    _fake_setup(tmp_path, {"full": full, "half": {q: full[q] for q in ("q0", "q1")}}, ids)
    scorer = FakeScorer()
    assert _fake_bench(monkeypatch, scorer, tmp_path) == 1  # half: two missing responses
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    half, whole = doc["systems"]["half"], doc["systems"]["full"]
    assert doc["rule"] == "all" and "does not state one" in doc["rule_text"]
    assert "counted as not passing" in out and "Coverage" in out
    assert half["coverage"]["scored"] == 2 and half["coverage"]["total"] == 4
    assert half["content_pass"]["mean"] == pytest.approx(2 / 4)  # missing = not passing
    assert whole["content_pass"]["mean"] == pytest.approx(3 / 4)
    rows = {(r["system"], r["scenario"]): r for r in read_rows(tmp_path / "run" / "results.jsonl")}
    want = np.mean([rows["full", q]["scores"]["audio_quality"] for q in ids])
    assert whole["dimensions"]["audio_quality"]["mean"] == pytest.approx(want)
    board = {e["system"]: e for e in doc["leaderboard"]}
    assert board["half"]["coverage"]["share"] == 0.5 and board["full"]["rank"] in (1, 2)

    assert _fake_bench(monkeypatch, scorer, tmp_path, "--common-only") == 1
    assert "only the scenarios every system has a scored response for" in capsys.readouterr().out
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    whole = doc["systems"]["full"]
    assert doc["rule"] == "common" and whole["n_units"] == 2
    want = np.mean([rows["full", q]["scores"]["audio_quality"] for q in ("q0", "q1")])
    assert whole["dimensions"]["audio_quality"]["mean"] == pytest.approx(want)
    assert whole["content_pass"]["mean"] == 1.0
    assert whole["coverage"]["scored"] == 4  # coverage is still of the whole set


# --- languages: identified by the scorer, hinted by the scenario -----------------------------


def test_per_language_statistics_and_mismatches_beside_the_totals(tmp_path) -> None:
    mandarin = "你是一位说书人。你说："
    contexts = {"250814_zh_a": QUESTION, "b": mandarin, "c": QUESTION, "d": QUESTION,
                "e": QUESTION}  # fmt: skip
    scenario_set = scenarios.ScenarioSet("archetype", tuple(
        scenarios.Scenario(sid, "archetype", {"question": q}) for sid, q in contexts.items()
    ))  # fmt: skip
    assert [s.language_hint for s in scenario_set.scenarios] == ["zh", "zh", "en", "en", "en"]
    plan = run.Plan([run.WorkItem("a", s, tmp_path / f"{s.id}.wav", "h")
                     for s in scenario_set.scenarios], {"a": []})  # fmt: skip
    # measured: zh (as hinted), en (hint zh: a mismatch), en, other (mismatch), and a row
    # written before rows carried a language (read as unknown, never a mismatch)
    measured = {"250814_zh_a": "zh", "b": "en", "c": "en", "d": "other", "e": None}
    score = {"250814_zh_a": 4.0, "b": 2.0, "c": 3.0, "d": 5.0, "e": 1.0}
    rows = []
    for it in plan.items:
        sid = it.scenario.id
        row = {"system": "a", "scenario": sid, "scorer": "x", "sha256": "h",
               "context": it.scenario.context_hash, "scores": {"audio_quality": score[sid]},
               "content_pass": 0.9 if sid in ("b", "d") else 0.2}  # fmt: skip
        if measured[sid]:
            row.update(language=measured[sid], language_probability=0.9)
        rows.append(row)
    table = report.system_table(rows, scenario_set, plan, "x", n_resamples=50)
    entry = table["a"]
    assert entry["dimensions"]["audio_quality"]["mean"] == pytest.approx(3.0)  # totals unchanged
    langs = entry["languages"]
    assert list(langs) == ["en", "other", "unknown", "zh"]
    assert {k: v["n_units"] for k, v in langs.items()} == {"en": 2, "other": 1, "unknown": 1,
                                                           "zh": 1}  # fmt: skip
    assert langs["en"]["dimensions"]["audio_quality"]["mean"] == pytest.approx(np.mean([2.0, 3.0]))
    assert langs["en"]["average"]["mean"] == pytest.approx(2.5)
    assert langs["en"]["content_pass"]["mean"] == pytest.approx(0.5)
    assert langs["zh"]["content_pass"]["mean"] == 0.0
    assert entry["language_mismatches"] == [
        {"scenario": "b", "hint": "zh", "language": "en"},
        {"scenario": "d", "hint": "en", "language": "other"},
    ]
    paths = report.write_reports(table, tmp_path / "run", plots=False)
    doc = json.loads(paths["json"].read_text())
    assert doc["language_mismatches"] == 2
    assert doc["systems"]["a"]["languages"]["zh"]["n_units"] == 1
    markdown = paths["markdown"].read_text()
    assert "| a | en (English) | 2 | 50.0% [" in markdown
    assert "Language mismatches (2):" in markdown
    assert "- a: b: the scenario hints zh, the response was identified as en" in markdown

    for row in rows:  # a scorer without ASR: every response unknown, no section
        row.pop("language", None)
    table = report.system_table(rows, scenario_set, plan, "x", n_resamples=0)
    assert list(table["a"]["languages"]) == ["unknown"]
    assert table["a"]["language_mismatches"] == []
    assert "Per language" not in report.to_markdown(table)


class SpeakingScorer(FakeScorer):
    """A FakeScorer whose ASR identifies the language named in the file's bytes."""

    def score(self, clips, *, progress: bool = False):
        out = super().score(clips, progress=progress)
        for clip, result in zip(clips, out, strict=True):
            data = Path(clip.audio).read_bytes()
            result.language = "zh" if b"zh" in data else "en"
            result.language_probability = 0.8
        return out


def test_bench_records_the_identified_language_and_reports_mismatches(
    monkeypatch, tmp_path, capsys
) -> None:
    ids = {"x_zh_1": QUESTION, "x_en_2": QUESTION, "x_en_3": QUESTION}
    files = {"x_zh_1": b"pass zh", "x_en_2": b"pass zh", "x_en_3": b"pass en"}
    _fake_setup(tmp_path, {"s": files}, ids)
    assert _fake_bench(monkeypatch, SpeakingScorer(), tmp_path) == 0
    assert "1 response(s) identified as another language" in capsys.readouterr().err
    rows = read_rows(tmp_path / "run" / "results.jsonl")
    assert {r["scenario"]: r["language"] for r in rows} == {"x_zh_1": "zh", "x_en_2": "zh",
                                                            "x_en_3": "en"}  # fmt: skip
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert doc["systems"]["s"]["language_mismatches"] == [
        {"scenario": "x_en_2", "hint": "en", "language": "zh"}
    ]
    assert {k: v["n_units"] for k, v in doc["systems"]["s"]["languages"].items()} == {
        "en": 1, "zh": 2
    }  # fmt: skip


def test_a_dialogue_whose_turns_differ_in_language_is_mixed(tmp_path) -> None:
    ctx = {"profile": PROFILE, "scene": SCENE, "traits": PROFILE}
    turns = [("t1", "d1", 0), ("t2", "d1", 1), ("t3", "d2", 0), ("t4", "d2", 1)]
    scenario_set = scenarios.ScenarioSet("realism", tuple(
        scenarios.Scenario(sid, "realism", ctx, dialogue=d, turn=t) for sid, d, t in turns
    ), multi_turn=True)  # fmt: skip
    plan = run.Plan([run.WorkItem("a", s, tmp_path / f"{s.id}.wav", "h")
                     for s in scenario_set.scenarios], {"a": []})  # fmt: skip
    language = {"t1": "en", "t2": "en", "t3": "en", "t4": "zh"}
    score = {"t1": 2.0, "t2": 4.0, "t3": 1.0, "t4": 5.0}
    rows = [{"system": "a", "scenario": it.scenario.id, "scorer": "x", "sha256": "h",
             "context": it.scenario.context_hash, "language": language[it.scenario.id],
             "scores": {"pitch_variation": score[it.scenario.id]}}
            for it in plan.items]  # fmt: skip
    entry = report.system_table(rows, scenario_set, plan, "x", n_resamples=20)["a"]
    assert {k: v["n_units"] for k, v in entry["languages"].items()} == {"en": 1, "mixed": 1}
    want = aggregate_turns([{"pitch_variation": 2.0}, {"pitch_variation": 4.0}], "mean")
    assert entry["languages"]["en"]["average"]["mean"] == pytest.approx(want["pitch_variation"])
    # the English context hints en: the Mandarin turn is a mismatch
    assert entry["language_mismatches"] == [{"scenario": "t4", "hint": "en", "language": "zh"}]
