"""Helpers shared by the feature extractors: input checks and thread settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from speech_drame.audio import TARGET_SR, Audio, AudioError
from speech_drame.extras import require

THREADS_ENV = "SPEECH_DRAME_THREADS"


def thread_count() -> int:
    """Threads per model call, from ``$SPEECH_DRAME_THREADS`` (default 1).

    One thread per call and one clip per core (see ``extract_blueprints``) is faster on these
    small models than several threads per call: measured 23x vs 17x real time on 2 cores.
    """
    value = os.environ.get(THREADS_ENV, "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {value!r}")
    return int(value)


def cpu_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def samples_16k(audio: Audio, extractor: str) -> np.ndarray:
    """The clip's samples, after checking it is 16 kHz mono."""
    if audio.sample_rate != TARGET_SR:
        raise AudioError(
            audio.source,
            f"{extractor} needs {TARGET_SR} Hz audio, got {audio.sample_rate} Hz "
            "(load it with speech_drame.audio.load_audio)",
        )
    if audio.samples.ndim != 1:
        raise AudioError(
            audio.source, f"{extractor} needs mono samples, got shape {audio.samples.shape}"
        )
    return audio.samples


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Set torch's process-wide intra-op thread count for a block, then restore it."""
    torch = require("torch", "this step")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
