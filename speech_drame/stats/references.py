"""The alignment table's inputs: predictions checked, references reduced to one value per
sample and dimension under the label policy, emotion gates, and the per-dimension columns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.schema import EMOTION_GATE_THRESHOLD, EMOTION_GATES
from speech_drame.stats.inputs import _array, _bounds, _is_list, _to_float
from speech_drame.stats.ratings import (
    AnnotatorRatings,
    _as_ratings,
    _with_policy,
    majority_vote,
    reference_scores,
)


@dataclass
class _References:
    values: np.ndarray  # (n, d) reference score or majority vote, NaN = none
    null_ratings: np.ndarray | None  # (d,) nulls skipped inside annotator lists
    ties: np.ndarray  # (d,) Content Pass samples without a majority


def _parse_predictions(predictions: Any, dims: tuple[str, ...]) -> np.ndarray:
    d = len(dims)
    try:
        arr = _array(predictions)
    except ValueError:
        arr = None
    if arr is not None and arr.ndim == 1 and d == 1 and arr.dtype != object:
        arr = arr[:, None]
    if arr is None or arr.ndim != 2 or arr.shape[1] != d:
        for i, row in enumerate(predictions):
            if not _is_list(row) or len(row) != d:
                raise ValueError(
                    f"predictions[{i}]: expected one score per dimension ({d}: {list(dims)}), "
                    f"got {row!r}"
                )
        raise ValueError(f"predictions: expected shape (samples, {d}), got {np.shape(arr)}")
    if arr.shape[0] == 0:
        raise ValueError("predictions: empty input")
    low, high, cp = _bounds(dims)
    return _to_float(
        arr,
        lambda i: f"predictions[{i[0]}] (dimension {dims[i[1]]!r})",
        missing_ok=False,
        nan_is_missing=False,
        bool_ok=cp,
        low=low,
        high=high,
    )


def _parse_references(references: Any, n: int, dims: tuple[str, ...], policy: str) -> _References:
    low, high, cp = _bounds(dims)
    d = len(dims)
    if isinstance(references, Mapping):
        missing = [dim for dim in dims if dim not in references]
        if missing:
            raise ValueError(f"references has no ratings for {', '.join(missing)}")
        return _from_ratings(
            [_as_ratings(references[dim], f"references[{dim!r}]") for dim in dims],
            n,
            dims,
            policy,
        )
    from_array = isinstance(references, np.ndarray)
    try:
        arr = _array(references)
    except ValueError:  # ragged annotator lists
        arr = None
    if arr is not None and arr.ndim >= 1 and arr.shape[0] != n:
        raise ValueError(f"predictions has {n} samples but references has {arr.shape[0]}")
    if arr is not None and arr.ndim == 1 and d == 1 and arr.dtype != object:
        arr = arr[:, None]
    if arr is not None and arr.ndim == 3 and arr.shape[1] == d:
        return _from_ratings(
            [
                AnnotatorRatings.from_matrix(
                    arr[:, j], f"references[:, {j}]", nan_is_missing=from_array
                )
                for j in range(d)
            ],
            n,
            dims,
            policy,
        )
    if arr is not None and arr.ndim == 2 and arr.shape[1] == d:
        values = _to_float(
            arr,
            lambda i: f"references[{i[0]}] (dimension {dims[i[1]]!r})",
            missing_ok=True,
            nan_is_missing=from_array,
            bool_ok=cp,
            low=low,
            high=high,
        )
        return _References(values, None, np.zeros(d, int))
    rows = list(references)
    if len(rows) != n:
        raise ValueError(f"predictions has {n} samples but references has {len(rows)}")
    for i, row in enumerate(rows):
        if not _is_list(row) or len(row) != d:
            raise ValueError(
                f"references[{i}]: expected one entry per dimension ({d}: {list(dims)}), got {row!r}"
            )
    ratings = []
    for j, dim in enumerate(dims):
        lists = [row[j] if _is_list(row[j]) else [row[j]] for row in rows]
        ratings.append(
            AnnotatorRatings.from_lists(
                lists,
                bool_ok=bool(cp[j]),
                low=float(low[j]),
                high=float(high[j]),
                where=lambda i, a, j=j, dim=dim: f"references[{i}][{j}][{a}] (dimension {dim!r})",
            )
        )
    return _from_ratings(ratings, n, dims, policy)


def _from_ratings(
    ratings: list[AnnotatorRatings], n: int, dims: tuple[str, ...], policy: str
) -> _References:
    low, high, cp = _bounds(dims)
    ratings = [_with_policy(r, dim, policy) for r, dim in zip(ratings, dims, strict=True)]
    refs = np.full((n, len(dims)), np.nan)
    ties = np.zeros(len(dims), int)
    for j, (dim, r) in enumerate(zip(dims, ratings, strict=True)):
        if r.scores.shape[0] != n:
            raise ValueError(
                f"predictions has {n} samples but the references of {dim!r} have {r.scores.shape[0]}"
            )
        present = ~np.isnan(r.scores)
        bad = present & ((r.scores < low[j]) | (r.scores > high[j]))
        if bad.any():
            i, a = np.argwhere(bad)[0]
            raise ValueError(
                f"references[{i}][{j}][{a}] (dimension {dim!r}): score {r.scores[i, a]:g} "
                f"outside the scale {low[j]:g}..{high[j]:g}"
            )
        if cp[j]:
            if not np.isin(r.scores[present], (0.0, 1.0)).all():
                raise ValueError(f"references of {dim!r}: votes must be 0/1 (or booleans)")
            refs[:, j] = majority_vote(r)
            ties[j] = int(np.count_nonzero(np.isnan(refs[:, j]) & present.any(axis=1)))
        else:
            refs[:, j] = reference_scores(r)
    return _References(refs, np.array([r.n_null for r in ratings]), ties)


def _gate_masks(refs: np.ndarray, dims: tuple[str, ...], emotion_gating: bool) -> np.ndarray | None:
    """Samples kept per dimension by the rubric's gates (None without gating)."""
    if not emotion_gating:
        return None
    keep = np.ones(refs.shape, bool)
    gated = [(g, gate) for g, gate in EMOTION_GATES if g in dims]
    if not gated:
        raise ValueError(
            "emotion_gating needs at least one gated dimension: "
            + ", ".join(g for g, _ in EMOTION_GATES)
        )
    for dim, gate in gated:
        if gate not in dims:
            raise ValueError(
                f"emotion_gating: {dim!r} is gated by {gate!r}, which is not a dimension"
            )
        with np.errstate(invalid="ignore"):
            keep[:, dims.index(dim)] = refs[:, dims.index(gate)] >= EMOTION_GATE_THRESHOLD
    return keep


@dataclass(frozen=True)
class _Column:
    """One scored dimension restricted to the samples it is measured on."""

    dim: str
    index: np.ndarray  # samples used
    x: np.ndarray  # predictions
    y: np.ndarray  # reference scores
    note: str | None
