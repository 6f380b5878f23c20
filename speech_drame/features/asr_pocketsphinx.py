"""Lighter fallback transcript: PocketSphinx (BSD) with the en-us model bundled in its wheel.

It gives text only (no Whisper encoder embedding or confidences), for protocols that need a
transcript (e.g. ISDrama's CER) where faster-whisper is unavailable or too heavy. It is far
less accurate than the default multilingual Whisper base on read speech (see the tests), and English only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from speech_drame.audio import TARGET_SR, Audio
from speech_drame.extras import require
from speech_drame.features.common import samples_16k

NAME = "asr_pocketsphinx"
VERSION = "pocketsphinx-5.1.1-en-us-1"


@lru_cache(maxsize=1)
def _decoder() -> Any:
    ps = require("pocketsphinx", "the PocketSphinx fallback ASR")
    return ps.Decoder(samprate=TARGET_SR, loglevel="FATAL")


def transcribe_pocketsphinx(audio: Audio) -> str:
    """Transcript of a 16 kHz mono clip ('' when the decoder finds no words)."""
    x = samples_16k(audio, "PocketSphinx ASR")
    pcm = (np.clip(x, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    decoder = _decoder()
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hyp = decoder.hyp()
    return hyp.hypstr if hyp is not None else ""
