"""Correlations: Pearson, Spearman, Kendall tau-b and ROC-AUC over the compiled kernels;
NaN (with a reason) when a correlation is undefined."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.stats.inputs import _pair
from speech_drame.stats.kernels import argsort, moment_sums, rank_sums


def _undefined_reason(x: np.ndarray, y: np.ndarray, what: tuple[str, str]) -> str | None:
    if x.size < 2:
        return f"{x.size} sample(s); a correlation needs at least 2"
    if x.min() == x.max():
        return f"{what[0]} are constant over the {x.size} samples used (correlation undefined)"
    if y.min() == y.max():
        return f"{what[1]} are constant over the {y.size} samples used (correlation undefined)"
    return None


def _pearson_1d(x: np.ndarray, y: np.ndarray) -> float:
    return _pearson_from_sums(*moment_sums(x, y)[:3])


def _pearson_from_sums(sxy: float, sxx: float, syy: float) -> float:
    denom = math.sqrt(sxx * syy)
    return math.nan if denom == 0.0 else max(-1.0, min(1.0, sxy / denom))


def _run_starts(s: np.ndarray) -> np.ndarray:
    """For sorted ``s``: True where a run of equal values starts."""
    new = np.empty(s.size, bool)
    new[:1] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    return new


@dataclass(frozen=True)
class _Levels:
    """A vector's sort order and tie groups."""

    order: np.ndarray  # argsort
    dense: np.ndarray  # group index of each sorted element
    counts: np.ndarray  # size of each group
    avg_rank: np.ndarray  # 1-based average rank of each group

    @property
    def k(self) -> int:
        return int(self.counts.size)

    @classmethod
    def of(cls, v: np.ndarray) -> _Levels:
        order = argsort(v)
        new = _run_starts(np.take(v, order))
        dense = np.cumsum(new.astype(np.intp)) - 1  # (a bool cumsum is 5x slower)
        starts = np.flatnonzero(new)
        counts = np.diff(starts, append=v.size)
        return cls(order, dense, counts, starts + (counts + 1) / 2)


def _rank_correlations(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(Spearman rho, Kendall tau-b) from one argsort of ``x`` and one sort of ``y``.

    Spearman in closed form: with average ranks, the mean rank is ``(n+1)/2`` and the sum of
    squared deviations ``(n^3 - sum t^3) / 12`` over tie groups of sizes ``t``. Kendall from
    the tied and discordant pair counts of :func:`~speech_drame.stats.kernels.rank_sums`.
    """
    n = x.size
    sorted_y = np.sort(y)
    cross, x_ties, x_cubes, y_ties, y_cubes, joint_ties, discordant = rank_sums(
        x, y, argsort(x), sorted_y[_run_starts(sorted_y)]
    )
    rho = (cross - n * (n + 1) ** 2 / 4) / math.sqrt((n**3 - x_cubes) * (n**3 - y_cubes) / 144)
    total = n * (n - 1) // 2
    tau = (total - x_ties - y_ties + joint_ties - 2 * discordant) / math.sqrt(
        (total - x_ties) * (total - y_ties)
    )
    return max(-1.0, min(1.0, rho)), max(-1.0, min(1.0, tau))


def pearson(x: Any, y: Any) -> float:
    """Pearson correlation; NaN when undefined (constant input or fewer than 2 samples).

    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.8
    """
    a, b = _pair(x, y)
    return math.nan if _undefined_reason(a, b, ("x", "y")) else _pearson_1d(a, b)


def spearman(x: Any, y: Any) -> float:
    """Spearman rank correlation (average ranks for ties); NaN when undefined.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 100])
    1.0
    """
    a, b = _pair(x, y)
    return math.nan if _undefined_reason(a, b, ("x", "y")) else _rank_correlations(a, b)[0]


def kendall_tau(x: Any, y: Any) -> float:
    """Kendall tau-b (tie-corrected), O(n log n); NaN when undefined.

    >>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.6667
    """
    a, b = _pair(x, y)
    return math.nan if _undefined_reason(a, b, ("x", "y")) else _rank_correlations(a, b)[1]


def roc_auc(labels: Any, scores: Any) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (Mann-Whitney U with
    average ranks); NaN when only one class is present.

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y, s = _pair(labels, scores, ("labels", "scores"))
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("labels: expected 0/1 (or booleans)")
    return _roc_auc(y.astype(bool), s)


def _roc_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    lv = _Levels.of(scores)
    ranks = np.empty(scores.size)
    ranks[lv.order] = lv.avg_rank[lv.dense]
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
