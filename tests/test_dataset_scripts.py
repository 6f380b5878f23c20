"""The scripts in ``dataset_scripts/`` refuse bad input as ``speech-drame`` does: one ``error:``
line on stderr, no traceback, exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import OFFICIAL_SAMPLES, REPO

from speech_drame.cli import main


def _script(name: str, *args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "dataset_scripts" / name), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)  # fmt: skip


def _error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


def test_build_dataset_is_the_build_command(tmp_path, capsys):
    """A release that states no licence (the official samples' records without their
    SOURCE.md and README) is refused with the command's own error line."""
    release = tmp_path / "release"
    for config in ("archetype", "realism"):
        (release / f"{config}_data").mkdir(parents=True)
        src = OFFICIAL_SAMPLES / f"{config}_data" / "test.jsonl"
        (release / f"{config}_data" / "test.jsonl").write_bytes(src.read_bytes())
    args = ["--source", str(release), "--out", str(tmp_path / "out"), "--quiet"]
    line = _error_line(_script("build_dataset.py", *args, cwd=tmp_path))
    assert "no licence for the dataset card: pass --license ID" in line
    assert main(["build", *args]) == 2
    assert capsys.readouterr().err.strip() == line  # the same message as `speech-drame build`
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("make_demo_release.py", ["--out", "release", "--official-samples", "missing"],
         "real speech clip missing (install the official samples)"),
        ("make_demo_rolebench.py", ["--out", "a_file"], "a_file"),
    ],
)  # fmt: skip
def test_demo_scripts_refuse_bad_input_in_one_line(script, args, message, tmp_path):
    (tmp_path / "a_file").write_text("not a folder")
    line = _error_line(_script(script, *args, cwd=tmp_path))
    assert message in line
