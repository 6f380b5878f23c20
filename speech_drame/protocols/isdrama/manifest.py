"""ISDrama evaluation manifests: JSONL (one object per line) or CSV (header row).

Fields (paths are relative to the manifest's folder unless absolute):

===========  ========================================================================
id           unique name of the item (required)
type         ``sentence`` or ``drama`` (required): which protocol the item belongs to
generated    generated audio (required)
reference    ground-truth recording of the same sentence or drama (required)
text         script of the sentence (required for ``sentence``, used for CER)
prompt       prompt audio giving the target voice (required for ``sentence``, for SIM)
===========  ========================================================================

Other fields are ignored. A ``drama`` item is a whole drama concatenated into one binaural
file; a ``sentence`` item is one line of it.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

from speech_drame.jsonl import read_objects

ENTRY_TYPES = ("sentence", "drama")
REQUIRED = {
    "sentence": ("generated", "reference", "text", "prompt"),
    "drama": ("generated", "reference"),
}


@dataclass(frozen=True)
class ManifestEntry:
    """One manifest item; ``where`` names its file and line for error messages."""

    id: str
    type: str
    generated: Path
    reference: Path
    text: str | None
    prompt: Path | None
    where: str


def _records(path: Path) -> list[tuple[str, dict]]:
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            return [(f"{path}:{i}", dict(row)) for i, row in enumerate(csv.DictReader(handle), 2)]
    if path.suffix.lower() not in (".jsonl", ".json"):
        raise ValueError(
            f"{path}: manifest must be .jsonl or .csv, got {path.suffix or 'no suffix'}"
        )
    return read_objects(path)


def _entry(where: str, record: dict, root: Path) -> ManifestEntry:
    def text(field: str) -> str | None:
        value = record.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str):
            raise ValueError(f"{where}: field {field!r} must be a string, got {value!r}")
        return value

    rid, kind = text("id"), text("type")
    if rid is None:
        raise ValueError(f"{where}: missing field 'id'")
    if kind not in ENTRY_TYPES:
        raise ValueError(
            f"{where} (id={rid}): field 'type' must be one of {ENTRY_TYPES}, got {kind!r}"
        )
    missing = [f for f in REQUIRED[kind] if text(f) is None]
    if missing:
        raise ValueError(f"{where} (id={rid}): a {kind} entry needs field(s) {missing}")

    def audio(field: str) -> Path | None:
        value = text(field)
        return None if value is None else root / os.path.expanduser(value)

    return ManifestEntry(
        rid, kind, audio("generated"), audio("reference"), text("text"), audio("prompt"), where
    )


def read_manifest(path: str | os.PathLike) -> list[ManifestEntry]:
    """Validated entries of a JSONL or CSV manifest.

    Raises:
        ValueError: naming the file and line of a malformed, incomplete or duplicate item.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: manifest not found")
    entries, seen = [], {}
    for where, record in _records(path):
        entry = _entry(where, record, path.parent)
        if entry.id in seen:
            raise ValueError(f"{where}: duplicate id {entry.id!r} (first at {seen[entry.id]})")
        seen[entry.id] = where
        entries.append(entry)
    if not entries:
        raise ValueError(f"{path}: manifest has no entries")
    return entries
