"""Voice activity and pause timing from silero-vad (bundled ONNX sequence model, no torch).

Importing ``silero_vad`` sets torch to one thread for the whole process; the previous
setting is restored right after the import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.audio import Audio
from speech_drame.extras import require
from speech_drame.features.common import load_once, samples_16k, thread_count, torch_threads

NAME = "vad"
VERSION = "silero-6.2.3-2"
SR = 16_000


@dataclass
class VoiceActivity:
    """Speech segments (seconds) and the timing statistics derived from them.

    ``pause_ratio`` is the share of the span from the first to the last speech sample that
    is silent; ``speech_ratio`` the share of the whole clip that is speech. A clip in which
    silero hears no speech (e.g. speech buried in noise) is a valid measurement: no
    segments, ratios and pauses 0, the whole clip counted as leading silence.
    """

    segments: list[tuple[float, float]]
    speech_seconds: float
    speech_ratio: float
    pause_ratio: float
    pauses_per_minute: float
    mean_pause_s: float
    leading_silence_s: float
    trailing_silence_s: float


@load_once
def _model() -> tuple[Any, Any]:
    torch = require("torch", "voice activity detection")
    threads = torch.get_num_threads()
    try:
        silero = require("silero_vad", "voice activity detection")
        model = silero.load_silero_vad(sequence=True)
    finally:
        torch.set_num_threads(threads)
    return model, silero.get_speech_timestamps_from_probs


def load() -> None:
    """Load Silero VAD (see :mod:`speech_drame.features.loading`)."""
    _model()


def voice_activity(audio: Audio) -> VoiceActivity:
    """Silero speech segments of the clip and pause statistics.

    Raises:
        AudioError: audio not 16 kHz mono.
    """
    x = samples_16k(audio, "voice activity detection")
    model, to_timestamps = _model()
    with torch_threads(thread_count()):
        probs = model.audio_forward(x, sampling_rate=SR)
    stamps = to_timestamps([float(p) for p in probs], sampling_rate=SR, audio_length_samples=len(x))
    segments = [(s["start"] / SR, s["end"] / SR) for s in stamps]
    total = len(x) / SR
    speech = sum(e - s for s, e in segments)
    span = segments[-1][1] - segments[0][0] if segments else 0.0
    gaps = [b[0] - a[1] for a, b in zip(segments, segments[1:], strict=False)]
    return VoiceActivity(
        segments=segments,
        speech_seconds=speech,
        speech_ratio=speech / total,
        pause_ratio=float(np.clip(1 - speech / span, 0.0, 1.0)) if span > 0 else 0.0,
        pauses_per_minute=60.0 * len(gaps) / total,
        mean_pause_s=float(np.mean(gaps)) if gaps else 0.0,
        leading_silence_s=segments[0][0] if segments else total,
        trailing_silence_s=max(0.0, total - segments[-1][1]) if segments else 0.0,
    )
