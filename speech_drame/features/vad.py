"""Voice activity and pause timing from Silero VAD, without torch.

The model is the batched ("sequence") ONNX export that ships in the silero-vad package, run
by ONNX Runtime; the framing and the rule that turns frame probabilities into segments are our
own, with Silero's defaults (``get_speech_timestamps``: threshold 0.5, speech of more than
250 ms, silences of 100 ms, 30 ms padding, no length cap), and give its segments exactly
(``tests/test_vad.py`` compares them with the package's own functions).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.audio import Audio
from speech_drame.extras import require
from speech_drame.features.common import load_once, samples_16k

NAME = "vad"
VERSION = "silero-6.2.3-2"
SR = 16_000
MODEL_FILE = "silero_vad_16k_sequence.onnx"
FRAME, CONTEXT = 512, 64  # samples per decision, and of the frame before that each one sees
BLOCK_FRAMES = 512  # frames per model run, as silero's wrapper
THRESHOLD = 0.5
NEG_THRESHOLD = THRESHOLD - 0.15
MIN_SPEECH = SR * 250 // 1000  # a segment must be longer than this (samples)
MIN_SILENCE = SR * 100 // 1000
PAD = SR * 30 // 1000


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
def _session() -> Any:
    """ONNX Runtime session of the sequence model in the silero-vad package, found without
    importing the package (its ``__init__`` imports torch)."""
    ort = require("onnxruntime", "voice activity detection")
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("voice activity detection needs silero-vad: pip install silero-vad")
    path = Path(spec.submodule_search_locations[0]) / "data" / MODEL_FILE
    if not path.is_file():
        raise ImportError(
            f"{path}: silero-vad {VERSION.split('-')[1]} ships this model; reinstall it"
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # as silero's own wrapper
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def load() -> None:
    """Load Silero VAD (see :mod:`speech_drame.features.loading`)."""
    _session()


def speech_probabilities(x: np.ndarray) -> np.ndarray:
    """Silero's speech probability for each 32 ms frame of 16 kHz samples ``x``.

    Each frame is fed with the 4 ms before it (zeros before the first; the last frame is
    zero-padded), in blocks of :data:`BLOCK_FRAMES` with the LSTM state carried across blocks.
    """
    session = _session()
    n_frames = -(-len(x) // FRAME)
    padded = np.zeros((n_frames + 1) * FRAME, dtype=np.float32)
    padded[FRAME : FRAME + len(x)] = x  # a zero frame in front supplies the first context
    frames = padded.reshape(-1, FRAME)
    inputs = np.concatenate([frames[:-1, -CONTEXT:], frames[1:]], axis=1)
    state = [np.zeros((1, 1, 128), dtype=np.float32)] * 2
    out = []
    for first in range(0, n_frames, BLOCK_FRAMES):
        probs, *state = session.run(
            ["speech_probs", "hn", "cn"],
            {"input": inputs[first : first + BLOCK_FRAMES], "h": state[0], "c": state[1]},
        )
        out.append(probs)
    return np.concatenate(out).reshape(-1) if out else np.zeros(0, dtype=np.float32)


def speech_segments(probs: Sequence[float], n_samples: int) -> list[tuple[int, int]]:
    """Speech segments ``(start, end)`` in samples from per-frame probabilities, by Silero's
    default rule.

    Speech starts at a frame with probability >= :data:`THRESHOLD` and ends where the
    probability first fell below :data:`NEG_THRESHOLD` if it stays below :data:`THRESHOLD` for
    at least :data:`MIN_SILENCE` samples; segments of at most :data:`MIN_SPEECH` samples are
    dropped, and each kept one is widened by :data:`PAD` samples (by half the gap when two are
    closer than twice that).
    """
    segments: list[list[int]] = []
    start: int | None = None  # of the open segment
    silence_from: int | None = None  # where the probability fell below NEG_THRESHOLD in it
    for i, p in enumerate(probs):
        sample = i * FRAME
        if p >= THRESHOLD:
            silence_from = None
            if start is None:
                start = sample
            continue
        if start is None or p >= NEG_THRESHOLD:
            continue
        if silence_from is None:
            silence_from = sample
        if sample - silence_from >= MIN_SILENCE:
            if silence_from - start > MIN_SPEECH:
                segments.append([start, silence_from])
            start = silence_from = None
    if start is not None and n_samples - start > MIN_SPEECH:
        segments.append([start, n_samples])
    for i, seg in enumerate(segments):
        if i == 0:
            seg[0] = max(0, seg[0] - PAD)
        if i + 1 < len(segments):
            after = segments[i + 1]
            gap = after[0] - seg[1]
            widen = gap // 2 if gap < 2 * PAD else PAD
            seg[1] = min(n_samples, seg[1] + widen)
            after[0] = max(0, after[0] - widen)
        else:
            seg[1] = min(n_samples, seg[1] + PAD)
    return [(s, e) for s, e in segments]


def voice_activity(audio: Audio) -> VoiceActivity:
    """Silero speech segments of the clip and pause statistics.

    Raises:
        AudioError: audio not 16 kHz mono.
    """
    x = samples_16k(audio, "voice activity detection")
    stamps = speech_segments(speech_probabilities(x).tolist(), len(x))
    segments = [(s / SR, e / SR) for s, e in stamps]
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
