"""Formant estimates (F1-F3) by linear prediction (autocorrelation method).

The clip is resampled to 11 kHz (formants up to 5.5 kHz, as Praat's default ceiling for
most voices), pre-emphasised, and cut into 25 ms Hamming frames every 10 ms. Frames within
25 dB of the loudest one are analysed with an order-12 LPC; the roots of the predictor with
bandwidth below 400 Hz and frequency above 90 Hz are the formant candidates of the frame,
and each formant is the median of its per-frame values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from speech_drame.audio import Audio, AudioError, resample
from speech_drame.features.common import samples_16k

NAME = "formants"
VERSION = "lpc12-11k-1"
SR = 11_000
ORDER = 12
WIN, HOP = int(0.025 * SR), int(0.010 * SR)
ACTIVE_DB = 25.0
MAX_BANDWIDTH_HZ, MIN_FREQ_HZ = 400.0, 90.0


@dataclass
class Formants:
    """Median F1, F2, F3 in Hz over the analysed frames, and how many frames gave all three."""

    f1_hz: float
    f2_hz: float
    f3_hz: float
    frames: int


def lpc(frame: np.ndarray, order: int) -> np.ndarray:
    """Predictor polynomial ``[1, a1, ..., a_order]`` from the autocorrelation normal equations."""
    from scipy.linalg import solve_toeplitz

    r = np.correlate(frame, frame, mode="full")[len(frame) - 1 : len(frame) + order]
    r[0] *= 1.0 + 1e-9  # white-noise correction keeps the system well conditioned
    return np.concatenate([[1.0], solve_toeplitz(r[:-1], -r[1:])])


def frame_formants(frame: np.ndarray, sample_rate: int = SR, order: int = ORDER) -> np.ndarray:
    """Formant candidates (Hz, ascending) of one windowed frame."""
    roots = np.roots(lpc(frame, order))
    roots = roots[np.imag(roots) > 0]
    freqs = np.angle(roots) * sample_rate / (2 * np.pi)
    bandwidths = -np.log(np.abs(roots)) * sample_rate / np.pi
    keep = (freqs > MIN_FREQ_HZ) & (bandwidths < MAX_BANDWIDTH_HZ)
    return np.sort(freqs[keep])


def formants(audio: Audio) -> Formants:
    """Median F1-F3 of the clip's loud frames.

    Raises:
        AudioError: audio not 16 kHz mono, or no frame with three formant candidates.
    """
    x = resample(samples_16k(audio, "formants").astype(np.float64), 16_000, SR)
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])
    if len(x) < WIN:
        raise AudioError(audio.source, "formants: clip shorter than one 25 ms frame")
    frames = np.lib.stride_tricks.sliding_window_view(x, WIN)[::HOP] * np.hamming(WIN)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
    found = []
    for frame in frames[energy > energy.max() - ACTIVE_DB]:
        cands = frame_formants(frame)
        if len(cands) >= 3:
            found.append(cands[:3])
    if not found:
        raise AudioError(audio.source, "formants: no frame with three formant candidates")
    f1, f2, f3 = np.median(np.array(found), axis=0)
    return Formants(float(f1), float(f2), float(f3), len(found))
