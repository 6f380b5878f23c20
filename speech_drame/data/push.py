"""Pushing a built dataset folder to a Hub dataset repo (``build --push-to-hub``,
``push-dataset``): the files a build made, through :func:`speech_drame.hub.push.push_folder`."""

from __future__ import annotations

import os
from pathlib import Path

from ..hub.push import push_folder
from ..schema import CONFIGS
from .build import REPORT_FILE

DATASET_COMMIT_MESSAGE = "Upload Speech-DRAME dataset (speech-drame build)"
DATASET_CARD = "README.md"


def dataset_push_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a built dataset folder that a push uploads: the card ``README.md``,
    ``build_report.json`` and every parquet shard the card's configs list.

    Raises:
        FileNotFoundError: ``folder`` is not a complete build: no ``build_report.json`` or card,
            a card without configs, or a listed shard missing.
    """
    from huggingface_hub.repocard import metadata_load

    root = Path(folder)
    card = root / DATASET_CARD
    absent = [name for name in (REPORT_FILE, DATASET_CARD) if not (root / name).is_file()]
    if absent:
        raise FileNotFoundError(
            f"{root}: not a complete dataset build (no {' or '.join(absent)}); "
            "build it with `speech-drame build`"
        )
    shards = [
        Path(path)
        for config in (metadata_load(card) or {}).get("configs", [])
        for split in config.get("data_files", [])
        for path in split["path"]
    ]
    missing = [str(root / f) for f in shards if not (root / f).is_file()]
    if not shards or missing:
        raise FileNotFoundError(
            f"{root}: not a complete dataset build: "
            + (f"missing {', '.join(missing)}" if missing else f"{card} lists no parquet files")
        )
    return [Path(DATASET_CARD), Path(REPORT_FILE), *sorted(shards)]


def push_dataset(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Push a built dataset folder (:func:`dataset_push_files`) to the Hub dataset repo
    ``repo_id`` in one commit, after which ``load_dataset(repo_id, "realism")`` loads it; shards
    of an earlier push that this build lacks are deleted. Returns the commit URL (``None`` for
    a dry run)."""
    return push_folder(
        folder,
        dataset_push_files(folder),
        repo_id,
        dry_run=dry_run,
        commit_message=DATASET_COMMIT_MESSAGE,
        replace_under=CONFIGS,
        private=private,
        token=token,
        repo_type="dataset",
    )
