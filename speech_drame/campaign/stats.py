"""How a campaign is doing: progress, agreement and human ceiling, and each rater's checks.

:func:`campaign_status` computes, from exactly the annotation lists :mod:`.export` writes, the
Appendix K agreement (:func:`speech_drame.stats.agreement`) and the leave-one-annotator-out
ceiling (:func:`speech_drame.stats.human_ceiling`) per dimension, so they equal
``speech-drame agreement`` on the built export, with percentile bootstrap intervals over clips.
Per rater it reports repeat self-consistency and gold checks passed. :func:`format_status`
prints the report; :func:`write_plots` draws it.
"""

from __future__ import annotations

import io
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic_io import write_bytes
from ..labels import apply_label_policy, describe_label_policy
from ..schema import CONTENT_PASS, RUBRIC_NAMES, SCORE_RANGE, Config, dimensions
from ..stats import (
    AnnotatorRatings,
    agreement,
    annotator_matrices,
    human_ceiling,
    percentile_interval,
    resample_counts,
)
from .evaluator_agreement import agreement_curve, evaluator_agreement
from .export import dataset_annotations, release_ratings, score_value
from .records import TASK_KINDS, CampaignClip, StoredRating

CONFIDENCE_LEVEL = 0.95
CEILING_METHOD = "pearson"  # as `speech-drame agreement` by default


def resampled_ceilings(m: AnnotatorRatings, counts: np.ndarray) -> np.ndarray:
    """:func:`~speech_drame.stats.human_ceiling` (Pearson) of each resample, one row of
    ``counts`` (how often each clip is drawn) per resample, as draw-weighted sums."""
    s = m.scores
    present = ~np.isnan(s)
    count = present.sum(axis=1)
    total = np.where(present, s, 0).sum(axis=1)
    sums = np.zeros(counts.shape[0])
    weights = np.zeros(counts.shape[0])
    for j in range(s.shape[1]):
        use = present[:, j] & (count >= 2)
        x = s[use, j]
        y = (total[use] - x) / (count[use] - 1)
        w = counts[:, use].astype(float)
        n = w.sum(axis=1)
        drawn = w > 0
        varies = np.ones(n.size, bool)
        for v in (x, y):
            high = np.where(drawn, v, -np.inf).max(axis=1, initial=-np.inf)
            low = np.where(drawn, v, np.inf).min(axis=1, initial=np.inf)
            varies &= high > low
        with np.errstate(invalid="ignore", divide="ignore"):
            mx, my = (w @ x) / n, (w @ y) / n
            sxy = w @ (x * y) - n * mx * my
            sxx = w @ (x * x) - n * mx * mx
            syy = w @ (y * y) - n * my * my
            r = np.clip(sxy / np.sqrt(sxx * syy), -1, 1)
        defined = varies & (n >= 2) & np.isfinite(r)
        sums += np.where(defined, r * n, 0)
        weights += np.where(defined, n, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weights > 0, sums / weights, np.nan)


def dimension_statistics(m: AnnotatorRatings, bootstrap: int, seed: int | None) -> dict[str, Any]:
    """Agreement and ceiling of one dimension with percentile intervals over ``bootstrap``
    resamples of the clips (:func:`speech_drame.stats.resample_counts` with ``seed``)."""
    a = agreement(m)
    c = human_ceiling(m, CEILING_METHOD)
    entry: dict[str, Any] = {
        "agreement": a.overall,
        "agreement_interval": [math.nan, math.nan],
        "mean_std": a.mean_std,
        "samples_used": a.n_samples,
        "samples_ignored": a.n_ignored,
        "null_ratings": a.n_null,
        "null_ratings_counted_as_1": m.n_filled,
        "ceiling": c.ceiling,
        "ceiling_interval": [math.nan, math.nan],
        "ceiling_per_position": c.per_position.tolist(),
        "ceiling_counts": c.counts.tolist(),
    }
    if c.note:
        entry["ceiling_note"] = c.note
    if bootstrap <= 0:
        return entry
    used = a.count >= 2
    agree, ceil = [], []
    for block in resample_counts(a.count.size, bootstrap, seed):
        # the mean per-clip std over the resample, weighted by how often each clip is drawn
        w = block[:, used]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_std = (w @ a.std[used]) / w.sum(axis=1)
        agree.append(np.clip(1 - mean_std / a.score_range, 0, 1))
        ceil.append(resampled_ceilings(m, block))
    agree_all, ceil_all = np.concatenate(agree), np.concatenate(ceil)
    entry["agreement_interval"] = percentile_interval(agree_all, CONFIDENCE_LEVEL)
    entry["ceiling_interval"] = percentile_interval(ceil_all, CONFIDENCE_LEVEL)
    entry["bootstrap_undefined"] = {
        "agreement": int((~np.isfinite(agree_all)).sum()),
        "ceiling": int((~np.isfinite(ceil_all)).sum()),
    }
    return entry


def _repeat_consistency(
    config: Config, pairs: list[tuple[StoredRating, StoredRating]], policy: str
) -> dict[str, Any]:
    """Mean |difference| and exact share per dimension over (first, repeat) pairs; pairs
    where either failed Content Pass are compared on Content Pass only."""
    diffs: dict[str, list[float]] = {d: [] for d in dimensions(config)}
    flips = 0
    for first, again in pairs:
        if config == "archetype":
            flips += first.answers.content_pass != again.answers.content_pass
            if not (first.answers.content_pass and again.answers.content_pass):
                continue
        for dim, values in diffs.items():
            a, b = apply_label_policy([score_value(first, dim), score_value(again, dim)], dim,
                                      policy)  # fmt: skip
            if a is not None and b is not None and a != "N/A" and b != "N/A":
                values.append(abs(a - b))
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "mean_abs_diff": {d: float(np.mean(v)) if v else math.nan for d, v in diffs.items()},
        "exact_share": {
            d: float(np.mean([x == 0 for x in v])) if v else math.nan for d, v in diffs.items()
        },
        "compared": {d: len(v) for d, v in diffs.items()},
    }
    if config == "archetype":
        out["content_pass_flips"] = flips
    return out


def gold_passed(clip: CampaignClip, rating: StoredRating) -> bool:
    """Whether ``rating`` meets every expectation of the gold ``clip``."""
    a = rating.answers
    for key, expected in (clip.gold or {}).items():
        if key == CONTENT_PASS:
            if a.content_pass != expected:
                return False
        else:
            score = a.scores.get(key)
            if score is None or not expected[0] <= score <= expected[1]:
                return False
    return True


def campaign_status(
    campaign: Any,
    bootstrap: int = 1000,
    seed: int = 0,
    label_policy: str = "paper",
    test_share: float | None = None,
) -> dict[str, Any]:
    """The campaign's progress, per-dimension agreement and ceiling (with intervals),
    per-rater checks and the attached scorers' agreement with the ratings (``scorers``:
    :func:`.evaluator_agreement.evaluator_agreement`, over the clips ``export --test-share
    test_share`` deals to ``test`` when given; ``evaluator_curve``:
    :func:`.evaluator_agreement.agreement_curve`, when a scorer is attached), as a JSON-able
    dict (undefined numbers are NaN).

    Uses ``campaign.config``, ``campaign.assign``, ``campaign.raters_per_clip``,
    ``campaign.clips()``, ``campaign.gold_clips()``,
    ``campaign.ratings(kinds=("regular", "repeat", "gold"))``,
    ``campaign.attached_scorers()`` and ``campaign.scorer_results()``.
    """
    config: Config = campaign.config
    k = campaign.raters_per_clip
    clips = campaign.clips()
    everything = campaign.ratings(kinds=TASK_KINDS)
    by_clip = release_ratings(everything)
    counts = [len(by_clip.get(c.id, ())) for c in clips]
    report: dict[str, Any] = {
        "config": config,
        **describe_label_policy(label_policy),
        "score_range": SCORE_RANGE,
        "ceiling_method": CEILING_METHOD,
        "bootstrap": {
            "resamples": bootstrap,
            "seed": seed,
            "level": CONFIDENCE_LEVEL,
            "method": "percentile, clips resampled",
        },  # fmt: skip
        "assign": campaign.assign,
        "progress": {
            "clips": len(clips),
            "raters_per_clip": k,
            "target_ratings": len(clips) * k,
            "ratings": sum(counts),
            "clips_complete": sum(n >= k for n in counts),
            "clips_started": sum(n > 0 for n in counts),
            "clips_by_ratings": {str(n): c for n, c in sorted(Counter(counts).items())},
        },
        "dimensions": {},
        "raters": {},
    }
    rows = [dataset_annotations(config, by_clip[c.id]) for c in clips if c.id in by_clip]
    report["samples"] = len(rows)
    if rows:
        mats = annotator_matrices(rows, dimensions(config), label_policy=label_policy)
        for dim, m in mats.items():
            report["dimensions"][dim] = dimension_statistics(m, bootstrap, seed)
    report["scorers_test_share"] = test_share
    report["scorers"] = evaluator_agreement(
        campaign, by_clip, bootstrap=bootstrap, seed=seed, label_policy=label_policy,
        test_share=test_share,
    )  # fmt: skip
    if report["scorers"]:
        report["evaluator_curve"] = agreement_curve(campaign, everything, label_policy, test_share)

    first = {(r.rater, r.clip_id): r for rs in by_clip.values() for r in rs}
    gold = {c.id: c for c in campaign.gold_clips()}
    raters: dict[str, dict[str, Any]] = {}
    pairs: dict[str, list[tuple[StoredRating, StoredRating]]] = {}
    for r in sorted(everything, key=lambda r: r.rating_id):
        entry = raters.setdefault(
            r.rater, {**dict.fromkeys(TASK_KINDS, 0), "gold_passed": 0, "gold_failed": []}
        )
        entry[r.kind] += 1
        if r.kind == "repeat" and (r.rater, r.clip_id) in first:
            pairs.setdefault(r.rater, []).append((first[(r.rater, r.clip_id)], r))
        elif r.kind == "gold" and r.clip_id in gold:
            if gold_passed(gold[r.clip_id], r):
                entry["gold_passed"] += 1
            else:
                entry["gold_failed"].append(r.clip_id)
    for name, entry in sorted(raters.items()):
        entry["repeats"] = _repeat_consistency(config, pairs.get(name, []), label_policy)
        report["raters"][name] = entry
    return report


def _num(value: float, width: int, digits: int = 3) -> str:
    return (
        f"{'n/a':>{width}}" if value is None or math.isnan(value) else f"{value:>{width}.{digits}f}"
    )


def _interval(values: list[float], width: int) -> str:
    lo, hi = values
    text = "" if math.isnan(lo) else f"[{lo:.2f}, {hi:.2f}]"
    return f"{text:>{width}}"


def _early_note(progress: dict[str, Any]) -> list[str]:
    """Why agreement is still n/a after the first ratings, and how many more ratings it takes:
    it needs clips with two ratings, and clips are dealt least-rated first."""
    rated_twice = sum(c for n, c in progress["clips_by_ratings"].items() if int(n) >= 2)
    if not progress["ratings"] or rated_twice or progress["raters_per_clip"] < 2:
        return []
    more = progress["clips"] - progress["clips_started"] + 1
    return [
        "agreement and ceiling need clips with 2 or more ratings: none yet. Clips are dealt "
        "least-rated first, so every clip gets its first rating before any gets a second: the "
        f"first figures come after about {more} more rating(s)."
    ]


def format_status(report: dict[str, Any]) -> str:
    """The report as readable text tables."""
    p = report["progress"]
    pct = 100 * p["ratings"] / p["target_ratings"] if p["target_ratings"] else 0.0
    boot = report["bootstrap"]
    lines = [
        f"{report['config']} campaign: {p['clips']} clips x {p['raters_per_clip']} raters = "
        f"{p['target_ratings']} ratings wanted, {p['ratings']} done ({pct:.0f}%)",
        f"clips complete {p['clips_complete']}, started {p['clips_started']}, "
        f"by ratings so far: "
        + ", ".join(f"{n} ratings: {c}" for n, c in p["clips_by_ratings"].items()),
        "",
        f"label policy {report['label_policy']}: {report['label_policy_rule']}",
    ]
    if report["dimensions"]:
        level = f"{boot['level']:.0%}"
        head = (
            f"{'dimension':36s}{'agreement':>10}{level + ' interval':>16}{'ceiling':>9}"
            f"{level + ' interval':>17}{'clips':>7}"
        )
        lines += [head, "-" * len(head)]
        for dim, e in report["dimensions"].items():
            lines.append(
                f"{RUBRIC_NAMES.get(dim, dim):36s}{_num(e['agreement'], 10)}"
                f"{_interval(e['agreement_interval'], 16)}{_num(e['ceiling'], 9)}"
                f"{_interval(e['ceiling_interval'], 17)}{e['samples_used']:>7}"
            )
        lines.append(
            f"agreement: 1 - mean per-clip std / {report['score_range']} (Appendix K); ceiling: "
            f"leave-one-annotator-out {report['ceiling_method']} correlation; intervals: "
            f"{boot['method']}, {boot['resamples']} resamples"
        )
    else:
        lines.append("no clip rated yet: no agreement")
    lines += _early_note(p)
    if report["raters"]:
        archetype = report["config"] == "archetype"
        head = (
            f"\n{'rater':20s}{'regular':>8}{'repeats':>8}{'mean |diff|':>12}{'exact':>7}"
            + (f"{'CP flips':>9}" if archetype else "")
            + f"{'gold passed':>13}"
        )
        lines += [head, "-" * (len(head) - 1)]
        for name, e in report["raters"].items():
            rep = e["repeats"]
            diff = [v for v in rep["mean_abs_diff"].values() if not math.isnan(v)]
            exact = [v for v in rep["exact_share"].values() if not math.isnan(v)]
            lines.append(
                f"{name[:19]:20s}{e['regular']:>8}{rep['pairs']:>8}"
                f"{_num(float(np.mean(diff)) if diff else math.nan, 12, 2)}"
                f"{_num(float(np.mean(exact)) if exact else math.nan, 7, 2)}"
                + (f"{rep['content_pass_flips']:>9}" if archetype else "")
                + f"{e['gold_passed']:>9}/{e['gold']:<3}"
            )
        lines.append(
            "repeats: hidden re-ratings of the rater's own clips; mean |diff| and exact share "
            "averaged over dimensions"
        )
    lines += evaluator_lines(report)
    return "\n".join(lines)


def _fit_cell(fit: dict[str, Any] | None, dim: str, stat: str, width: int) -> str:
    if not fit or f"{dim}_{stat}" not in fit:
        return f"{'':>{width}}"
    text = f"{fit[f'{dim}_{stat}']:.2f} ({fit[f'{dim}_{stat}_baseline']:.2f})"
    return f"{text:>{width}}"


def evaluator_lines(report: dict[str, Any]) -> list[str]:
    """The attached scorers' part of :func:`format_status`: per scorer its counts and, per
    dimension, Pearson and Spearman with their intervals beside the human ceiling, the
    distribution fit against its baseline and the clips each rests on; per language when both
    occur."""
    if not report.get("scorers"):
        return []
    level = f"{report['bootstrap']['level']:.0%}"
    share = report.get("scorers_test_share")
    over = "the clips rated so far" if share is None else (
        f"the rated clips `export --test-share {share:g}` puts in test")  # fmt: skip
    lines = ["", f"attached scorers: agreement with the mean rating of {over}"]
    for name, e in report["scorers"].items():
        failed = ", ".join(f"{k} {n}" for k, n in e["failures"].items())
        lines += [
            "",
            f"{name} [{e['scorer_id']}]: {e['description']}",
            f"  {e['scored']} of {e['clips']} clips scored (failed: {failed}; not yet scored: "
            f"{e['not_scored']}); {e['compared']} rated clips compared"
            + (f", {e['rated_not_compared']} rated clips without its score"
               if e["rated_not_compared"] else ""),
        ]  # fmt: skip
        if e["table"] is None:
            lines.append("  no rated clip with a score yet")
            continue
        lines += _scorer_table(e["table"], e["fit"], report["dimensions"], level)
        for language, group in e["by_language"].items():
            if group["table"] is None:
                lines.append(f"  {language}: {group['reason']}")
                continue
            lines.append(f"  {language} ({group['count']} clips):")
            lines += _scorer_table(group["table"], None, None, level, indent="    ")
    lines.append(
        "Pearson, Spearman: with the mean rating (label policy as above), percentile bootstrap "
        "intervals over clips; ceiling: the human ceiling above; NLL, JSD: the distribution fit, "
        "(baseline: the pooled rating distribution); clips: rated clips with a score"
    )
    return lines


def _scorer_table(
    table: dict[str, Any], fit: dict[str, Any] | None, human: dict[str, Any] | None, level: str,
    indent: str = "  ",
) -> list[str]:  # fmt: skip
    """One scorer's rows; without ``human`` (a language's clips) no ceiling column."""
    dims = [k.removesuffix("_pearson") for k in table if k.endswith("_pearson")
            and k != "avg_pearson"]  # fmt: skip
    head = (
        f"{indent}{'dimension':36s}{'Pearson':>8}{level + ' interval':>15}{'Spearman':>9}"
        f"{level + ' interval':>15}" + (f"{'ceiling':>8}" if human is not None else "")
        + (f"{'NLL (base)':>13}{'JSD (base)':>13}" if fit else "") + f"{'clips':>6}"
    )  # fmt: skip
    lines = [head, indent + "-" * (len(head) - len(indent))]
    nan2 = [math.nan, math.nan]
    for dim in dims:
        ceiling = "" if human is None else _num(human.get(dim, {}).get("ceiling", math.nan), 8)
        lines.append(
            f"{indent}{RUBRIC_NAMES.get(dim, dim):36s}{_num(table[f'{dim}_pearson'], 8)}"
            f"{_interval(table.get(f'{dim}_pearson_ci', nan2), 15)}"
            f"{_num(table[f'{dim}_spearman'], 9)}"
            f"{_interval(table.get(f'{dim}_spearman_ci', nan2), 15)}{ceiling}"
            + (_fit_cell(fit, dim, "nll", 13) + _fit_cell(fit, dim, "jsd", 13) if fit else "")
            + f"{table[f'{dim}_count']:>6}"
        )
    if "content_pass_accuracy" in table:
        lines.append(
            f"{indent}{'Content Pass accuracy':36s}{_num(table['content_pass_accuracy'], 8)}"
            f"{_interval(table.get('content_pass_accuracy_ci', nan2), 15)}"
            f"{'':>{24 + (8 if human is not None else 0) + (26 if fit else 0)}}"
            f"{table['content_pass_count']:>6}"
        )
    return lines


def write_plots(report: dict[str, Any], out_dir: str | os.PathLike) -> list[Path]:
    """``progress.png``, ``agreement.png`` (agreement and ceiling per dimension with their
    intervals), ``raters.png`` (repeat consistency and gold checks per rater) and, with
    attached scorers, ``evaluators.png`` (their Pearson against the human ceiling as ratings
    accumulate) in ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    p = report["progress"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    ns = list(range(p["raters_per_clip"] + 1))
    extra = sorted(int(n) for n in p["clips_by_ratings"] if int(n) > ns[-1])
    ns += extra
    bars = [p["clips_by_ratings"].get(str(n), 0) for n in ns]
    colors = ["tab:green" if n >= p["raters_per_clip"] else "tab:orange" for n in ns]
    left.bar([str(n) for n in ns], bars, color=colors)
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_xlabel("ratings so far")
    left.set_ylabel("clips")
    left.set_title(
        f"{p['clips_complete']} of {p['clips']} clips complete (target {p['raters_per_clip']})"
    )
    names = list(report["raters"])
    if names:
        y = np.arange(len(names))
        start = np.zeros(len(names))
        for kind, color in zip(TASK_KINDS, ("tab:blue", "tab:gray", "tab:olive"), strict=True):
            values = np.array([report["raters"][n][kind] for n in names], float)
            right.barh(y, values, left=start, color=color, label=kind)
            start += values
        right.set_yticks(y, [plain_label(n) for n in names])
        right.invert_yaxis()
        right.set_xlim(0, max(start.max(), 1) * 1.35)  # room for the legend
        right.legend(fontsize="small", loc="lower right")
        right.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        right.text(0.5, 0.5, "no ratings yet", ha="center", va="center", fontsize=14)
        right.set_axis_off()
    right.set_xlabel("ratings")
    right.set_title(f"{p['ratings']} of {p['target_ratings']} regular ratings done")
    fig.tight_layout()
    written.append(_save(fig, out / "progress.png", plt))

    dims = list(report["dimensions"])
    fig = _agreement_figure(report, plt) if dims else _message(plt, "no clip rated yet")
    written.append(_save(fig, out / "agreement.png", plt))

    fig = _raters_figure(report, names, plt) if names else _message(plt, "no ratings yet")
    written.append(_save(fig, out / "raters.png", plt))
    if report.get("evaluator_curve", {}).get("ratings"):
        written.append(_save(_curve_figure(report, plt), out / "evaluators.png", plt))
    return written


def _curve_figure(report: dict[str, Any], plt: Any) -> Any:
    """Per dimension, each attached scorer's Pearson and the human ceiling against the ratings
    so far (:func:`.evaluator_agreement.agreement_curve`), with the latest figures' intervals."""
    from matplotlib.ticker import MaxNLocator

    curve = report["evaluator_curve"]
    dims = [d for d in curve["ceiling"] if any(d in v for v in curve["scorers"].values())]
    cols = 2 if len(dims) == 4 else min(len(dims), 3)
    rows = math.ceil(len(dims) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.2 * rows + 1.0), squeeze=False,
                             sharex=True, layout="constrained")  # fmt: skip
    x = np.array(curve["ratings"], float)
    step = 0.015 * max(x[-1] - x[0], 1.0)  # the latest intervals side by side, not overlaid
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, ax in enumerate(axes.flat):
        if k >= len(dims):
            ax.set_axis_off()
            continue
        dim = dims[k]
        human = report["dimensions"].get(dim, {})
        ax.plot(x, curve["ceiling"][dim], color="black", ls="--", lw=1.5, marker=".",
                label="human ceiling")  # fmt: skip
        _last_interval(ax, x[-1], human.get("ceiling"), human.get("ceiling_interval"), "black")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        for j, (name, values) in enumerate(curve["scorers"].items()):
            if dim in values:
                color = colors[j % len(colors)]
                ax.plot(x, values[dim], color=color, marker="o", ms=3, label=plain_label(name))
                table = report["scorers"][name]["table"] or {}
                _last_interval(ax, x[-1] + (j + 1) * step, table.get(f"{dim}_pearson"),
                               table.get(f"{dim}_pearson_ci"), color)  # fmt: skip
        ax.axhline(0, color="lightgray", lw=0.8)
        ax.set_ylim(max(-1.05, min(-0.25, ax.get_ylim()[0])), 1.05)
        ax.grid(alpha=0.3)
        ax.set_title(RUBRIC_NAMES.get(dim, dim), fontsize=10)
        if k % cols == 0:
            ax.set_ylabel("Pearson r")
        if k >= len(dims) - cols:
            ax.set_xlabel("regular ratings so far")
            ax.tick_params(labelbottom=True)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4),
               fontsize="small")  # fmt: skip
    fig.suptitle(
        "Attached scorers (Pearson with the mean rating) against the human ceiling as ratings "
        f"accumulate\n(bars: {report['bootstrap']['level']:.0%} bootstrap interval of the latest "
        "figure)", fontsize=10,
    )  # fmt: skip
    return fig


def _last_interval(ax: Any, x: float, value: Any, interval: Any, color: str) -> None:
    """An interval bar at the curve's last point, when both are defined."""
    if (
        value is None
        or interval is None
        or not all(v is not None and math.isfinite(v) for v in (value, *interval))
    ):
        return
    lo, hi = interval
    ax.errorbar([x], [value], yerr=[[value - lo], [hi - value]], color=color, capsize=4, lw=1.2)


def _agreement_figure(report: dict[str, Any], plt: Any) -> Any:
    """Agreement and ceiling per dimension with their intervals."""
    dims = list(report["dimensions"])
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.55 * len(dims)))
    y = np.arange(len(dims))
    for offset, key, color in ((-0.17, "agreement", "tab:blue"), (0.17, "ceiling", "tab:red")):
        values = np.array([report["dimensions"][d][key] for d in dims], float)
        bounds = np.array([report["dimensions"][d][f"{key}_interval"] for d in dims], float)
        err = np.abs(bounds.reshape(-1, 2).T - values)
        ax.errorbar(values, y + offset, xerr=np.nan_to_num(err), fmt="o", color=color,
                    capsize=3, label=key)  # fmt: skip
    ax.set_yticks(y, [RUBRIC_NAMES.get(d, d) for d in dims])
    ax.invert_yaxis()
    lows = [min(e[f"{k}_interval"][0], e[k]) for e in report["dimensions"].values()
            for k in ("agreement", "ceiling")]  # fmt: skip
    ax.set_xlim(min(-0.05, np.nanmin(lows) - 0.05), 1.05)
    ax.axvline(0, color="lightgray", lw=0.8)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(f"value ({report['bootstrap']['level']:.0%} bootstrap interval over clips)")
    ax.set_title(f"Agreement (Appendix K) and human ceiling, {report.get('samples', 0)} clips")
    ax.legend(loc="lower left", fontsize="small")
    fig.tight_layout()
    return fig


def plain_label(text: str) -> str:
    """``text`` as matplotlib draws it literally: a ``$`` would start math text (a rater named
    ``$x$`` would be typeset, ``$\\frac`` would break the plot).

    >>> print(plain_label("Ann $5$"))
    Ann \\$5\\$
    """
    return text.replace("$", r"\$")


def _raters_figure(report: dict[str, Any], names: list[str], plt: Any) -> Any:
    """Repeat self-consistency heatmap (raters x dimensions) and gold pass rates."""
    dims = list(dimensions(report["config"]))
    fig, (heat, gold) = plt.subplots(
        1, 2, figsize=(11, 1.8 + 0.45 * max(len(names), 1)), width_ratios=[3, 1]
    )
    grid = np.array(
        [[report["raters"][n]["repeats"]["mean_abs_diff"][d] for d in dims] for n in names], float
    ).reshape(len(names), len(dims))
    image = heat.imshow(grid, cmap="Reds", vmin=0, vmax=2, aspect="auto")
    for (i, j), v in np.ndenumerate(grid):
        heat.text(j, i, "–" if math.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=8)
    heat.set_xticks(range(len(dims)), [RUBRIC_NAMES.get(d, d) for d in dims], rotation=30,
                    ha="right", fontsize="small")  # fmt: skip
    pairs = [report["raters"][n]["repeats"]["pairs"] for n in names]
    heat.set_yticks(
        range(len(names)),
        [plain_label(f"{n} ({k} repeats)") for n, k in zip(names, pairs, strict=True)],
    )
    heat.set_title("Repeat self-consistency: mean |difference|")
    fig.colorbar(image, ax=heat, fraction=0.04)
    rates = [
        report["raters"][n]["gold_passed"] / report["raters"][n]["gold"]
        if report["raters"][n]["gold"]
        else math.nan
        for n in names
    ]
    gold.barh(range(len(names)), np.nan_to_num(rates), color="tab:green", alpha=0.6)
    for i, n in enumerate(names):
        e = report["raters"][n]
        text = f"{e['gold_passed']}/{e['gold']}" if e["gold"] else "no gold clip rated"
        gold.text(0.02, i, text, va="center", fontsize=9)
    gold.set_yticks(range(len(names)), [""] * len(names))
    gold.set_xlim(0, 1)
    gold.invert_yaxis()
    heat.set_ylim(len(names) - 0.5, -0.5)
    gold.set_title("Gold checks passed")
    fig.tight_layout()
    return fig


def _message(plt: Any, text: str) -> Any:
    fig, ax = plt.subplots(figsize=(6, 2))
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=14)
    ax.axis("off")
    return fig


def _save(fig: Any, path: Path, plt: Any) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return write_bytes(path, buffer.getvalue())
