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

import math
from functools import lru_cache
from math import gcd

import numpy as np

KAISER_BETA = 5.0

# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8], the series scipy.special.i0 (and
# numpy.i0) evaluates there; the window needs no more, its arguments being at most KAISER_BETA
_I0_COEFFICIENTS = (
    -4.4153416464793395e-18,
    3.3307945188222384e-17,
    -2.431279846547955e-16,
    1.715391285555133e-15,
    -1.1685332877993451e-14,
    7.676185498604936e-14,
    -4.856446783111929e-13,
    2.95505266312964e-12,
    -1.726826291441556e-11,
    9.675809035373237e-11,
    -5.189795601635263e-10,
    2.6598237246823866e-09,
    -1.300025009986248e-08,
    6.046995022541919e-08,
    -2.670793853940612e-07,
    1.1173875391201037e-06,
    -4.4167383584587505e-06,
    1.6448448070728896e-05,
    -5.754195010082104e-05,
    0.00018850288509584165,
    -0.0005763755745385824,
    0.0016394756169413357,
    -0.004324309995050576,
    0.010546460394594998,
    -0.02373741480589947,
    0.04930528423967071,
    -0.09490109704804764,
    0.17162090152220877,
    -0.3046826723431984,
    0.6767952744094761,
)


def _chebyshev(x: float, coefficients: tuple[float, ...]) -> float:
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _i0(x: float) -> float:
    """The modified Bessel function I0 of ``0 <= x <= 8`` as scipy.special.i0 computes it, with
    libm's ``exp`` (numpy's vectorised ``exp``, which ``numpy.i0`` uses, differs in the last bit
    on CPUs with AVX-512, and so did ``numpy.kaiser``'s float64 filter taps)."""
    return math.exp(x) * _chebyshev(x / 2.0 - 2.0, _I0_COEFFICIENTS)


def _kaiser(m: int, beta: float) -> np.ndarray:
    """scipy.signal.windows.kaiser(m, beta) to the bit, for ``m > 1`` and ``beta <= 8``."""
    alpha = (m - 1) / 2.0
    ratios = np.sqrt(1 - ((np.arange(m) - alpha) / alpha) ** 2.0)
    return np.array([_i0(beta * float(r)) for r in ratios]) / _i0(beta)


@lru_cache(maxsize=8)
def _filter(up: int, down: int, dtype: str) -> np.ndarray:
    """``firwin(2 * half + 1, 1 / max(up, down), window=("kaiser", 5.0))`` in ``dtype``, times
    ``up`` (in ``dtype``, as scipy does)."""
    half = 10 * max(up, down)
    m = np.arange(2 * half + 1) - half
    cutoff = 1.0 / max(up, down)
    h = cutoff * np.sinc(cutoff * m) * _kaiser(2 * half + 1, KAISER_BETA)
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
