"""Pushing a folder to a Hub repo, shared by DRAME-Eval's ``train.py --push_to_hub``,
``speech-drame train-lite --push-to-hub``/``push-lite``, ``build --push-to-hub``/``push-dataset``,
``push-metric`` and ``space push``: access checked before the long work
(:mod:`speech_drame.hub.access`), then the listing of exactly what is uploaded (all a dry run
does), then one commit of those files.

:func:`push_folder` is the one upload path; :func:`speech_drame.data.push.push_dataset` feeds it
a built dataset folder (to a dataset repo), :func:`metric_space_stage` the metric Space;
:func:`speech_drame.scorers.lite.publish.push_lite_scorer` a ``train-lite`` output folder with its model
card and :func:`speech_drame.training.hub.push_evaluator` an exported DRAME-Eval evaluator.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .refs import HubRef


def describe_push(
    folder: str | os.PathLike, files: Sequence[Path], repo_id: str, repo_type: str = "model"
) -> str:
    """The listing of a push: target repo, then one line per file with its size in bytes."""
    from huggingface_hub import constants

    root = Path(folder)
    sizes = [(f.as_posix(), (root / f).stat().st_size) for f in files]
    total = sum(s for _, s in sizes)
    url = f"{constants.ENDPOINT}/{HubRef(repo_id, repo_type=repo_type).url_path}"
    lines = [f"target: {url} ({repo_type} repo)"]
    lines.append(f"files: {len(sizes)}, {total} bytes")
    lines += [f"{size:>14d}  {name}" for name, size in sizes]
    return "\n".join(lines)


def push_folder(
    folder: str | os.PathLike,
    files: Sequence[Path],
    repo_id: str,
    *,
    dry_run: bool,
    commit_message: str,
    replace_under: Sequence[str] = (),
    private: bool | None = None,
    token: str | None = None,
    repo_type: str = "model",
    space_sdk: str | None = None,
) -> str | None:
    """Upload exactly ``files`` (relative to ``folder``) to the Hub repo ``repo_id`` in one
    commit.

    The repo is created if needed; files on the Hub under a folder of ``replace_under`` that
    this push does not have (left by an earlier run) are deleted in the same commit. With
    ``dry_run`` only :func:`describe_push` is printed and nothing is sent. Returns the commit
    URL (``None`` for a dry run). ``repo_type`` is ``"model"``, ``"dataset"`` (a built
    dataset) or ``"space"`` (with its ``space_sdk``: ``speech-drame push-metric``).
    """
    listing = describe_push(folder, files, repo_id, repo_type)
    print(("push dry run\n" if dry_run else "pushing\n") + listing)
    if dry_run:
        return None
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(token=token)
    api.create_repo(
        repo_id, repo_type=repo_type, private=private, exist_ok=True, space_sdk=space_sdk
    )
    names = [f.as_posix() for f in files]
    prefixes = tuple(f"{p.rstrip('/')}/" for p in replace_under)
    stale = [
        path
        for path in api.list_repo_files(repo_id, repo_type=repo_type)
        if prefixes and path.startswith(prefixes) and path not in names
    ]
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(Path(folder) / name))
        for name in names
    ] + [CommitOperationDelete(path_in_repo=path) for path in stale]
    commit = api.create_commit(
        repo_id, operations, commit_message=commit_message, repo_type=repo_type
    )
    print(f"pushed: {commit.commit_url}")
    return str(commit.commit_url)


def metric_space_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a metric Space folder (``evaluate_metric/drame_metric``) that
    ``speech-drame push-metric`` uploads, relative to it and sorted: every file but hidden ones
    and Python caches (``__pycache__``, ``*.pyc``).

    Raises:
        FileNotFoundError: ``folder`` is not a folder or lacks its ``app.py`` or ``README.md``.
    """
    root = Path(folder)
    missing = [name for name in ("README.md", "app.py") if not (root / name).is_file()]
    if not root.is_dir() or missing:
        raise FileNotFoundError(f"{root}: not a metric Space folder (needs README.md and app.py)")
    return sorted(
        path.relative_to(root)
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix != ".pyc"
        and not any(
            part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts
        )
    )


def metric_space_stage(folder: str | os.PathLike, target: str | os.PathLike) -> Path:
    """``target`` filled with the metric Space: the files of ``folder``
    (:func:`metric_space_files`) plus a wheel of this package, built from the checkout, that the
    Space's ``requirements.txt`` installs (a Space cannot see the repository).

    Raises:
        FileNotFoundError: the package is not installed from a source checkout, or
            ``requirements.txt`` names a wheel other than the one built.
        RuntimeError: the wheel build failed.
    """
    import shutil

    from ..source_wheel import build_wheel

    root, target = Path(folder), Path(target)
    for name in metric_space_files(root):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target / name)
    build_wheel(target)
    built = {p.name for p in target.glob("speech_drame-*.whl")}
    wanted = {
        line.strip()[2:]
        for line in (target / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("./speech_drame-")
    }
    if not wanted or wanted != built:
        raise FileNotFoundError(
            f"{root / 'requirements.txt'} installs {sorted(wanted) or 'no ./speech_drame-*.whl'}, "
            f"but the build made {sorted(built)}: update the wheel line to the package version"
        )
    return target
