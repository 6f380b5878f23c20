"""Statistics of categorical judgements: Cohen's kappa and McNemar's test."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from speech_drame.stats.inputs import _pair


def cohen_kappa(
    a: Sequence[Any], b: Sequence[Any], weights: Literal["linear", "quadratic"] | None = None
) -> float:
    """Cohen's kappa between two raters' labels (optionally weighted for ordinal labels).

    >>> round(cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]), 3)
    0.5
    """
    if len(a) != len(b):
        raise ValueError(f"rater a has {len(a)} labels but rater b has {len(b)}")
    if not len(a):
        raise ValueError("empty input")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    for name, labels in (("a", a), ("b", b)):
        for i, v in enumerate(labels):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise ValueError(f"rater {name}, item {i}: missing label {v!r}")
    levels = sorted(set(a) | set(b))
    pos = {v: i for i, v in enumerate(levels)}
    k = len(levels)
    observed = np.zeros((k, k))
    np.add.at(observed, ([pos[v] for v in a], [pos[v] for v in b]), 1)
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    w = {None: (grid > 0).astype(float), "linear": grid, "quadratic": grid**2}[weights]
    denom = float((w * expected).sum())
    return math.nan if denom == 0 else 1 - float((w * observed).sum()) / denom


def mcnemar(
    correct_a: Sequence[Any],
    correct_b: Sequence[Any],
    *,
    exact: bool = True,
    correction: bool = True,
) -> dict[str, Any]:
    """McNemar's test of two judges scored on the same items.

    ``b`` counts items only judge A got right, ``c`` items only B got right. ``exact``: the
    two-sided binomial test on the discordant pairs; otherwise the chi-square statistic with
    1 degree of freedom (with Edwards' continuity correction if ``correction``).

    >>> r = mcnemar([1, 1, 1, 1, 1, 0, 1, 1], [0, 0, 0, 1, 1, 0, 0, 1])
    >>> r["b"], r["c"], round(r["pvalue"], 4)
    (4, 0, 0.125)
    """
    x, y = _pair(correct_a, correct_b, ("correct_a", "correct_b"))
    for name, v in (("correct_a", x), ("correct_b", y)):
        if not np.isin(v, (0.0, 1.0)).all():
            raise ValueError(f"{name}: expected 0/1 (or booleans) per item")
    b = int(np.count_nonzero((x == 1) & (y == 0)))
    c = int(np.count_nonzero((x == 0) & (y == 1)))
    from scipy import stats

    if exact:
        p = 1.0 if b + c == 0 else float(min(1.0, 2 * stats.binom.cdf(min(b, c), b + c, 0.5)))
        return {"b": b, "c": c, "statistic": float(min(b, c)), "pvalue": p, "method": "exact"}
    if b + c == 0:
        return {"b": b, "c": c, "statistic": 0.0, "pvalue": 1.0, "method": "chi2"}
    stat = (max(abs(b - c) - (1 if correction else 0), 0)) ** 2 / (b + c)
    return {
        "b": b,
        "c": c,
        "statistic": float(stat),
        "pvalue": float(stats.chi2.sf(stat, 1)),
        "method": "chi2",
    }
