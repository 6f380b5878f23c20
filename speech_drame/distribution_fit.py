"""How well a scorer's 5-way distribution matches the raters' own distribution.

Agreement (:func:`speech_drame.stats.alignment_table`) compares one number per clip with the
mean rating. A scorer that returns a distribution over the scores 1..5 (the LiteScorer, trained
by label distribution learning over the annotators; DRAME-Eval's next-token probabilities; a
chat judge's share of runs) can also be asked whether that distribution is the raters' one.
Per 1..5 dimension, over the samples with at least one rating after the label policy
(:mod:`speech_drame.labels`) and with a predicted distribution:

- ``nll``: the mean, over every individual rating, of ``-log p(rating)`` (natural log) under
  the predicted distribution, whose probabilities are clipped below at ``epsilon``
  (:data:`EPSILON`) and renormalised, so that one zero cannot make it infinite;
- ``jsd``: the mean, over samples, of the Jensen-Shannon divergence (base 2, so in [0, 1])
  between the predicted distribution (renormalised to sum 1, not clipped) and the raters'
  empirical distribution (the share of the sample's ratings on each score); this is the
  square of :func:`scipy.spatial.distance.jensenshannon` with ``base=2``;
- ``nll_baseline`` and ``jsd_baseline``: the same numbers for a predictor that always says the
  dimension's marginal rating distribution (every rating of the evaluated samples pooled,
  ``baseline``). It is fitted on the very ratings it is scored on, so it is a demanding
  baseline: a scorer below it has learnt something about each clip;
- ``reliability``: every (sample, score) pair pooled, its predicted probability binned into
  ``bins`` equal bins of [0, 1]; per bin the mean predicted probability, the observed
  frequency (the mean empirical mass of those pairs) and the number of pairs; ``ece``: the
  expected calibration error, ``sum(count / total * |mean predicted - observed|)``.

Content Pass is a yes/no vote, not a 5-way distribution: it is left out.

Example:
    >>> fit = distribution_fit(
    ...     [[[0.05, 0.05, 0.6, 0.25, 0.05]], [[0.3, 0.0, 0.05, 0.3, 0.35]]],
    ...     [[[3, 3, 4]], [[5, 4, None]]],  # "paper": the null rating counts as 1
    ...     ["audio_quality"],
    ... )
    >>> aq = fit["dimensions"]["audio_quality"]
    >>> aq["samples"], aq["ratings"], round(aq["nll"], 4), round(aq["nll_baseline"], 4)
    (2, 6, 0.9776, 1.3297)
    >>> round(aq["jsd"], 4), round(aq["jsd_baseline"], 4), round(aq["ece"], 4), fit["epsilon"]
    (0.0535, 0.2075, 0.04, 1e-06)
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .labels import DEFAULT_LABEL_POLICY, apply_label_policy, describe_label_policy
from .schema import CONTENT_PASS, RUBRIC_NAMES, SCORE_MAX, SCORE_MIN

N_LEVELS = SCORE_MAX - SCORE_MIN + 1  # a distribution holds the probabilities of 1..5
EPSILON = 1e-6  # predicted probabilities are clipped below at this for the NLL
SUM_TOLERANCE = 1e-3  # a distribution must sum to 1 within this
N_BINS = 10  # equal bins of the reliability diagram
EDGE_TOLERANCE = 1e-9  # a probability this close below a bin edge counts in the upper bin
STATISTICS = ("nll", "jsd", "nll_baseline", "jsd_baseline", "ece")
RULE = (
    "nll: mean over individual ratings of -ln p(rating), p clipped below at epsilon and "
    "renormalised; jsd: mean over samples of the Jensen-Shannon divergence (base 2) between "
    "the predicted and the raters' empirical distribution; baseline: the dimension's pooled "
    "rating distribution over the evaluated samples; ece: expected calibration error over "
    "every (sample, score) pair in equal probability bins"
)


def distribution_fit(
    distributions: Sequence[Sequence[Sequence[float] | None]],
    references: Sequence[Sequence[Any]],
    dimensions: Sequence[str],
    *,
    label_policy: str = DEFAULT_LABEL_POLICY,
    epsilon: float = EPSILON,
    bins: int = N_BINS,
) -> dict[str, Any]:
    """The fit of predicted 5-way distributions to the annotators' ratings, per dimension.

    Args:
        distributions: per sample, per position of ``dimensions``, the probabilities of the
            scores 1..5 (5 non-negative numbers summing to 1 within :data:`SUM_TOLERANCE`), or
            ``None`` where there is none (always for ``content_pass``; a sample without one
            is left out of that dimension and counted in ``no_distribution``).
        references: per sample, per position, the list of annotator ratings (integers 1..5;
            ``None`` or ``"N/A"`` = a null rating, treated by ``label_policy``).
        dimensions: the dimension of each position.
        label_policy: ``paper`` counts a null rating as 1, ``skip`` leaves it out.
        epsilon: the floor of a predicted probability in the NLL (then renormalised).
        bins: the number of equal bins of [0, 1] of the reliability data.

    Returns:
        A JSON-ready dict: ``dimensions``: dimension -> ``{"samples", "ratings",
        "no_ratings", "no_distribution", "nll", "jsd", "nll_baseline", "jsd_baseline",
        "ece", "baseline": its 5 probabilities, "reliability": [{"low", "high",
        "mean_predicted", "observed", "count"}, ...]}`` for each dimension with at least one
        predicted distribution (statistics NaN, with a note, when no sample has both);
        ``avg_nll``, ``avg_jsd``, ``avg_nll_baseline``, ``avg_jsd_baseline``, ``avg_ece``
        over those dimensions (NaN when one is NaN); ``epsilon``, ``bins``, ``rule``,
        ``label_policy``, ``label_policy_rule``; ``notes``: statistic -> why it is NaN.

    Raises:
        ValueError: mismatched lengths, a malformed distribution (naming the sample and
            dimension), a rating that is not an integer 1..5, a distribution for
            ``content_pass``, or a bad ``epsilon`` / ``bins``.
    """
    dims = list(dimensions)
    describe = describe_label_policy(label_policy)  # checks the policy
    if not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1 / N_LEVELS:
        raise ValueError(f"epsilon={epsilon!r} must be in (0, {1 / N_LEVELS})")
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise ValueError(f"bins={bins!r} must be a number of bins (>= 1)")
    dist_rows, ref_rows = list(distributions), list(references)
    if len(dist_rows) != len(ref_rows):
        raise ValueError(
            f"distributions has {len(dist_rows)} samples but references has {len(ref_rows)}"
        )
    for name, rows in (("distributions", dist_rows), ("references", ref_rows)):
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not isinstance(row, Sequence | np.ndarray):
                raise ValueError(f"{name}[{i}]: expected one entry per dimension, got {row!r}")
            if len(row) != len(dims):
                raise ValueError(
                    f"{name}[{i}] has {len(row)} entries but there are {len(dims)} dimensions"
                )

    out: dict[str, Any] = {"dimensions": {}}
    notes: dict[str, str] = {}
    for j, dim in enumerate(dims):
        predicted, counts, no_ratings, no_dist = [], [], 0, 0
        for i in range(len(dist_rows)):
            p = dist_rows[i][j]
            if dim == CONTENT_PASS:
                if p is not None:
                    raise ValueError(
                        f"distributions[{i}][{j}] ({dim}): Content Pass has no 5-way "
                        "distribution; give None"
                    )
                continue
            if p is None:
                no_dist += 1
                continue
            p = _check_distribution(p, i, j, dim)
            c = _rating_counts(ref_rows[i][j], i, j, dim, label_policy)
            if not c.sum():
                no_ratings += 1
                continue
            predicted.append(p)
            counts.append(c)
        if dim == CONTENT_PASS or len(predicted) + no_ratings == 0:
            continue  # no distribution of this dimension at all
        entry = _fit_one(np.array(predicted).reshape(-1, N_LEVELS), counts, epsilon, bins)
        entry.update(no_ratings=no_ratings, no_distribution=no_dist)
        if not predicted:
            for stat in STATISTICS:
                notes[f"{dim}_{stat}"] = "no sample has both a distribution and a rating"
        out["dimensions"][dim] = entry
    fitted = out["dimensions"]
    for stat in STATISTICS:
        values = [entry[stat] for entry in fitted.values()]
        out[f"avg_{stat}"] = float(np.mean(values)) if values else math.nan
        if not values:
            notes[f"avg_{stat}"] = "no dimension has a predicted distribution"
        elif any(math.isnan(v) for v in values):
            undefined = [d for d, e in fitted.items() if math.isnan(e[stat])]
            notes[f"avg_{stat}"] = f"undefined: the {stat} of {', '.join(undefined)} is undefined"
    out.update(epsilon=float(epsilon), bins=int(bins), rule=RULE, **describe, notes=notes)
    return out


def _check_distribution(value: Any, i: int, j: int, dim: str) -> np.ndarray:
    where = f"distributions[{i}][{j}] ({dim})"
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected {N_LEVELS} probabilities, got {value!r}") from None
    if p.shape != (N_LEVELS,):
        raise ValueError(
            f"{where}: expected {N_LEVELS} probabilities (of scores {SCORE_MIN}..{SCORE_MAX}), "
            f"got shape {p.shape}"
        )
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"{where}: probabilities must be finite and non-negative, got {p}")
    if abs(p.sum() - 1.0) > SUM_TOLERANCE:
        raise ValueError(
            f"{where}: probabilities sum to {p.sum():.6g}, not 1 (within {SUM_TOLERANCE})"
        )
    return p / p.sum()


def _rating_counts(value: Any, i: int, j: int, dim: str, policy: str) -> np.ndarray:
    """How many of one sample's ratings (after the label policy) fell on each score."""
    where = f"references[{i}][{j}] ({dim})"
    if value is None:
        return np.zeros(N_LEVELS)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence | np.ndarray):
        raise ValueError(
            f"{where}: the distribution fit needs the annotator ratings (a list), got {value!r}"
        )
    counts = np.zeros(N_LEVELS)
    for k, rating in enumerate(apply_label_policy(list(value), dim, policy)):
        if rating is None or (isinstance(rating, float) and math.isnan(rating)):
            continue
        if (
            isinstance(rating, bool)
            or not isinstance(rating, numbers.Real)
            or rating != int(rating)
            or not SCORE_MIN <= rating <= SCORE_MAX
        ):
            raise ValueError(
                f"{where}[{k}]: expected a rating {SCORE_MIN}..{SCORE_MAX} or None, got {rating!r}"
            )
        counts[int(rating) - SCORE_MIN] += 1
    return counts


def _fit_one(
    predicted: np.ndarray, counts: list[np.ndarray], epsilon: float, bins: int
) -> dict[str, Any]:
    n = predicted.shape[0]
    count = np.array(counts).reshape(n, N_LEVELS)
    n_ratings = int(count.sum())
    empirical = count / np.maximum(count.sum(axis=1, keepdims=True), 1)
    baseline = count.sum(axis=0) / n_ratings if n_ratings else np.full(N_LEVELS, math.nan)
    entry: dict[str, Any] = {"samples": n, "ratings": n_ratings}
    if n:
        entry["nll"] = _nll(predicted, count, epsilon)
        entry["jsd"] = float(np.mean(_jsd(predicted, empirical)))
        constant = np.broadcast_to(baseline, predicted.shape)
        entry["nll_baseline"] = _nll(constant, count, epsilon)
        entry["jsd_baseline"] = float(np.mean(_jsd(constant, empirical)))
    else:
        for stat in ("nll", "jsd", "nll_baseline", "jsd_baseline"):
            entry[stat] = math.nan
    entry["reliability"] = reliability_bins(predicted.ravel(), empirical.ravel(), bins)
    entry["ece"] = expected_calibration_error(entry["reliability"])
    entry["baseline"] = baseline.tolist()
    return entry


def _nll(predicted: np.ndarray, count: np.ndarray, epsilon: float) -> float:
    clipped = np.maximum(predicted, epsilon)
    clipped = clipped / clipped.sum(axis=1, keepdims=True)
    return float(-(count * np.log(clipped)).sum() / count.sum())


def _jsd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row, the Jensen-Shannon divergence (base 2) of two distributions."""
    m = (p + q) / 2

    def kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * np.log2(a / m), 0.0)
        return terms.sum(axis=1)

    return np.clip((kl(p) + kl(q)) / 2, 0.0, 1.0)


def reliability_bins(predicted: Any, observed: Any, bins: int = N_BINS) -> list[dict[str, Any]]:
    """Pairs of a predicted probability and an observed frequency, binned by the prediction
    into ``bins`` equal bins of [0, 1] (1.0 falls in the last; a probability within
    :data:`EDGE_TOLERANCE` below an edge, e.g. 0.1 renormalised to 0.09999999999999999, in
    the bin above it): per bin ``low``, ``high``,
    ``mean_predicted``, ``observed`` (their mean observed frequency; both ``None`` for an
    empty bin) and ``count``.

    Example:
        >>> [b["count"] for b in reliability_bins([0.05, 0.15, 0.95, 1.0], [0, 0, 1, 1], 2)]
        [2, 2]
    """
    p = np.asarray(predicted, dtype=float).ravel()
    o = np.asarray(observed, dtype=float).ravel()
    index = np.clip(np.floor(p * bins + EDGE_TOLERANCE).astype(int), 0, bins - 1)
    out = []
    for b in range(bins):
        mask = index == b
        k = int(mask.sum())
        out.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "mean_predicted": float(p[mask].mean()) if k else None,
                "observed": float(o[mask].mean()) if k else None,
                "count": k,
            }
        )
    return out


def expected_calibration_error(reliability: Sequence[Mapping[str, Any]]) -> float:
    """``sum(count / total * |mean_predicted - observed|)`` over the bins; NaN without pairs.

    Example:
        >>> round(expected_calibration_error(reliability_bins([0.2, 0.8], [0.0, 1.0], 10)), 6)
        0.2
    """
    total = sum(b["count"] for b in reliability)
    if not total:
        return math.nan
    return float(
        sum(
            b["count"] / total * abs(b["mean_predicted"] - b["observed"])
            for b in reliability
            if b["count"]
        )
    )


def shared_average(
    a: Mapping[str, Any], b: Mapping[str, Any], stat: str = "nll"
) -> tuple[float, float, list[str]]:
    """``stat`` of two fits (e.g. of two scorers on one split) averaged over the dimensions
    both fitted, as ``avg_{stat}`` averages it over all of one fit's, and those dimensions
    (NaN averages when none is shared)."""
    shared = [d for d in b["dimensions"] if d in a["dimensions"]]

    def mean(fit: Mapping[str, Any]) -> float:
        values = [fit["dimensions"][d][stat] for d in shared]
        return float(np.mean(values)) if values else math.nan

    return mean(a), mean(b), shared


def fit_table(fit: Mapping[str, Any]) -> dict[str, Any]:
    """The flat keys ``drame_metric`` returns: ``{dim}_nll``, ``{dim}_jsd``,
    ``{dim}_nll_baseline``, ``{dim}_jsd_baseline``, ``{dim}_ece`` per dimension, the
    ``avg_*`` of each, and ``nll_epsilon``."""
    out: dict[str, Any] = {}
    for dim, entry in fit["dimensions"].items():
        for stat in STATISTICS:
            out[f"{dim}_{stat}"] = entry[stat]
    for stat in STATISTICS:
        out[f"avg_{stat}"] = fit[f"avg_{stat}"]
    out["nll_epsilon"] = fit["epsilon"]
    return out


def reliability_plot(
    fit: Mapping[str, Any], path: str | os.PathLike, title: str | None = None
) -> Path:
    """A reliability diagram per dimension of ``fit`` (a grid), saved as a PNG at ``path``.

    Each panel plots the observed frequency against the mean predicted probability of every
    non-empty bin, with the diagonal of perfect calibration; the bars below show how many
    (sample, score) pairs fell in each bin. The panel title gives the ECE, NLL and JSD with
    their baselines.

    Raises:
        ValueError: ``fit`` has no dimension with a predicted distribution.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = list(fit["dimensions"])
    if not dims:
        raise ValueError("reliability_plot: the fit has no dimension with a distribution")
    cols = 2 if len(dims) == 4 else min(len(dims), 3)
    rows = math.ceil(len(dims) / cols)
    fig = plt.figure(figsize=(4.6 * cols, 5.4 * rows + 0.4), layout="constrained")
    grid = fig.add_gridspec(rows * 2, cols, height_ratios=[3, 1] * rows)
    for k, dim in enumerate(dims):
        entry = fit["dimensions"][dim]
        r, c = divmod(k, cols)
        ax = fig.add_subplot(grid[2 * r, c])
        hist = fig.add_subplot(grid[2 * r + 1, c], sharex=ax)
        full = [b for b in entry["reliability"] if b["count"]]
        ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
        ax.plot(
            [b["mean_predicted"] for b in full],
            [b["observed"] for b in full],
            marker="o",
            color="tab:blue",
            label="scorer",
            clip_on=False,
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("observed frequency")
        ax.tick_params(labelbottom=False)
        ax.grid(alpha=0.3)
        name = RUBRIC_NAMES.get(dim, dim)
        ax.set_title(
            f"{name} ({entry['samples']} clips)\nECE {_num(entry['ece'])}\n"
            f"NLL {_num(entry['nll'])} vs baseline {_num(entry['nll_baseline'])}\n"
            f"JSD {_num(entry['jsd'])} vs baseline {_num(entry['jsd_baseline'])}",
            fontsize=9,
        )
        if k == 0:
            ax.legend(loc="upper left", fontsize=8)
        centres = [(b["low"] + b["high"]) / 2 for b in entry["reliability"]]
        width = entry["reliability"][0]["high"] - entry["reliability"][0]["low"]
        counts = [b["count"] for b in entry["reliability"]]
        hist.bar(centres, counts, width=width * 0.9, color="tab:grey")
        top = max(counts) if counts else 0
        for x, n in zip(centres, counts, strict=True):
            if n:
                hist.text(x, n, str(n), ha="center", va="bottom", fontsize=7)
        hist.set_ylim(0, top * 1.35 + 1)
        hist.set_xlabel("predicted probability")
        hist.set_ylabel("pairs")
        hist.tick_params(labelsize=8)
    fig.suptitle(
        title
        or "Reliability of the predicted 1-5 distributions\n"
        f"(label policy: {fit['label_policy']}; bars: (clip, score) pairs per bin)",
        fontsize=10,
    )
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _num(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"
