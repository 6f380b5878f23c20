"""Atomic files and folders (speech_drame.atomic_io)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from speech_drame import atomic_io


def _refuse_nan(name: str):
    raise ValueError(f"bare {name} in JSON")


def test_write_json_is_strict_and_replaces_non_finite_numbers(tmp_path):
    path = atomic_io.write_json(
        tmp_path / "sub" / "out.json",
        {"r": math.nan, "xs": (1.5, -math.inf, math.inf), "note": "undefined: constant input"},
    )
    doc = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_nan)
    assert doc == {"r": None, "xs": [1.5, None, None], "note": "undefined: constant input"}
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no temporary file left


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = atomic_io.write_text(tmp_path / "a.txt", "old")
    with pytest.raises(TypeError):
        atomic_io.write_text(path, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        atomic_io.write_bytes(path, "not bytes")  # type: ignore[arg-type]  (fails mid-write)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def _folder(root, name, text):
    folder = root / name
    folder.mkdir()
    (folder / "data.txt").write_text(text)
    return folder


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_replace_dir_swaps_in_the_new_folder(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(atomic_io, "_exchange", lambda a, b: False)
    target = _folder(tmp_path, "out", "old")
    staged = atomic_io.staging_dir(target)
    (staged / "data.txt").write_text("new")
    atomic_io.replace_dir(staged, target)
    assert (target / "data.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_replace_dir_creates_a_missing_target(tmp_path):
    staged = _folder(tmp_path, "staged", "new")
    atomic_io.replace_dir(staged, tmp_path / "out")
    assert (tmp_path / "out" / "data.txt").read_text() == "new"
    assert not staged.exists()


def test_recover_dir_restores_the_old_folder_after_a_kill_between_the_renames(tmp_path):
    # what the two-rename fallback leaves if killed after moving the old folder aside
    _folder(tmp_path, ".out.old-abc123", "old")
    removed = atomic_io.recover_dir(tmp_path / "out")
    assert (tmp_path / "out" / "data.txt").read_text() == "old"
    assert removed == []
    _folder(tmp_path, ".out.old-zzz", "older")
    assert [p.name for p in atomic_io.recover_dir(tmp_path / "out")] == [".out.old-zzz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_killed_swap_leaves_the_old_or_the_new_folder(tmp_path):
    """SIGKILL a child in a loop of swaps: the target always holds one complete version."""
    target = _folder(tmp_path, "out", "0")
    child = textwrap.dedent(
        f"""
        from pathlib import Path
        from speech_drame.atomic_io import replace_dir, staging_dir
        target = Path({str(target)!r})
        i = 0
        while True:
            i += 1
            staged = staging_dir(target)
            (staged / "data.txt").write_text(str(i))
            replace_dir(staged, target)
            if i == 1:
                print("swapping", flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "swapping"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    atomic_io.recover_dir(target)
    assert int((target / "data.txt").read_text()) >= 1


def test_outputs_get_the_usual_permissions_not_private_temporary_ones(tmp_path):
    mask = atomic_io._umask()
    assert mask == os.umask(mask)  # reading the umask did not change it
    path = atomic_io.write_text(tmp_path / "a.txt", "x")
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
    staged = atomic_io.staging_dir(tmp_path / "out")
    assert staged.stat().st_mode & 0o777 == 0o777 & ~mask


def test_replaceable_folder_refuses_what_a_command_may_not_replace(tmp_path, monkeypatch):
    from speech_drame.atomic_io import FolderRefused, replaceable_folder

    def is_ours(p):
        return (p / "MARK").is_file()

    ours, other, empty = tmp_path / "ours", tmp_path / "other", tmp_path / "empty"
    for folder in (ours, other, empty):
        folder.mkdir()
    (ours / "MARK").write_text("")
    (other / "keep.txt").write_text("")
    assert replaceable_folder(empty, "thing", is_ours) == empty.resolve()
    assert replaceable_folder(tmp_path / "new", "thing", is_ours) == (tmp_path / "new").resolve()
    assert replaceable_folder(ours, "thing", is_ours, overwrite=True) == ours.resolve()
    with pytest.raises(FolderRefused, match="holds an earlier thing: pass --overwrite"):
        replaceable_folder(ours, "thing", is_ours)
    for overwrite in (False, True):
        with pytest.raises(FolderRefused, match="is not an earlier thing"):
            replaceable_folder(other, "thing", is_ours, overwrite=overwrite)
    with pytest.raises(FolderRefused, match=r"holds the input .*: replacing it would delete that"):
        replaceable_folder(
            tmp_path, "thing", is_ours, overwrite=True, holds=[("the input", other / "keep.txt")]
        )
    link = tmp_path / "link"
    link.symlink_to(ours)
    assert replaceable_folder(link, "thing", is_ours, overwrite=True) == ours.resolve()
    monkeypatch.chdir(ours)
    with pytest.raises(FolderRefused, match=r"output folder \. is the current folder"):
        replaceable_folder(".", "thing", is_ours, overwrite=True)
    with pytest.raises(FolderRefused, match="holds the current folder"):
        replaceable_folder(tmp_path, "thing", is_ours, overwrite=True)
    monkeypatch.chdir(empty)
    monkeypatch.setattr("os.path.ismount", lambda p: str(p) == str(ours.resolve()))
    with pytest.raises(
        FolderRefused, match="is a mount point: write thing into a folder inside it"
    ):
        replaceable_folder(ours, "thing", is_ours, overwrite=True)
