"""The text `train-lite` and `summary --scorer` print about a LiteScorer's evaluation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from speech_drame.distribution_fit import shared_average
from speech_drame.languages import ALL_LABELS
from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES, Config, dimensions
from speech_drame.scorers.evaluation import SplitReport
from speech_drame.scorers.lite.training import ConfigRun
from speech_drame.stats import AlignmentTable


def format_table(config: Config, reports: Sequence[SplitReport]) -> str:
    """Per-dimension Pearson (Content Pass: accuracy) of one scorer on each split."""
    tables = [r.alignment for r in reports]
    dims = [d for d in dimensions(config) if d in tables[0].dimensions]
    head = f"{config:<38}" + "".join(f"{r.split:>12}" for r in reports)
    lines = [head, "-" * len(head)]

    def cell(value: Any) -> str:
        return (
            f"{value:>12.3f}"
            if isinstance(value, float) and not math.isnan(value)
            else f"{'n/a':>12}"
        )

    if tables[0].content_pass is not None:
        name = f"{RUBRIC_NAMES[CONTENT_PASS]} (accuracy)"
        lines.append(f"{name:<38}" + "".join(cell(t.content_pass.accuracy) for t in tables))
    for d in dims:
        lines.append(f"{RUBRIC_NAMES[d]:<38}" + "".join(cell(t.row(d).pearson) for t in tables))
    lines.append(f"{'average Pearson':<38}" + "".join(cell(t.avg_pearson) for t in tables))
    lines.append(f"{'clips scored':<38}" + "".join(f"{r.n_scored:>12d}" for r in reports))
    lines.append(f"{'clips failed':<38}" + "".join(f"{len(r.failures):>12d}" for r in reports))
    if any(r.no_audio for r in reports):
        lines.append(
            f"{'clips without audio':<38}" + "".join(f"{len(r.no_audio):>12d}" for r in reports)
        )
    if any(r.distribution_fit for r in reports):
        for label, key in (
            ("average NLL of the ratings", "avg_nll"),
            ("average NLL, pooled-rating baseline", "avg_nll_baseline"),
            ("average JSD to the raters", "avg_jsd"),
            ("average JSD, pooled-rating baseline", "avg_jsd_baseline"),
            ("average ECE (10 bins)", "avg_ece"),
        ):
            lines.append(
                f"{label:<38}" + "".join(cell((r.distribution_fit or {}).get(key)) for r in reports)
            )
    seen = {g for r in reports for g in r.by_language}
    for language in [g for g in ALL_LABELS if g in seen] + sorted(seen - set(ALL_LABELS)):
        groups = [r.by_language.get(language, {}) for r in reports]
        lines.append(
            f"{f'average Pearson, {language}':<38}"
            + "".join(cell(_group_average(g)) for g in groups)
        )
        lines.append(
            f"{f'clips scored, {language}':<38}"
            + "".join(f"{g.get('count', 0):>12d}" for g in groups)
        )
    if seen:
        lines.append(
            f"{'language differs from the release':<38}"
            + "".join(f"{len(r.language_mismatches):>12d}" for r in reports)
        )
    lines.append(f"label policy: {tables[0].label_policy} ({tables[0].label_policy_rule})")
    return "\n".join(lines)


def format_comparison(
    config: Config, reports: Sequence[SplitReport], parent_reports: Sequence[SplitReport]
) -> str:
    """Per-dimension Pearson (Content Pass: accuracy) of the initial scorer and the fine-tuned
    one on the same splits, side by side."""
    parents = {r.split: r for r in parent_reports}
    pairs = [(r.split, parents[r.split], r) for r in reports if r.split in parents]
    if not pairs:
        return ""
    head = f"{config + ': initial -> fine-tuned':<38}" + "".join(
        f"{split:>24}" for split, _, _ in pairs
    )
    sub = " " * 38 + f"{'initial':>12}{'fine-tuned':>12}" * len(pairs)
    lines = [head, sub, "-" * len(sub)]

    def cells(get: Any) -> str:
        return "".join(f"{_cell(get(a), 12)}{_cell(get(b), 12)}" for _, a, b in pairs)

    first = pairs[0][2].alignment
    if first.content_pass is not None and pairs[0][1].alignment.content_pass is not None:
        name = f"{RUBRIC_NAMES[CONTENT_PASS]} (accuracy)"
        lines.append(f"{name:<38}" + cells(lambda r: r.alignment.content_pass.accuracy))
    for d in [d for d in dimensions(config) if d in first.dimensions]:
        lines.append(
            f"{RUBRIC_NAMES[d]:<38}"
            + cells(
                lambda r, d=d: r.alignment.row(d).pearson if d in r.alignment.dimensions else None
            )  # fmt: skip
        )
    lines.append(f"{'average Pearson':<38}" + cells(lambda r: r.alignment.avg_pearson))
    fitted = [(a, b) for _, a, b in pairs if a.distribution_fit and b.distribution_fit]
    if len(fitted) == len(pairs):
        averages = [shared_average(a.distribution_fit, b.distribution_fit) for a, b in fitted]
        everything = all(len(s) == len(b.distribution_fit["dimensions"])
                         for (_, b), (_, _, s) in zip(fitted, averages, strict=True))  # fmt: skip
        label = "average NLL of the ratings" + ("" if everything else " (shared dims)")
        lines.append(
            f"{label:<38}" + "".join(f"{_cell(a, 12)}{_cell(b, 12)}" for a, b, _ in averages)
        )
    return "\n".join(lines)


def _cell(value: Any, width: int) -> str:
    if isinstance(value, float) and not math.isnan(value):
        return f"{value:>{width}.3f}"
    return f"{'n/a':>{width}}"


def format_init(init: Mapping[str, Any]) -> str:
    """One paragraph on what fine-tuning did: the parent, the schedule, each dimension's fate
    and how far the kept ones moved."""
    parent, dims = init["parent"], init["dimensions"]
    where = parent.get("source") or parent.get("path") or "a model in memory"
    lines = [
        f"fine-tuned from {parent['id']} ({where}): {init['epochs']} epoch(s), anchor "
        f"{init['anchor']:g}, label policy {init['label_policy']}"
        + (
            f" (the initial scorer was trained with {parent['label_policy']})"
            if parent.get("label_policy") != init["label_policy"]
            else ""
        )
    ]
    for fate in ("updated", "added", "kept"):
        if dims[fate]:
            lines.append(f"  {fate}: {', '.join(RUBRIC_NAMES[d] for d in dims[fate])}")
    if init.get("content_pass"):
        lines.append(f"  {RUBRIC_NAMES[CONTENT_PASS]}: {init['content_pass']}")
    if init.get("kept_drift"):
        moved = ", ".join(f"{RUBRIC_NAMES[d]} {v:.3f}" for d, v in init["kept_drift"].items())
        lines.append(f"  kept heads moved with the shared layer (mean |change| on train): {moved}")
    return "\n".join(lines)


def _group_average(group: Mapping[str, Any]) -> float | None:
    """The average Pearson of one language's group (``None`` without a table)."""
    table = group.get("table")
    return AlignmentTable.from_flat(table).avg_pearson if table else None


def print_config_run(run: ConfigRun) -> None:
    """What `train-lite` prints once a config's scorer is saved: its table, what was skipped,
    the reliability diagrams and the folder."""
    print(format_table(run.config, run.reports))
    if run.training.failures:
        print(
            f"{len(run.training.failures)} train clip(s) skipped: {_first(run.training.failures)}"
        )
    for r in run.reports:
        if r.failures:
            print(f"{len(r.failures)} {r.split} clip(s) not scored: {_first(r.failures)}")
    for split, why in run.not_evaluated.items():
        print(f"{run.config}/{split} not evaluated: {why}")
    if run.init is not None:
        print(format_init(run.init))
        comparison = format_comparison(run.config, run.reports, run.parent_reports)
        if comparison:
            print(comparison)
    for plot in run.plots:
        print(f"reliability diagram: {plot}")
    print(f"saved {run.folder}\n")


def print_run_end(metrics_path: Path, cache: Any) -> None:
    """The last lines of `train-lite`: the evaluation file and the feature cache's hits and
    misses (0 misses after `speech-drame features` filled it)."""
    print(f"evaluation: {metrics_path}")
    if cache is not None:
        print(f"feature cache {cache.root}: {cache.hits} hits, {cache.misses} misses")


def _first(failures: Mapping[str, str], k: int = 3) -> str:
    items = list(failures.items())
    shown = "; ".join(f"{cid}: {why}" for cid, why in items[:k])
    return shown + (f"; ... ({len(items) - k} more)" if len(items) > k else "")
