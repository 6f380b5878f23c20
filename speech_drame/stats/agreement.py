"""Inter-annotator agreement (Speech-DRAME, Appendix K) and the leave-one-annotator-out
human ceiling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from speech_drame.schema import SCORE_RANGE
from speech_drame.stats.correlation import _pearson_1d, _rank_correlations, _undefined_reason
from speech_drame.stats.ratings import _as_ratings


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement of one dimension (Speech-DRAME, Appendix K).

    ``overall`` is ``A = 1 - mean_std / R`` clamped to [0, 1] over the ``n_samples`` samples
    with at least two ratings (NaN when there are none); ``n_ignored`` samples had fewer and
    ``n_null`` ratings were null (left out, or counted as the label policy filled them in
    :func:`annotator_matrices`). The per-sample arrays are NaN for ignored samples.
    """

    overall: float
    mean_std: float
    n_samples: int
    n_ignored: int
    n_null: int
    score_range: float
    std: np.ndarray
    agreement: np.ndarray
    mean: np.ndarray
    range: np.ndarray
    count: np.ndarray

    def per_sample(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """The paper's per-sample details, keyed by id (default ``sample_{i}``)."""
        keys = list(ids) if ids is not None else [f"sample_{i}" for i in range(self.std.size)]
        if len(keys) != self.std.size:
            raise ValueError(f"{len(keys)} ids for {self.std.size} samples")
        return {
            keys[i]: {
                "mean": float(self.mean[i]),
                "std": float(self.std[i]),
                "range": float(self.range[i]),
                "agreement_score": float(self.agreement[i]),
                "annotator_count": int(self.count[i]),
            }
            for i in np.flatnonzero(self.count >= 2)
        }


def agreement(ratings: Any, score_range: float = SCORE_RANGE) -> Agreement:
    """Agreement of annotators as the paper defines it (Appendix K).

    Per sample the sample standard deviation (ddof=1) of its ratings ``s_i`` and
    ``a_i = clamp(1 - s_i / R)``; overall ``A = clamp(1 - mean(s_i) / R)`` over the samples
    with at least two ratings. ``ratings``: :class:`AnnotatorRatings`, a float matrix
    (samples x annotators, NaN = missing) or ragged lists (``None`` = null).

    >>> a = agreement([[4, 4, 4], [3, 5], [2, None]])
    >>> round(a.overall, 4), a.n_samples, a.n_ignored, a.n_null
    (0.8232, 2, 1, 1)
    """
    if not score_range > 0:
        raise ValueError(f"score_range must be positive, got {score_range}")
    r = _as_ratings(ratings, "ratings")
    s = r.scores
    count = np.count_nonzero(~np.isnan(s), axis=1)
    used = count >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.nansum(s, axis=1) / np.maximum(count, 1), np.nan)
        dev = np.where(np.isnan(s), 0.0, s - mean[:, None])
        std = np.where(used, np.sqrt((dev * dev).sum(axis=1) / np.maximum(count - 1, 1)), np.nan)
    spread = np.full(count.size, np.nan)
    spread[used] = np.nanmax(s[used], axis=1) - np.nanmin(s[used], axis=1)
    per = np.clip(1 - std / score_range, 0, 1)
    mean_std = float(std[used].mean()) if used.any() else math.nan
    overall = float(np.clip(1 - mean_std / score_range, 0, 1)) if used.any() else math.nan
    return Agreement(
        overall,
        mean_std,
        int(used.sum()),
        int((~used).sum()),
        r.n_null,
        float(score_range),
        std,
        per,
        np.where(used, mean, np.nan),
        spread,
        count,
    )


@dataclass(frozen=True)
class HumanCeiling:
    """Leave-one-annotator-out correlation of one dimension.

    ``per_position[j]`` correlates annotator position ``j`` with the mean of the other
    annotators of the same samples (over ``counts[j]`` samples); ``ceiling`` is their
    average weighted by those counts, NaN (with ``note``) when no position is defined.
    """

    ceiling: float
    per_position: np.ndarray
    counts: np.ndarray
    method: str
    note: str | None


def human_ceiling(ratings: Any, method: Literal["pearson", "spearman"] = "pearson") -> HumanCeiling:
    """How well one human follows the others: the number an automatic evaluator is compared with.

    >>> c = human_ceiling([[1, 1, 2], [2, 3, 3], [4, 4, 5], [5, 4, 5]])
    >>> round(c.ceiling, 3), c.counts.tolist()
    (0.955, [4, 4, 4])
    """
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    s = _as_ratings(ratings, "ratings").scores
    present = ~np.isnan(s)
    count = present.sum(axis=1)
    total = np.where(present, s, 0).sum(axis=1)
    per = np.full(s.shape[1], np.nan)
    counts = np.zeros(s.shape[1], int)
    for j in range(s.shape[1]):
        use = present[:, j] & (count >= 2)
        x = s[use, j]
        y = (total[use] - x) / (count[use] - 1)
        counts[j] = x.size
        if _undefined_reason(x, y, ("ratings", "ratings")) is None:
            per[j] = _pearson_1d(x, y) if method == "pearson" else _rank_correlations(x, y)[0]
    defined = ~np.isnan(per)
    if not defined.any():
        return HumanCeiling(
            math.nan,
            per,
            counts,
            method,
            "no annotator position has a defined correlation "
            "(needs samples with two or more ratings that vary)",
        )
    return HumanCeiling(
        float(np.average(per[defined], weights=counts[defined])), per, counts, method, None
    )
