"""A plain clone is self-contained, and what `make demo` and the README write behaves."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import OFFICIAL_SAMPLES, REPO

# folders a checkout generates (git-ignored) or that are not ours to check
GENERATED = {".git", ".venv", ".cache", "build", "artifacts", "speech-drame", "__pycache__"}
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".json", ".cfg", ""}
# a path that leaves the checkout: ../shared, <repo>.parent / "shared", parents[N] beyond the root
OUTSIDE = re.compile(r"\.\./shared|parent\s*/\s*[\"']shared|/work/shared")


def _tracked_text_files():
    for path in sorted(REPO.rglob("*")):
        rel = path.relative_to(REPO)
        if rel.parts[0] in GENERATED or "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or rel.parts[0] == ".ci":
            yield rel, path


def test_official_samples_are_in_the_repository_with_their_source_and_licence():
    assert OFFICIAL_SAMPLES.parent == REPO
    source = (OFFICIAL_SAMPLES / "SOURCE.md").read_text(encoding="utf-8")
    assert "Anuttacon/speech_drame" in source and "Apache-2.0" in source
    for config in ("archetype", "realism"):
        lines = (OFFICIAL_SAMPLES / f"{config}_data" / "test.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
        present = [
            r
            for r in records
            if (OFFICIAL_SAMPLES / f"{config}_data" / r["wav_path"].rsplit("/", 1)[1]).is_file()
        ]
        assert len(records) == 2 and present, config


def test_no_file_refers_to_a_path_outside_the_repository():
    offenders = [
        f"{rel}:{n}: {line.strip()}"
        for rel, path in _tracked_text_files()
        if rel != REPO.joinpath("tests", "test_repository.py").relative_to(REPO)
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, "\n".join(offenders)


def test_the_readme_example_outputs_are_git_ignored():
    """What the README's commands write in the checkout never shows up as untracked files."""
    outputs = [
        ".judge-cache/x",
        "runs/realism/x",
        "evalbench_raw/x",
        "responses/x",
        "agreement.json",
    ]
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *outputs], cwd=REPO, capture_output=True, text=True
    )
    assert sorted(done.stdout.split()) == sorted(outputs)


def test_a_second_make_demo_would_not_retrain_the_scorer(demo_dataset_dir):
    """`make test` builds the demo stages first; the scorer target is the file train-lite writes,
    so make sees it up to date (a second `make demo` does no training)."""
    if not (REPO / "artifacts" / "lite_scorer" / "metrics.json").is_file():
        pytest.fail("artifacts/lite_scorer/metrics.json is missing: run `make demo-scorer`")
    done = subprocess.run(
        ["make", "-q", "artifacts/lite_scorer/metrics.json"], cwd=REPO, capture_output=True
    )
    assert done.returncode == 0, "make would retrain the LiteScorer: run `make demo` first"
