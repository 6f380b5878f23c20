"""Dynamic time warping of two utterances, for comparing frame tracks (F0) of unequal length.

Frames are matched on mean-normalised log-mel spectra (40 bands), never on the tracks being
compared, so the alignment does not favour a low FFE. Steps are (1, 0), (0, 1) and (1, 1) with
equal weight; the path runs from the first frame pair to the last.
"""

from __future__ import annotations

import numpy as np

from speech_drame.features.spectral import mel_spectrogram

N_MELS = 40


def log_mel_frames(samples: np.ndarray, sample_rate: int, hop: float) -> np.ndarray:
    """Mean-normalised log-mel frames ``(frames, 40)``, one per ``hop`` seconds (centred)."""
    hop_length = int(round(hop * sample_rate))
    if hop_length < 1:
        raise ValueError(f"hop {hop} s is below one sample at {sample_rate} Hz")
    mel = mel_spectrogram(samples, sample_rate, 4 * hop_length, hop_length, N_MELS)
    logmel = np.log(mel.T + 1e-8)
    return logmel - logmel.mean(axis=0)


def dtw_path(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-cost monotone path through an ``(n, m)`` cost matrix, as index arrays ``(i, j)``.

    The accumulated cost is filled one anti-diagonal at a time (each is a vectorised step).
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2 or 0 in cost.shape or not np.isfinite(cost).all():
        raise ValueError(f"DTW needs a finite, non-empty 2-D cost matrix, got shape {cost.shape}")
    n, m = cost.shape
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for k in range(2, n + m + 1):  # anti-diagonal i + j = k in 1-based indices
        i = np.arange(max(1, k - m), min(n, k - 1) + 1)
        j = k - i
        best = np.minimum(np.minimum(acc[i - 1, j], acc[i, j - 1]), acc[i - 1, j - 1])
        acc[i, j] = cost[i - 1, j - 1] + best
    i, j, path = n, m, [(n - 1, m - 1)]
    while (i, j) != (1, 1):
        steps = ((i - 1, j - 1), (i - 1, j), (i, j - 1))  # ties prefer the diagonal
        i, j = min(steps, key=lambda s: acc[s])
        path.append((i - 1, j - 1))
    rows, cols = np.array(path[::-1]).T
    return rows, cols


def align_frames(
    reference: np.ndarray, generated: np.ndarray, sample_rate: int, hop: float
) -> tuple[np.ndarray, np.ndarray]:
    """DTW frame pairs ``(reference_index, generated_index)`` of two mono signals."""
    from scipy.spatial.distance import cdist

    ref = log_mel_frames(reference, sample_rate, hop)
    gen = log_mel_frames(generated, sample_rate, hop)
    return dtw_path(cdist(ref, gen))
