"""Bootstrap intervals of the alignment table: resample counts, percentile intervals and
every statistic recomputed from draw counts (exactly as on the repeated data)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.schema import CONTENT_PASS
from speech_drame.stats.correlation import _Levels
from speech_drame.stats.inputs import PASS_THRESHOLD
from speech_drame.stats.references import _Column
from speech_drame.stats.table import AVERAGE, stat_key

_BOOTSTRAP_CHUNK_BYTES = 1 << 24  # memory bound of one block of resample counts


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


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """1-D dot product outside BLAS: a threaded BLAS call stalls on a busy machine."""
    return float(np.einsum("i,i->", a, b))


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


def _resampled_table(counts: np.ndarray, plan: _BootstrapPlan) -> dict[tuple[str, str], np.ndarray]:
    """Every bootstrapped statistic, keyed (dimension, statistic), for a block of resamples
    (rows of ``counts``)."""
    weights = counts.astype(float)
    sums = weights @ plan.moments.T
    level_totals = (plan.levels.T @ weights.T).T
    # sum of w**3 over each column's samples: its "n" moment row is the column's sample mask
    cube_sums = (weights**3) @ plan.moments[:: len(_MOMENTS)][: len(plan.columns)].T
    out: dict[tuple[str, str], np.ndarray] = {}
    width = len(_MOMENTS)
    for c, col in enumerate(plan.columns):
        s = dict(zip(_MOMENTS, sums[:, c * width : (c + 1) * width].T, strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            vx = s["xx"] - s["x"] ** 2 / s["n"]
            vy = s["yy"] - s["y"] ** 2 / s["n"]
            # a resample drawing a single value has zero variance up to rounding
            flat = (vx <= 1e-12 * s["xx"]) | (vy <= 1e-12 * s["yy"]) | (s["n"] < 2)
            r = (s["xy"] - s["x"] * s["y"] / s["n"]) / np.sqrt(vx * vy)
            out[col.dim, "pearson"] = np.where(flat, np.nan, np.clip(r, -1, 1))
            out[col.dim, "mae"] = s["abs"] / s["n"]
            out[col.dim, "rmse"] = np.sqrt(s["sq"] / s["n"])
        rank = plan.ranks.get(col.dim)
        if rank is None:
            out[col.dim, "spearman"] = np.full(counts.shape[0], np.nan)
            continue
        totals = level_totals[:, rank.offset : rank.offset + rank.k]
        out[col.dim, "spearman"] = np.array(
            [
                _resampled_spearman(counts[b], rank, s["n"][b], cube_sums[b, c], totals[b])
                for b in range(counts.shape[0])
            ]
        )
    if plan.columns:
        out[AVERAGE, "pearson"] = np.mean([out[c.dim, "pearson"] for c in plan.columns], axis=0)
    if plan.content_pass:
        s = dict(zip(_CP_MOMENTS, sums[:, -len(_CP_MOMENTS) :].T, strict=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[CONTENT_PASS, "accuracy"] = s["correct"] / s["n"]
            out[CONTENT_PASS, "f1"] = 2 * s["tp"] / (2 * s["tp"] + s["wrong"])
        if plan.auc is not None:
            out[CONTENT_PASS, "roc_auc"] = np.array(
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
) -> dict[tuple[str, str], list[float]]:
    """Percentile intervals of every statistic but Kendall tau over resamples of samples,
    keyed (dimension, statistic); why an interval leaves resamples out goes to ``notes``."""
    plan = _bootstrap_plan(columns, cp, n)
    with _single_threaded_blas():
        blocks = [_resampled_table(c, plan) for c in resample_counts(n, n_resamples, seed)]
    out: dict[tuple[str, str], list[float]] = {}
    for key in blocks[0]:
        values = np.concatenate([b[key] for b in blocks])
        out[key] = percentile_interval(values, confidence)
        undefined = int(np.count_nonzero(~np.isfinite(values)))
        note = f"{stat_key(*key)}_ci"
        if undefined == values.size:
            notes[note] = "undefined in every resample"
        elif undefined:
            notes[note] = f"undefined in {undefined} of {values.size} resamples, left out"
    return out
