"""Polyphase resampling with the values of scipy's ``resample_poly`` (default Kaiser window),
in numpy alone.

``import scipy.signal`` costs 1.5-2.5 s on a cold start, which was most of the time
``speech-drame score`` took to read its first clip. This is the same filter (``firwin``:
a windowed sinc of ``20 * max(up, down) + 1`` taps, cut off at the lower Nyquist frequency,
Kaiser beta 5, scaled to unit gain) and the same ``upfirdn`` alignment, computed one
polyphase branch per output sample, summed in the input's precision and in upfirdn's order
(oldest input first), so the samples are scipy's to the bit (``tests/test_resample.py``).
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd

import numpy as np

KAISER_BETA = 5.0


@lru_cache(maxsize=8)
def _filter(up: int, down: int, dtype: str) -> np.ndarray:
    """``firwin(2 * half + 1, 1 / max(up, down), window=("kaiser", 5.0))`` in ``dtype``, times
    ``up`` (in ``dtype``, as scipy does)."""
    half = 10 * max(up, down)
    m = np.arange(2 * half + 1) - half
    cutoff = 1.0 / max(up, down)
    h = cutoff * np.sinc(cutoff * m) * np.kaiser(2 * half + 1, KAISER_BETA)
    h = (h / h.sum()).astype(dtype)
    h *= h.dtype.type(up)
    return h


def _resample_1d(x: np.ndarray, up: int, down: int) -> np.ndarray:
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    h = _filter(up, down, dtype.name)
    half = (len(h) - 1) // 2
    n_in = len(x)
    n_out = -(-n_in * up // down)
    # scipy pads the filter in front so that output sample k sits at upsampled index
    # k * down + half: output k sums h[k * down + half - i * up] * x[i] over the inputs i
    taps = -(-len(h) // up)  # filter taps per polyphase branch
    branches = np.zeros((up, taps), dtype=dtype)
    for p in range(up):
        branch = h[p::up]
        branches[p, : len(branch)] = branch
    # outputs k = r, r + up, r + 2 up, ... share a branch and read inputs down apart
    tail = taps + half // up + 2
    xp = np.concatenate([np.zeros(taps, dtype), x.astype(dtype), np.zeros(tail, dtype)])
    out = np.empty(n_out, dtype=dtype)
    for r in range(min(up, n_out)):
        n = len(range(r, n_out, up))
        t = r * down + half
        first = t // up + taps  # output r + j up reads xp[first + j down - m] * branches[t % up, m]
        acc = np.zeros(n, dtype=dtype)
        for m in range(taps - 1, -1, -1):  # oldest input first, in dtype: upfirdn's sums
            start = first - m
            acc += xp[start : start + (n - 1) * down + 1 : down] * branches[t % up, m]
        out[r::up] = acc
    return out


def resample_poly(samples: np.ndarray, up: int, down: int) -> np.ndarray:
    """``samples`` (1-D, or ``(frames, channels)``) resampled by ``up / down`` along axis 0
    (scipy ``resample_poly(samples, up, down, axis=0)``: float32 in, float32 out)."""
    g = gcd(up, down)
    up, down = up // g, down // g
    x = np.asarray(samples)
    if up == down == 1:
        return x.copy()
    if x.ndim == 1:
        return _resample_1d(x, up, down)
    return np.stack([_resample_1d(x[:, c], up, down) for c in range(x.shape[1])], axis=1)
