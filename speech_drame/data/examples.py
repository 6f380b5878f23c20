"""The clips of a built split as scorer inputs: id, encoded audio, context texts, labels.

:class:`SplitStream` reads a split through :func:`.reader.open_split`, only the columns a scorer
needs and one row group at a time, with the audio kept encoded, so memory does not grow with
the size of the split and nothing is copied into the ``datasets`` cache. (``datasets``' own
streaming reader was measured to peak higher the more rows it has read: about 190 MB more for
1,800 rows than for 450, see ``benchmarks/bench_memory.py``.) Clips without audio are not
yielded: they are listed in :attr:`SplitStream.no_audio`, for the caller to count as such.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..schema import CONTENT_PASS, CONTEXT_COLUMNS, CONTEXTS, Config, context_from_row, dimensions
from .reader import open_split


@dataclass
class Example:
    """One clip of a split: id, encoded audio, context texts, annotator labels and the
    language the release gives (the dataset's ``language`` column; None when unstated or when
    the dataset was built before the column existed)."""

    id: str
    source: bytes
    contexts: dict[str, str]
    labels: dict[str, list[Any]]  # dimension -> every annotator's rating
    language: str | None = None


class SplitStream:
    """The clips with audio of one split, as :class:`Example` objects in dataset order.

    ``label_keys`` are the rated dimensions the split carries (Content Pass last, for
    archetype); ``n_rows`` the number of clips yielded; ``no_audio`` the ids of the clips
    passed over because the split has no audio for them.

    Raises:
        DatasetError: no such dataset folder, config, split, or the columns a scorer needs.
    """

    def __init__(self, dataset_dir: str | os.PathLike, config: Config, split: str):
        self.split_data = open_split(dataset_dir, config, split)
        self.config, self.split = self.split_data.config, split
        self.dataset_dir = str(self.split_data.folder)
        annotations = self.split_data.annotation_keys
        self.label_keys = [d for d in dimensions(self.config) if d in annotations]
        if self.config == "archetype":
            self.label_keys.append(CONTENT_PASS)
        self.columns = ["id", "audio", "annotations"]
        self.columns += [CONTEXT_COLUMNS[name] for name in CONTEXTS[self.config]]
        self.split_data.check_columns(self.columns)
        self.no_audio = self.split_data.without_audio
        self.n_rows = self.split_data.n_rows - len(self.no_audio)

    @property
    def files(self) -> list[str]:
        return [str(f) for f in self.split_data.files]

    @property
    def where(self) -> str:
        return self.split_data.where

    def __iter__(self) -> Iterator[Example]:
        rows = self.split_data.rows(self.columns, optional=("language",), with_audio_only=True)
        for row in rows:
            yield self._example(row)

    def _example(self, row: Mapping[str, Any]) -> Example:
        return Example(
            row["id"],
            row["audio"]["bytes"],
            context_from_row(row, self.config, f"{self.where} {row['id']}"),
            {k: list(row["annotations"][k]) for k in self.label_keys},
            row.get("language"),
        )
