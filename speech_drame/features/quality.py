"""Speech quality: DNSMOS P.835 (SIG, BAK, OVRL) and P.808 MOS from the ``speechmos`` ONNX models.

The models score 9.01 s windows. As in Microsoft's reference script (and
``speechmos.dnsmos``), a shorter clip is repeated until it fills a window (scored once).
Unlike it, a longer clip is covered by the fewest non-overlapping windows (the last one
aligned to the clip's end) instead of windows every second: a 30 s clip costs 4 model runs
instead of 22. On a single-window clip the values equal ``speechmos.dnsmos.run`` (checked in
the tests). The P.808 log-mel input is computed with :mod:`speech_drame.features.spectral`
(librosa-identical, without librosa's numba start-up).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.extras import require
from speech_drame.features.common import samples_16k, thread_count
from speech_drame.features.spectral import mel_spectrogram, power_to_db

NAME = "dnsmos"
VERSION = "1"
SR = 16_000
WINDOW = int(9.01 * SR)  # 144160 samples, the models' fixed input
# P.835 calibration polynomials of the non-personalised model (Microsoft DNSMOS reference)
_POLY_SIG = np.poly1d([-0.08397278, 1.22083953, 0.0052439])
_POLY_BAK = np.poly1d([-0.13166888, 1.60915514, -0.39604546])
_POLY_OVR = np.poly1d([-0.06766283, 1.11546468, 0.04602535])


@dataclass
class QualityScores:
    """DNSMOS estimates on the 1..5 MOS scale."""

    sig: float
    bak: float
    ovrl: float
    p808: float


@lru_cache(maxsize=1)
def _sessions() -> tuple[Any, Any]:
    speechmos = require("speechmos", "DNSMOS quality")
    ort = require("onnxruntime", "DNSMOS quality")
    folder = Path(speechmos.__file__).parent / "dnsmos_models"
    options = ort.SessionOptions()
    options.intra_op_num_threads = thread_count()
    providers = ["CPUExecutionProvider"]
    return (
        ort.InferenceSession(str(folder / "sig_bak_ovr.onnx"), options, providers=providers),
        ort.InferenceSession(str(folder / "model_v8.onnx"), options, providers=providers),
    )


def windows(samples: np.ndarray) -> np.ndarray:
    """The clip as 9.01 s windows, shape ``(n, 144160)``.

    A short clip is repeated to fill one window; a longer one is covered by the fewest
    non-overlapping windows, the last aligned to its end.
    """
    x = samples
    if len(x) < WINDOW:
        x = np.tile(x, math.ceil(WINDOW / len(x)))[:WINDOW]
    n = math.ceil(len(x) / WINDOW - 1e-9)
    starts = np.linspace(0, len(x) - WINDOW, n).round().astype(int) if n > 1 else [0]
    return np.stack([x[s : s + WINDOW] for s in starts]).astype(np.float32)


def _p808_input(window: np.ndarray) -> np.ndarray:
    mel = mel_spectrogram(window[:-160], SR, n_fft=321, hop_length=160, n_mels=120)
    return ((power_to_db(mel) + 40.0) / 40.0).T.astype(np.float32)  # (900, 120)


def score_windows(batch: np.ndarray) -> np.ndarray:
    """Raw DNSMOS per window: array ``(n, 4)`` of SIG, BAK, OVRL, P808.

    Windows go through the models one at a time: batching them was slower here and grew
    onnxruntime's memory arena by ~200 MB per window.
    """
    primary, p808 = _sessions()
    raw = np.concatenate([primary.run(None, {"input_1": w[None]})[0] for w in batch])
    p = np.concatenate([p808.run(None, {"input_1": _p808_input(w)[None]})[0][:, 0] for w in batch])
    return np.stack([_POLY_SIG(raw[:, 0]), _POLY_BAK(raw[:, 1]), _POLY_OVR(raw[:, 2]), p], axis=1)


def dnsmos(audio: Audio) -> QualityScores:
    """DNSMOS SIG/BAK/OVRL/P808 of a 16 kHz clip (mean over its windows).

    Raises:
        AudioError: audio not 16 kHz mono, or samples outside [-1, 1] (the models' range).
    """
    x = samples_16k(audio, "DNSMOS")
    peak = float(np.max(np.abs(x)))
    if peak > 1.0:
        raise AudioError(
            audio.source,
            f"DNSMOS needs samples within [-1, 1], peak is {peak:.3f} "
            "(audio read by speech_drame.audio.load_audio is scaled into range)",
        )
    sig, bak, ovrl, p808 = score_windows(windows(x)).mean(axis=0)
    return QualityScores(float(sig), float(bak), float(ovrl), float(p808))
