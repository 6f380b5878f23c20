"""Bad usage of every command exits 2 with one ``error:`` line and no traceback (the error
boundary in :func:`speech_drame.cli.main`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_cli_help import ALL

from speech_drame.cli import COMMANDS, main


def bad_usage(tmp: str) -> dict[tuple[str, ...], list[str]]:
    """Per command path: arguments it must refuse before any work (mostly a missing input)."""
    missing = f"{tmp}/missing"
    a_file = f"{tmp}/a_file"  # a file where a folder is meant
    return {
        ("build",): ["--source", missing, "--out", f"{tmp}/out", "--quiet"],
        ("summary",): ["--dataset", missing],
        ("push_metric",): ["someone/metric", "--folder", missing, "--dry-run"],
        ("install_metric",): ["--modules-cache", a_file],  # a file, not a folder
        ("push_dataset",): [missing, "someone/dataset", "--dry-run"],
        ("push_lite",): [missing, "someone/scorer", "--dry-run"],
        ("agreement",): ["--dataset", missing],
        ("score",): [f"{tmp}/x.wav", "--config", "archetype", "--question", "q",
                     "--scorer", f"lite:{missing}"],
        ("train_lite",): ["--dataset", missing, "--out", f"{tmp}/lite", "--quiet"],
        ("judge",): [f"{tmp}/x.wav", "--config", "realism", "--profile", "p"],  # no --scene/--traits
        ("bench",): ["--scenarios", f"{missing}.jsonl", "--system", f"a={tmp}",
                     "--out", f"{tmp}/bench", "--quiet"],
        ("serve",): ["--scorer", "drame-eval"],  # refused before the server starts
        ("space", "bundle"): ["--out", a_file],  # a file, not an empty folder
        ("space", "push"): [missing, "someone/space", "--dry-run"],
        ("features",): ["--dataset", missing, "--cache", f"{tmp}/cache", "--quiet"],
        ("paraling", "build"): [f"{missing}.jsonl", "--out", f"{tmp}/q.jsonl"],
        ("paraling", "demo"): ["--out", a_file],
        ("paraling", "run"): [f"{missing}.jsonl", "--responses", tmp, "--baseline", "a",
                              "--candidates", "b"],
        ("trace", "demo"): ["--out", a_file],
        ("trace", "run"): [f"{missing}.jsonl", "--out", f"{tmp}/labels.jsonl"],
        ("trace", "evaluate"): [f"{missing}.jsonl", "--hcot", f"{missing}2.jsonl"],
        ("isdrama", "single"): [f"{missing}.jsonl", "--out", f"{tmp}/o"],
        ("isdrama", "drama"): [f"{missing}.jsonl", "--out", f"{tmp}/o"],
        ("animescore", "train"): ["--pairs", f"{missing}.csv", "--out", f"{tmp}/r", "--quiet"],
        ("animescore", "score"): ["--model", missing, a_file],
        ("animescore", "baseline"): ["--pairs", f"{missing}.csv"],
        ("animescore", "demo-pairs"): ["--release", missing, "--out", f"{tmp}/pairs"],
        ("import_predictions",): [f"{missing}.jsonl", "--config", "archetype",
                                  "--out", f"{tmp}/p.jsonl"],
        ("campaign", "create"): ["--clips", f"{missing}.jsonl", "--config", "archetype",
                                 "--raters-per-clip", "3", "--out", f"{tmp}/c.db"],
        ("campaign", "invite"): [f"{missing}.db", "--name", "a"],
        ("campaign", "admin"): [f"{missing}.db"],
        ("campaign", "attach"): [f"{missing}.db", "--scorer", "lite"],  # before loading it
        ("campaign", "serve"): [f"{missing}.db"],
        ("campaign", "status"): [f"{missing}.db"],
        ("campaign", "export"): [f"{missing}.db", "--out", f"{tmp}/rel"],
        ("table",): ["--predictions", f"{missing}.jsonl", "--config", "realism",
                     "--dataset", missing],
        ("prompt_profile", "show"): [f"{missing}.json"],
        ("prompt_profile", "check"): [f"{missing}.json"],
        ("scenarios",): ["--dataset", missing, "--config", "archetype", "--out", f"{tmp}/s.jsonl"],
    }  # fmt: skip


def _cli_name(path: tuple[str, ...]) -> list[str]:
    return [path[0].replace("_", "-"), *path[1:]]


def test_every_command_has_a_bad_usage_case():
    cases = {tuple(_cli_name(p)) for p in bad_usage("/x")}
    leaves = {p for p in ALL if not any(q[: len(p)] == p and q != p for q in ALL)}
    assert leaves == cases
    assert {p[0] for p in bad_usage("/x")} == set(COMMANDS)


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("path", sorted(bad_usage("/x")), ids=" ".join)
def test_bad_usage_exits_2_with_one_error_line(path, tmp_path, capsys):
    (tmp_path / "a_file").write_text("not a folder")
    argv = bad_usage(str(tmp_path))[path]
    assert main([*_cli_name(path), *argv]) == 2
    out, err = capsys.readouterr()
    line = _one_error_line(err)
    assert "'" not in line.split(":", 1)[1][:2]  # a message, not a KeyError's quoted repr
    assert not (tmp_path / "missing").exists()


def test_the_installed_entry_point_prints_one_line_without_traceback(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for argv in (["summary", "--dataset", str(tmp_path / "missing")],
                 ["paraling", "run", str(tmp_path / "missing.jsonl"), "--responses",
                  str(tmp_path), "--baseline", "a", "--candidates", "b"]):  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "speech_drame.cli", *argv], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 2 and done.stdout == ""
        assert str(tmp_path / "missing") in _one_error_line(done.stderr)


def test_argparse_errors_also_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["paraling", "run"])
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err
