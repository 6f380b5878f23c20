"""A disk cache of usable endpoint responses keyed by a hash of the full request.

Each entry is one JSON file named by the SHA-256 of the canonical request (URL, model,
payload and run index), written atomically (:func:`speech_drame.atomic_io.write_json`) so that
an interrupted run never leaves a half-written entry. A rerun of the same requests costs
nothing. An entry that cannot be read (damaged on disk, not a JSON object) is skipped and
counted, never fatal: the request is sent again and its answer replaces the entry. The
client stores only answers its caller could use (see :meth:`.client.ChatClient.complete`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..atomic_io import write_json


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 hex digest of ``request`` serialised as canonical JSON (sorted keys)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses stored as ``<folder>/<key[:2]>/<key>.json``; ``corrupt`` lists the entries
    that could not be read (each one is a cache miss)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.corrupt: list[str] = []

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response body, or ``None`` when the key has no readable entry."""
        path = self._path(key)
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.corrupt.append(f"{path}: {exc}")
            return None
        if not isinstance(body, dict):
            self.corrupt.append(f"{path}: a JSON {type(body).__name__}, not a response object")
            return None
        return body

    def put(self, key: str, body: dict[str, Any]) -> None:
        """Store ``body`` under ``key`` atomically."""
        write_json(self._path(key), body, indent=None)
