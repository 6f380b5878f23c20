"""The alignment table: how well an evaluator's scores follow human ratings, per dimension,
overall and per group of clips."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from speech_drame.labels import DEFAULT_LABEL_POLICY, check_label_policy, describe_label_policy
from speech_drame.languages import UNKNOWN
from speech_drame.schema import CONTENT_PASS, EMOTION_GATES
from speech_drame.stats.bootstrap import _bootstrap
from speech_drame.stats.correlation import (
    _pearson_from_sums,
    _rank_correlations,
    _roc_auc,
    _undefined_reason,
)
from speech_drame.stats.inputs import PASS_THRESHOLD, _check_dimensions
from speech_drame.stats.kernels import moment_sums
from speech_drame.stats.ratings import AnnotatorRatings, _as_ratings
from speech_drame.stats.references import (
    _Column,
    _gate_masks,
    _parse_predictions,
    _parse_references,
)
from speech_drame.stats.table import (
    AVERAGE,
    AlignmentTable,
    ContentPassRow,
    DimensionRow,
    stat_key,
)

_T = TypeVar("_T")

_PARALLEL_MIN_VALUES = 200_000  # below this many values threads cost more than they save


def alignment(
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
) -> AlignmentTable:
    """Human alignment of an evaluator's scores, per dimension, as a typed table.

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
        An :class:`~speech_drame.stats.table.AlignmentTable`: one row per scored dimension
        (Pearson, the paper's number, Spearman, Kendall tau-b, MAE, RMSE, the samples used and
        missing, null ratings and gated samples where they apply, bootstrap intervals), the
        Content Pass row (accuracy, the paper's number, F1 of "pass", ROC-AUC when the
        predictions are probabilities), the average Pearson, the label policy and ``notes``
        (statistic -> why it is NaN). :func:`alignment_table` gives it as a flat dict.

    Example:
        >>> t = alignment([[4.0], [2.0], [3.5]], [[[4, 5]], [[2, None]], [[3, 3]]], ["audio_quality"])
        >>> round(t.row("audio_quality").pearson, 3), t.row("audio_quality").null_ratings
        (0.961, 1)
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
    stats: list[dict[str, Any]] = []
    for j, (col, col_stats, col_notes) in zip(
        scored, _in_threads(measured, scored, pred.size, workers), strict=True
    ):
        columns.append(col)
        col_stats["missing"] = int(np.count_nonzero(~has_ref[:, j]))
        if refs.null_ratings is not None:
            col_stats["null_ratings"] = int(refs.null_ratings[j])
        if keep is not None and any(col.dim == g for g, _ in EMOTION_GATES):
            col_stats["gated"] = int(np.count_nonzero(has_ref[:, j] & ~keep[:, j]))
        stats.append(col_stats)
        notes.update(col_notes)
    avg_pearson = None
    if columns:
        avg_pearson = float(np.mean([s["pearson"] for s in stats]))
        undefined = [c.dim for c, s in zip(columns, stats, strict=True) if math.isnan(s["pearson"])]
        if undefined:
            notes[stat_key(AVERAGE, "pearson")] = (
                f"undefined: the Pearson of {', '.join(undefined)} is undefined"
            )
    cp_column = cp_stats = None
    if CONTENT_PASS in dims:
        j = dims.index(CONTENT_PASS)
        idx = np.flatnonzero(has_ref[:, j])
        cp_column = _Column(CONTENT_PASS, idx, pred[idx, j], refs.values[idx, j], None)
        cp_stats = _content_pass_statistics(cp_column, notes)
        cp_stats["missing"] = int(np.count_nonzero(~has_ref[:, j]) - refs.ties[j])
        cp_stats["ties"] = int(refs.ties[j])
    intervals: dict[tuple[str, str], list[float]] = {}
    if bootstrap:
        intervals = _bootstrap(
            columns, cp_column, pred.shape[0], bootstrap, seed, confidence, notes
        )

    def ci(name: str) -> dict[str, list[float]]:
        return {stat: v for (n, stat), v in intervals.items() if n == name}

    policy = describe_label_policy(label_policy)
    return AlignmentTable(
        tuple(DimensionRow(c.dim, **s, ci=ci(c.dim)) for c, s in zip(columns, stats, strict=True)),
        None if cp_stats is None else ContentPassRow(**cp_stats, ci=ci(CONTENT_PASS)),
        avg_pearson,
        policy["label_policy"],
        policy["label_policy_rule"],
        notes,
        intervals.get((AVERAGE, "pearson")),
        int(bootstrap) if bootstrap else None,
        float(confidence) if bootstrap else None,
    )


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
    """:func:`alignment` as a flat dict (the ``drame_metric`` result).

    Args:
        predictions, references, dimensions, **options: as for :func:`alignment`.

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
    return alignment(
        predictions,
        references,
        dimensions,
        emotion_gating=emotion_gating,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        workers=workers,
        label_policy=label_policy,
    ).to_flat()


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
    """The statistics of one column (by name) and, by flat key, the reason any is NaN."""
    dim = col.dim
    notes: dict[str, str] = {}
    out: dict[str, Any] = {"count": int(col.index.size)}
    if col.index.size:
        sxy, sxx, syy, abs_err, sq_err = moment_sums(col.x, col.y)
        out["mae"] = abs_err / col.index.size
        out["rmse"] = math.sqrt(sq_err / col.index.size)
    else:
        out["mae"] = out["rmse"] = math.nan
        notes[stat_key(dim, "mae")] = notes[stat_key(dim, "rmse")] = col.note or ""
    if col.note:
        for stat in ("pearson", "spearman", "kendall"):
            out[stat] = math.nan
            notes[stat_key(dim, stat)] = col.note
    else:
        out["pearson"] = _pearson_from_sums(sxy, sxx, syy)
        out["spearman"], out["kendall"] = _rank_correlations(col.x, col.y)
    return out, notes


def _content_pass_statistics(col: _Column, notes: dict[str, str]) -> dict[str, Any]:
    """Content Pass statistics by name; the reason any is NaN goes to ``notes``."""
    out: dict[str, Any] = {"count": int(col.index.size)}
    if not col.index.size:
        for stat in ("accuracy", "f1"):
            out[stat] = math.nan
            notes[stat_key(CONTENT_PASS, stat)] = "no sample has a Content Pass reference"
        return out
    label = col.x >= PASS_THRESHOLD
    truth = col.y == 1
    out["accuracy"] = float(np.mean(label == truth))
    tp = int(np.count_nonzero(label & truth))
    wrong = int(np.count_nonzero(label != truth))
    if 2 * tp + wrong == 0:
        out["f1"] = math.nan
        notes[stat_key(CONTENT_PASS, "f1")] = (
            "no sample passes in the references or the predictions"
        )
    else:
        out["f1"] = 2 * tp / (2 * tp + wrong)
    if not np.isin(col.x, (0.0, 1.0)).all():
        out["roc_auc"] = _roc_auc(truth, col.x)
        if math.isnan(out["roc_auc"]):
            notes[stat_key(CONTENT_PASS, "roc_auc")] = "the references hold a single class"
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
