"""Archives cannot fill the disk: what a build unpacks is counted as it is written, against a
budget of bytes, of bytes per byte of archive and of files, and the error names the limit."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import realism_record, write_release

from speech_drame.data.build import build_dataset
from speech_drame.data.release import ArchiveError, UnpackBudget, extract_archives

BOMB = 64 * 2**20  # what the small archives below unpack to


def _release(tmp_path: Path) -> Path:
    return write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})


def test_a_zip_bomb_stops_at_the_ratio_and_leaves_the_previous_build(tmp_path):
    src = _release(tmp_path)
    out = tmp_path / "out"
    build_dataset(src, out, progress=False)
    bomb = src / "realism_data" / "more.zip"
    with (
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("zeros.wav", "w") as member,
    ):
        for _ in range(BOMB // 2**20):
            member.write(bytes(2**20))
    size = bomb.stat().st_size
    assert size < 100_000  # 64 MiB of zeros in a few dozen KB
    with pytest.raises(
        ArchiveError, match=r"more\.zip: member 'zeros\.wav' unpacks to over 20 times"
    ):
        build_dataset(src, out, progress=False)
    assert (out / "build_report.json").is_file()  # the earlier build stands
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]  # nothing left


def test_a_sparse_tar_stops_at_the_ratio(tmp_path):
    if shutil.which("tar") is None:
        pytest.skip("GNU tar is not installed")
    folder = tmp_path / "src"
    folder.mkdir()
    with (folder / "hole.wav").open("wb") as f:  # a sparse file: 64 MiB of hole, one byte
        f.seek(BOMB - 1)
        f.write(b"\0")
    archive = tmp_path / "audio" / "sparse.tar"
    archive.parent.mkdir()
    subprocess.run(
        ["tar", "--sparse", "-cf", str(archive), "-C", str(folder), "hole.wav"], check=True
    )
    assert archive.stat().st_size < 100_000
    with tarfile.open(archive) as tf:
        assert tf.getmember("hole.wav").size == BOMB
    with pytest.raises(
        ArchiveError, match=r"sparse\.tar: member 'hole\.wav' unpacks to over 20 times"
    ):
        extract_archives(tmp_path / "audio", tmp_path / "unpacked")
    unpacked = sum(p.stat().st_size for p in (tmp_path / "unpacked").rglob("*") if p.is_file())
    assert unpacked <= 17 * 2**20  # stopped at the budget, not after it


def test_the_build_budget_counts_every_archive_and_names_its_limit(tmp_path):
    folder = tmp_path / "rel"
    folder.mkdir()
    for i in range(3):  # incompressible 400 kB members: the ratio is never the problem
        with zipfile.ZipFile(folder / f"a{i}.zip", "w") as zf:
            zf.writestr(f"c{i}.wav", (bytes(range(256)) * 1600)[:400_000])
    budget = UnpackBudget(max_bytes=1_000_000)
    with pytest.raises(
        ArchiveError,
        match=r"a2\.zip: member 'c2\.wav' takes what the build unpacks over its budget of 1,000,000 bytes",
    ):
        extract_archives(folder, tmp_path / "unpacked", budget)
    with pytest.raises(ArchiveError, match=r"over 2 unpacked files"):
        extract_archives(folder, tmp_path / "unpacked2", UnpackBudget(max_members=2))
