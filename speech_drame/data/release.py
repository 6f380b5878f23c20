"""Reading an official-format EvalBench release: record files, splits, archives and audio paths.

A release folder holds ``archetype_data/`` and ``realism_data/`` record files with the audio
beside them, in folders or in archives (``.zip``, ``.tar``, ``.tar.gz``). A record file is
``.jsonl`` (JSON Lines) or ``.json`` (a JSON array of records, or JSON Lines). The split of a
file comes from its name (``train.jsonl`` -> ``train``) unless an explicit mapping says
otherwise. ``wav_path`` values may carry a prefix of the authors' machine
(``speech_drame/finetuning/data/realism_data/x.wav``); they are resolved by their trailing path
under the source folder (or where its archives were unpacked), and never to anything outside it.
"""

from __future__ import annotations

import json
import os
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO

from ..errors import InputError
from ..jsonl import is_json_array
from ..schema import DATA_DIRS, SPLITS, Config, RecordError

RECORD_SUFFIXES = (".jsonl", ".json")
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
MAX_MEMBER_BYTES = 2**32  # one archive member (no clip comes near it)
MAX_ARCHIVE_BYTES = 2**40  # all members of one archive


@dataclass
class UnpackBudget:
    """What one build may unpack from archives, counted as the bytes are written (declared
    sizes can lie): ``max_bytes`` in all, at most ``max_ratio`` times each archive's own size
    (beyond ``ratio_floor`` bytes, so small archives of small clips pass), ``max_members`` files.
    Audio barely compresses; an archive far beyond the ratio is a compression bomb or a sparse
    file."""

    max_bytes: int = 200 * 2**30
    max_ratio: float = 20.0
    ratio_floor: int = 16 * 2**20
    max_members: int = 1_000_000
    used: int = 0
    members: int = 0

    def take(self, archive: Path, name: str, nbytes: int, archive_used: int) -> None:
        """Count ``nbytes`` more of member ``name``; ``archive_used``: the archive's bytes so
        far, these included. Raises :class:`ArchiveError` naming the archive, member and limit."""
        self.used += nbytes
        if self.used > self.max_bytes:
            raise ArchiveError(
                f"{archive}: member {name!r} takes what the build unpacks over its budget of "
                f"{self.max_bytes:,} bytes"
            )
        allowed = max(self.max_ratio * archive.stat().st_size, self.ratio_floor)
        if archive_used > allowed:
            raise ArchiveError(
                f"{archive}: member {name!r} unpacks to over {self.max_ratio:g} times the "
                f"archive's {archive.stat().st_size:,} bytes (budget {allowed:,.0f} bytes): a "
                "compression bomb or a sparse file, not audio"
            )

    def add_member(self, archive: Path, name: str) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise ArchiveError(
                f"{archive}: member {name!r} takes the build over {self.max_members:,} unpacked files"
            )


class ArchiveError(InputError):
    """An archive of the release cannot be unpacked safely; the message names archive and member."""


@dataclass(frozen=True)
class JsonlFile:
    config: Config
    split: str
    path: Path


@dataclass(frozen=True)
class RawLine:
    """One record of a file: ``line_no`` is its 1-based line (JSON Lines) or, with
    ``in_array``, its 0-based element index in a JSON array."""

    file: JsonlFile
    line_no: int
    record: object
    in_array: bool = False

    @property
    def where(self) -> str:
        position = f"element {self.line_no}" if self.in_array else str(self.line_no)
        return f"{self.file.path.name}:{self.file.config}:{position}"


def parse_split_map(items: list[str] | None) -> dict[str, str]:
    """Parse ``["dev.jsonl=test", ...]`` (file name or stem = split) into a dict keyed by stem."""
    mapping: dict[str, str] = {}
    for item in items or []:
        name, sep, split = item.partition("=")
        if not sep or not name or not split:
            raise ValueError(f"split mapping {item!r}: expected FILE=SPLIT, e.g. dev.jsonl=test")
        mapping[Path(name).stem] = split
    return mapping


def find_jsonl_files(source: Path, split_map: dict[str, str] | None = None) -> list[JsonlFile]:
    """List the release's record files (``.jsonl``, ``.json``) with the split each one feeds."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"release folder not found: {source}")
    split_map = split_map or {}
    files: list[JsonlFile] = []
    for config, folder in DATA_DIRS.items():
        paths = [p for p in (source / folder).glob("*.json*") if p.suffix in RECORD_SUFFIXES]
        for path in sorted(paths):
            split = split_map.get(path.stem, path.stem)
            if split not in SPLITS[config]:
                raise ValueError(
                    f"{path}: cannot tell the split from the file name {path.name!r}; "
                    f"{config} splits are {', '.join(SPLITS[config])} "
                    f"(map it with --split-map {path.name}=SPLIT)"
                )
            files.append(JsonlFile(config, split, path))
    if not files:
        raise FileNotFoundError(
            f"{source}: no archetype_data/*.jsonl|json or realism_data/*.jsonl|json: not an "
            "EvalBench release in the expected shape (record files, JSON Lines or a JSON array, "
            f"under archetype_data/ and realism_data/, named by split); it holds {_holds(source)}"
        )
    return files


def _holds(folder: Path, shown: int = 8) -> str:
    """A few of the files under ``folder``, for a message (data-looking files first)."""
    found = sorted(
        (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()),
        key=lambda name: (not name.endswith((".json", ".jsonl", ".parquet", ".csv")), name),
    )
    if not found:
        return "no files"
    more = f", ... ({len(found) - shown} more)" if len(found) > shown else ""
    return ", ".join(found[:shown]) + more


def _iter_array(file: JsonlFile) -> Iterator[RawLine]:
    """Yield the elements of a ``.json`` file holding a JSON array of records."""
    try:
        records = json.loads(file.path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RecordError(f"{file.path}:{exc.lineno}", "<file>", f"invalid JSON ({exc})") from None
    for index, record in enumerate(records):
        yield RawLine(file, index, record, in_array=True)


def iter_lines(file: JsonlFile) -> Iterator[RawLine]:
    """Yield the parsed records of one record file; malformed JSON is a RecordError.

    A ``.json`` file holding a JSON array yields its elements; any other file is JSON Lines.
    """
    if file.path.suffix == ".json" and is_json_array(file.path):
        yield from _iter_array(file)
        return
    with file.path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(
                    f"{file.path}:{line_no}", "<line>", _invalid_line(file.path, exc)
                ) from None
            yield RawLine(file, line_no, record)


def _invalid_line(path: Path, exc: json.JSONDecodeError) -> str:
    """Why a line is unreadable; for a ``.json`` file holding one JSON object (records under
    some key), that the records were expected as an array or one per line."""
    if path.suffix == ".json":
        try:
            whole = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            keys = ", ".join(list(map(repr, whole))[:5])
            return (
                f"expected a JSON array of records or one record per line (JSON Lines), got one "
                f"JSON object with keys {keys}"
            )
    return f"invalid JSON ({exc})"


def iter_release(source: str | Path, split_map: dict[str, str] | None = None) -> Iterator[RawLine]:
    """Yield every record of the release folder ``source``, file by file (config, then name).

    Records are parsed, not validated (:func:`speech_drame.schema.validate_record` does that);
    each carries its file, config and split (``line.file``) and its location (``line.where``).
    """
    for file in find_jsonl_files(Path(source), split_map):
        yield from iter_lines(file)


def _wav_parts(wav_path: str) -> tuple[str, ...]:
    parts = PureWindowsPath(wav_path).parts if "\\" in wav_path else PurePosixPath(wav_path).parts
    return tuple(p for p in parts if p not in ("/", "\\") and not p.endswith((":\\", ":")))


class WavResolver:
    """Resolves the ``wav_path`` of the records of one record file (see
    :func:`resolve_wav_path`); the folders searched are worked out once, for every record."""

    def __init__(
        self,
        source: Path,
        jsonl_dir: Path,
        *,
        extracted: Path | None = None,
        boundary: Path | None = None,
    ):
        self.root = Path(source).resolve()
        self.allowed = [Path(boundary).resolve() if boundary else self.root]
        bases = [Path(jsonl_dir), self.root]
        if extracted is not None:
            self.allowed.append(Path(extracted).resolve())
            inside = Path(jsonl_dir).resolve().relative_to(self.root)
            bases += [self.allowed[-1] / inside, self.allowed[-1]]
        # a folder that does not exist holds no candidate: not searched
        self.bases = [str(b) for b in dict.fromkeys(bases) if b.is_dir()]

    def __call__(self, wav_path: str, where: str) -> Path | None:
        parts = _wav_parts(wav_path)
        if not parts:
            raise RecordError(where, "wav_path", f"{wav_path!r} names no file")
        if ".." in parts:
            raise RecordError(
                where, "wav_path", f"{wav_path!r} resolves outside the source folder {self.root}"
            )
        for start in range(len(parts)):
            tail = os.path.join(*parts[start:])
            for base in self.bases:
                candidate = os.path.join(base, tail)
                if os.path.isfile(candidate):
                    resolved = Path(candidate).resolve()
                    if not any(resolved.is_relative_to(folder) for folder in self.allowed):
                        raise RecordError(
                            where,
                            "wav_path",
                            f"{wav_path!r} resolves outside the source folder {self.root}",
                        )
                    return Path(candidate)
        return None


def resolve_wav_path(
    source: Path,
    jsonl_dir: Path,
    wav_path: str,
    where: str,
    *,
    extracted: Path | None = None,
    boundary: Path | None = None,
) -> Path | None:
    """Resolve a record's ``wav_path`` to a file under ``source`` (or ``extracted``).

    Tries the path relative to the JSONL's folder and the source folder, then the same two
    places under ``extracted`` (where :func:`extract_archives` unpacked the release's archives),
    then drops leading components one at a time (the authors' machine prefix). Returns the file
    found, under its own name (a Hub snapshot's files link to blobs named by hash), or ``None``
    when no candidate exists (the audio is absent). Raises :class:`RecordError` when the path
    climbs out of the source folder (``..``) or a candidate resolves outside ``boundary``
    (default: the source folder) and ``extracted`` (e.g. through a symlink). For the records of
    one file, :class:`WavResolver` works the folders out once.
    """
    resolver = WavResolver(source, jsonl_dir, extracted=extracted, boundary=boundary)
    return resolver(wav_path, where)


def find_archives(source: Path) -> list[Path]:
    """The release's audio archives (``.zip``, ``.tar``, ``.tar.gz``, ``.tgz``), sorted."""
    paths = Path(source).rglob("*")
    return sorted(p for p in paths if p.name.endswith(ARCHIVE_SUFFIXES) and p.is_file())


def extract_archives(
    source: Path, target: Path, budget: UnpackBudget | None = None
) -> list[dict[str, object]]:
    """Unpack every archive of ``source`` into ``target``, each into the folder mirroring its own
    (``realism_data/audio.zip`` -> ``target/realism_data/``); return one report entry per
    archive: ``{"archive": path in the release, "files": count, "bytes": total}``.

    Only regular files and folders are unpacked, within ``budget`` (one per build; default a
    fresh :class:`UnpackBudget`). Raises :class:`ArchiveError` (naming archive and member) for a
    member that is absolute or climbs out (``..``), a link or device, larger than
    :data:`MAX_MEMBER_BYTES` (or the archive's total above :data:`MAX_ARCHIVE_BYTES`), beyond
    the budget, a name already unpacked, or an unreadable archive.
    """
    source = Path(source)
    budget = budget if budget is not None else UnpackBudget()
    entries: list[dict[str, object]] = []
    for archive in find_archives(source):
        dest = Path(target) / archive.parent.relative_to(source)
        name = archive.relative_to(source).as_posix()
        try:
            if archive.suffix == ".zip":
                files, nbytes = _extract_zip(archive, dest, budget)
            else:
                files, nbytes = _extract_tar(archive, dest, budget)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
            raise ArchiveError(f"{archive}: cannot be unpacked ({exc})") from None
        entries.append({"archive": name, "files": files, "bytes": nbytes})
    return entries


def _member_path(archive: Path, dest: Path, name: str) -> Path:
    """Where member ``name`` is unpacked under ``dest``; refuses absolute and climbing names."""
    posix = PurePosixPath(name.replace("\\", "/"))
    if posix.is_absolute() or PureWindowsPath(name).drive or ".." in posix.parts:
        raise ArchiveError(f"{archive}: member {name!r} would be unpacked outside {dest}")
    return dest.joinpath(*(p for p in posix.parts if p != "."))


def _check_size(archive: Path, name: str, size: int, total: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise ArchiveError(
            f"{archive}: member {name!r} declares {size} bytes (limit {MAX_MEMBER_BYTES})"
        )
    if total + size > MAX_ARCHIVE_BYTES:
        raise ArchiveError(
            f"{archive}: member {name!r} takes the archive over {MAX_ARCHIVE_BYTES} bytes unpacked"
        )


def _write_member(
    archive: Path, name: str, stream: IO[bytes], path: Path, budget: UnpackBudget, before: int
) -> int:
    """Copy one member to ``path``, which no earlier member (of any archive) may have written,
    counting its bytes against ``budget`` (``before``: the archive's bytes so far); returns
    the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    budget.add_member(archive, name)
    try:
        out = path.open("xb")
    except FileExistsError:
        raise ArchiveError(f"{archive}: member {name!r}: {path} was already unpacked") from None
    written = 0
    with out:
        while block := stream.read(1 << 20):
            written += len(block)
            budget.take(archive, name, len(block), before + written)
            out.write(block)
    return written


def _extract_zip(archive: Path, dest: Path, budget: UnpackBudget) -> tuple[int, int]:
    files = total = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = _member_path(archive, dest, info.filename)
            if info.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG):  # 0: no Unix type
                raise ArchiveError(f"{archive}: member {info.filename!r} is not a regular file")
            _check_size(archive, info.filename, info.file_size, total)
            with zf.open(info) as stream:
                total += _write_member(archive, info.filename, stream, path, budget, total)
            files += 1
    return files, total


def _extract_tar(archive: Path, dest: Path, budget: UnpackBudget) -> tuple[int, int]:
    files = total = 0
    with tarfile.open(archive) as tf:
        for member in tf:
            path = _member_path(archive, dest, member.name)
            if member.isdir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                raise ArchiveError(f"{archive}: member {member.name!r} is not a regular file")
            _check_size(archive, member.name, member.size, total)
            with tf.extractfile(member) as stream:  # type: ignore[union-attr]  # a regular file
                total += _write_member(archive, member.name, stream, path, budget, total)
            files += 1
    return files, total
