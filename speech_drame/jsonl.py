"""JSON Lines input files (scenarios, queries, pairs, manifests, release records): one JSON
object per line, ids unique; a ``.json`` file may instead hold one JSON array of objects."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def is_json_array(path: str | os.PathLike) -> bool:
    """Whether the file's first non-blank character opens a JSON array."""
    with Path(path).open(encoding="utf-8") as handle:
        while chunk := handle.read(4096):
            if text := chunk.lstrip():
                return text.startswith("[")
    return False


def _array_objects(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    objects = []
    for index, obj in enumerate(data):
        where = f"{path}: element {index}"
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        objects.append((where, obj))
    return objects


def read_objects(path: str | os.PathLike) -> list[tuple[str, dict[str, Any]]]:
    """``(where, object)`` for every non-blank line of ``path``; ``where`` is ``file:line``
    (``file: element N`` for the N-th, from 0, of a ``.json`` file holding a JSON array).

    Lines end at newlines only, so a raw U+2028 inside a JSON string stays in its line.

    Raises:
        ValueError: a line that is not valid JSON or not a JSON object, naming ``file:line``.
    """
    path = Path(path)
    if path.suffix == ".json" and is_json_array(path):
        return _array_objects(path)
    objects = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: invalid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
            objects.append((where, obj))
    return objects


def repeated(ids: Iterable[str]) -> list[str]:
    """The ids that occur more than once, sorted."""
    return sorted(i for i, n in Counter(ids).items() if n > 1)
