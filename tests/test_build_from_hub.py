"""`build --source ORG/NAME`: releases from the Hub cache (offline), `.json` records, archives."""

import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path

import huggingface_hub.constants
import pytest
from conftest import archetype_record, realism_record, write_release

from speech_drame.cli import main
from speech_drame.data import release as release_module
from speech_drame.data.build import build_dataset
from speech_drame.data.hub_source import hub_repo_id, open_source
from speech_drame.data.release import ArchiveError, extract_archives
from speech_drame.schema import RecordError

REPO_ID = "drame-org/evalbench"
OLD, NEW = "a" * 40, "b" * 40


def populate_cache(cache: Path, repo_id: str, release: Path, sha: str, *refs: str) -> Path:
    """Lay ``release`` out as huggingface_hub caches a dataset snapshot: files in ``blobs/``,
    relative symlinks to them in ``snapshots/<sha>/``, and ``refs/<ref>`` holding ``sha``."""
    repo = cache / f"datasets--{repo_id.replace('/', '--')}"
    for file in sorted(p for p in release.rglob("*") if p.is_file()):
        data = file.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = repo / "snapshots" / sha / file.relative_to(release)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    for ref in refs:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(sha)
    return repo


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> Path:
    """An offline Hub whose cache is an empty folder under tmp_path."""
    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    # huggingface_hub reads both variables when imported: set what it uses
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return cache


def report_of(out: Path) -> dict:
    return json.loads((out / "build_report.json").read_text())


def shard_names(out: Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))


def test_hub_source_builds_the_same_dataset_as_the_local_folder(
    official_samples_dir, hub_cache, tmp_path, capsys
):
    # on the Hub, the release has a card stating its licence, as the public EvalBench does
    release = shutil.copytree(official_samples_dir, tmp_path / "release")
    (release / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n# EvalBench\n")
    populate_cache(hub_cache, REPO_ID, release, NEW, "main")
    local = build_dataset(
        official_samples_dir, tmp_path / "local", license_id="apache-2.0", progress=False
    )

    assert main(["build", "--source", REPO_ID, "--out", str(tmp_path / "hub"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"source: {REPO_ID} at main (commit {NEW})" in out
    assert "licence: cc-by-nc-4.0 (from README.md)" in out

    report = report_of(tmp_path / "hub")
    assert report["source_hub"] == {"repo_id": REPO_ID, "revision": "main", "commit": NEW}
    assert report["license"] == {
        "id": "cc-by-nc-4.0",
        "origin": "README.md",
        "name": None,
        "link": None,
    }
    assert local.license["origin"] == "--license"
    for key in ("rows", "hours", "languages", "annotators", "parquet_bytes"):
        assert report[key] == getattr(local, key), key
    assert len(report["missing_audio"]) == len(local.missing_audio) == 1
    assert local.source_hub is None and report["extracted"] == []
    # the shard names carry their content hash: the same rows, byte for byte
    assert shard_names(tmp_path / "hub") == shard_names(tmp_path / "local")
    # the explicit form names the same snapshot
    assert open_source(f"hf://datasets/{REPO_ID}").hub == report["source_hub"]


def _zip_audio(folder: Path, archive: Path, prefix: str = "") -> None:
    """Move the folder's wav files into the zip ``archive``, named ``prefix + file name``."""
    with zipfile.ZipFile(archive, "w") as zf:
        for wav in sorted(folder.glob("*.wav")):
            zf.write(wav, prefix + wav.name)
            wav.unlink()


def test_revision_picks_a_snapshot_and_records_the_commit(hub_cache, tmp_path):
    old = write_release(tmp_path / "old", {"realism_data/test.jsonl": [realism_record("r1")]})
    # at the release root, a symlink into blobs/ once cached
    _zip_audio(old / "realism_data", old / "realism_data.zip", "realism_data/")
    new = write_release(
        tmp_path / "new",
        {"realism_data/test.jsonl": [realism_record("r1"), realism_record("r2")]},
    )
    populate_cache(hub_cache, REPO_ID, old, OLD, "v1")
    populate_cache(hub_cache, REPO_ID, new, NEW, "main")

    latest = build_dataset(REPO_ID, tmp_path / "out-main", progress=False)
    assert latest.rows == {"realism": {"test": 2}}
    assert latest.source_hub == {"repo_id": REPO_ID, "revision": "main", "commit": NEW}

    by_sha = build_dataset(REPO_ID, tmp_path / "out-sha", revision=OLD, progress=False)
    assert by_sha.rows == {"realism": {"test": 1}} and by_sha.missing_audio == []
    assert by_sha.source_hub == {"repo_id": REPO_ID, "revision": OLD, "commit": OLD}
    with zipfile.ZipFile(old / "realism_data.zip") as zf:
        size = zf.getinfo("realism_data/r1.wav").file_size
    assert by_sha.extracted == [{"archive": "realism_data.zip", "files": 1, "bytes": size}]

    args = ["build", "--source", REPO_ID, "--revision", "v1", "--out", str(tmp_path / "out-tag")]
    assert main([*args, "--quiet"]) == 0
    hub = report_of(tmp_path / "out-tag")["source_hub"]
    assert hub == {"repo_id": REPO_ID, "revision": "v1", "commit": OLD}
    assert shard_names(tmp_path / "out-tag") == shard_names(tmp_path / "out-sha")


def test_a_repo_missing_offline_is_a_clear_error(hub_cache, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["build", "--source", "drame-org/absent", "--out", out, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Hub dataset drame-org/absent (revision main): not in the Hub cache" in err
    assert "no local folder drame-org/absent either" in err

    populate_cache(hub_cache, REPO_ID, write_release(tmp_path / "rel", {}), NEW, "main")
    assert main(["build", "--source", REPO_ID, "--revision", "v9", "--out", out]) == 2
    assert f"Hub dataset {REPO_ID} (revision v9): not in the Hub cache" in capsys.readouterr().err
    assert not Path(out).exists()


def test_sources_that_are_neither_folder_nor_hub_id(tmp_path, capsys):
    folder = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    assert hub_repo_id(folder) is None
    assert hub_repo_id("org/name") == "org/name"
    assert hub_repo_id("hf://datasets/org/name/") == "org/name"
    with pytest.raises(ValueError, match=r"'hf://datasets/org': expected hf://datasets/ORG/NAME"):
        hub_repo_id("hf://datasets/org")

    out = str(tmp_path / "out")
    assert main(["build", "--source", str(tmp_path / "no" / "such" / "dir"), "--out", out]) == 2
    assert "release folder not found" in capsys.readouterr().err
    assert main(["build", "--source", str(folder), "--revision", "main", "--out", out]) == 2
    assert f"--revision main: {folder} is a local folder" in capsys.readouterr().err


def test_json_array_and_json_lines_files_both_load(tmp_path):
    archetype = [archetype_record("a1"), archetype_record("a2")]
    src = write_release(
        tmp_path / "rel",
        {
            "archetype_data/test.jsonl": archetype,
            "realism_data/train.jsonl": [realism_record("r1")],
        },
    )
    (src / "archetype_data" / "test.jsonl").unlink()
    (src / "archetype_data" / "test.json").write_text(json.dumps(archetype, indent=2))
    (src / "realism_data" / "train.jsonl").rename(src / "realism_data" / "train.json")

    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.rows == {"archetype": {"test": 2}, "realism": {"train": 1}}

    del archetype[1]["question"]
    (src / "archetype_data" / "test.json").write_text(json.dumps(archetype, indent=2))
    with pytest.raises(RecordError, match=r"test\.json:archetype:element 1.*'question'"):
        build_dataset(src, tmp_path / "out", progress=False)
    (src / "archetype_data" / "test.json").write_text('[\n  {"id": "a1"},\n  {"id": \n')
    with pytest.raises(RecordError, match=r"test\.json:4: .*invalid JSON"):
        build_dataset(src, tmp_path / "out", progress=False)


def test_audio_in_zip_and_tar_gz_archives_is_extracted(tmp_path):
    src = write_release(
        tmp_path / "rel",
        {
            "archetype_data/test.jsonl": [archetype_record("a1")],
            "realism_data/test.jsonl": [realism_record("r1"), realism_record("r2")],
        },
    )
    _zip_audio(src / "realism_data", src / "realism_data" / "audio.zip")
    with tarfile.open(src / "archetype_data" / "audio.tar.gz", "w:gz") as tf:
        tf.add(src / "archetype_data" / "a1.wav", "a1.wav")
    (src / "archetype_data" / "a1.wav").unlink()

    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.rows == {"archetype": {"test": 1}, "realism": {"test": 2}}
    assert report.missing_audio == []
    assert [(e["archive"], e["files"]) for e in report.extracted] == [
        ("archetype_data/audio.tar.gz", 1),
        ("realism_data/audio.zip", 2),
    ]
    assert report_of(tmp_path / "out")["extracted"] == report.extracted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "rel"]  # unpacked audio gone


def _tar(path: Path, member: tarfile.TarInfo, data: bytes = b"RIFF") -> None:
    with tarfile.open(path, "w") as tf:
        member.size = len(data) if member.isfile() else 0
        tf.addfile(member, io.BytesIO(data) if member.isfile() else None)


def _tar_symlink(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, "../../outside.wav"
    return info


def _zip_symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize(
    "archive, member, message",
    [
        ("a.zip", "../escape.wav", r"a\.zip: member '\.\./escape\.wav' would be unpacked outside"),
        ("a.tar", "../escape.wav", r"a\.tar: member '\.\./escape\.wav' would be unpacked outside"),
        ("a.tar", "/tmp/abs.wav", r"a\.tar: member '/tmp/abs\.wav' would be unpacked outside"),
        ("a.tar", _tar_symlink("r1.wav"), r"a\.tar: member 'r1\.wav' is not a regular file"),
        ("a.zip", _zip_symlink("r1.wav"), r"a\.zip: member 'r1\.wav' is not a regular file"),
        ("a.zip", "big.wav", r"a\.zip: member 'big\.wav' declares 5 bytes \(limit 4\)"),
    ],
)
def test_unsafe_archive_members_are_refused(tmp_path, monkeypatch, archive, member, message):
    monkeypatch.setattr(release_module, "MAX_MEMBER_BYTES", 4)
    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    path = src / "realism_data" / archive
    if archive.endswith(".zip"):
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, b"RIFF!")
    else:
        _tar(path, member if isinstance(member, tarfile.TarInfo) else tarfile.TarInfo(member))

    with pytest.raises(ArchiveError, match=message):
        extract_archives(src, tmp_path / "unpacked")
    with pytest.raises(ArchiveError, match=message):
        build_dataset(src, tmp_path / "out", progress=False)
    assert (
        not (tmp_path / "escape.wav").exists() and not (tmp_path / "unpacked" / "r1.wav").exists()
    )
    assert {p.name for p in tmp_path.iterdir()} <= {"rel", "unpacked"}  # no output, no staging


def test_the_same_name_in_two_archives_is_refused(tmp_path):
    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    for name in ("a.zip", "b.zip"):
        with zipfile.ZipFile(src / "realism_data" / name, "w") as zf:
            zf.writestr("r1.wav", b"RIFF")
    with pytest.raises(ArchiveError, match=r"b\.zip: member 'r1\.wav': .* was already unpacked"):
        extract_archives(src, tmp_path / "unpacked")
