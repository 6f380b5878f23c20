"""The RoleBench leaderboard (Speech-DRAME Tables 5 and 6) from results rows.

Per system: how many scenarios were scored, which responses are missing or failed (with the
reasons), the Content Pass rate (archetype: share of clips whose pass probability is at least
:data:`speech_drame.metrics.PASS_THRESHOLD`), every dimension's mean over the scored units and
their average, each with a percentile bootstrap interval over units drawn by
:func:`speech_drame.metrics.resample_counts`. Multi-turn sets score dialogues: per-turn scores
are aggregated by :func:`speech_drame.multiturn.aggregate_turns`; a dialogue with a missing or
failed turn is listed, not scored. Written as Markdown, CSV, JSON and two PNG plots; the JSON
is strict (an undefined statistic is ``null`` with a ``note`` beside it saying why).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import write_json, write_text
from speech_drame.rolebench import Plan, ScenarioSet
from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES, dimensions


def _interval(values: np.ndarray, counts: list[np.ndarray], confidence: float) -> list[float]:
    """Percentile interval of the mean of ``values`` (n,) over resamples given as counts."""
    n = len(values)
    means = np.concatenate([c @ values / n for c in counts])
    tail = 100 * (1 - confidence) / 2
    return [float(v) for v in np.percentile(means, [tail, 100 - tail])]


def _stat(values: np.ndarray, counts: list[np.ndarray] | None, confidence: float) -> dict:
    if not len(values):
        return {"mean": math.nan, "ci": [math.nan, math.nan], "note": "no scored unit"}
    if not counts:
        return {"mean": float(values.mean()), "ci": [math.nan, math.nan],
                "note": "no bootstrap interval (0 resamples)"}  # fmt: skip
    return {"mean": float(values.mean()), "ci": _interval(values, counts, confidence)}


def system_table(
    rows: Sequence[Mapping[str, Any]],
    scenarios: ScenarioSet,
    plan: Plan,
    scorer_id: str,
    *,
    aggregation: str = "mean",
    decay: float = 0.5,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per system: counts, missing and failed lists, Content Pass rate, dimension statistics."""
    from speech_drame.metrics import PASS_THRESHOLD, resample_counts
    from speech_drame.multiturn import aggregate_turns

    by_key = {(r["system"], r["scenario"]): r for r in rows if r.get("scorer") == scorer_id}
    current = {(it.system, it.scenario.id): it.sha256 for it in plan.items}
    table: dict[str, dict[str, Any]] = {}
    for system, missing in plan.missing.items():
        ok: dict[str, Mapping[str, Any]] = {}
        failed: list[dict[str, str]] = []
        not_scored: list[str] = []
        for s in scenarios.scenarios:
            if s.id in missing:
                continue
            row = by_key.get((system, s.id))
            if row is None or row["sha256"] != current[(system, s.id)]:
                not_scored.append(s.id)
            elif "error" in row:
                failed.append({"scenario": s.id, "error": row["error"], "stage": row["stage"]})
            else:
                ok[s.id] = row
        dims = [d for d in dimensions(scenarios.mode) if any(d in r["scores"] for r in ok.values())]
        entry: dict[str, Any] = {
            "n_scenarios": len(scenarios.scenarios),
            "n_scored": len(ok),
            "missing": list(missing),
            "failed": failed,
            "not_scored": not_scored,
        }
        if scenarios.multi_turn:
            units, incomplete = [], []
            for dialogue, turn_ids in scenarios.dialogues().items():
                if all(t in ok for t in turn_ids):
                    turns = [ok[t]["scores"] for t in turn_ids]
                    units.append(aggregate_turns(turns, aggregation, decay=decay, dims=dims))
                else:
                    incomplete.append(dialogue)
            entry.update(aggregation=aggregation, n_dialogues_scored=len(units),
                         incomplete_dialogues=incomplete)  # fmt: skip
        else:
            units = [ok[s.id]["scores"] for s in scenarios.scenarios if s.id in ok]
        x = np.array([[u[d] for d in dims] for u in units], dtype=np.float64)
        x = x.reshape(len(units), len(dims))
        counts = (
            list(resample_counts(len(x), n_resamples, seed)) if len(x) and n_resamples else None
        )
        entry["dimensions"] = {d: _stat(x[:, j], counts, confidence) for j, d in enumerate(dims)}
        entry["average"] = _stat(x.mean(axis=1) if dims else np.zeros(0), counts, confidence)
        passes = [ok[s]["content_pass"] for s in ok if ok[s].get("content_pass") is not None]
        if passes and not scenarios.multi_turn:
            passed = (np.asarray(passes) >= PASS_THRESHOLD).astype(np.float64)
            entry[CONTENT_PASS] = _stat(passed, counts, confidence)
        table[system] = entry
    return table


def ranking(table: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Systems by average score, best first (unscored systems last)."""

    def key(s: str) -> float:
        mean = table[s]["average"]["mean"]
        return -mean if math.isfinite(mean) else math.inf

    return sorted(table, key=key)


def human_agreement(
    table: Mapping[str, Mapping[str, Any]], human: Mapping[str, float]
) -> dict[str, Any]:
    """System-ranking Spearman (and Kendall) of the averages against human system scores
    (:func:`speech_drame.metrics.human_ranking_agreement`)."""
    from speech_drame.metrics import human_ranking_agreement

    return human_ranking_agreement({s: e["average"]["mean"] for s, e in table.items()}, human)


def _cell(stat: Mapping[str, Any], percent: bool = False) -> str:
    f = 100.0 if percent else 1.0
    if not math.isfinite(stat["mean"]):
        return "n/a"
    lo, hi = stat["ci"]
    unit = "%" if percent else ""
    fmt = ".1f" if percent else ".2f"
    ci = f" [{lo * f:{fmt}}, {hi * f:{fmt}}]" if math.isfinite(lo) else ""
    return f"{stat['mean'] * f:{fmt}}{unit}{ci}"


def _columns(table: Mapping[str, Mapping[str, Any]]) -> tuple[bool, list[str]]:
    has_pass = any(CONTENT_PASS in e for e in table.values())
    dims: list[str] = []
    for e in table.values():
        dims += [d for d in e["dimensions"] if d not in dims]
    return has_pass, dims


def to_markdown(table: Mapping[str, Mapping[str, Any]], agreement: Mapping | None = None) -> str:
    """The leaderboard as a Markdown table (best first) with failure lists below it."""
    has_pass, dims = _columns(table)
    head = ["Rank", "System", *(["Content Pass"] if has_pass else []),
            *(RUBRIC_NAMES[d] for d in dims), "Avg.", "Scored", "Missing", "Failed"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rank, system in enumerate(ranking(table), start=1):
        e = table[system]
        cells = [str(rank), system]
        if has_pass:
            cells.append(_cell(e[CONTENT_PASS], percent=True) if CONTENT_PASS in e else "n/a")
        cells += [_cell(e["dimensions"][d]) if d in e["dimensions"] else "n/a" for d in dims]
        scored = e.get("n_dialogues_scored", e["n_scored"])
        cells += [_cell(e["average"]), str(scored), str(len(e["missing"])), str(len(e["failed"]))]
        lines.append("| " + " | ".join(cells) + " |")
    notes = []
    for system in sorted(table):
        e = table[system]
        for s in e["missing"]:
            notes.append(f"- {system}: missing response for scenario {s}")
        for f in e["failed"]:
            notes.append(f"- {system}: {f['stage']} failure on {f['scenario']}: {f['error']}")
        for s in e["not_scored"]:
            notes.append(f"- {system}: not scored yet: {s}")
        for d in e.get("incomplete_dialogues", []):
            notes.append(f"- {system}: dialogue {d} incomplete (a turn is missing or failed)")
    if notes:
        lines += ["", "Not scored:", *notes]
    if agreement is not None and math.isfinite(agreement["spearman"]):
        lines += ["", f"System-ranking Spearman vs human scores: {agreement['spearman']:.3f} "
                      f"(Kendall {agreement['kendall']:.3f}, {agreement['n_systems']} systems)"]  # fmt: skip
    elif agreement is not None:
        lines += [
            "",
            f"System-ranking Spearman vs human scores: {agreement.get('note', 'undefined')}",
        ]
    return "\n".join(lines) + "\n"


def to_csv(table: Mapping[str, Mapping[str, Any]]) -> str:
    """One row per system: counts, then mean, CI low and CI high of every statistic."""
    has_pass, dims = _columns(table)
    stats = ([CONTENT_PASS] if has_pass else []) + dims + ["average"]
    header = ["rank", "system", "n_scenarios", "n_scored", "n_missing", "n_failed"]
    header += [f"{s}{suffix}" for s in stats for suffix in ("", "_ci_low", "_ci_high")]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for rank, system in enumerate(ranking(table), start=1):
        e = table[system]
        row: list[Any] = [rank, system, e["n_scenarios"], e["n_scored"], len(e["missing"]),
                          len(e["failed"])]  # fmt: skip
        for s in stats:
            stat = e.get(s) if s in (CONTENT_PASS, "average") else e["dimensions"].get(s)
            row += [stat["mean"], *stat["ci"]] if stat else ["", "", ""]
        writer.writerow(row)
    return buf.getvalue()


def plot(table: Mapping[str, Mapping[str, Any]], out_dir: str | os.PathLike) -> list[Path]:
    """``bars.png`` (per-dimension means with intervals, one bar per system) and ``radar.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _, dims = _columns(table)
    systems = ranking(table)
    labels = [RUBRIC_NAMES[d] for d in dims]
    width = 0.8 / max(len(systems), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(dims) + 2), 4.5))
    for k, system in enumerate(systems):
        stats = [
            table[system]["dimensions"].get(d, {"mean": np.nan, "ci": [np.nan] * 2}) for d in dims
        ]
        means = np.array([s["mean"] for s in stats])
        err = np.abs(np.array([s["ci"] for s in stats]).T - means)
        xs = np.arange(len(dims)) + (k - (len(systems) - 1) / 2) * width
        ax.bar(xs, means, width, yerr=err, capsize=2, label=system)
    ax.set_xticks(np.arange(len(dims)), labels, rotation=30, ha="right")
    ax.set_ylim(1, 5)
    ax.set_ylabel("mean score (1-5)")
    ax.set_title("RoleBench: per-dimension means (95% bootstrap intervals)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    bars = out / "bars.png"
    fig.savefig(bars, dpi=100)
    plt.close(fig)

    angles = np.linspace(0, 2 * np.pi, len(dims), endpoint=False)
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="polar")
    for system in systems:
        means = [table[system]["dimensions"].get(d, {"mean": np.nan})["mean"] for d in dims]
        ax.plot(np.append(angles, angles[0]), np.append(means, means[0]), label=system)
    ax.set_xticks(angles, labels, fontsize="small")
    ax.set_ylim(1, 5)
    ax.set_title("RoleBench radar")
    ax.legend(loc="upper right", bbox_to_anchor=(1.3, 1.1), fontsize="small")
    fig.tight_layout()
    radar = out / "radar.png"
    fig.savefig(radar, dpi=100)
    plt.close(fig)
    return [bars, radar]


def write_reports(
    table: Mapping[str, Mapping[str, Any]],
    out_dir: str | os.PathLike,
    *,
    agreement: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    plots: bool = True,
) -> dict[str, Path]:
    """``leaderboard.md``, ``.csv``, ``.json`` (strict: NaN -> null) and (``plots``)
    ``bars.png``/``radar.png``, each written atomically."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "markdown": out / "leaderboard.md",
        "csv": out / "leaderboard.csv",
        "json": out / "leaderboard.json",
    }
    doc = {**(meta or {}), "ranking": ranking(table), "systems": table}
    if agreement is not None:
        doc["human_agreement"] = agreement
    write_text(paths["markdown"], to_markdown(table, agreement))
    write_text(paths["csv"], to_csv(table))
    write_json(paths["json"], doc)
    if plots:
        paths["bars"], paths["radar"] = plot(table, out)
    return paths
