"""Official-format release -> Hub-ready dataset folder that ``datasets`` loads with no code.

The output folder holds ``<config>/<split>-XXXXX-of-YYYYY.parquet`` shards with the audio bytes
embedded, a ``README.md`` dataset card whose YAML declares the ``archetype`` and ``realism``
configs (realism the default) with their splits and features, and ``build_report.json``.

The build streams shard by shard (memory does not grow with corpus size) into a temporary folder
that replaces the previous output only when everything succeeded.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .audio import AudioError, load_audio
from .dataset_card import render_card
from .dataset_features import dataset_features, record_row
from .release import JsonlFile, RawLine, find_jsonl_files, iter_lines, resolve_wav_path
from .schema import CONFIGS, SEMANTIC_MATCH, Config, RecordError, validate_record

SHARD_BYTES = 256 * 2**20  # audio bytes per parquet shard
ROW_GROUP_BYTES = 32 * 2**20  # bounded memory while writing and reading


class BuildError(RuntimeError):
    """The release cannot be built (invalid records without ``skip_invalid``, nothing to build)."""


@dataclass
class BuildReport:
    source: str
    output: str
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    hours: dict[str, dict[str, float]] = field(default_factory=dict)
    parquet_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    not_applicable_scores: dict[str, int] = field(default_factory=dict)
    annotators: dict[str, dict[str, int]] = field(default_factory=dict)
    dropped: list[dict[str, str]] = field(default_factory=list)
    missing_audio: list[dict[str, str]] = field(default_factory=list)
    seconds_elapsed: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False)


class _ShardWriter:
    """Writes one split of one config as size-bounded parquet shards."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema):
        self.folder, self.split, self.schema = folder, split, schema
        self.paths: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._rows: list[dict] = []
        self._pending = self._shard_bytes = 0

    def add(self, row: dict, nbytes: int) -> None:
        if self._writer is None or self._shard_bytes >= SHARD_BYTES:
            self._open_next()
        self._rows.append(row)
        self._pending += nbytes
        self._shard_bytes += nbytes
        if self._pending >= ROW_GROUP_BYTES:
            self._flush()

    def _open_next(self) -> None:
        self.close()
        path = self.folder / f"{self.split}-{len(self.paths):05d}.parquet.part"
        self.paths.append(path)
        self._writer = pq.ParquetWriter(path, self.schema)
        self._shard_bytes = 0

    def _flush(self) -> None:
        if self._rows and self._writer is not None:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
        self._rows, self._pending = [], 0

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finalize(self) -> list[str]:
        """Close and rename shards to ``split-XXXXX-of-YYYYY.parquet``; return their names."""
        self.close()
        names = []
        for i, path in enumerate(self.paths):
            name = f"{self.split}-{i:05d}-of-{len(self.paths):05d}.parquet"
            path.rename(self.folder / name)
            names.append(name)
        return names


def _scan(files: list[JsonlFile], skip_invalid: bool, report: BuildReport) -> dict[Config, set]:
    """First pass over the text only: validate, find duplicates and optional dimensions.

    Returns the config -> extra-dimension set. Invalid records raise, or are listed as dropped.
    """
    extras: dict[Config, set] = {c: set() for c in CONFIGS}
    seen: dict[Config, dict[str, str]] = {c: {} for c in CONFIGS}
    for file in files:
        for line in iter_lines(file):
            try:
                record = validate_record(line.record, file.config, line.where)
                if record.id in seen[file.config]:
                    raise RecordError(
                        f"record {record.id!r} ({line.where})",
                        "id",
                        f"duplicate id, first seen at {seen[file.config][record.id]}",
                    )
            except RecordError as exc:
                if not skip_invalid:
                    raise
                report.dropped.append({"where": line.where, "reason": str(exc)})
                continue
            seen[file.config][record.id] = line.where
            if SEMANTIC_MATCH in record.annotations:
                extras[file.config].add(SEMANTIC_MATCH)
    return extras


def _row_for(
    line: RawLine, source: Path, extra_dims: tuple[str, ...], report: BuildReport
) -> tuple[dict, int, float] | None:
    """Validate, resolve and check the audio of one line; None if it is dropped or missing."""
    record = validate_record(line.record, line.file.config, line.where)
    where = f"record {record.id!r} ({line.where})"
    for dim in extra_dims:  # e.g. semantic_match absent from this record but present in others
        record.annotations.setdefault(dim, [None] * record.n_annotators)
        record.not_applicable.setdefault(dim, [False] * record.n_annotators)
    wav = resolve_wav_path(source, line.file.path.parent, record.fields["wav_path"], where)
    if wav is None:
        report.missing_audio.append({"where": where, "wav_path": record.fields["wav_path"]})
        return None
    try:
        audio = load_audio(wav, sample_rate=None)
    except AudioError as exc:
        raise RecordError(where, "wav_path", str(exc)) from None
    data = wav.read_bytes()
    return record_row(record, data, wav.name, audio.original_seconds), len(data), audio.seconds


def build_dataset(
    source: str | os.PathLike,
    out: str | os.PathLike,
    *,
    split_map: dict[str, str] | None = None,
    skip_invalid: bool = False,
    license_id: str = "other",
    source_note: str | None = None,
    progress: bool = True,
) -> BuildReport:
    """Build the Hub-ready dataset folder ``out`` from the release folder ``source``.

    Records are validated against the official schema; an invalid record raises
    :class:`~speech_drame.schema.RecordError` naming its id and field, or with ``skip_invalid``
    is dropped and listed in the report. A record whose audio file is absent is never filled:
    it is left out and listed under ``missing_audio``. The previous ``out`` survives any failure.
    """
    from tqdm.auto import tqdm

    started = time.perf_counter()
    source, out = Path(source).resolve(), Path(out).resolve()
    files = find_jsonl_files(source, split_map)
    report = BuildReport(source=str(source), output=str(out))
    extras = _scan(files, skip_invalid, report)
    dropped_where = {d["where"] for d in report.dropped}
    total = sum(1 for f in files for _ in iter_lines(f)) - len(dropped_where)

    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        shards: dict[Config, dict[str, list[str]]] = defaultdict(dict)
        features = {c: dataset_features(c, tuple(sorted(extras[c]))) for c in CONFIGS}
        na_counts: Counter = Counter()
        annotators: dict[str, Counter] = defaultdict(Counter)
        bar = tqdm(total=total, desc="building dataset", unit="clip", disable=not progress)
        for file in files:
            folder = tmp / file.config
            folder.mkdir(exist_ok=True)
            writer = _ShardWriter(folder, file.split, features[file.config].arrow_schema)
            rows = seconds = 0
            for line in iter_lines(file):
                if line.where in dropped_where:
                    continue
                bar.update()
                try:
                    built = _row_for(line, source, tuple(sorted(extras[file.config])), report)
                except RecordError as exc:
                    if not skip_invalid:
                        raise
                    report.dropped.append({"where": line.where, "reason": str(exc)})
                    continue
                if built is None:
                    continue
                row, nbytes, clip_seconds = built
                writer.add(row, nbytes)
                rows += 1
                seconds += clip_seconds
                na_counts[file.config] += sum(
                    sum(mask) for mask in row.get("not_applicable", {}).values()
                )
                annotators[file.config][str(len(next(iter(row["annotations"].values()))))] += 1
            names = writer.finalize()
            if rows:
                shards[file.config].setdefault(file.split, []).extend(names)
                split_rows = report.rows.setdefault(file.config, {})
                split_rows[file.split] = split_rows.get(file.split, 0) + rows
                split_hours = report.hours.setdefault(file.config, {})
                split_hours[file.split] = split_hours.get(file.split, 0.0) + seconds / 3600
                split_bytes = report.parquet_bytes.setdefault(file.config, {})
                split_bytes[file.split] = split_bytes.get(file.split, 0) + sum(
                    (folder / name).stat().st_size for name in names
                )
        bar.close()
        if not shards:
            raise BuildError(f"{source}: no record could be built (see missing audio / dropped)")
        report.not_applicable_scores = dict(na_counts)
        report.annotators = {c: dict(sorted(v.items())) for c, v in annotators.items()}
        report.seconds_elapsed = round(time.perf_counter() - started, 3)
        card = render_card(
            report, {c: features[c] for c in shards}, shards, license_id, source_note
        )
        (tmp / "README.md").write_text(card, encoding="utf-8")
        (tmp / "build_report.json").write_text(report.to_json(), encoding="utf-8")
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report


def _replace_dir(new: Path, target: Path) -> None:
    """Move ``new`` into place at ``target``; the old target is removed only afterwards."""
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def summarize(report: BuildReport | dict[str, Any]) -> str:
    """A few lines for the terminal: rows and hours per config and split, and what was left out."""
    data = asdict(report) if isinstance(report, BuildReport) else report
    lines = []
    for config, splits in data["rows"].items():
        for split, n in splits.items():
            hours = data["hours"][config][split]
            lines.append(f"  {config:9s} {split:9s} {n:6d} clips  {hours * 60:8.2f} min")
    if data["missing_audio"]:
        lines.append(f"  missing audio: {len(data['missing_audio'])} record(s) left out")
        lines += [f"    - {m['where']}: {m['wav_path']}" for m in data["missing_audio"][:10]]
    if data["dropped"]:
        lines.append(f"  dropped invalid: {len(data['dropped'])} record(s)")
        lines += [f"    - {d['reason']}" for d in data["dropped"][:10]]
    return "\n".join(lines)
