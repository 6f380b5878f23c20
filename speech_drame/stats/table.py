"""The alignment table as a typed result: one frozen row per dimension.

:func:`~speech_drame.stats.alignment` returns an :class:`AlignmentTable`;
:meth:`AlignmentTable.to_flat` is the flat dict ``alignment_table`` and ``drame_metric`` report
(``{dim}_{statistic}`` keys, in a fixed order), and :meth:`AlignmentTable.from_flat` reads one
back (e.g. from a ``metrics.json``). Those two methods are the only code that knows the keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from speech_drame.schema import CONTENT_PASS
from speech_drame.stats.inputs import SCORED_DIMENSIONS

AVERAGE = "avg"  # the name of the average's row in flat keys (``avg_pearson``)
Interval = list[float]  # [low, high]


def stat_key(name: str, statistic: str) -> str:
    """The flat key of a statistic of a dimension (or of :data:`AVERAGE`).

    >>> stat_key("audio_quality", "pearson"), stat_key(AVERAGE, "pearson")
    ('audio_quality_pearson', 'avg_pearson')
    """
    return f"{name}_{statistic}"


@dataclass(frozen=True)
class DimensionRow:
    """The statistics of one scored (1..5) dimension.

    ``count`` samples were used, ``missing`` had no reference; ``null_ratings`` (annotator
    lists given) and ``gated`` (emotion gating) are ``None`` where they do not apply. ``ci``:
    statistic -> bootstrap interval (empty without bootstrap).
    """

    dimension: str
    count: int
    mae: float
    rmse: float
    pearson: float
    spearman: float
    kendall: float
    missing: int
    null_ratings: int | None = None
    gated: int | None = None
    ci: Mapping[str, Interval] = field(default_factory=dict)

    def to_flat(self) -> dict[str, Any]:
        """This row's entries of :meth:`AlignmentTable.to_flat` (intervals apart)."""
        d = self.dimension
        out: dict[str, Any] = {stat_key(d, s): getattr(self, s) for s in _ROW_STATS}
        for name in ("null_ratings", "gated"):
            if getattr(self, name) is not None:
                out[stat_key(d, name)] = getattr(self, name)
        return out


@dataclass(frozen=True)
class ContentPassRow:
    """Content Pass: ``accuracy`` (the paper's number), ``f1`` of "pass", ``roc_auc`` (``None``
    unless the predictions are probabilities), over ``count`` samples; ``missing`` had no
    reference, ``ties`` no majority. ``ci`` as for :class:`DimensionRow`."""

    count: int
    accuracy: float
    f1: float
    missing: int
    ties: int
    roc_auc: float | None = None
    ci: Mapping[str, Interval] = field(default_factory=dict)

    def to_flat(self) -> dict[str, Any]:
        """This row's entries of :meth:`AlignmentTable.to_flat` (intervals apart)."""
        out = {stat_key(CONTENT_PASS, s): getattr(self, s) for s in ("count", "accuracy", "f1")}
        if self.roc_auc is not None:
            out[stat_key(CONTENT_PASS, "roc_auc")] = self.roc_auc
        out[stat_key(CONTENT_PASS, "missing")] = self.missing
        out[stat_key(CONTENT_PASS, "ties")] = self.ties
        return out


_ROW_STATS = ("count", "mae", "rmse", "pearson", "spearman", "kendall", "missing")


@dataclass(frozen=True)
class AlignmentTable:
    """Human alignment of an evaluator, per dimension (see :func:`~speech_drame.stats.alignment`).

    ``rows``: the scored dimensions in the order given; ``content_pass``: its row or ``None``;
    ``avg_pearson``: the mean Pearson of ``rows`` (``None`` without rows); ``bootstrap`` and
    ``confidence``: the resampling (``None`` without); ``notes``: flat statistic key -> why it is
    NaN.
    """

    rows: tuple[DimensionRow, ...]
    content_pass: ContentPassRow | None
    avg_pearson: float | None
    label_policy: str
    label_policy_rule: str
    notes: dict[str, str] = field(default_factory=dict)
    avg_pearson_ci: Interval | None = None
    bootstrap: int | None = None
    confidence: float | None = None

    @property
    def dimensions(self) -> tuple[str, ...]:
        """The scored dimensions (Content Pass apart)."""
        return tuple(r.dimension for r in self.rows)

    def row(self, dimension: str) -> DimensionRow:
        """The row of a scored dimension (``KeyError`` naming the ones there are)."""
        for r in self.rows:
            if r.dimension == dimension:
                return r
        raise KeyError(f"no row {dimension!r}; rows: {', '.join(self.dimensions) or 'none'}")

    def mean(self, statistic: str = "pearson") -> float:
        """The mean of a statistic over the rows (NaN without rows); ``pearson`` is the paper's
        Avg."""
        values = [getattr(r, statistic) for r in self.rows]
        return float(np.mean(values)) if values else math.nan

    def headline(self) -> dict[str, Any]:
        """The paper's numbers as flat keys: every Pearson, their average and Content Pass
        accuracy (what a scorer's ``info`` and ``train.py``'s summary show)."""
        out: dict[str, Any] = {stat_key(r.dimension, "pearson"): r.pearson for r in self.rows}
        if self.avg_pearson is not None:
            out[stat_key(AVERAGE, "pearson")] = self.avg_pearson
        if self.content_pass is not None:
            out[stat_key(CONTENT_PASS, "accuracy")] = self.content_pass.accuracy
        return out

    def to_flat(self) -> dict[str, Any]:
        """The flat dict of :func:`~speech_drame.stats.alignment_table`, keys in its order."""
        out: dict[str, Any] = {}
        for r in self.rows:
            out.update(r.to_flat())
        if self.avg_pearson is not None:
            out[stat_key(AVERAGE, "pearson")] = self.avg_pearson
        if self.content_pass is not None:
            out.update(self.content_pass.to_flat())
        for name, ci in self._intervals():
            out[f"{name}_ci"] = ci
        if self.bootstrap is not None:
            out["bootstrap"] = self.bootstrap
            out["confidence"] = self.confidence
        out["label_policy"] = self.label_policy
        out["label_policy_rule"] = self.label_policy_rule
        out["notes"] = self.notes
        return out

    def _intervals(self) -> list[tuple[str, Interval]]:
        out = [(stat_key(r.dimension, s), ci) for r in self.rows for s, ci in r.ci.items()]
        if self.avg_pearson_ci is not None:
            out.append((stat_key(AVERAGE, "pearson"), self.avg_pearson_ci))
        if self.content_pass is not None:
            out += [(stat_key(CONTENT_PASS, s), ci) for s, ci in self.content_pass.ci.items()]
        return out

    @classmethod
    def from_flat(cls, flat: Mapping[str, Any]) -> AlignmentTable:
        """The table a flat dict of :meth:`to_flat` holds (keys it does not know are ignored;
        a JSON ``null`` stays ``None``).

        >>> from speech_drame.stats import alignment_table
        >>> flat = alignment_table([[4.0], [2.0], [3.0]], [[4], [2], [3]], ["audio_quality"])
        >>> table = AlignmentTable.from_flat(flat)
        >>> table.row("audio_quality").pearson, table.to_flat() == flat
        (1.0, True)
        """
        dims = [
            k[: -len("_count")]
            for k in flat
            if k.endswith("_count") and k[: -len("_count")] in SCORED_DIMENSIONS
        ]

        def intervals(name: str, stats: tuple[str, ...]) -> dict[str, Interval]:
            return {s: flat[f"{name}_{s}_ci"] for s in stats if f"{name}_{s}_ci" in flat}

        rows = tuple(
            DimensionRow(
                d,
                *(flat[stat_key(d, s)] for s in _ROW_STATS),
                null_ratings=flat.get(stat_key(d, "null_ratings")),
                gated=flat.get(stat_key(d, "gated")),
                ci=intervals(d, ("pearson", "mae", "rmse", "spearman")),
            )
            for d in dims
        )
        cp = None
        if stat_key(CONTENT_PASS, "count") in flat:
            cp = ContentPassRow(
                *(flat[stat_key(CONTENT_PASS, s)] for s in ("count", "accuracy", "f1")),
                missing=flat[stat_key(CONTENT_PASS, "missing")],
                ties=flat[stat_key(CONTENT_PASS, "ties")],
                roc_auc=flat.get(stat_key(CONTENT_PASS, "roc_auc")),
                ci=intervals(CONTENT_PASS, ("accuracy", "f1", "roc_auc")),
            )
        return cls(
            rows,
            cp,
            flat.get(stat_key(AVERAGE, "pearson")),
            flat["label_policy"],
            flat["label_policy_rule"],
            flat.get("notes", {}),
            flat.get(f"{stat_key(AVERAGE, 'pearson')}_ci"),
            flat.get("bootstrap"),
            flat.get("confidence"),
        )
