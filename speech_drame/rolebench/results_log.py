"""Append-only JSONL results that survive being killed at any moment.

Each row is one JSON line appended with a single ``os.write`` on an ``O_APPEND`` descriptor and
``fsync``-ed, so a crash leaves every earlier row intact and at most one torn final line.
Reading drops a torn final line (and opening for append first cuts it off), so a rerun never
builds on a half-written row. Rows are keyed (by a caller-chosen tuple of fields) and never
rewritten: a later row of a key supersedes the earlier ones (:func:`latest_rows`), so scoring a
clip again (a transient failure retried) appends its new result and the file keeps its history.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def read_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every complete row of ``path`` (none if it does not exist); a torn final line is dropped.

    Raises:
        ValueError: a complete line (one that ends in a newline) that is not a JSON object,
            naming ``file:line``: that is corruption, not an interrupted write.
    """
    path = Path(path)
    if not path.is_file():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete = lines[:-1]  # the text after the last newline is empty or a torn write
    rows = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not a JSON row ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        rows.append(row)
    return rows


def row_key(row: dict[str, Any], fields: Sequence[str]) -> tuple:
    return tuple(row.get(f) for f in fields)


def latest_rows(rows: Iterable[dict[str, Any]], fields: Sequence[str]) -> list[dict[str, Any]]:
    """The last row of each key (rows in the order they were written), keys in first-seen order.

    Example:
        >>> rows = [{"k": 1, "v": "failed"}, {"k": 2, "v": "ok"}, {"k": 1, "v": "ok"}]
        >>> latest_rows(rows, ("k",))
        [{'k': 1, 'v': 'ok'}, {'k': 2, 'v': 'ok'}]
    """
    out: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        out[row_key(row, fields)] = row
    return list(out.values())


def row_line(row: dict[str, Any]) -> bytes:
    """A row as the one JSON line :meth:`ResultsLog.append` writes (compact, key order kept)."""
    return (json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


class ResultsLog:
    """An append-only JSONL file of rows; use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._cut_torn_tail()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _cut_torn_tail(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)
                handle.flush()
                os.fsync(handle.fileno())

    def append(self, row: dict[str, Any]) -> None:
        """Write one row durably (one ``os.write`` + ``fsync``)."""
        line = row_line(row)
        written = os.write(self._fd, line)
        if written != len(line):
            raise OSError(f"{self.path}: short write ({written} of {len(line)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
