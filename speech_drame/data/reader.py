"""Reading a built dataset folder: the one reader every part of the package goes through.

A built folder (``speech-drame build``) holds a ``README.md`` card whose YAML ``configs`` list
each config's parquet shards per split. :func:`open_split` opens one config and split and
reads it without ``datasets`` copying anything into its cache:

- :meth:`BuiltSplit.rows` streams the columns asked for, one parquet row group at a time (the
  build writes row groups of at most 32 MB of audio), so memory does not grow with the split;
- :attr:`BuiltSplit.without_audio` lists the clips whose ``audio`` is null (an annotation-only
  release, or audio not found at build time), read from the audio's file-name column only;
- :meth:`BuiltSplit.row` reads one row by position, :meth:`BuiltSplit.to_dataset` gives a
  ``datasets.Dataset`` for random access (the Trainer);
- :func:`require_audio` stops work that needs audio, before it starts, with one line naming
  the split, how many clips lack audio, and how to attach it.

``dataset`` is a folder, or a built dataset pushed to the Hub when given as one
(``hf://datasets/ORG/NAME``, fetched into the Hub cache): a name that is no folder is an error
naming it, never a Hub dataset or a stale cached copy of some earlier folder of that name.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..schema import CONFIGS, Config, check_config

AUDIO = "audio"
_AUDIO_PATH = "audio.path"  # a small leaf of the audio struct: null exactly where audio is
ATTACH_HINT = "attach it with `speech-drame build --source RELEASE --audio-dir DIR`"


class DatasetError(InputError):
    """A dataset folder, config, split or column that cannot be read; the message names it."""


class NoAudioError(DatasetError):
    """Work that needs audio was asked of clips that have none."""


def dataset_folder(dataset: str | os.PathLike) -> Path:
    """The built dataset folder ``dataset`` (resolved; ``hf://datasets/ORG/NAME``: its Hub
    snapshot); ``DatasetError`` if it is not one."""
    from .hub_source import HF_PREFIX, download_release, hub_repo_id

    if os.fspath(dataset).startswith(HF_PREFIX):
        try:
            folder = download_release(hub_repo_id(dataset)).path
        except (FileNotFoundError, ValueError) as exc:
            raise DatasetError(f"dataset {os.fspath(dataset)}: {exc}") from None
    else:
        folder = Path(dataset)
    if not folder.is_dir():
        raise DatasetError(
            f"--dataset {os.fspath(dataset)!r}: no such folder in {Path.cwd()} (give the folder "
            "`speech-drame build` wrote, by its path from elsewhere, or hf://datasets/ORG/NAME "
            "for one pushed to the Hub; a cached copy of another folder is never used)"
        )
    if not (folder / "README.md").is_file():
        raise DatasetError(f"{folder}: not a built dataset folder (no README.md dataset card)")
    return folder.resolve()


@functools.lru_cache(maxsize=32)
def _card_configs(card: Path, mtime_ns: int) -> dict[str, dict[str, list[str]]]:
    from huggingface_hub.repocard import metadata_load

    meta = metadata_load(card) or {}
    out: dict[str, dict[str, list[str]]] = {}
    for entry in meta.get("configs") or []:
        files = entry.get("data_files") or []  # the forms `datasets` reads from a card
        if isinstance(files, dict):
            files = [{"split": split, "path": path} for split, path in files.items()]
        elif isinstance(files, str) or (files and not isinstance(files[0], dict)):
            files = [{"split": "train", "path": files}]
        splits: dict[str, list[str]] = {}
        for item in files:
            paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
            splits.setdefault(item["split"], []).extend(paths)
        out[entry["config_name"]] = splits
    return out


def card_splits(dataset: str | os.PathLike) -> dict[str, dict[str, list[str]]]:
    """config -> split -> the data file patterns the folder's card lists."""
    card = dataset_folder(dataset) / "README.md"
    return _card_configs(card, card.stat().st_mtime_ns)


def dataset_configs(dataset: str | os.PathLike) -> list[Config]:
    """The configs (archetype, realism) the folder's card declares, in the package's order."""
    listed = card_splits(dataset)
    return [c for c in CONFIGS if c in listed]


def dataset_splits(dataset: str | os.PathLike, config: str) -> list[str]:
    """The splits of ``config`` the card lists (``[]`` for a config it does not have)."""
    return list(card_splits(dataset).get(check_config(config), {}))


class BuiltSplit:
    """One config and split of a built dataset folder (see the module docstring).

    ``files`` are its parquet shards, ``schema`` their arrow schema, ``n_rows`` its row count
    (from the shards' metadata); nothing imports ``datasets`` but :attr:`features` and
    :meth:`to_dataset`.
    """

    def __init__(self, folder: Path, config: Config, split: str, files: list[Path]):
        import pyarrow.parquet as pq

        self.folder, self.config, self.split, self.files = folder, config, split, files
        self.schema = pq.read_schema(files[0])
        self.n_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        self._without_audio: list[str] | None = None

    @property
    def where(self) -> str:
        return f"{self.folder} {self.config}/{self.split}"

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    @property
    def annotation_keys(self) -> list[str]:
        """The fields of the ``annotations`` column (``[]`` without one)."""
        if "annotations" not in self.schema.names:
            return []
        return [f.name for f in self.schema.field("annotations").type]

    @property
    def features(self) -> Any:
        """The split's ``datasets.Features`` (from the shards' schema)."""
        from datasets import Features

        return Features.from_arrow_schema(self.schema)

    def has(self, column: str) -> bool:
        return column in self.schema.names

    def check_columns(self, columns: Sequence[str]) -> None:
        """``DatasetError`` naming the split and the columns it does not have."""
        missing = [c for c in columns if not self.has(c.split(".")[0])]
        if missing:
            raise DatasetError(
                f"{self.where}: no column {', '.join(missing)} (it has {', '.join(self.columns)})"
            )

    def _groups(self) -> Iterator[tuple[Any, int]]:
        import pyarrow.parquet as pq

        for path in self.files:
            shard = pq.ParquetFile(path)
            for group in range(shard.num_row_groups):
                yield shard, group

    def rows(
        self,
        columns: Sequence[str],
        *,
        optional: Sequence[str] = (),
        with_audio_only: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """The rows (dicts of ``columns``, plus those of ``optional`` the split has), in
        dataset order, one row group in memory at a time. ``audio`` stays encoded
        (``{"bytes", "path"}``, ``None`` without audio). With ``with_audio_only`` the rows
        without audio are passed over (they are :attr:`without_audio`)."""
        from collections import deque

        self.check_columns(columns)
        wanted = [*columns, *(c for c in optional if self.has(c) and c not in columns)]
        read = list(wanted)
        keep_audio = any(c.split(".")[0] == AUDIO for c in wanted)
        if with_audio_only and not keep_audio:
            read.append(_AUDIO_PATH)
        for shard, group in self._groups():
            rows = deque(shard.read_row_group(group, columns=read).to_pylist())
            while rows:  # each row is released once it is handed on
                row = rows.popleft()
                if with_audio_only and row[AUDIO] is None:
                    continue
                if not keep_audio:
                    row.pop(AUDIO, None)
                yield row

    def column(self, name: str) -> list[Any]:
        """Every value of one column (not ``audio``), in dataset order."""
        return [row[name] for row in self.rows([name])]

    @property
    def without_audio(self) -> list[str]:
        """The ids of the clips whose audio is null, in dataset order."""
        if self._without_audio is None:
            self._without_audio = [
                row["id"] for row in self.rows(["id", _AUDIO_PATH]) if row[AUDIO] is None
            ]
        return self._without_audio

    @property
    def n_with_audio(self) -> int:
        return self.n_rows - len(self.without_audio)

    def row(self, index: int, columns: Sequence[str]) -> dict[str, Any]:
        """The row at position ``index`` (0-based, dataset order)."""
        self.check_columns(columns)
        if not 0 <= index < self.n_rows:
            raise IndexError(f"{self.where}: row {index} of {self.n_rows}")
        for shard, group in self._groups():
            size = shard.metadata.row_group(group).num_rows
            if index < size:
                table = shard.read_row_group(group, columns=list(columns))
                return table.slice(index, 1).to_pylist()[0]
            index -= size
        raise AssertionError("unreachable: the row count comes from the same metadata")

    def to_dataset(self, *, with_audio_only: bool = False, cache_dir: str | None = None) -> Any:
        """The split as a ``datasets.Dataset`` (memory-mapped arrow in the ``datasets`` cache,
        or ``cache_dir``; audio decoded on access), for random access; with
        ``with_audio_only`` the rows without audio are left out (an index mapping)."""
        from datasets import load_dataset

        ds = load_dataset(
            "parquet",
            data_files={self.split: [str(f) for f in self.files]},
            split=self.split,
            features=self.features,
            cache_dir=cache_dir,
        )
        if with_audio_only and self.without_audio:
            missing = set(self.without_audio)
            ds = ds.select([i for i, cid in enumerate(ds["id"]) if cid not in missing])
        return ds


def open_split(dataset: str | os.PathLike, config: str, split: str) -> BuiltSplit:
    """One config and split of the built dataset folder ``dataset``.

    Raises:
        DatasetError: ``dataset`` is no built dataset folder, or its card has no such config
            or split, or a shard it lists is missing.
    """
    folder = dataset_folder(dataset)
    config = check_config(config)
    listed = card_splits(folder)
    if config not in listed:
        raise DatasetError(
            f"{folder}: no {config} config (the card declares {', '.join(listed) or 'none'})"
        )
    if split not in listed[config]:
        raise DatasetError(
            f"{folder} {config}/{split}: no such split (the card lists {sorted(listed[config])})"
        )
    files: list[Path] = []
    for pattern in listed[config][split]:
        found = sorted(folder.glob(pattern))
        if not found:
            raise DatasetError(f"{folder} {config}/{split}: shard {pattern} is missing")
        files += found
    return BuiltSplit(folder, config, split, files)


def require_audio(splits: Sequence[BuiltSplit], what: str) -> None:
    """Stop ``what`` (e.g. ``"train-lite"``) before any work when none of ``splits`` has audio,
    with one line per split saying how many clips lack it and how to attach it. With some
    audio present it returns: the caller works on the clips that have it and counts the rest.

    Raises:
        NoAudioError: no clip of ``splits`` has audio.
    """
    if any(s.n_with_audio for s in splits):
        return
    lacking = "; ".join(
        f"{s.config}/{s.split}: {len(s.without_audio)} of {s.n_rows}" for s in splits
    )
    folder = splits[0].folder if splits else "the dataset"
    raise NoAudioError(
        f"{what} needs audio, and no clip of {folder} has any ({lacking} clips without audio); "
        f"{ATTACH_HINT}"
    )
