"""Statistics of human alignment: the numbers behind every Speech-DRAME protocol.

Everything here is a pure function over numpy arrays:

- :func:`alignment_table`: how well an evaluator's scores follow human ratings, per dimension
  (Pearson, the paper's headline, with Spearman, Kendall tau-b, MAE, RMSE and counts beside
  it), Content Pass accuracy / F1 / ROC-AUC, optional emotion gating and bootstrap intervals.
  ``evaluate_metric/drame_metric`` is a thin wrapper over it.
- :func:`grouped_alignment`: the same table overall and per group of clips (e.g. per language).
- :func:`annotator_matrices`: the dataset's ``annotations`` column as per-dimension annotator
  matrices (:class:`AnnotatorRatings`), the input of everything below.
- :func:`agreement`: inter-annotator agreement exactly as the paper's Appendix K defines it.
- :func:`human_ceiling`: leave-one-annotator-out correlation, the bar an evaluator is held to.
- :func:`system_ranking_agreement`, :func:`cohen_kappa`, :func:`mcnemar`,
  :func:`pairwise_preference`: the statistics of RoleBench, judge comparisons and
  AnimeScore-style preference models.

Missing ratings are ``None`` in Python lists and NaN in float arrays; a NaN inside a Python
list, a non-numeric value or a score outside the scale raises :class:`ValueError` naming it.
A correlation that is undefined (constant input, fewer than two samples) is NaN, with the
reason under ``notes``.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from speech_drame.correlation_kernels import argsort, moment_sums, rank_sums
from speech_drame.labels import (
    DEFAULT_LABEL_POLICY,
    FILL_SCORE,
    check_label_policy,
    describe_label_policy,
    is_rating,
)
from speech_drame.languages import UNKNOWN
from speech_drame.schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    EMOTION_GATE_THRESHOLD,
    EMOTION_GATES,
    REALISM_DIMENSIONS,
    SCORE_MAX,
    SCORE_MIN,
    SCORE_RANGE,
    SEMANTIC_MATCH,
)

_T = TypeVar("_T")

SCORED_DIMENSIONS: tuple[str, ...] = (*ARCHETYPE_DIMENSIONS, *REALISM_DIMENSIONS, SEMANTIC_MATCH)
KNOWN_DIMENSIONS: tuple[str, ...] = (CONTENT_PASS, *SCORED_DIMENSIONS)
PASS_THRESHOLD = 0.5  # a Content Pass probability >= this predicts "pass"

_PARALLEL_MIN_VALUES = 200_000  # below this many values threads cost more than they save
_BOOTSTRAP_CHUNK_BYTES = 1 << 24  # memory bound of one block of resample counts


# ----------------------------------------------------------------------------------------
# Input checking
# ----------------------------------------------------------------------------------------

_NUMBER, _NONE, _BOOL, _NAN, _OTHER = range(5)


def _classify(value: Any) -> int:
    if value is None:
        return _NONE
    if isinstance(value, bool | np.bool_):
        return _BOOL
    if isinstance(value, numbers.Real):
        return _NUMBER if math.isfinite(value) else _NAN
    return _OTHER


_CLASSIFY = np.frompyfunc(_classify, 1, 1)


def _plain_numbers_or_none(values: np.ndarray) -> bool:
    """Whether an object array holds only non-boolean real numbers and None (a fast check
    by type; anything else goes through :func:`_classify` for a precise message)."""
    kinds = set(map(type, values.ravel()))
    kinds.discard(type(None))
    return all(issubclass(t, numbers.Real) and not issubclass(t, bool | np.bool_) for t in kinds)


def _to_float(
    values: np.ndarray,
    where: Callable[[tuple[int, ...]], str],
    *,
    missing_ok: bool,
    nan_is_missing: bool,
    bool_ok: bool | np.ndarray = False,
    low: float | np.ndarray = SCORE_MIN,
    high: float | np.ndarray = SCORE_MAX,
) -> np.ndarray:
    """Check ``values`` and return them as floats (NaN = missing).

    ``where(index)`` names an entry for error messages. ``bool_ok`` and the bounds broadcast
    against the last axis (one setting per dimension).
    """
    shape = values.shape
    bool_ok = np.broadcast_to(np.asarray(bool_ok), shape) if shape else np.asarray(bool_ok)

    def fail(mask: np.ndarray, reason: Callable[[Any], str]) -> None:
        if mask.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), shape))
            value = values[index]
            raise ValueError(
                f"{where(index)}: {reason(value.item() if isinstance(value, np.generic) else value)}"
            )

    if values.dtype == object and _plain_numbers_or_none(values):
        missing = values == None  # noqa: E711 (elementwise)
        if not missing_ok:
            fail(missing, lambda v: "missing value (None)")
        out = np.full(shape, np.nan)
        out[~missing] = values[~missing].astype(float)
        fail(
            ~missing & ~np.isfinite(out),
            lambda v: f"{v!r} is not a score (use None for a missing rating)",
        )
    elif values.dtype == object:
        codes = _CLASSIFY(values).astype(np.int8) if values.size else np.zeros(shape, np.int8)
        fail(codes == _OTHER, lambda v: f"expected a number, got {v!r}")
        fail(codes == _NAN, lambda v: f"{v!r} is not a score (use None for a missing rating)")
        fail((codes == _BOOL) & ~bool_ok, lambda v: f"expected a number, got the boolean {v!r}")
        if not missing_ok:
            fail(codes == _NONE, lambda v: "missing value (None)")
        out = np.full(shape, np.nan)
        present = codes != _NONE
        out[present] = values[present].astype(float)
    else:
        kind = values.dtype.kind
        if kind not in "biuf":
            raise ValueError(
                f"{where((0,) * len(shape))}: expected numbers, got {values.dtype} values"
            )
        if kind == "b":
            fail(~bool_ok, lambda v: f"expected a number, got the boolean {v!r}")
        out = values.astype(float, copy=False)
        lo, hi = _scalar_if_uniform(low), _scalar_if_uniform(high)
        inside = (out >= lo) & (out <= hi)
        if inside.all() or (missing_ok and nan_is_missing and (inside | np.isnan(out)).all()):
            return out  # the common case, in few passes
        fail(np.isinf(out), lambda v: f"{v!r} is not a finite score")
        if not (missing_ok and nan_is_missing):
            fail(np.isnan(out), lambda v: f"{v!r} is not a score")
    bad = ~np.isnan(out) & ((out < low) | (out > high))
    if bad.any():
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), shape))
        lo, hi = (np.broadcast_to(v, shape)[index] for v in (low, high))
        raise ValueError(f"{where(index)}: score {out[index]:g} outside the scale {lo:g}..{hi:g}")
    return out


def _scalar_if_uniform(bound: float | np.ndarray) -> float | np.ndarray:
    """One bound for every dimension as a scalar (comparisons broadcast 5x faster)."""
    flat = np.ravel(bound)
    return float(flat[0]) if (flat == flat[0]).all() else bound


def _array(values: Any) -> np.ndarray:
    """``values`` as an array; non-numeric content as objects so that errors can name it.

    Raises ValueError (from numpy) for ragged nesting.
    """
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "biufO" else np.asarray(values, dtype=object)


def _check_dimensions(dimensions: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(dimensions, str):
        raise ValueError(f"dimensions must be a list of names, got the string {dimensions!r}")
    dims = tuple(dimensions)
    if not dims:
        raise ValueError("dimensions is empty: name at least one dimension")
    for d in dims:
        if d not in KNOWN_DIMENSIONS:
            raise ValueError(f"unknown dimension {d!r}; known: {', '.join(KNOWN_DIMENSIONS)}")
    repeated = sorted({d for d in dims if dims.count(d) > 1})
    if repeated:
        raise ValueError(f"dimensions named more than once: {', '.join(repeated)}")
    return dims


def _bounds(dims: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cp = np.array([d == CONTENT_PASS for d in dims])
    return np.where(cp, 0.0, SCORE_MIN), np.where(cp, 1.0, SCORE_MAX), cp


def booleans_as_numbers(rows: Any) -> tuple[Any, frozenset[int]]:
    """Per-sample rows with every boolean as ``1.0``/``0.0``, and the positions that held one.

    For stores that hold numbers only (the ``evaluate`` module's Arrow columns). A row has one
    entry per dimension: a value or a list of annotator values. Input that is not a list of
    rows is returned unchanged. :func:`check_boolean_positions` then makes sure, once the
    dimensions are known, that only Content Pass held booleans (votes or decisions), so the
    conversion accepts nothing that :func:`alignment_table` would refuse.

    >>> booleans_as_numbers([[True, 3], [[False, True], None]])
    ([[1.0, 3], [[0.0, 1.0], None]], frozenset({0}))
    """
    if not _is_list(rows) or (isinstance(rows, np.ndarray) and rows.dtype.kind in "iuf"):
        return rows, frozenset()
    positions: set[int] = set()

    def number(value: Any, j: int) -> Any:
        if isinstance(value, bool | np.bool_):
            positions.add(j)
            return float(value)
        return value

    out = []
    for row in rows:
        if not _is_list(row):
            out.append(row)
            continue
        out.append(
            [
                [number(v, j) for v in entry] if _is_list(entry) else number(entry, j)
                for j, entry in enumerate(row)
            ]
        )
    return out, frozenset(positions)


def check_boolean_positions(
    positions: frozenset[int], dimensions: Sequence[str], name: str
) -> None:
    """Raise if a position :func:`booleans_as_numbers` found booleans in is not Content Pass.

    >>> check_boolean_positions(frozenset({1}), ["content_pass", "audio_quality"], "predictions")
    Traceback (most recent call last):
    ...
    ValueError: predictions: booleans in dimension 'audio_quality'; only content_pass takes True/False
    """
    dims = _check_dimensions(dimensions)
    wrong = [dims[j] for j in sorted(positions) if j < len(dims) and dims[j] != CONTENT_PASS]
    if wrong:
        raise ValueError(
            f"{name}: booleans in dimension {wrong[0]!r}; only {CONTENT_PASS} takes True/False"
        )


# ----------------------------------------------------------------------------------------
# Annotations -> annotator matrices
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorRatings:
    """The ratings of one dimension, one row per sample and one column per annotator position.

    ``scores[i, j]`` is annotator ``j``'s rating of sample ``i``, NaN when it is null or the
    sample has fewer annotators (padding); ``n_annotators[i]`` is the length of the sample's
    annotator list, so that nulls and padding stay distinguishable. ``n_filled`` nulls were
    replaced by the label policy (:mod:`speech_drame.labels`) and hold its score.
    """

    scores: np.ndarray
    n_annotators: np.ndarray
    n_filled: int = 0

    @property
    def n_null(self) -> int:
        """Null ratings inside the annotator lists (padding excluded), filled or not."""
        present = np.count_nonzero(~np.isnan(self.scores))
        return int(self.n_annotators.sum() - present) + self.n_filled

    @classmethod
    def from_lists(
        cls,
        lists: Sequence[Sequence[Any]],
        name: str = "ratings",
        *,
        bool_ok: bool = False,
        low: float = SCORE_MIN,
        high: float = SCORE_MAX,
        where: Callable[[int, int], str] | None = None,
    ) -> AnnotatorRatings:
        """Pad ragged per-sample annotator lists (``None`` = null rating) with NaN.

        ``where(sample, annotator)`` names an entry in error messages.
        """
        lengths = np.array([_list_length(v, f"{name}[{i}]") for i, v in enumerate(lists)], int)
        if lengths.size == 0:
            raise ValueError(f"{name}: no samples")
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        flat = np.empty(int(offsets[-1]), dtype=object)
        flat[:] = [s for v in lists for s in v]
        rows = np.repeat(np.arange(lengths.size), lengths)
        cols = np.arange(flat.size) - offsets[rows]

        def locate(index: tuple[int, ...]) -> str:
            i, a = int(rows[index[0]]), int(cols[index[0]])
            return where(i, a) if where else f"{name}[{i}][{a}]"

        values = _to_float(
            flat, locate, missing_ok=True, nan_is_missing=False, bool_ok=bool_ok, low=low, high=high
        )
        scores = np.full((lengths.size, max(1, int(lengths.max()))), np.nan)
        scores[rows, cols] = values
        return cls(scores, lengths)

    @classmethod
    def from_matrix(
        cls, matrix: Any, name: str = "ratings", *, nan_is_missing: bool = True
    ) -> AnnotatorRatings:
        """A regular matrix (samples x annotators; None, or NaN if ``nan_is_missing``, marks a
        missing rating), every missing entry counted as a null rating."""
        scores = _array(matrix)
        if scores.ndim != 2:
            raise ValueError(
                f"{name}: expected a samples x annotators matrix, got shape {scores.shape}"
            )
        if scores.shape[0] == 0:
            raise ValueError(f"{name}: no samples")
        scores = _to_float(
            scores,
            lambda i: f"{name}[{i[0]}][{i[1]}]",
            missing_ok=True,
            nan_is_missing=nan_is_missing,
            bool_ok=True,
            low=-np.inf,
            high=np.inf,
        )
        return cls(scores, np.full(scores.shape[0], scores.shape[1]))


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


def _list_length(value: Any, where: str) -> int:
    if not _is_list(value):
        raise ValueError(f"{where}: expected a list of annotator ratings, got {value!r}")
    return len(value)


def _as_ratings(ratings: Any, name: str) -> AnnotatorRatings:
    if isinstance(ratings, AnnotatorRatings):
        return ratings
    if isinstance(ratings, np.ndarray):
        return AnnotatorRatings.from_matrix(ratings, name)
    return AnnotatorRatings.from_lists(ratings, name, low=-np.inf, high=np.inf)


def annotator_matrices(
    annotations: Sequence[Mapping[str, Sequence[Any]]],
    dimensions: Sequence[str],
    *,
    label_policy: str = DEFAULT_LABEL_POLICY,
) -> dict[str, AnnotatorRatings]:
    """Turn dataset rows' ``annotations`` into one :class:`AnnotatorRatings` per dimension.

    Args:
        annotations: the ``annotations`` column (one mapping of per-annotator lists per row).
        dimensions: the dimensions to extract; ``content_pass`` votes become 1.0 / 0.0.
        label_policy: what a null rating of a 1..5 dimension counts as
            (:mod:`speech_drame.labels`): ``paper`` (default) counts it as 1, ``skip`` leaves
            it out. ``n_null`` counts the nulls either way.

    Example:
        >>> rows = [{"audio_quality": [4, 5, None]}, {"audio_quality": [3, 3]}]
        >>> m = annotator_matrices(rows, ["audio_quality"])["audio_quality"]
        >>> m.scores.tolist()  # the paper's policy: the null counts as 1, the padding stays NaN
        [[4.0, 5.0, 1.0], [3.0, 3.0, nan]]
        >>> annotator_matrices(rows, ["audio_quality"], label_policy="skip")["audio_quality"].scores.tolist()
        [[4.0, 5.0, nan], [3.0, 3.0, nan]]
        >>> m.n_annotators.tolist(), m.n_null
        ([3, 2], 1)
    """
    dims = _check_dimensions(dimensions)
    rows = list(annotations)
    if not rows:
        raise ValueError("annotations: no samples")
    check_label_policy(label_policy)
    out: dict[str, AnnotatorRatings] = {}
    for dim in dims:
        lists = []
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping) or dim not in row:
                fields = ", ".join(row) if isinstance(row, Mapping) else type(row).__name__
                raise ValueError(f"annotations[{i}] has no field {dim!r} (fields: {fields})")
            lists.append(row[dim])
        is_cp = dim == CONTENT_PASS
        ratings = AnnotatorRatings.from_lists(
            lists,
            f"annotations.{dim}",
            bool_ok=is_cp,
            low=0 if is_cp else SCORE_MIN,
            high=1 if is_cp else SCORE_MAX,
        )
        out[dim] = _with_policy(ratings, dim, label_policy)
    return out


def _with_policy(ratings: AnnotatorRatings, dim: str, policy: str) -> AnnotatorRatings:
    """``ratings`` with the label policy applied to the nulls inside the annotator lists
    (padding stays NaN); ``n_null`` keeps counting them."""
    if policy == "skip" and ratings.n_filled:
        raise ValueError(
            f"references of {dim!r}: {ratings.n_filled} null rating(s) were already counted as "
            f"{FILL_SCORE} (label_policy='paper'); build them with label_policy='skip'"
        )
    if policy == "skip" or not is_rating(dim):
        return ratings
    inside = np.arange(ratings.scores.shape[1])[None, :] < ratings.n_annotators[:, None]
    null = inside & np.isnan(ratings.scores)
    filled = np.where(null, float(FILL_SCORE), ratings.scores)
    return AnnotatorRatings(filled, ratings.n_annotators, ratings.n_filled + int(null.sum()))


def reference_scores(ratings: AnnotatorRatings | np.ndarray) -> np.ndarray:
    """Per-sample mean rating ignoring missing ones (NaN where a sample has none).

    >>> reference_scores(np.array([[4, 5, np.nan], [np.nan, np.nan, np.nan]])).tolist()
    [4.5, nan]
    """
    scores = ratings.scores if isinstance(ratings, AnnotatorRatings) else np.asarray(ratings, float)
    count = np.count_nonzero(~np.isnan(scores), axis=-1)
    total = np.nansum(scores, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def majority_vote(votes: AnnotatorRatings | np.ndarray) -> np.ndarray:
    """Per-sample majority of 0/1 votes: 1.0, 0.0, or NaN on a tie or without votes.

    Ties are left undecided, as the official evaluation skips them.

    >>> majority_vote(np.array([[1, 1, 0], [1, 0, np.nan], [0, 0, 0]])).tolist()
    [1.0, nan, 0.0]
    """
    scores = votes.scores if isinstance(votes, AnnotatorRatings) else np.asarray(votes, float)
    yes = np.count_nonzero(scores == 1, axis=-1)
    no = np.count_nonzero(scores == 0, axis=-1)
    return np.where(yes > no, 1.0, np.where(no > yes, 0.0, np.nan))


# ----------------------------------------------------------------------------------------
# Correlations
# ----------------------------------------------------------------------------------------


def _vector(values: Any, name: str) -> np.ndarray:
    arr = _array(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty input")
    return _to_float(
        arr,
        lambda i: f"{name}[{i[0]}]",
        missing_ok=False,
        nan_is_missing=False,
        bool_ok=True,
        low=-np.inf,
        high=np.inf,
    )


def _pair(x: Any, y: Any, names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    a, b = _vector(x, names[0]), _vector(y, names[1])
    if a.size != b.size:
        raise ValueError(f"{names[0]} has {a.size} values but {names[1]} has {b.size}")
    return a, b


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


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """1-D dot product outside BLAS: a threaded BLAS call stalls on a busy machine."""
    return float(np.einsum("i,i->", a, b))


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
    the tied and discordant pair counts of :func:`~speech_drame.correlation_kernels.rank_sums`.
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


# ----------------------------------------------------------------------------------------
# The alignment table
# ----------------------------------------------------------------------------------------


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


def alignment_table(
    predictions: Any,
    references: Any,
    dimensions: Sequence[str],
    *,
    emotion_gating: bool = False,
    bootstrap: int = 0,
    seed: int | None = None,
    confidence: float = 0.95,
    workers: int | None = None,
    label_policy: str = DEFAULT_LABEL_POLICY,
) -> dict[str, Any]:
    """Human alignment of an evaluator's scores, per dimension.

    Args:
        predictions: ``(samples, dimensions)`` predicted scores on the 1..5 scale; for
            ``content_pass`` a 0/1 label or a pass probability.
        references: one of
            - ``(samples, dimensions)`` reference scores (``None``/NaN = no reference),
            - per sample, per dimension, the list of annotator ratings (ragged allowed;
              ``None`` = null rating, treated by ``label_policy`` and counted); scores are
              averaged, Content Pass votes decided by majority (ties left out and counted),
            - a float array ``(samples, dimensions, annotators)`` (NaN = null rating, treated
              by ``label_policy``: it has no padding, so give ragged lists as lists),
            - a mapping dimension -> :class:`AnnotatorRatings` (see :func:`annotator_matrices`).
        dimensions: the name of each position (``schema`` names, ``content_pass`` included).
        emotion_gating: score ``emotion_intensity_control`` only where the reference
            ``emotion_accuracy`` >= 3 and ``dynamic_range`` only where the reference intensity
            >= 3, as the rubric gates them.
        bootstrap: number of resamples (of samples, all dimensions together) for percentile
            ``confidence`` intervals; 0 for none.
        seed: seed of the resampling.
        confidence: level of the bootstrap intervals.
        workers: threads for the per-dimension statistics; ``None`` = one per CPU when the
            input holds at least 200,000 values, else 1.
        label_policy: what a null annotator rating of a 1..5 dimension counts as
            (:mod:`speech_drame.labels`): ``paper`` (default) counts it as 1, ``skip`` leaves
            it out. Content Pass votes and single reference scores are never changed.

    Returns:
        A flat dict. For each scored dimension ``{dim}_pearson`` (the paper's number),
        ``{dim}_spearman``, ``{dim}_kendall`` (tau-b), ``{dim}_mae``, ``{dim}_rmse``,
        ``{dim}_count`` (samples used), ``{dim}_missing`` (samples without reference) and, when
        they apply, ``{dim}_null_ratings`` and ``{dim}_gated``; ``avg_pearson`` over the scored
        dimensions. With ``content_pass``: ``content_pass_accuracy`` (the paper's number),
        ``content_pass_f1`` (class "pass"), ``content_pass_roc_auc`` (when the predictions are
        probabilities, i.e. not all 0/1), ``content_pass_count``, ``content_pass_missing``,
        ``content_pass_ties``. With ``bootstrap``: ``{statistic}_ci`` = [low, high] for every
        statistic except Kendall tau, plus ``bootstrap`` and ``confidence``. ``label_policy``
        and ``label_policy_rule`` state the policy. ``notes`` maps a statistic to the reason
        it is NaN.

    Example:
        >>> t = alignment_table([[4.1, 0.9], [2.0, 0.2], [3.2, 0.7]],
        ...                     [[[4, 5], [1, 1, 1]], [[2, None], [0, 0, 1]], [[3, 3], [1, 0, 1]]],
        ...                     ["audio_quality", "content_pass"])
        >>> round(t["audio_quality_pearson"], 3), t["audio_quality_null_ratings"]
        (0.997, 1)
        >>> t = alignment_table([[4.1, 0.9], [2.0, 0.2], [3.2, 0.7]],
        ...                     [[[4, 5], [1, 1, 1]], [[2, None], [0, 0, 1]], [[3, 3], [1, 0, 1]]],
        ...                     ["audio_quality", "content_pass"], label_policy="skip")
        >>> round(t["audio_quality_pearson"], 3)
        0.981
        >>> t["content_pass_accuracy"], t["content_pass_roc_auc"]
        (1.0, 1.0)
    """
    dims = _check_dimensions(dimensions)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence} must be between 0 and 1")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, numbers.Integral) or bootstrap < 0:
        raise ValueError(f"bootstrap={bootstrap!r} must be a number of resamples (>= 0)")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1
    ):
        raise ValueError(f"workers={workers!r} must be a number of threads (>= 1) or None")
    pred = _parse_predictions(predictions, dims)
    refs = _parse_references(references, pred.shape[0], dims, check_label_policy(label_policy))
    keep = _gate_masks(refs.values, dims, emotion_gating)

    out: dict[str, Any] = {}
    notes: dict[str, str] = {}
    has_ref = ~np.isnan(refs.values)
    use = has_ref if keep is None else has_ref & keep
    scored = [j for j, dim in enumerate(dims) if dim != CONTENT_PASS]

    def measured(j: int) -> tuple[_Column, dict[str, Any], dict[str, str]]:
        idx = np.flatnonzero(use[:, j])
        x, y = np.take(pred[:, j], idx), np.take(refs.values[:, j], idx)
        note = (
            "no sample has a reference rating"
            if idx.size == 0
            else _undefined_reason(x, y, ("predictions", "references"))
        )
        col = _Column(dims[j], idx, x, y, note)
        return col, *_column_statistics(col)

    columns: list[_Column] = []
    for j, (col, stats, col_notes) in zip(
        scored, _in_threads(measured, scored, pred.size, workers), strict=True
    ):
        columns.append(col)
        out.update(stats)
        out[f"{col.dim}_missing"] = int(np.count_nonzero(~has_ref[:, j]))
        if refs.null_ratings is not None:
            out[f"{col.dim}_null_ratings"] = int(refs.null_ratings[j])
        if keep is not None and any(col.dim == g for g, _ in EMOTION_GATES):
            out[f"{col.dim}_gated"] = int(np.count_nonzero(has_ref[:, j] & ~keep[:, j]))
        notes.update(col_notes)
    if columns:
        values = [out[f"{c.dim}_pearson"] for c in columns]
        out["avg_pearson"] = float(np.mean(values))
        undefined = [c.dim for c in columns if math.isnan(out[f"{c.dim}_pearson"])]
        if undefined:
            notes["avg_pearson"] = f"undefined: the Pearson of {', '.join(undefined)} is undefined"
    cp_column = None
    if CONTENT_PASS in dims:
        j = dims.index(CONTENT_PASS)
        idx = np.flatnonzero(has_ref[:, j])
        cp_column = _Column(CONTENT_PASS, idx, pred[idx, j], refs.values[idx, j], None)
        out.update(_content_pass_statistics(cp_column, notes))
        out["content_pass_missing"] = int(np.count_nonzero(~has_ref[:, j]) - refs.ties[j])
        out["content_pass_ties"] = int(refs.ties[j])
    if bootstrap:
        out.update(
            _bootstrap(columns, cp_column, pred.shape[0], bootstrap, seed, confidence, notes)
        )
        out["bootstrap"] = int(bootstrap)
        out["confidence"] = float(confidence)
    out.update(describe_label_policy(label_policy))
    out["notes"] = notes
    return out


def _in_threads(
    fn: Callable[[int], _T], items: list[int], values: int, workers: int | None
) -> list[_T]:
    """``fn`` of each item on ``workers`` threads (the compiled kernels and numpy's sorts
    release the GIL); ``None``: one per CPU from ``_PARALLEL_MIN_VALUES`` values on."""
    if workers is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        workers = (cpus or 1) if values >= _PARALLEL_MIN_VALUES else 1
    workers = min(workers, len(items))
    if workers < 2:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


def _column_statistics(col: _Column) -> tuple[dict[str, Any], dict[str, str]]:
    """The statistics of one column and, by statistic, the reason any of them is NaN."""
    dim = col.dim
    notes: dict[str, str] = {}
    out: dict[str, Any] = {f"{dim}_count": int(col.index.size)}
    if col.index.size:
        sxy, sxx, syy, abs_err, sq_err = moment_sums(col.x, col.y)
        out[f"{dim}_mae"] = abs_err / col.index.size
        out[f"{dim}_rmse"] = math.sqrt(sq_err / col.index.size)
    else:
        out[f"{dim}_mae"] = out[f"{dim}_rmse"] = math.nan
        notes[f"{dim}_mae"] = notes[f"{dim}_rmse"] = col.note or ""
    if col.note:
        for stat in ("pearson", "spearman", "kendall"):
            out[f"{dim}_{stat}"] = math.nan
            notes[f"{dim}_{stat}"] = col.note
    else:
        out[f"{dim}_pearson"] = _pearson_from_sums(sxy, sxx, syy)
        out[f"{dim}_spearman"], out[f"{dim}_kendall"] = _rank_correlations(col.x, col.y)
    return out, notes


def _content_pass_statistics(col: _Column, notes: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"content_pass_count": int(col.index.size)}
    if not col.index.size:
        for stat in ("accuracy", "f1"):
            out[f"content_pass_{stat}"] = math.nan
            notes[f"content_pass_{stat}"] = "no sample has a Content Pass reference"
        return out
    label = col.x >= PASS_THRESHOLD
    truth = col.y == 1
    out["content_pass_accuracy"] = float(np.mean(label == truth))
    tp = int(np.count_nonzero(label & truth))
    wrong = int(np.count_nonzero(label != truth))
    if 2 * tp + wrong == 0:
        out["content_pass_f1"] = math.nan
        notes["content_pass_f1"] = "no sample passes in the references or the predictions"
    else:
        out["content_pass_f1"] = 2 * tp / (2 * tp + wrong)
    if not np.isin(col.x, (0.0, 1.0)).all():
        out["content_pass_roc_auc"] = _roc_auc(truth, col.x)
        if math.isnan(out["content_pass_roc_auc"]):
            notes["content_pass_roc_auc"] = "the references hold a single class"
    return out


MIN_GROUP_CLIPS = 3  # a group with fewer clips gets no statistics of its own


def _take(values: Any, index: np.ndarray) -> Any:
    """The samples ``index`` of a per-sample input (an array or a sequence of rows)."""
    if isinstance(values, np.ndarray):
        return values[index]
    rows = list(values)
    return [rows[i] for i in index]


def _take_references(references: Any, index: np.ndarray) -> Any:
    """The samples ``index`` of ``references`` in any form :func:`alignment_table` accepts."""
    if not isinstance(references, Mapping):
        return _take(references, index)
    out = {}
    for dim, value in references.items():
        ratings = _as_ratings(value, f"references[{dim!r}]")
        if ratings.n_filled:
            raise ValueError(
                f"references[{dim!r}]: {ratings.n_filled} null rating(s) were already filled "
                "by a label policy and cannot be counted per group; build them with "
                "label_policy='skip' and pass label_policy to grouped_alignment"
            )
        out[dim] = AnnotatorRatings(ratings.scores[index], ratings.n_annotators[index])
    return out


def _group_labels(groups: Any, n: int) -> list[str]:
    labels = list(groups)
    if len(labels) != n:
        raise ValueError(f"predictions has {n} samples but groups has {len(labels)}")
    for i, label in enumerate(labels):
        if label is not None and (not isinstance(label, str) or not label):
            raise ValueError(
                f"groups[{i}]: expected a label (a non-empty str) or None, got {label!r}"
            )
    return [UNKNOWN if label is None else label for label in labels]


def grouped_alignment(
    predictions: Any,
    references: Any,
    dimensions: Sequence[str],
    groups: Sequence[str | None],
    *,
    min_clips: int = MIN_GROUP_CLIPS,
    **options: Any,
) -> dict[str, Any]:
    """:func:`alignment_table` over all clips and over each group of clips (e.g. per language).

    Args:
        predictions, references, dimensions: as for :func:`alignment_table`.
        groups: one label per clip (e.g. its language); ``None`` is grouped as ``"unknown"``.
        min_clips: a group with fewer clips reports its count and no statistics.
        **options: the keyword options of :func:`alignment_table` (``label_policy``,
            ``emotion_gating``, ``bootstrap``, ``seed``, ``confidence``, ``workers``), applied
            to the overall table and to every group.

    Returns:
        ``overall``: the table of all clips; ``by_group``: label -> ``{"count": clips,
        "table": its alignment_table or None, "reason": why the table is None or None}``,
        labels sorted.

    Example:
        >>> preds = [[4.0], [2.0], [3.0], [5.0], [1.0]]
        >>> refs = [[4], [2], [3], [4], [2]]
        >>> t = grouped_alignment(preds, refs, ["audio_quality"], ["zh", "zh", "zh", "en", None])
        >>> t["by_group"]["zh"]["count"], t["by_group"]["zh"]["table"]["audio_quality_pearson"]
        (3, 1.0)
        >>> t["by_group"]["en"]
        {'count': 1, 'table': None, 'reason': '1 clip(s); per-group statistics need at least 3'}
        >>> list(t["by_group"])
        ['en', 'unknown', 'zh']
    """
    if isinstance(min_clips, bool) or not isinstance(min_clips, numbers.Integral) or min_clips < 1:
        raise ValueError(f"min_clips={min_clips!r} must be a number of clips (>= 1)")
    overall = alignment_table(predictions, references, dimensions, **options)
    labels = np.array(_group_labels(groups, len(predictions)), dtype=object)
    by_group: dict[str, dict[str, Any]] = {}
    for label in sorted(set(labels)):
        index = np.flatnonzero(labels == label)
        if index.size < min_clips:
            reason = f"{index.size} clip(s); per-group statistics need at least {min_clips}"
            by_group[label] = {"count": int(index.size), "table": None, "reason": reason}
            continue
        table = alignment_table(
            _take(predictions, index),
            _take_references(references, index),
            dimensions,
            **options,
        )
        by_group[label] = {"count": int(index.size), "table": table, "reason": None}
    return {"overall": overall, "by_group": by_group}


# ----------------------------------------------------------------------------------------
# Bootstrap
# ----------------------------------------------------------------------------------------


def resample_counts(
    n: int, n_resamples: int, seed: int | None = None, *, chunk_bytes: int = _BOOTSTRAP_CHUNK_BYTES
) -> Iterator[np.ndarray]:
    """Yield bootstrap resamples of ``n`` samples as blocks of draw counts.

    Row ``b`` of a block says how often each sample is drawn in resample ``b`` (``n`` draws
    with replacement); blocks hold at most ``chunk_bytes`` of counts. The sequence depends on
    ``seed`` only, not on the block size. :func:`alignment_table` uses exactly these counts.
    """
    if n < 1 or n_resamples < 1:
        raise ValueError(f"need n >= 1 and n_resamples >= 1, got {n} and {n_resamples}")
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, chunk_bytes // (8 * n)))
    done = 0
    while done < n_resamples:
        b = min(rows, n_resamples - done)
        draws = rng.integers(0, n, size=(b, n))
        counts = np.empty((b, n), np.int64)
        for r in range(b):
            counts[r] = np.bincount(draws[r], minlength=n)
        yield counts
        done += b


def percentile_interval(values: np.ndarray, confidence: float = 0.95) -> list[float]:
    """The percentile bootstrap interval of resampled statistics, the undefined (NaN) ones left
    out; ``[nan, nan]`` when none is defined.

    >>> percentile_interval(np.array([1.0, 2.0, 3.0, np.nan]), 0.5)
    [1.5, 2.5]
    """
    finite = values[np.isfinite(values)]
    if not finite.size:
        return [math.nan, math.nan]
    tail = 100 * (1 - confidence) / 2
    return [float(v) for v in np.percentile(finite, [tail, 100 - tail])]


@dataclass
class _RankPlan:
    """What a resample needs to recompute a rank statistic from draw counts."""

    sel: np.ndarray  # sample index of each element, in the finer variable's sorted order
    tied: np.ndarray  # positions of the elements that share their value with others
    tie_bounds: tuple[np.ndarray, np.ndarray]  # their group's first and one-past-last position
    z: np.ndarray  # level of the coarser variable (Spearman) or the 0/1 label (AUC)
    k: int  # number of levels of the coarser variable
    offset: int = 0  # first column of its levels in the block's level totals


def _plan(index: np.ndarray, levels: _Levels, z: np.ndarray, k: int) -> _RankPlan:
    starts = np.concatenate(([0], np.cumsum(levels.counts)[:-1]))
    tied = np.flatnonzero(levels.counts[levels.dense] > 1)
    group = levels.dense[tied]
    bounds = (starts[group], starts[group] + levels.counts[group])
    return _RankPlan(index[levels.order], tied, bounds, z, k)


def _rank_plan(index: np.ndarray, x: np.ndarray, y: np.ndarray) -> _RankPlan:
    lx, ly = _Levels.of(x), _Levels.of(y)
    if lx.k < ly.k:
        lx, ly = ly, lx
    level_y = np.empty(index.size, np.intp)
    level_y[ly.order] = ly.dense
    return _plan(index, lx, level_y[lx.order], ly.k)


def _auc_plan(index: np.ndarray, scores: np.ndarray, positive: np.ndarray) -> _RankPlan:
    lv = _Levels.of(scores)
    return _plan(index, lv, positive[lv.order].astype(np.int64), 2)


def _twice_ranks(j: np.ndarray, plan: _RankPlan) -> tuple[np.ndarray, np.ndarray]:
    """Twice the average rank of each element of a resample that draws element ``i`` ``j[i]``
    times (elements in sorted order), and the size of the tie group of each tied element."""
    c = np.zeros(j.size + 1, np.int64)
    np.cumsum(j, out=c[1:])
    a2 = c[1:] + c[:-1] + 1  # the draws of one element tie with each other
    before, through = np.take(c, plan.tie_bounds[0]), np.take(c, plan.tie_bounds[1])
    a2[plan.tied] = before + through + 1
    return a2, through - before


def _resampled_spearman(
    w: np.ndarray, plan: _RankPlan, n: float, cubes: float, level_totals: np.ndarray
) -> float:
    """Spearman rho of one resample, exactly as on the repeated data.

    ``w``: draw counts per sample; ``n``: draws of the samples used; ``cubes``: sum of ``w**3``
    over them; ``level_totals``: draws per level of the coarser variable. Each draw gets its
    tie group's average rank; the centred cross product is ``(sum a*b - n (n+1)^2) / 4`` for
    twice-ranks ``a``, ``b``, and one side's squared deviations ``(n^3 - sum G^3) / 12`` over
    its tie groups ``G`` (the draws of one sample tie too).
    """
    j = np.take(w, plan.sel)  # (np.take gathers faster than fancy indexing)
    a2, group = _twice_ranks(j, plan)
    gb = level_totals
    b2 = 2 * np.cumsum(gb) - gb + 1
    t = _dot((j * a2).astype(float), np.take(b2, plan.z))
    if plan.tied.size:
        jt = np.take(j, plan.tied).astype(float)
        # a tied element's term j*G^2 sums to G^3 over its group
        cubes += _dot(jt, group * group.astype(float)) - _dot(jt * jt, jt)
    var = (n**3 - cubes) * (n**3 - _dot(gb * gb, gb))
    if var <= 0:
        return math.nan
    return max(-1.0, min(1.0, 3 * (t - n * (n + 1) ** 2) / math.sqrt(var)))


def _resampled_auc(w: np.ndarray, plan: _RankPlan, n: float, n_pos: float) -> float:
    """ROC-AUC of one resample: the Mann-Whitney U of the positives' average ranks."""
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    j = np.take(w, plan.sel)
    rank_sum = int(np.einsum("i,i,i->", j, plan.z, _twice_ranks(j, plan)[0])) / 2
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


_MOMENTS = ("n", "x", "y", "xx", "yy", "xy", "abs", "sq")
_CP_MOMENTS = ("n", "correct", "tp", "wrong", "positive")


def _moment_rows(columns: list[_Column], n: int) -> np.ndarray:
    """Per-sample terms (one row per term) whose count-weighted sums give each resample's
    Pearson, MAE and RMSE."""
    z = np.zeros((len(_MOMENTS) * len(columns), n))
    for c, col in enumerate(columns):
        if not col.index.size:
            continue
        xc, yc = col.x - col.x.mean(), col.y - col.y.mean()  # centred for accuracy
        err = col.x - col.y
        terms = (1.0, xc, yc, xc * xc, yc * yc, xc * yc, np.abs(err), err * err)
        rows = z[c * len(_MOMENTS) : (c + 1) * len(_MOMENTS)]
        for row, term in zip(rows, terms, strict=True):
            if col.index.size == n:
                row[:] = term
            else:
                row[col.index] = term
    return z


@dataclass
class _BootstrapPlan:
    columns: list[_Column]
    moments: np.ndarray  # per-sample terms, one row per term (_MOMENTS per column, _CP_MOMENTS)
    ranks: dict[str, _RankPlan]  # scored dimensions with a defined Spearman
    levels: Any  # sparse samples x levels indicator of every rank plan's coarser variable
    content_pass: bool  # the last moment rows are _CP_MOMENTS
    auc: _RankPlan | None


def _bootstrap_plan(columns: list[_Column], cp: _Column | None, n: int) -> _BootstrapPlan:
    from scipy import sparse

    moments = _moment_rows(columns, n)
    ranks = {c.dim: _rank_plan(c.index, c.x, c.y) for c in columns if not c.note}
    offset = 0
    for plan in ranks.values():
        plan.offset, offset = offset, offset + plan.k
    rows = np.concatenate([p.sel for p in ranks.values()] or [np.zeros(0, int)])
    cols = np.concatenate([p.offset + p.z for p in ranks.values()] or [np.zeros(0, int)])
    levels = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, offset))
    auc = None
    has_cp = cp is not None and cp.index.size > 0
    if has_cp:
        label, truth = cp.x >= PASS_THRESHOLD, cp.y == 1
        terms = np.zeros((len(_CP_MOMENTS), n))
        for row, term in zip(
            terms, (1.0, label == truth, label & truth, label != truth, truth), strict=True
        ):
            row[cp.index] = term
        moments = np.vstack([moments, terms])
        if not np.isin(cp.x, (0.0, 1.0)).all():
            auc = _auc_plan(cp.index, cp.x, truth)
    return _BootstrapPlan(columns, moments, ranks, levels, has_cp, auc)


def _resampled_table(counts: np.ndarray, plan: _BootstrapPlan) -> dict[str, np.ndarray]:
    """Every bootstrapped statistic for a block of resamples (rows of ``counts``)."""
    weights = counts.astype(float)
    sums = weights @ plan.moments.T
    level_totals = (plan.levels.T @ weights.T).T
    # sum of w**3 over each column's samples: its "n" moment row is the column's sample mask
    cube_sums = (weights**3) @ plan.moments[:: len(_MOMENTS)][: len(plan.columns)].T
    out: dict[str, np.ndarray] = {}
    width = len(_MOMENTS)
    for c, col in enumerate(plan.columns):
        s = dict(zip(_MOMENTS, sums[:, c * width : (c + 1) * width].T, strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            vx = s["xx"] - s["x"] ** 2 / s["n"]
            vy = s["yy"] - s["y"] ** 2 / s["n"]
            # a resample drawing a single value has zero variance up to rounding
            flat = (vx <= 1e-12 * s["xx"]) | (vy <= 1e-12 * s["yy"]) | (s["n"] < 2)
            r = (s["xy"] - s["x"] * s["y"] / s["n"]) / np.sqrt(vx * vy)
            out[f"{col.dim}_pearson"] = np.where(flat, np.nan, np.clip(r, -1, 1))
            out[f"{col.dim}_mae"] = s["abs"] / s["n"]
            out[f"{col.dim}_rmse"] = np.sqrt(s["sq"] / s["n"])
        rank = plan.ranks.get(col.dim)
        if rank is None:
            out[f"{col.dim}_spearman"] = np.full(counts.shape[0], np.nan)
            continue
        totals = level_totals[:, rank.offset : rank.offset + rank.k]
        out[f"{col.dim}_spearman"] = np.array(
            [
                _resampled_spearman(counts[b], rank, s["n"][b], cube_sums[b, c], totals[b])
                for b in range(counts.shape[0])
            ]
        )
    if plan.columns:
        out["avg_pearson"] = np.mean([out[f"{c.dim}_pearson"] for c in plan.columns], axis=0)
    if plan.content_pass:
        s = dict(zip(_CP_MOMENTS, sums[:, -len(_CP_MOMENTS) :].T, strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            out["content_pass_accuracy"] = s["correct"] / s["n"]
            out["content_pass_f1"] = 2 * s["tp"] / (2 * s["tp"] + s["wrong"])
        if plan.auc is not None:
            out["content_pass_roc_auc"] = np.array(
                [
                    _resampled_auc(counts[b], plan.auc, s["n"][b], s["positive"][b])
                    for b in range(counts.shape[0])
                ]
            )
    return out


def _single_threaded_blas() -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread for the bootstrap's matrix products: one thread does them fast, while
    threaded OpenBLAS stalls for whole scheduler slices on a busy machine (100x slower seen
    on 2 shared cores). Without threadpoolctl only the speed differs."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _bootstrap(
    columns: list[_Column],
    cp: _Column | None,
    n: int,
    n_resamples: int,
    seed: int | None,
    confidence: float,
    notes: dict[str, str],
) -> dict[str, Any]:
    """Percentile intervals of every statistic but Kendall tau over resamples of samples."""
    plan = _bootstrap_plan(columns, cp, n)
    with _single_threaded_blas():
        blocks = [_resampled_table(c, plan) for c in resample_counts(n, n_resamples, seed)]
    out: dict[str, Any] = {}
    for key in blocks[0]:
        values = np.concatenate([b[key] for b in blocks])
        out[f"{key}_ci"] = percentile_interval(values, confidence)
        undefined = int(np.count_nonzero(~np.isfinite(values)))
        if undefined == values.size:
            notes[f"{key}_ci"] = "undefined in every resample"
        elif undefined:
            notes[f"{key}_ci"] = f"undefined in {undefined} of {values.size} resamples, left out"
    return out


# ----------------------------------------------------------------------------------------
# Annotator agreement and the human ceiling
# ----------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------
# Systems, judges and preferences
# ----------------------------------------------------------------------------------------


def system_ranking_agreement(
    automatic: Mapping[str, float], human: Mapping[str, float]
) -> dict[str, Any]:
    """Rank agreement between automatic and human scores of systems (RoleBench).

    >>> system_ranking_agreement({"a": 3.1, "b": 2.0, "c": 4.2}, {"a": 3.5, "b": 2.9, "c": 4.0})
    {'spearman': 1.0, 'kendall': 1.0, 'n_systems': 3}
    """
    only_auto = sorted(set(automatic) - set(human))
    only_human = sorted(set(human) - set(automatic))
    if only_auto or only_human:
        raise ValueError(f"systems differ: only automatic {only_auto}, only human {only_human}")
    names = sorted(automatic)
    if len(names) < 2:
        raise ValueError(f"need at least 2 systems, got {len(names)}")
    a = _vector([automatic[k] for k in names], "automatic")
    h = _vector([human[k] for k in names], "human")
    undefined = _undefined_reason(a, h, ("automatic scores", "human scores"))
    rho, tau = (math.nan, math.nan) if undefined else _rank_correlations(a, h)
    out: dict[str, Any] = {"spearman": rho, "kendall": tau, "n_systems": len(names)}
    if undefined:
        out["note"] = undefined
    return out


def check_human_scores(human: Mapping[str, Any], systems: Iterable[str]) -> None:
    """Human system scores must be a mapping of at least 2 of ``systems`` (the ones a run
    scores) to finite numbers: checked before a run, so that a typo does not cost the run its
    report.

    >>> check_human_scores({"a": 3.0, "x": 2.0}, ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: human scores for systems this run did not score: ['x']
    """
    if not isinstance(human, Mapping):
        raise ValueError(
            f"human scores must be a JSON object of system -> score, got {type(human).__name__}"
        )
    if len(human) < 2:
        raise ValueError(f"need human scores of at least 2 systems, got {len(human)}")
    unknown = sorted(set(human) - set(systems))
    if unknown:
        raise ValueError(f"human scores for systems this run did not score: {unknown}")
    for name, value in human.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ValueError(f"human score of {name!r} is {value!r}, not a finite number")


def human_ranking_agreement(
    automatic: Mapping[str, float], human: Mapping[str, float]
) -> dict[str, Any]:
    """:func:`system_ranking_agreement` over the systems humans rated. A rated system whose
    automatic score is undefined (nothing scored) makes the ranking undefined: NaN with a
    ``note`` naming it, never an error that would lose a run's report.

    Raises:
        ValueError: ``human`` is not what :func:`check_human_scores` accepts for the systems
            of ``automatic``.
    """
    check_human_scores(human, automatic)
    undefined = sorted(k for k in human if not math.isfinite(automatic[k]))
    if undefined:
        return {"spearman": math.nan, "kendall": math.nan, "n_systems": len(human),
                "note": f"undefined: no automatic score for {', '.join(undefined)}"}  # fmt: skip
    return system_ranking_agreement({k: automatic[k] for k in human}, dict(human))


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


def pairwise_preference(score_diff: Any, a_preferred: Any) -> dict[str, Any]:
    """Accuracy, NLL and ROC-AUC of a score-difference model on A/B preferences (AnimeScore).

    ``score_diff`` is ``s(a) - s(b)``, read as ``P(a preferred) = sigmoid(score_diff)``;
    ``a_preferred`` the human outcome (1 = a). A difference of exactly 0 counts half right.

    >>> r = pairwise_preference([2.0, -1.0, 0.5, -0.2], [1, 0, 0, 0])
    >>> r["accuracy"], round(r["nll"], 4), r["roc_auc"]
    (0.75, 0.5031, 1.0)
    """
    d, y = _pair(score_diff, a_preferred, ("score_diff", "a_preferred"))
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("a_preferred: expected 0/1 (or booleans) per pair")
    sign = np.where(y == 1, 1.0, -1.0)
    correct = np.where(d == 0, 0.5, (np.sign(d) == sign).astype(float))
    out: dict[str, Any] = {
        "accuracy": float(correct.mean()),
        "nll": float(np.logaddexp(0.0, -sign * d).mean()),
        "roc_auc": _roc_auc(y == 1, d),
        "count": int(d.size),
    }
    if math.isnan(out["roc_auc"]):
        out["note"] = "roc_auc undefined: every pair has the same outcome"
    return out
