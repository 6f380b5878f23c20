"""Fill the feature cache for dataset splits from N processes, each clip computed by one of them.

A clip is its cache key (:func:`~speech_drame.features.cache.audio_key`: the SHA-256 of its
first 30 s at 16 kHz). :func:`owners` deals the distinct clips, in order of first appearance
over the configs and splits given, round-robin to the ranks, so every clip belongs to exactly
one rank, a clip repeated in several splits or configs is computed once, and no two ranks
write the same audio entry. Every rank reads and decodes every row to learn the keys (about
5 ms a clip, against about a second of extraction), then :func:`fill_cache` extracts its own
clips through :func:`~speech_drame.features.blueprint.iter_blueprints` with their context
texts, so the cache holds all that ``train-lite`` reads for those splits. A context text shared
by clips of several ranks (a realism profile) may be embedded by each of them: a few
milliseconds, and the entry written is the same. Clips the dataset has no audio for are counted
apart (``no_audio``); splits without any audio stop the run before it starts.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from speech_drame.audio import SCORED_SECONDS, AudioError, load_audio
from speech_drame.distributed import local_processes
from speech_drame.features import text
from speech_drame.features.blueprint import (
    DEFAULT_BATCH_SIZE,
    EXTRACTORS,
    CacheArg,
    iter_blueprints,
    resolve_cache,
)
from speech_drame.features.cache import FeatureCache, audio_key
from speech_drame.features.common import cpu_count, thread_count
from speech_drame.schema import SPLITS, Config


def owners(keys: Iterable[str], world_size: int) -> list[int]:
    """The rank of each occurrence: the i-th distinct key (by first appearance) goes to rank
    ``i % world_size``, and every repeat of a key to the same rank as its first occurrence."""
    if world_size < 1:
        raise ValueError(f"world size must be at least 1, got {world_size}")
    rank_of: dict[str, int] = {}
    return [rank_of.setdefault(key, len(rank_of) % world_size) for key in keys]


@dataclass(frozen=True)
class Row:
    """One row of a split, as the sharding sees it."""

    where: str  # "config/split id"
    key: str  # the audio key, or "unreadable:<SHA-256 of the encoded bytes>"
    contexts: dict[str, str]
    error: str | None = None  # why the audio could not be read


@dataclass
class ShardSummary:
    """What one rank (or, summed, all of them) did. ``clips`` = computed + cached + failed."""

    ranks: str  # "0/2", or "all 2" for a total
    rows: int  # rows read (every rank reads every row of the splits)
    clips: int  # distinct clips owned
    computed: int
    cached: int  # every audio feature already in the cache
    failed: dict[str, str] = field(default_factory=dict)  # "config/split id" -> reason
    seconds: float = 0.0
    no_audio: int = 0  # rows the dataset has no audio for (neither computed nor failed)

    def line(self) -> str:
        """One line: the counts, the first failure reasons."""
        text_ = (
            f"features {self.ranks}: {self.clips} clip(s) of {self.rows} row(s): "
            f"{self.computed} computed, {self.cached} already cached, {len(self.failed)} failed "
            f"({self.seconds:.1f} s)"
        )
        if self.no_audio:
            text_ += f"; {self.no_audio} row(s) without audio, not extracted"
        if self.failed:
            first = list(self.failed.items())[:3]
            more = f"; ... ({len(self.failed) - 3} more)" if len(self.failed) > 3 else ""
            text_ += ": " + "; ".join(f"{w}: {why}" for w, why in first) + more
        return text_


def total(summaries: Sequence[ShardSummary]) -> ShardSummary:
    """The sum of every rank's summary (rows are each rank's full read: counted once)."""
    return ShardSummary(
        f"all {len(summaries)}",
        summaries[0].rows,
        sum(s.clips for s in summaries),
        sum(s.computed for s in summaries),
        sum(s.cached for s in summaries),
        {w: why for s in summaries for w, why in s.failed.items()},
        max(s.seconds for s in summaries),
        summaries[0].no_audio,
    )


def default_workers() -> int:
    """Clips extracted at once by one process: this machine's CPUs shared by its processes."""
    return max(1, cpu_count() // (thread_count() * local_processes()))


def dataset_parts(
    dataset_dir: str | os.PathLike, configs: Sequence[Config], splits: Sequence[str] | None
) -> list[tuple[Config, str]]:
    """The ``(config, split)`` pairs of ``dataset_dir`` to fill, in a fixed order (the official
    splits first): each config's splits that the dataset card lists, those named in ``splits``
    if given.

    Raises:
        ValueError: a split in ``splits`` that none of the configs has, or no split at all.
    """
    from speech_drame.data.reader import dataset_splits

    have: dict[Config, list[str]] = {}
    for c in configs:
        listed = dataset_splits(dataset_dir, c)
        have[c] = [s for s in SPLITS[c] if s in listed] + sorted(set(listed) - set(SPLITS[c]))
    if splits is not None:
        unknown = [s for s in splits if not any(s in have[c] for c in configs)]
        if unknown or not splits:
            listed = {c: sorted(v) for c, v in have.items()}
            raise ValueError(
                f"{dataset_dir}: no split {', '.join(unknown)} (the card lists {listed})"
            )
    out = [(c, s) for c in configs for s in have[c] if splits is None or s in splits]
    if not out:
        raise ValueError(f"{dataset_dir}: no split of {', '.join(configs)} in the card")
    return out


def split_streams(dataset_dir: str | os.PathLike, parts: Sequence[tuple[Config, str]]) -> list:
    """One :class:`~speech_drame.data.examples.SplitStream` per ``(config, split)``.

    Raises:
        NoAudioError: none of the parts has any audio.
    """
    from speech_drame.data.examples import SplitStream
    from speech_drame.data.reader import require_audio

    streams = [SplitStream(dataset_dir, config, split) for config, split in parts]
    require_audio([s.split_data for s in streams], "feature extraction")
    return streams


def read_rows(streams: Sequence) -> Iterator[Row]:
    """Every row with audio of ``streams`` (:class:`~speech_drame.data.examples.SplitStream`),
    with its audio decoded only to compute its key."""
    for stream in streams:
        for example in stream:
            where = f"{stream.config}/{stream.split} {example.id}"
            try:
                audio = load_audio(example.source, max_seconds=SCORED_SECONDS)
            except AudioError as exc:
                digest = hashlib.sha256(example.source).hexdigest()
                yield Row(where, f"unreadable:{digest}", example.contexts, str(exc))
                continue
            yield Row(where, audio_key(audio.samples, audio.sample_rate), example.contexts)


def _is_cached(cache: FeatureCache, key: str) -> bool:
    return all(cache.path(name, v, key).is_file() for name, (v, _, _) in EXTRACTORS.items())


def fill_cache(
    dataset_dir: str | os.PathLike,
    parts: Sequence[tuple[Config, str]],
    cache: CacheArg,
    rank: int = 0,
    world_size: int = 1,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int | None = None,
    progress: bool = True,
) -> ShardSummary:
    """Extract this rank's clips of the ``(config, split)`` parts into ``cache``.

    Each owned clip runs once, with the context texts of its first row; the context texts of
    its other rows are embedded afterwards. A failed clip is listed under its first row; its
    other rows add nothing.

    Raises:
        ValueError: no cache, a bad rank, or a split the dataset does not have.
    """
    from tqdm.auto import tqdm

    if not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world size, got {rank} of {world_size}")
    store = resolve_cache(cache)
    if store is None:
        raise ValueError("filling the feature cache needs a cache")
    start = time.perf_counter()
    streams = split_streams(dataset_dir, parts)
    sizes = [s.n_rows for s in streams]
    total_rows = None if None in sizes else sum(sizes)
    reading = tqdm(read_rows(streams), "audio keys", total_rows, unit="row", disable=not progress)
    rows = list(reading)
    first: dict[str, int] = {}  # key -> its first row, for the keys of this rank
    for i, owner in enumerate(owners((r.key for r in rows), world_size)):
        if owner == rank:
            first.setdefault(rows[i].key, i)
    summary = ShardSummary(f"{rank}/{world_size}", len(rows), len(first), 0, 0)
    summary.no_audio = sum(len(s.no_audio) for s in streams)
    todo: list[int] = []
    for i in first.values():
        if rows[i].error is not None:
            summary.failed[rows[i].where] = rows[i].error
        else:
            todo.append(i)
    cached = {i for i in todo if _is_cached(store, rows[i].key)}
    wanted = set(todo)

    def clips() -> Iterator[tuple[bytes, dict[str, str]]]:
        position = 0
        for stream in streams:
            for example in stream:
                if position in wanted:
                    yield example.source, example.contexts
                position += 1

    results = iter_blueprints(
        clips(), store, workers if workers is not None else default_workers(), progress,
        batch_size=batch_size, total=len(todo),
    )  # fmt: skip
    for i, (_, failure) in zip(todo, results, strict=True):
        if failure is not None:
            summary.failed[rows[i].where] = failure.reason
            cached.discard(i)  # e.g. its context: cached audio, no usable blueprint
        elif i not in cached:
            summary.computed += 1
    summary.cached = len(cached)
    failed_keys = {rows[i].key for i in first.values() if rows[i].where in summary.failed}
    extra = {
        t
        for i, row in enumerate(rows)
        if row.key in first and first[row.key] != i and row.key not in failed_keys
        for t in row.contexts.values()
        if t.strip()
    }
    text.embed_texts(sorted(extra), store)  # cached texts are only read
    summary.seconds = time.perf_counter() - start
    return summary
