"""Speech quality: DNSMOS P.835 (SIG, BAK, OVRL) and P.808 MOS from the ``speechmos`` ONNX models.

The models score 9.01 s windows. As in Microsoft's reference script (and
``speechmos.dnsmos``), a shorter clip is repeated until it fills a window (scored once).
Unlike it, a longer clip is covered by the fewest non-overlapping windows (the last one
aligned to the clip's end) instead of windows every second: a 30 s clip costs 4 model runs
instead of 22. On a single-window clip the values equal ``speechmos.dnsmos.run`` (checked in
the tests). The P.808 log-mel input is computed with :mod:`speech_drame.features.spectral`
(librosa-identical, without librosa's numba start-up).

Two P.835 models (:data:`VARIANTS`): ``"plain"``, the non-personalised model that the feature
cache and the blueprint use (cache name :data:`NAME`), and ``"personalised"``, the model
trained to penalise interfering talkers (``speechmos/pdnsmos_models``, with its own calibration
polynomials; cache name ``dnsmos-personalised``). The P.808 model is the same for both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.choices import check_choice
from speech_drame.extras import require
from speech_drame.features.common import load_once, samples_16k, thread_count
from speech_drame.features.spectral import mel_spectrogram, power_to_db

NAME = "dnsmos"
VERSION = "1"
SR = 16_000
WINDOW = int(9.01 * SR)  # 144160 samples, the models' fixed input
VARIANTS: tuple[str, ...] = ("plain", "personalised")
Variant = Literal["plain", "personalised"]
# per variant: P.835 model folder in speechmos, and the calibration polynomials (SIG, BAK, OVRL)
# of the Microsoft DNSMOS reference
_MODELS: dict[str, tuple[str, tuple[np.poly1d, np.poly1d, np.poly1d]]] = {
    "plain": (
        "dnsmos_models",
        (
            np.poly1d([-0.08397278, 1.22083953, 0.0052439]),
            np.poly1d([-0.13166888, 1.60915514, -0.39604546]),
            np.poly1d([-0.06766283, 1.11546468, 0.04602535]),
        ),
    ),
    "personalised": (
        "pdnsmos_models",
        (
            np.poly1d([-0.01019296, 0.02751166, 1.19576786, -0.24348726]),
            np.poly1d([-0.04976499, 0.44276479, -0.1644611, 0.96883132]),
            np.poly1d([-0.00533021, 0.005101, 1.18058466, -0.11236046]),
        ),
    ),
}
CACHE_NAMES: dict[str, str] = {"plain": NAME, "personalised": f"{NAME}-personalised"}


@dataclass
class QualityScores:
    """DNSMOS estimates on the 1..5 MOS scale."""

    sig: float
    bak: float
    ovrl: float
    p808: float


def check_variant(variant: str) -> Variant:
    return check_choice(variant, VARIANTS, "DNSMOS variant")  # type: ignore[return-value]


@load_once
def _session(folder: str, model: str) -> Any:
    """An onnxruntime session of ``speechmos/<folder>/<model>``.

    Without onnxruntime's memory patterns (``enable_mem_pattern``), which plan one block per
    run for the largest run seen, the arena kept for the life of the process is ~50 MB smaller
    (measured on 9 windows: peak RSS 279 vs 327 MB) for 3 % more time per window; giving the
    arena back after each run instead (``memory.enable_memory_arena_shrinkage``) took 19 % more.
    """
    speechmos = require("speechmos", "DNSMOS quality")
    ort = require("onnxruntime", "DNSMOS quality")
    options = ort.SessionOptions()
    options.intra_op_num_threads = thread_count()
    options.enable_mem_pattern = False
    path = Path(speechmos.__file__).parent / folder / model
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def load() -> None:
    """Load the plain variant's sessions (see :mod:`speech_drame.features.loading`)."""
    _session(_MODELS["plain"][0], "sig_bak_ovr.onnx")
    _session("dnsmos_models", "model_v8.onnx")


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


def score_windows(batch: np.ndarray, variant: Variant = "plain") -> np.ndarray:
    """Calibrated DNSMOS per window: array ``(n, 4)`` of SIG, BAK, OVRL, P808.

    Windows go through the models one at a time: batching them was slower here and grew
    onnxruntime's memory arena by ~200 MB per window.
    """
    folder, polys = _MODELS[check_variant(variant)]
    primary, p808 = _session(folder, "sig_bak_ovr.onnx"), _session("dnsmos_models", "model_v8.onnx")
    raw = np.concatenate([primary.run(None, {"input_1": w[None]})[0] for w in batch])
    p = np.concatenate([p808.run(None, {"input_1": _p808_input(w)[None]})[0][:, 0] for w in batch])
    return np.stack([poly(raw[:, i]) for i, poly in enumerate(polys)] + [p], axis=1)


def dnsmos(audio: Audio, variant: Variant = "plain") -> QualityScores:
    """DNSMOS SIG/BAK/OVRL/P808 of a 16 kHz clip (mean over its windows) from the ``variant``
    P.835 model (:data:`VARIANTS`).

    Raises:
        AudioError: audio not 16 kHz mono, or samples outside [-1, 1] (the models' range).
        ValueError: an unknown variant.
    """
    check_variant(variant)
    x = samples_16k(audio, "DNSMOS")
    peak = float(np.max(np.abs(x)))
    if peak > 1.0:
        raise AudioError(
            audio.source,
            f"DNSMOS needs samples within [-1, 1], peak is {peak:.3f} "
            "(audio read by speech_drame.audio.load_audio is scaled into range)",
        )
    sig, bak, ovrl, p808 = score_windows(windows(x), variant).mean(axis=0)
    return QualityScores(float(sig), float(bak), float(ovrl), float(p808))
