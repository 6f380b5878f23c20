"""Peak picking with the results of ``scipy.signal.find_peaks(x, prominence=P, distance=D)``,
without importing ``scipy.signal`` (1.5-2.5 s on a cold start, for one call per clip).

The same three steps in scipy's order: local maxima (a flat top counts once, at its middle;
the ends never count), then the distance rule (the highest peak first, every lower one closer
than ``distance`` samples dropped), then the prominence rule (height above the higher of the
two lowest points reached before a higher sample or the end, at least ``prominence``).
``tests/test_peaks.py`` compares the indices with scipy's.
"""

from __future__ import annotations

import math

import numpy as np


def local_maxima(x: np.ndarray) -> np.ndarray:
    """Indices of the local maxima of ``x``; a plateau gives its middle (lower on a tie)."""
    peaks = []
    i, end = 1, len(x) - 1
    while i < end:
        if x[i - 1] < x[i]:
            ahead = i + 1
            while ahead < end and x[ahead] == x[i]:
                ahead += 1
            if x[ahead] < x[i]:
                peaks.append((i + ahead - 1) // 2)
                i = ahead
        i += 1
    return np.asarray(peaks, dtype=np.intp)


def keep_apart(peaks: np.ndarray, heights: np.ndarray, distance: float) -> np.ndarray:
    """Mask of ``peaks`` kept when, highest first, each kept peak drops the peaks closer than
    ``distance``."""
    gap = math.ceil(distance)
    keep = np.ones(len(peaks), dtype=bool)
    for j in np.argsort(heights)[::-1]:  # scipy's order, ties included
        if not keep[j]:
            continue
        k = j - 1
        while k >= 0 and peaks[j] - peaks[k] < gap:
            keep[k] = False
            k -= 1
        k = j + 1
        while k < len(peaks) and peaks[k] - peaks[j] < gap:
            keep[k] = False
            k += 1
    return keep


def prominences(x: np.ndarray, peaks: np.ndarray) -> np.ndarray:
    """Each peak's height above the higher of its two bases (no window)."""
    out = np.empty(len(peaks))
    for n, p in enumerate(peaks):
        higher = np.flatnonzero(x > x[p])
        left = higher[higher < p]
        right = higher[higher > p]
        lo = left[-1] + 1 if left.size else 0
        hi = right[0] if right.size else len(x)
        out[n] = x[p] - max(x[lo : p + 1].min(), x[p:hi].min())
    return out


def find_peaks(x: np.ndarray, prominence: float, distance: float) -> np.ndarray:
    """Indices of the peaks of ``x`` that are at least ``distance`` apart and ``prominence``
    high (``scipy.signal.find_peaks(x, prominence=prominence, distance=distance)[0]``)."""
    if distance < 1:
        raise ValueError(f"distance must be >= 1, got {distance}")
    x = np.asarray(x, dtype=np.float64)
    peaks = local_maxima(x)
    peaks = peaks[keep_apart(peaks, x[peaks], distance)]
    return peaks[prominences(x, peaks) >= prominence]
