"""The one join of predictions to annotations, used by every evaluation: a scorer on a split
(:func:`~.evaluation.evaluate_scorer`), ``train.py``'s evaluation and the paper's tables
(:mod:`speech_drame.paper_tables`).

Clips are matched by id and scores by dimension; the annotator lists go to the statistics as
they are, so the label policy reads their nulls there (:func:`speech_drame.stats.alignment_table`).
A clip without a prediction for a dimension is left out of that dimension only and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..schema import CONTENT_PASS, SCORE_MIN
from .base import ClipScores


@dataclass(frozen=True)
class Joined:
    """Predictions and annotator ratings side by side: one row per clip of ``ids``, one entry
    per dimension of ``dimensions`` (the input of :func:`speech_drame.stats.alignment_table`).
    ``missing``: per dimension, the clips without a prediction (a placeholder score there and
    no ratings, so that the statistics leave them out)."""

    ids: list[str]
    dimensions: list[str]
    predictions: list[list[float]]
    references: list[list[list[Any]]]
    missing: dict[str, int]


def join(
    predictions: Iterable[tuple[str, Mapping[str, float]]],
    annotations: Mapping[str, Mapping[str, Sequence[Any]]],
    dimensions: Sequence[str],
) -> Joined:
    """Join ``(clip id, {dimension: score})`` pairs to each clip's ``annotations`` (dimension ->
    annotator ratings) on ``dimensions`` (Content Pass included by name).

    >>> j = join([("a", {"audio_quality": 4.0}), ("b", {})], {"a": {"audio_quality": [4, 5]},
    ...          "b": {"audio_quality": [2]}}, ["audio_quality"])
    >>> j.predictions, j.references, j.missing
    ([[4.0], [1.0]], [[[4, 5]], [[]]], {'audio_quality': 1})

    Raises:
        ValueError: a clip has no annotations.
    """
    dims = list(dimensions)
    ids, values, references = [], [], []
    missing = dict.fromkeys(dims, 0)
    for clip, scores in predictions:
        if clip not in annotations:
            raise ValueError(f"clip {clip!r} has no annotations")
        row, ann = [], []
        for dim in dims:
            if dim in scores:
                row.append(scores[dim])
                ann.append(list(annotations[clip][dim]))
            else:  # left out of this dimension only: no reference ratings
                row.append(float(SCORE_MIN if dim != CONTENT_PASS else 1))
                ann.append([])
                missing[dim] += 1
        ids.append(clip)
        values.append(row)
        references.append(ann)
    return Joined(ids, dims, values, references, missing)


def clip_predictions(result: ClipScores) -> tuple[str, dict[str, float]]:
    """A scored clip as a pair for :func:`join`: its scores and its Content Pass probability
    (``None`` when it has none, which the statistics refuse if Content Pass is evaluated)."""
    return result.id, {**result.scores, CONTENT_PASS: result.content_pass}
