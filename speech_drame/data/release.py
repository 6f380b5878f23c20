"""Reading an official-format EvalBench release: JSONL files, splits and audio paths.

A release folder holds ``archetype_data/*.jsonl`` and ``realism_data/*.jsonl`` with the audio
beside them. The split of a file comes from its name (``train.jsonl`` -> ``train``) unless an
explicit mapping says otherwise. ``wav_path`` values may carry a prefix of the authors' machine
(``speech_drame/finetuning/data/realism_data/x.wav``); they are resolved by their trailing path
under the source folder, and never to anything outside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from ..schema import DATA_DIRS, SPLITS, Config, RecordError


@dataclass(frozen=True)
class JsonlFile:
    config: Config
    split: str
    path: Path


@dataclass(frozen=True)
class RawLine:
    file: JsonlFile
    line_no: int
    record: object

    @property
    def where(self) -> str:
        return f"{self.file.path.name}:{self.file.config}:{self.line_no}"


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
    """List the release's JSONL files with the split each one feeds."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"release folder not found: {source}")
    split_map = split_map or {}
    files: list[JsonlFile] = []
    for config, folder in DATA_DIRS.items():
        for path in sorted((source / folder).glob("*.jsonl")):
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
            f"{source}: no archetype_data/*.jsonl or realism_data/*.jsonl (not an EvalBench release)"
        )
    return files


def iter_lines(file: JsonlFile) -> Iterator[RawLine]:
    """Yield the parsed records of one JSONL file; a malformed line is a RecordError."""
    with file.path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(
                    f"{file.path}:{line_no}", "<line>", f"invalid JSON ({exc})"
                ) from None
            yield RawLine(file, line_no, record)


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


def resolve_wav_path(source: Path, jsonl_dir: Path, wav_path: str, where: str) -> Path | None:
    """Resolve a record's ``wav_path`` to a file under ``source``.

    Tries the path relative to the JSONL's folder and the source folder, then drops leading
    components one at a time (the authors' machine prefix). Returns ``None`` when no candidate
    exists (the audio is absent). Raises :class:`RecordError` when the path climbs out of the
    source folder (``..``) or a candidate resolves outside it (e.g. through a symlink).
    """
    root = Path(source).resolve()
    parts = _wav_parts(wav_path)
    if not parts:
        raise RecordError(where, "wav_path", f"{wav_path!r} names no file")
    if ".." in parts:
        raise RecordError(
            where, "wav_path", f"{wav_path!r} resolves outside the source folder {root}"
        )
    for start in range(len(parts)):
        tail = Path(*parts[start:])
        for base in (jsonl_dir, root):
            candidate = base / tail
            if candidate.is_file():
                resolved = candidate.resolve()
                if not resolved.is_relative_to(root):
                    raise RecordError(
                        where, "wav_path", f"{wav_path!r} resolves outside the source folder {root}"
                    )
                return resolved
    return None
