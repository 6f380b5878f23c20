"""A disk cache of endpoint responses keyed by a hash of the full request.

Each entry is one JSON file named by the SHA-256 of the canonical request (URL, model,
payload and run index), written atomically (temporary file + ``os.replace``) so that an
interrupted run never leaves a half-written entry. A rerun of the same requests costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 hex digest of ``request`` serialised as canonical JSON (sorted keys)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses stored as ``<folder>/<key[:2]>/<key>.json``."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response body, or ``None`` when the key has no entry."""
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: corrupt cache entry ({exc}); delete it") from None

    def put(self, key: str, body: dict[str, Any]) -> None:
        """Store ``body`` under ``key`` atomically."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(body, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
