"""The extractors' models: each loaded once per process, and all of them in the background on
request, from the first clip whose features are not cached, so decoding and extracting it
overlaps the loading.

:func:`~speech_drame.features.common.load_once` replaces ``functools.cache`` on the model
loaders: with it, threads that ask for a model at the same time wait for one load instead of
each building its own copy, which is what lets every worker start on the first clip at once.
:func:`preload` starts one thread that loads the models in the order a clip needs them (a process
that ends sooner waits for it). A load that fails there is dropped: the extractor that needs the
model calls the loader again and the error is raised where the clip is, as without preloading.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

_started: list[threading.Thread] = []
_start_lock = threading.Lock()


def _loaders() -> list[Callable[[], Any]]:
    from speech_drame.features import asr, quality, speaker, text, vad

    return [asr.load, quality.load, speaker.load, vad.load, text.load]


def _load_all() -> None:
    for load in _loaders():
        with contextlib.suppress(Exception):  # raised again, with its clip, where it is needed
            load()


def preload() -> threading.Thread:
    """Start loading every extractor's model in a background thread (once per process; later
    calls return the same thread)."""
    with _start_lock:
        if not _started:
            # not a daemon: the interpreter waits for it at exit instead of tearing down a model
            # being built in native code (which aborts the process)
            thread = threading.Thread(target=_load_all, name="speech-drame-preload")
            thread.start()
            _started.append(thread)
        return _started[0]
