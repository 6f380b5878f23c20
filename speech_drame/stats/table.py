"""The alignment table as a typed result: one frozen row per dimension.

:func:`~speech_drame.stats.alignment` returns an :class:`AlignmentTable`;
:meth:`AlignmentTable.to_flat` is the flat dict ``alignment_table`` and ``drame_metric`` report
(``{dim}_{statistic}`` keys, in a fixed order), and :meth:`AlignmentTable.from_flat` reads one
back (e.g. from a ``metrics.json``). Flat keys (and the keys of ``notes``) are named by
:func:`stat_key`; callers read rows and fields, never keys.
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
    lists given) and ``gated`` (emotion gating) are ``None`` where they do not apply, and so is
    any statistic a table read back (:meth:`AlignmentTable.from_flat`) does not hold. ``ci``:
    statistic -> bootstrap interval (empty without bootstrap).
    """

    dimension: str
    pearson: float
    spearman: float | None = None
    kendall: float | None = None
    mae: float | None = None
    rmse: float | None = None
    count: int | None = None
    missing: int | None = None
    null_ratings: int | None = None
    gated: int | None = None
    ci: Mapping[str, Interval] = field(default_factory=dict)


@dataclass(frozen=True)
class ContentPassRow:
    """Content Pass: ``accuracy`` (the paper's number), ``f1`` of "pass", ``roc_auc`` (``None``
    unless the predictions are probabilities), over ``count`` samples; ``missing`` had no
    reference, ``ties`` no majority. ``None`` and ``ci`` as for :class:`DimensionRow`."""

    accuracy: float
    count: int | None = None
    f1: float | None = None
    roc_auc: float | None = None
    missing: int | None = None
    ties: int | None = None
    ci: Mapping[str, Interval] = field(default_factory=dict)


# The flat keys' order: each row's statistics, then the intervals, then the rest.
_ROW_STATS = ("count", "mae", "rmse", "pearson", "spearman", "kendall", "missing")
_ROW_EXTRAS = ("null_ratings", "gated")
_ROW_INTERVALS = ("pearson", "mae", "rmse", "spearman")
_CP_STATS = ("count", "accuracy", "f1", "roc_auc", "missing", "ties")
_CP_INTERVALS = ("accuracy", "f1", "roc_auc")


def headline_statistic(dimension: str) -> str:
    """The paper's number of a dimension: ``accuracy`` for Content Pass, else ``pearson``."""
    return "accuracy" if dimension == CONTENT_PASS else "pearson"


def _flat(name: str, row: DimensionRow | ContentPassRow, stats: tuple[str, ...]) -> dict[str, Any]:
    values = ((s, getattr(row, s)) for s in stats)
    return {stat_key(name, s): v for s, v in values if v is not None}


def _read(flat: Mapping[str, Any], key: str) -> Any:
    """A statistic of a flat table: ``None`` when absent, NaN when JSON wrote it as ``null``."""
    if key not in flat:
        return None
    return math.nan if flat[key] is None else flat[key]


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
    label_policy: str | None
    label_policy_rule: str | None
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

    def value(self, dimension: str, statistic: str) -> Any:
        """A statistic of a dimension, of Content Pass or of :data:`AVERAGE` (``pearson``);
        ``None`` when the table does not hold it."""
        if dimension == AVERAGE:
            return self.avg_pearson if statistic == "pearson" else None
        if dimension == CONTENT_PASS:
            return None if self.content_pass is None else getattr(self.content_pass, statistic)
        found = [r for r in self.rows if r.dimension == dimension]
        return getattr(found[0], statistic) if found else None

    def note(self, dimension: str, statistic: str) -> str | None:
        """Why a statistic is undefined (``None`` when no note says)."""
        return self.notes.get(stat_key(dimension, statistic))

    def headline(self) -> dict[str, Any]:
        """The paper's numbers as flat keys: every Pearson, their average and Content Pass
        accuracy (what a scorer's ``info`` and ``train.py``'s summary show)."""
        return {k: v for k, v in self.to_flat().items() if k in self._headline_keys()}

    def _headline_keys(self) -> set[str]:
        names = [*self.dimensions, AVERAGE, CONTENT_PASS]
        return {stat_key(n, headline_statistic(n)) for n in names}

    def to_flat(self) -> dict[str, Any]:
        """The flat dict of :func:`~speech_drame.stats.alignment_table`, keys in its order;
        statistics that are ``None`` are left out."""
        out: dict[str, Any] = {}
        for r in self.rows:
            out |= _flat(r.dimension, r, _ROW_STATS + _ROW_EXTRAS)
        if self.avg_pearson is not None:
            out[stat_key(AVERAGE, "pearson")] = self.avg_pearson
        if self.content_pass is not None:
            out |= _flat(CONTENT_PASS, self.content_pass, _CP_STATS)
        for name, ci in self._intervals():
            out[f"{name}_ci"] = ci
        if self.bootstrap is not None:
            out["bootstrap"] = self.bootstrap
            out["confidence"] = self.confidence
        for name in ("label_policy", "label_policy_rule"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
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
        """The table a flat dict holds: a whole :meth:`to_flat` (e.g. read from a
        ``metrics.json``, where ``null`` reads as NaN) or a part of one such as
        :meth:`headline` (what it lacks is ``None``). A row is a dimension with a Pearson;
        keys it does not know are ignored.

        >>> from speech_drame.stats import alignment_table
        >>> flat = alignment_table([[4.0], [2.0], [3.0]], [[4], [2], [3]], ["audio_quality"])
        >>> table = AlignmentTable.from_flat(flat)
        >>> table.row("audio_quality").pearson, table.to_flat() == flat
        (1.0, True)
        >>> AlignmentTable.from_flat({"audio_quality_pearson": None}).row("audio_quality")
        DimensionRow(dimension='audio_quality', pearson=nan, spearman=None, kendall=None, mae=None, rmse=None, count=None, missing=None, null_ratings=None, gated=None, ci={})
        """
        suffix = "_pearson"
        dims = [k[: -len(suffix)] for k in flat if k.endswith(suffix)]
        dims = [d for d in dims if d in SCORED_DIMENSIONS]

        def intervals(name: str, stats: tuple[str, ...]) -> dict[str, Interval]:
            return {s: flat[f"{name}_{s}_ci"] for s in stats if f"{name}_{s}_ci" in flat}

        def row(name: str, stats: tuple[str, ...]) -> dict[str, Any]:
            return {s: _read(flat, stat_key(name, s)) for s in stats}

        rows = tuple(
            DimensionRow(d, **row(d, _ROW_STATS + _ROW_EXTRAS), ci=intervals(d, _ROW_INTERVALS))
            for d in dims
        )
        cp = None
        if stat_key(CONTENT_PASS, "accuracy") in flat:
            cp = ContentPassRow(
                **row(CONTENT_PASS, _CP_STATS), ci=intervals(CONTENT_PASS, _CP_INTERVALS)
            )
        return cls(
            rows,
            cp,
            _read(flat, stat_key(AVERAGE, "pearson")),
            flat.get("label_policy"),
            flat.get("label_policy_rule"),
            flat.get("notes", {}),
            flat.get(f"{stat_key(AVERAGE, 'pearson')}_ci"),
            flat.get("bootstrap"),
            flat.get("confidence"),
        )
