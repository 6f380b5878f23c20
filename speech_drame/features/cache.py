"""On-disk cache of per-clip feature records.

An entry is keyed by the SHA-256 of the clip's 16 kHz float32 samples, the extractor name and
the extractor version, so a changed clip or a new extractor version never reads a stale value.
Entries are small JSON files written atomically (:func:`speech_drame.atomic_io.write_text`),
so concurrent writers and interrupted runs leave either the old entry or the new one.
Undefined values (NaN) are stored as Python's JSON writes them and read back as NaN.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import write_text

CACHE_ENV = "SPEECH_DRAME_CACHE"


def default_cache_dir() -> Path:
    """``$SPEECH_DRAME_CACHE`` if set, else ``~/.cache/speech-drame/features``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "speech-drame" / "features"


def audio_key(samples: np.ndarray, sample_rate: int) -> str:
    """SHA-256 hex digest of the float32 samples and their sample rate."""
    h = hashlib.sha256(f"{sample_rate}:".encode())
    h.update(np.ascontiguousarray(samples, dtype=np.float32).tobytes())
    return h.hexdigest()


class FeatureCache:
    """JSON records under ``root/<extractor>/v<version>/<key[:2]>/<key>.json``."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()
        self.hits = 0
        self.misses = 0

    def path(self, extractor: str, version: str, key: str) -> Path:
        return self.root / extractor / f"v{version}" / key[:2] / f"{key}.json"

    def get(self, extractor: str, version: str, key: str) -> dict[str, Any] | None:
        """The stored record, or ``None`` if absent (a corrupt entry is reported and ignored)."""
        path = self.path(extractor, version, key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.misses += 1
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            warnings.warn(f"{path}: corrupt cache entry ({exc}); recomputing", stacklevel=2)
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, extractor: str, version: str, key: str, value: dict[str, Any]) -> None:
        """Write ``value`` atomically."""
        write_text(self.path(extractor, version, key), json.dumps(value, separators=(",", ":")))
