"""Official-format release -> Hub-ready dataset folder that ``datasets`` loads with no code.

The output folder holds ``<config>/<split>-XXXXX-of-YYYYY-<hash>.parquet`` shards with the audio bytes
embedded, a ``README.md`` dataset card whose YAML declares the ``archetype`` and ``realism``
configs (realism the default) with their splits and features, and ``build_report.json``.

The build streams shard by shard (memory does not grow with corpus size) into a staging folder
beside the output that replaces the previous output only when everything succeeded
(:func:`speech_drame.atomic_io.replace_dir`: a kill leaves the old or the new dataset). The
output may not be, contain or lie inside the source, and an existing folder that is not an
earlier build (no ``build_report.json``) is never replaced, and an earlier build of another
source only with ``overwrite``. Leftovers of killed builds beside the output are cleaned up (and
reported) when the next build starts.

Audio is optional: the public EvalBench is annotation records. Every valid record becomes a row;
its ``audio`` (and ``duration_s``) is null when neither the release nor an ``audio_dirs`` folder
(:mod:`.audio_dirs`) holds its file. The report counts the clips with audio per split and
language and lists the ids without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .. import atomic_io
from ..audio import AudioError, load_audio
from ..errors import SpeechDrameError
from ..schema import (
    CONFIGS,
    SEMANTIC_MATCH,
    Config,
    RecordError,
    ValidatedRecord,
    validate_record,
)
from .audio_dirs import AudioDirError, AudioDirs, index_audio_dirs, resolve_audio_dirs
from .card import render_card
from .features import config_features, record_row
from .hub_source import open_source
from .licence import resolve_licence
from .release import (
    JsonlFile,
    RawLine,
    UnpackBudget,
    WavResolver,
    extract_archives,
    find_jsonl_files,
    iter_lines,
)

SHARD_BYTES = 256 * 2**20  # audio bytes per parquet shard
ROW_GROUP_BYTES = 32 * 2**20  # bounded memory while writing and reading
REPORT_FILE = "build_report.json"
UNSTATED = "unstated"  # build report key for clips whose release gives no language
OWNER_FILE = ".build-pid"  # in a staging folder while its build runs: the builder's process id


class BuildError(SpeechDrameError, RuntimeError):
    """The release cannot be built (nothing to build, an output folder that may not be replaced)."""


def failed_report_path(out: str | os.PathLike) -> Path:
    """Where a build that produced no row writes its report: beside ``out``, which it leaves
    as it was (``speech-drame.build-failed.json`` for ``speech-drame``)."""
    out = Path(out)
    return out.parent / f"{out.name}.build-failed.json"


@dataclass
class BuildReport:
    source: str
    output: str
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    hours: dict[str, dict[str, float]] = field(default_factory=dict)
    parquet_bytes: dict[str, dict[str, int]] = field(default_factory=dict)
    not_applicable_scores: dict[str, int] = field(default_factory=dict)
    annotators: dict[str, dict[str, int]] = field(default_factory=dict)
    # config -> split -> release language (zh, en, or "unstated") -> clips
    languages: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    # config -> split -> release language -> clips whose audio was found (embedded)
    with_audio: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    dropped: list[dict[str, str]] = field(default_factory=list)
    # the rows without audio: {"config", "split", "id", "where", "wav_path"}
    missing_audio: list[dict[str, str | None]] = field(default_factory=list)
    # where the embedded audio was found: {"release": n, "audio_dir": n}
    audio_found: dict[str, int] = field(default_factory=dict)
    # the --audio-dir folders: [{"path", "files", "extracted": [{"archive", "files", "bytes"}]}]
    audio_dirs: list[dict[str, Any]] = field(default_factory=list)
    # config -> optional field the records do not carry (kept as null) -> records
    absent_fields: dict[str, dict[str, int]] = field(default_factory=dict)
    # config -> field outside the format (not kept, e.g. dataset_name) -> records
    ignored_fields: dict[str, dict[str, int]] = field(default_factory=dict)
    cleanup: list[str] = field(default_factory=list)  # what killed earlier builds left
    # a Hub source: {"repo_id", "revision" (requested), "commit" (resolved sha)}
    source_hub: dict[str, str] | None = None
    # archives unpacked for their audio: [{"archive", "files", "bytes"}]
    extracted: list[dict[str, Any]] = field(default_factory=list)
    # the card's licence: {"id", "origin" (--license, the release file read, or prompt),
    # "name", "link" (with id other)}
    license: dict[str, str | None] = field(default_factory=dict)
    seconds_elapsed: float = 0.0


class _ShardWriter:
    """Writes one split of one config as size-bounded parquet shards; counts its rows and
    their seconds of audio (``duration_s``)."""

    def __init__(self, folder: Path, split: str, schema: pa.Schema):
        self.folder, self.split, self.schema = folder, split, schema
        self.paths: list[Path] = []
        self.rows, self.seconds = 0, 0.0  # seconds: of the rows with audio
        self._writer: pq.ParquetWriter | None = None
        self._rows: list[dict] = []
        self._pending = self._shard_bytes = 0

    def add(self, row: dict, nbytes: int) -> None:
        if self._writer is None or self._shard_bytes >= SHARD_BYTES:
            self._open_next()
        self.rows += 1
        self.seconds += row["duration_s"] or 0.0
        self._rows.append(row)
        self._pending += nbytes
        self._shard_bytes += nbytes
        if self._pending >= ROW_GROUP_BYTES:
            self.flush()

    def _open_next(self) -> None:
        self.close()
        path = self.folder / f"{self.split}-{len(self.paths):05d}.parquet.part"
        self.paths.append(path)
        self._writer = pq.ParquetWriter(path, self.schema)
        self._shard_bytes = 0

    def flush(self) -> None:
        """Write the pending rows as a row group (the shard stays open)."""
        if self._rows and self._writer is not None:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
        self._rows, self._pending = [], 0

    def close(self) -> None:
        self.flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finalize(self) -> list[str]:
        """Close and rename shards to ``split-XXXXX-of-YYYYY-<sha256[:12]>.parquet``; return
        their names. The content hash in the name, listed in the card, is what makes
        ``datasets`` cache a rebuilt folder anew: its cache key is the card, and a corrected
        rating that keeps every size would otherwise load the previous build's rows."""
        self.close()
        names = []
        for i, path in enumerate(self.paths):
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
            name = (
                f"{self.split}-{i:05d}-of-{len(self.paths):05d}-{digest.hexdigest()[:12]}.parquet"
            )
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


def _find_audio(
    record: ValidatedRecord, resolve: WavResolver, audio_dirs: AudioDirs, where: str
) -> tuple[Path | None, str]:
    """The record's audio file and where it was found (``release`` or ``audio_dir``): the
    release (and its unpacked archives) first, then the ``--audio-dir`` folders."""
    wav_path = record.fields.get("wav_path")
    if wav_path:
        found = resolve(wav_path, where)
        if found is not None:
            return found, "release"
    try:
        found = audio_dirs.find(record.id, wav_path)
    except AudioDirError as exc:
        raise BuildError(f"{where}: {exc}") from None
    return found, "audio_dir"


def _row_for(
    record: ValidatedRecord,
    line: RawLine,
    resolve: WavResolver,
    audio_dirs: AudioDirs,
    extra_dims: tuple[str, ...],
) -> tuple[dict, int, str | None]:
    """The row of a validated record, its audio bytes and where its audio was found (``None``:
    nowhere, the row's audio is null). Audio that is found but unreadable is a RecordError."""
    where = f"record {record.id!r} ({line.where})"
    for dim in extra_dims:  # e.g. semantic_match absent from this record but present in others
        if record.annotations.get(dim) is None:
            record.annotations[dim] = [None] * record.n_annotators
            record.not_applicable[dim] = [False] * record.n_annotators
    wav, origin = _find_audio(record, resolve, audio_dirs, where)
    if wav is None:
        return record_row(record), 0, None
    try:
        audio = load_audio(wav, sample_rate=None)
    except AudioError as exc:
        raise RecordError(where, "wav_path", str(exc)) from None
    data = wav.read_bytes()
    return record_row(record, data, wav.name, audio.original_seconds), len(data), origin


def _owner(folder: Path) -> int | None:
    """Process id of the build that owns a temporary folder (``None``: unknown)."""
    if ".tmp-" in folder.name:  # the folders of earlier versions: .NAME.tmp-PID
        text = folder.name.rpartition(".tmp-")[2]
    else:
        try:
            text = (folder / OWNER_FILE).read_text(encoding="utf-8")
        except OSError:
            return None
    return int(text) if text.strip().isdigit() else None


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        pass
    return True


def recover_output(out: str | os.PathLike) -> list[str]:
    """Undo what killed builds left beside ``out``; one message per action.

    A previous dataset moved aside by an interrupted swap is restored (when ``out`` is
    missing); older copies, and staging folders whose build process is gone, are removed.
    """
    out = Path(out).resolve()
    olds = sorted(out.parent.glob(f".{out.name}.old-*"))
    restored = olds[-1] if olds and not out.exists() else None
    messages = [
        f"removed stale copy {p} (left by a killed build)" for p in atomic_io.recover_dir(out)
    ]
    if restored is not None:
        messages.insert(
            0,
            f"restored the previous dataset {out} from {restored} (a build was killed while swapping it in)",
        )
    leftovers = [*out.parent.glob(f".{out.name}.staging-*"), *out.parent.glob(f".{out.name}.tmp-*")]
    for folder in sorted(leftovers):
        pid = _owner(folder)
        if pid is not None and _running(pid):
            continue  # a build that is still running
        shutil.rmtree(folder, ignore_errors=True)
        messages.append(f"removed stale temporary folder {folder} (left by a killed build)")
    return messages


def default_output(source: str | os.PathLike) -> Path:
    """Where a build goes without ``--out``: a folder of its own in the current folder, named
    after the source (``evalbench_raw`` -> ``evalbench_raw-built``; a Hub dataset: its name)."""
    name = Path(os.fspath(source).rstrip("/")).name or "release"
    return Path(f"{name}-built")


def _built_from(report: dict[str, Any]) -> str:
    """What an earlier build was built from: its Hub repository, else its source folder."""
    hub = report.get("source_hub") or {}
    return hub.get("repo_id") or report.get("source", "")


def check_output(
    source: Path,
    out: Path,
    overwrite: bool = False,
    audio_dirs: Sequence[Path] = (),
    source_id: str | None = None,
) -> None:
    """Refuse an output folder that is or lies inside the source, that holds the source or an
    ``--audio-dir`` folder, that is the current folder or a mount point, that exists and is not
    an earlier build (whatever ``overwrite`` says), or (unless ``overwrite``) that is an earlier
    build of another source than ``source_id`` (a Hub repository or the source folder: the demo
    dataset is replaced by a real release only when asked). All paths must be resolved."""
    if out == source:
        raise BuildError(f"output folder {out} is the source folder; choose another output folder")
    if out.is_relative_to(source):
        raise BuildError(f"output folder {out} lies inside the source folder {source}")
    holds = [("the source folder", source), *(("the --audio-dir folder", d) for d in audio_dirs)]
    try:
        atomic_io.replaceable_folder(
            out, "build", lambda p: (p / REPORT_FILE).is_file(), holds=holds,
            earlier_needs_overwrite=False,
        )  # fmt: skip
    except atomic_io.FolderRefused as exc:
        raise BuildError(str(exc)) from None
    if overwrite or not (out / REPORT_FILE).is_file():
        return
    try:
        earlier = _built_from(json.loads((out / REPORT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        earlier = "an unreadable build report"
    if source_id is not None and earlier != source_id:
        raise BuildError(
            f"output folder {out} holds a build of {earlier}; building {source_id} there would "
            "replace it: choose another --out, or pass --overwrite (overwrite=True)"
        )


@dataclass
class _Tally:
    """What the row pass counts besides the shards, per config and split."""

    na: Counter = field(default_factory=Counter)
    annotators: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    languages: dict[tuple[str, str], Counter] = field(default_factory=lambda: defaultdict(Counter))
    with_audio: dict[tuple[str, str], Counter] = field(default_factory=lambda: defaultdict(Counter))
    found: Counter = field(default_factory=Counter)
    absent: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    ignored: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, record: ValidatedRecord, split: str, row: dict, origin: str | None) -> None:
        config = record.config
        self.na[config] += record.n_na
        self.annotators[config][str(record.n_annotators)] += 1
        language = row["language"] or UNSTATED
        self.languages[(config, split)][language] += 1
        self.with_audio[(config, split)][language] += origin is not None
        if origin is not None:
            self.found[origin] += 1
        self.absent[config].update(record.absent)
        self.ignored[config].update(record.ignored)


def _fill_report(
    report: BuildReport, tally: _Tally, writers: dict[tuple[Config, str], _ShardWriter]
) -> dict[Config, dict[str, list[str]]]:
    """Finalise the shards and write the counts into ``report``; the shard names per split."""
    shards: dict[Config, dict[str, list[str]]] = defaultdict(dict)
    for (config, split), writer in writers.items():
        names = writer.finalize()
        if not names:
            continue
        shards[config][split] = names
        report.rows.setdefault(config, {})[split] = writer.rows
        for target, counts in (
            (report.languages, tally.languages),
            (report.with_audio, tally.with_audio),
        ):
            target.setdefault(config, {})[split] = dict(sorted(counts[(config, split)].items()))
        report.hours.setdefault(config, {})[split] = writer.seconds / 3600
        report.parquet_bytes.setdefault(config, {})[split] = sum(
            (writer.folder / name).stat().st_size for name in names
        )
    report.not_applicable_scores = {c: n for c, n in tally.na.items() if c in shards}
    report.annotators = {c: dict(sorted(v.items())) for c, v in tally.annotators.items()}
    report.audio_found = {k: tally.found[k] for k in ("release", "audio_dir")}
    report.absent_fields = {c: dict(sorted(v.items())) for c, v in tally.absent.items() if v}
    report.ignored_fields = {c: dict(sorted(v.items())) for c, v in tally.ignored.items() if v}
    return shards


def build_dataset(
    source: str | os.PathLike,
    out: str | os.PathLike,
    *,
    split_map: dict[str, str] | None = None,
    skip_invalid: bool = False,
    overwrite: bool = False,
    license_id: str | None = None,
    license_name: str | None = None,
    license_link: str | None = None,
    source_note: str | None = None,
    progress: bool = True,
    revision: str | None = None,
    ask_license: Callable[[str], str] | None = None,
    audio_dirs: Sequence[str | os.PathLike] = (),
) -> BuildReport:
    """Build the Hub-ready dataset folder ``out`` from the release ``source``.

    ``source`` is a release folder, or a Hub dataset (``ORG/NAME`` when no such local path
    exists, or ``hf://datasets/ORG/NAME``) downloaded at ``revision`` (default: the main branch)
    into the Hub cache; the report's ``source_hub`` records repository, revision and commit.
    Audio archives in the release are unpacked beside ``out`` for the build (listed under
    ``extracted``) and removed afterwards.

    Records are validated against the official schema; an invalid record raises
    :class:`~speech_drame.schema.RecordError` naming its id and field, or with ``skip_invalid``
    is dropped and listed in the report. Audio is optional: a record's audio is looked up in the
    release, then in ``audio_dirs`` (:mod:`.audio_dirs`); a record whose audio is found nowhere
    is a row with null ``audio``, counted in ``with_audio`` and listed under ``missing_audio``
    (never filled). The previous ``out`` survives any failure.

    The card's licence is ``license_id`` (``other`` with ``license_name`` and ``license_link``
    or ``source_note``), else the one the release states (its card's ``license:``, or a
    ``LICENSE`` file), else ``ask_license``'s answer; the report's ``license`` records it and
    its origin (:func:`speech_drame.data.licence.resolve_licence`).

    Raises:
        FileNotFoundError: ``source`` is neither a release folder nor an available Hub dataset.
        LicenceError: no licence given, found or answered, or an ``other`` the card cannot carry.
        ArchiveError: an archive member is unsafe (outside its folder, a link, too large).
        AudioDirError: an ``audio_dirs`` folder does not exist.
        BuildError: ``out`` is, holds or lies inside ``source``, holds an ``audio_dirs``
            folder, is the current folder or a mount point; ``out`` is an existing folder that
            is not an earlier build (no ``build_report.json``), or an earlier build of another
            source and ``overwrite`` is off; two different ``audio_dirs`` files
            share the name a record's audio is looked up by; or no record could be built (the
            report of why is written to :func:`failed_report_path`, which the error names).
    """
    from tqdm.auto import tqdm

    started = time.perf_counter()
    release = open_source(source, revision)
    source, out = release.path, Path(out).resolve()
    dirs = resolve_audio_dirs(audio_dirs)
    check_output(source, out, overwrite=True, audio_dirs=dirs)  # the paths only
    files = find_jsonl_files(source, split_map)
    licence = resolve_licence(
        source,
        license_id,
        license_name=license_name,
        license_link=license_link,
        source_note=source_note,
        ask=ask_license,
    )
    report = BuildReport(source=str(source), output=str(out), source_hub=release.hub)
    report.license = asdict(licence)
    report.cleanup = recover_output(out)
    check_output(source, out, overwrite, dirs, _built_from(asdict(report)))
    extras = _scan(files, skip_invalid, report)
    dropped_where = {d["where"] for d in report.dropped}
    total = sum(1 for f in files for _ in iter_lines(f)) - len(dropped_where)

    staging = atomic_io.staging_dir(out)
    (staging / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
    unpacked = atomic_io.staging_dir(out)  # removed whatever happens; recovered if killed
    (unpacked / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
    try:
        budget = UnpackBudget()  # one for everything this build unpacks
        report.extracted = extract_archives(source, unpacked / "audio", budget)
        index = index_audio_dirs(dirs, unpacked, budget)
        report.audio_dirs = index.report
        features = {c: config_features(c, tuple(sorted(extras[c]))) for c in CONFIGS}
        writers: dict[tuple[Config, str], _ShardWriter] = {}  # one per split, across files
        tally = _Tally()
        bar = tqdm(total=total, desc="building dataset", unit="clip", disable=not progress)
        for file in files:
            folder = staging / file.config
            folder.mkdir(exist_ok=True)
            key = (file.config, file.split)
            if key not in writers:
                schema = features[file.config].arrow_schema
                writers[key] = _ShardWriter(folder, file.split, schema)
            writer = writers[key]
            dims = tuple(sorted(extras[file.config]))
            resolve = WavResolver(release.path, file.path.parent, extracted=unpacked / "audio",
                                  boundary=release.boundary)  # fmt: skip
            for line in iter_lines(file):
                if line.where in dropped_where:
                    continue
                bar.update()
                try:
                    record = validate_record(line.record, file.config, line.where)
                    row, nbytes, origin = _row_for(record, line, resolve, index, dims)
                except RecordError as exc:
                    if not skip_invalid:
                        raise
                    report.dropped.append({"where": line.where, "reason": str(exc)})
                    continue
                writer.add(row, nbytes)
                tally.add(record, file.split, row, origin)
                if origin is None:
                    report.missing_audio.append({
                        "config": file.config,
                        "split": file.split,
                        "id": record.id,
                        "where": line.where,
                        "wav_path": record.fields.get("wav_path"),
                    })  # fmt: skip
            writer.flush()  # bounded memory; the split's next file continues its shard numbering
        bar.close()
        shards = _fill_report(report, tally, writers)
        report.seconds_elapsed = round(time.perf_counter() - started, 3)
        if not shards:
            failed = atomic_io.write_json(failed_report_path(out), asdict(report), indent=2)
            raise BuildError(
                f"{source}: no record could be built ({len(report.dropped)} dropped as invalid); "
                f"the report of why: {failed}"
            )
        card = render_card(report, {c: features[c] for c in shards}, shards, licence, source_note)
        atomic_io.write_text(staging / "README.md", card)
        atomic_io.write_json(staging / REPORT_FILE, asdict(report), indent=2)
        (staging / OWNER_FILE).unlink()
        atomic_io.replace_dir(staging, out)
        failed_report_path(out).unlink(missing_ok=True)  # a stale report of an earlier failure
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    return report


_LISTED = 3  # ids the terminal shows of a long list (the report holds them all)


def audio_coverage(report: BuildReport | dict[str, Any]) -> list[tuple[str, str, str, int, int]]:
    """``(config, split, language, clips, with audio)`` for every split and language built."""
    data = asdict(report) if isinstance(report, BuildReport) else report
    with_audio = data.get("with_audio")
    out = []
    for config, splits in data["languages"].items():
        for split, langs in splits.items():
            for language, n in langs.items():
                # a report written before audio was optional: every row had audio
                have = n if with_audio is None else with_audio[config][split].get(language, 0)
                out.append((config, split, language, n, have))
    return out


def summarize(report: BuildReport | dict[str, Any]) -> str:
    """A few lines for the terminal: rows, audio coverage and hours per config and split, and
    what was left out (a few ids each; ``build_report.json`` lists them all)."""
    data = asdict(report) if isinstance(report, BuildReport) else report
    coverage: dict[tuple[str, str], list[tuple[str, int, int]]] = defaultdict(list)
    for config, split, language, n, have in audio_coverage(data):
        coverage[(config, split)].append((language, n, have))
    lines = []
    for config, splits in data["rows"].items():
        for split, n in splits.items():
            hours = data["hours"][config][split]
            langs = coverage[(config, split)]
            with_audio = sum(have for _, _, have in langs)
            clips = ", ".join(f"{k} {v}" for k, v, _ in langs)
            audio = ", ".join(f"{k} {have}" for k, _, have in langs)
            lines.append(
                f"  {config:9s} {split:9s} {n} clips ({clips}), {with_audio} with audio "
                f"({audio}), {hours * 60:.2f} min"
            )
    missing = data["missing_audio"]
    if missing:
        shown = ", ".join(str(m.get("id") or m["where"]) for m in missing[:_LISTED])
        more = f", ... ({len(missing) - _LISTED} more)" if len(missing) > _LISTED else ""
        lines.append(
            f"  no audio: {len(missing)} clip(s) (audio null; ids in build_report.json, "
            f"attach audio with --audio-dir DIR): {shown}{more}"
        )
    found = data.get("audio_found") or {}
    if found.get("audio_dir"):
        lines.append(f"  audio found in --audio-dir folders: {found['audio_dir']} clip(s)")
    for key, what in (("absent_fields", "optional fields absent (kept as null)"),
                      ("ignored_fields", "fields outside the format (not kept)")):  # fmt: skip
        for config, counts in (data.get(key) or {}).items():
            listed = ", ".join(f"{k} {v}" for k, v in counts.items())
            lines.append(f"  {config} {what}: {listed}")
    if data["dropped"]:
        lines.append(f"  dropped invalid: {len(data['dropped'])} record(s)")
        lines += [f"    - {d['reason']}" for d in data["dropped"][:10]]
    return "\n".join(lines)
