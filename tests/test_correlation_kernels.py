"""The compiled kernels behind the alignment table, against numpy and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from speech_drame.stats.kernels import argsort, moment_sums, rank_sums


def _vectors():
    rng = np.random.default_rng(0)
    yield "continuous", rng.normal(size=5000)
    yield "integer ties", rng.integers(1, 6, 5000).astype(float)
    yield "clipped", np.clip(rng.normal(3, 2, 5000), 1, 5)
    # distinct values that agree in all the bits the packed keys keep: sorted by value
    yield "low-bit neighbours", 1.0 + rng.integers(0, 2**20, 5000) * np.finfo(float).eps
    yield "signs, zeros, infinities", np.array([0.0, -0.0, -np.inf, 5e-324, -5e-324, np.inf, -1.5])
    yield "one value", np.array([2.5])
    yield "power-of-two size", rng.normal(size=1024)


@pytest.mark.parametrize("name,x", list(_vectors()), ids=[v[0] for v in _vectors()])
def test_argsort_sorts_like_numpy(name, x):
    order = argsort(x)
    assert np.array_equal(np.sort(order), np.arange(x.size))  # a permutation
    assert np.array_equal(x[order], np.sort(x))


def test_rank_sums_match_scipy_ranks_and_a_pair_count():
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=300), 1)  # ties in both
    y = np.round(x + rng.normal(size=300), 1)
    cross, x_ties, _, y_ties, _, joint, discordant = rank_sums(
        x, y, np.argsort(x, kind="stable"), np.unique(y)
    )
    assert cross == pytest.approx(float(stats.rankdata(x) @ stats.rankdata(y)), rel=1e-15)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones((300, 300), bool), 1)
    assert x_ties == np.count_nonzero(upper & (dx == 0))
    assert y_ties == np.count_nonzero(upper & (dy == 0))
    assert joint == np.count_nonzero(upper & (dx == 0) & (dy == 0))
    assert discordant == np.count_nonzero(upper & (dx * dy < 0))


def test_moment_sums_match_numpy():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=1000), rng.normal(size=1000)
    sxy, sxx, syy, abs_err, sq_err = moment_sums(x, y)
    xc, yc = x - x.mean(), y - y.mean()
    assert (sxy, sxx, syy) == pytest.approx((xc @ yc, xc @ xc, yc @ yc), rel=1e-12)
    assert (abs_err, sq_err) == pytest.approx((np.abs(x - y).sum(), ((x - y) ** 2).sum()))
