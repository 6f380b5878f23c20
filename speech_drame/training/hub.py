"""Pushing an exported evaluator to the Hub, or listing exactly what a push would upload."""

from __future__ import annotations

import os
from collections.abc import Sequence
from fnmatch import fnmatch
from pathlib import Path

EXCLUDED_TOP_LEVEL = ("checkpoint-*", "runs")  # Trainer checkpoints and logs stay local


def upload_files(folder: str | os.PathLike) -> list[Path]:
    """Files of ``folder`` (relative, sorted) that make up the evaluator: not checkpoints/logs."""
    root = Path(folder)
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(fnmatch(rel.parts[0], p) for p in EXCLUDED_TOP_LEVEL):
            files.append(rel)
    return files


def describe_push(folder: str | os.PathLike, files: Sequence[Path], repo_id: str) -> str:
    """The dry-run listing: target repo, then one line per file with its size in bytes."""
    root = Path(folder)
    sizes = [(f.as_posix(), (root / f).stat().st_size) for f in files]
    total = sum(s for _, s in sizes)
    lines = [f"target: https://huggingface.co/{repo_id} (model repo)"]
    lines.append(f"files: {len(sizes)}, {total} bytes")
    lines += [f"{size:>14d}  {name}" for name, size in sizes]
    return "\n".join(lines)


def push_evaluator(
    folder: str | os.PathLike,
    files: Sequence[Path],
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Upload ``files`` of ``folder`` to the model repo ``repo_id`` (created if needed).

    With ``dry_run`` only print :func:`describe_push`. Returns the commit URL of a real push.
    """
    print(("push dry run\n" if dry_run else "pushing\n") + describe_push(folder, files, repo_id))
    if dry_run:
        return None
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        repo_type="model",
        folder_path=str(folder),
        allow_patterns=[f.as_posix() for f in files],
        commit_message="Upload DRAME-Eval evaluator (speech-drame train.py)",
    )
    return str(commit.commit_url)
