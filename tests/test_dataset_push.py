"""Publishing a built dataset: ``build --push-to-hub`` and ``push-dataset`` against a fake Hub on
127.0.0.1 (tests/fake_hub.py), their dry runs, the refusal of incomplete builds, and the card's
licence read from the source release (or given, or asked for)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset
from huggingface_hub import constants

from speech_drame.cli import main
from speech_drame.data.build import build_dataset
from speech_drame.data.licence import LicenceError, read_release_licence, resolve_licence
from speech_drame.data.push import DATASET_COMMIT_MESSAGE, dataset_push_files

REPO_ID = "someone/speech-drame-test"


def _front_matter(card: Path) -> dict:
    return yaml.safe_load(card.read_text(encoding="utf-8").split("---\n")[1])


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def release(official_samples_dir, tmp_path_factory) -> Path:
    """The official samples with a card stating the licence, as the public EvalBench's does."""
    folder = shutil.copytree(official_samples_dir, tmp_path_factory.mktemp("rel") / "release")
    (folder / "README.md").write_text(
        "---\nlicense: cc-by-nc-4.0\npretty_name: EvalBench\n---\n# EvalBench\n", encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def built(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "speech-drame"
    build_dataset(release, out, progress=False)
    return out


def test_the_licence_of_the_release_card_reaches_card_and_report(built):
    meta = _front_matter(built / "README.md")
    assert meta["license"] == "cc-by-nc-4.0" and "license_name" not in meta
    report = json.loads((built / "build_report.json").read_text())
    assert report["license"] == {
        "id": "cc-by-nc-4.0",
        "origin": "README.md",
        "name": None,
        "link": None,
    }
    card = (built / "README.md").read_text()
    assert "`license: cc-by-nc-4.0`.\nInherited from the source release, whose `README.md`" in card


def test_push_files_are_card_report_and_listed_shards(built):
    files = [f.as_posix() for f in dataset_push_files(built)]
    assert files[:2] == ["README.md", "build_report.json"]
    assert sorted(files) == _files(built)
    assert {f.split("/")[0] for f in files[2:]} == {"archetype", "realism"}


def test_dry_run_lists_files_and_sizes_and_sends_nothing(built, hub, capsys):
    assert main(["push-dataset", str(built), REPO_ID, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{hub.url}/datasets/{REPO_ID} (dataset repo)" in out
    for name in _files(built):
        assert f"{(built / name).stat().st_size:>14d}  {name}" in out
    assert hub.requests == []


def test_build_push_dry_run_builds_then_lists(release, hub, tmp_path, capsys):
    out = tmp_path / "ds"
    argv = ["build", "--source", str(release), "--out", str(out), "--quiet"]
    assert main([*argv, "--push-to-hub", REPO_ID, "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "push dry run" in text and "licence: cc-by-nc-4.0 (from README.md)" in text
    assert all(name in text for name in _files(out))
    assert hub.requests == []


def test_build_push_checks_access_before_building(release, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "ds"
    argv = ["build", "--source", str(release), "--out", str(out), "--push-to-hub", REPO_ID]
    assert main(argv) == 2
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err and not out.exists()
    assert main(["build", "--source", str(release), "--out", str(out), "--dry-run"]) == 2
    assert "--dry-run and --private need --push-to-hub" in capsys.readouterr().err


def test_push_creates_a_dataset_repo_that_load_dataset_reads(built, hub, tmp_path):
    report = json.loads((built / "build_report.json").read_text())
    hub.repos[REPO_ID] = {".gitattributes": b"", "realism/test-old.parquet": b"x"}
    hub.repo_types[REPO_ID] = "dataset"  # pushed before: its stale shard goes
    assert main(["push-dataset", str(built), REPO_ID, "--private"]) == 0

    (commit,) = hub.commits
    assert commit["summary"] == DATASET_COMMIT_MESSAGE
    assert sorted(commit["added"]) == _files(built)
    assert commit["deleted"] == ["realism/test-old.parquet"]
    assert ("POST", f"/api/datasets/{REPO_ID}/commit/main") in hub.requests
    # what the Hub repo holds, as a folder: load_dataset reads it like the Hub copy
    local = tmp_path / "from-hub"
    for name, data in hub.repos[REPO_ID].items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_bytes(data)
    for config in ("realism", "archetype"):
        ds = load_dataset(str(local), config)
        assert {s: len(ds[s]) for s in ds} == report["rows"][config]


def test_a_new_repo_is_created_as_a_dataset_repo(built, hub):
    assert main(["push-dataset", str(built), REPO_ID]) == 0
    assert hub.repo_types[REPO_ID] == "dataset"
    assert ("POST", "/api/repos/create") in hub.requests


def test_an_incomplete_build_is_refused_before_any_request(built, hub, tmp_path, capsys):
    partial = shutil.copytree(built, tmp_path / "partial")
    (partial / "build_report.json").unlink()
    assert main(["push-dataset", str(partial), REPO_ID]) == 2
    err = capsys.readouterr().err
    assert f"{partial}: not a complete dataset build (no build_report.json)" in err
    shutil.copy2(built / "build_report.json", partial)
    shard = next(partial.rglob("*.parquet"))
    shard.unlink()
    assert main(["push-dataset", str(partial), REPO_ID, "--dry-run"]) == 2
    assert f"missing {shard}" in capsys.readouterr().err
    assert hub.requests == []


def test_no_licence_non_interactively_names_license_option(
    official_samples_dir, monkeypatch, tmp_path, capsys
):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    out = tmp_path / "ds"
    assert main(["build", "--source", str(official_samples_dir), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pass --license ID" in err and "README.md" in err and "LICENSE" in err
    assert not out.exists()


def test_the_licence_is_asked_for_on_a_terminal(official_samples_dir):
    questions = []
    licence = resolve_licence(
        official_samples_dir, None, ask=lambda q: questions.append(q) or "cc-by-4.0 "
    )
    assert (licence.id, licence.origin) == ("cc-by-4.0", "prompt")
    assert "states no licence" in questions[0]
    with pytest.raises(LicenceError, match="pass --license"):
        resolve_licence(official_samples_dir, None, ask=lambda q: "")


def test_other_needs_a_name_and_terms(release, tmp_path, capsys):
    argv = ["build", "--source", str(release), "--out", str(tmp_path / "ds"), "--quiet"]
    assert main([*argv, "--license", "other"]) == 2
    assert "--license other needs --license-name" in capsys.readouterr().err
    assert main([*argv, "--license", "other", "--license-name", "mixed"]) == 2
    assert "needs --license-link URL" in capsys.readouterr().err
    assert main([*argv, "--license-name", "mixed"]) == 2  # a name without other
    assert "go with --license other only" in capsys.readouterr().err

    note = "Demo speech: LibriVox (public domain) and offline TTS."
    args = [*argv, "--license", "other", "--license-name", "mixed", "--source-note", note]
    assert main(args) == 0
    meta = _front_matter(tmp_path / "ds" / "README.md")
    assert (meta["license"], meta["license_name"], meta["license_link"]) == (
        "other",
        "mixed",
        "README.md",
    )
    assert f"`license: other`, named `mixed`. {note}" in (tmp_path / "ds" / "README.md").read_text()


def test_licence_files_name_one_known_licence(tmp_path):
    (tmp_path / "LICENSE").write_text(
        "                                 Apache License\n"
        "                           Version 2.0, January 2004\n"
    )
    assert read_release_licence(tmp_path)[0].id == "apache-2.0"
    (tmp_path / "LICENSE").write_text("MIT License\n\nApache License Version 2.0\n")
    found, notes = read_release_licence(tmp_path)
    assert found is None and "names several licences (apache-2.0, mit)" in notes[0]
    (tmp_path / "README.md").write_text("---\nlicense: other\n---\n")
    found, notes = read_release_licence(tmp_path)
    assert found is None and "license: other names no single Hub licence id" in notes[0]
