"""Annotator ratings: the dataset's ``annotations`` as per-dimension matrices, the label
policy applied to their nulls, and the per-sample reference (mean rating, majority vote)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.labels import DEFAULT_LABEL_POLICY, FILL_SCORE, check_label_policy, is_rating
from speech_drame.schema import CONTENT_PASS, SCORE_MAX, SCORE_MIN
from speech_drame.stats.inputs import _array, _check_dimensions, _list_length, _to_float


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
