"""The RoleBench leaderboard (Speech-DRAME Tables 5 and 6) from results rows.

Per system: its coverage (scenarios scored of all), which responses are missing, failed (with
the reasons) or not scored yet, the Content Pass rate (archetype: share of clips whose pass
probability is at least :data:`speech_drame.stats.PASS_THRESHOLD`), every dimension's mean
and their average, each with a percentile bootstrap interval over units drawn by
:func:`speech_drame.stats.resample_counts`. Multi-turn sets score dialogues: per-turn scores
are aggregated by :func:`speech_drame.rolebench.multiturn.aggregate_turns`; a dialogue with a
missing or failed turn is listed, not scored.

Systems are compared on the same scenario set under one of two rules (:data:`RULES`; the paper
does not say how RoleBench counts a missing or failed response, so the default is this
package's choice):

- ``all`` (default): every scenario of the set counts. The Content Pass rate is over all
  scenarios, a missing, failed or not yet scored response counted as not passing; dimension
  means are over each system's scored responses, with its coverage shown beside its rank.
- ``common``: only the units (scenarios, or dialogues) that every system has a scored
  response for; every statistic is over those.

Beside the totals, per system and language (:mod:`speech_drame.languages`: the language the
scorer's ASR identified in the response, ``unknown`` when the scorer has none or for rows
written before it did): the units and their statistics, each over the system's scored units
of that language (the common ones under ``common``; Content Pass too, unlike its total under
``all``); a multi-turn dialogue whose turns differ in language is ``mixed``. A response
identified as another language than its scenario hints at (its id or context script) is listed
as a language mismatch and counted.

A scored response whose label mass (a scorer with one: DRAME-Eval) is below a threshold on a
dimension is listed as unreliable beside the leaderboard and counted; its score stays in the
statistics.

Written as Markdown, CSV, JSON and two PNG plots; the JSON is strict (an undefined statistic is
``null`` with a ``note`` beside it saying why).
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
from speech_drame.languages import LANGUAGE_NAMES, UNKNOWN, language_mismatch
from speech_drame.rolebench.run import KEY_FIELDS, Plan
from speech_drame.rolebench.scenarios import ScenarioSet
from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES, dimensions
from speech_drame.scorers.base import MIN_LABEL_MASS, check_min_label_mass, unreliable_dimensions

RULES: dict[str, str] = {
    "all": "every scenario of the set (this package's rule; the paper does not state one): the "
    "Content Pass rate is over all scenarios, a missing, failed or unscored response counted as "
    "not passing; dimension means are over each system's scored responses (see its coverage)",
    "common": "only the {unit}s every system has a scored response for (--common-only): every "
    "statistic is over those {n} {unit}s",
}


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


def _counts(n: int, n_resamples: int, seed: int) -> list[np.ndarray] | None:
    from speech_drame.stats import resample_counts

    return list(resample_counts(n, n_resamples, seed)) if n and n_resamples else None


MIXED = "mixed"  # a dialogue whose turns were identified as different languages


def measured_language(row: Mapping[str, Any]) -> str:
    """The language the scorer identified in a scored row; ``unknown`` without one."""
    return row.get("language") or UNKNOWN


def language_stats(
    languages: Sequence[str],
    x: np.ndarray,
    passed: np.ndarray | None,
    dims: Sequence[str],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """Per language (sorted): ``n_units``, the ``dimensions`` means, their ``average`` and
    (``passed`` given) the ``content_pass`` rate over the units of that language; ``x`` holds
    one row of dimension scores per unit, ``languages`` one label per unit."""
    labels = np.array(languages, dtype=object)
    out: dict[str, dict[str, Any]] = {}
    for language in sorted(set(languages)):
        rows = np.flatnonzero(labels == language)
        sub = x[rows]
        counts = _counts(len(rows), n_resamples, seed)
        entry: dict[str, Any] = {
            "n_units": int(len(rows)),
            "dimensions": {d: _stat(sub[:, j], counts, confidence) for j, d in enumerate(dims)},
            "average": _stat(sub.mean(axis=1) if dims else np.zeros(0), counts, confidence),
        }
        if passed is not None:
            entry[CONTENT_PASS] = _stat(passed[rows], counts, confidence)
        out[language] = entry
    return out


def _status(
    rows: Sequence[Mapping[str, Any]], scenarios: ScenarioSet, plan: Plan, scorer_id: str
) -> dict[str, dict[str, Any]]:
    """Per system and scenario: ``("missing"|"not_scored"|"failed"|"ok", row or None)``.

    The row of a scenario is the latest row of its current key (the response file's sha256 and
    the scenario's context hash, :data:`~speech_drame.rolebench.run.KEY_FIELDS`): a response
    file reverted to earlier content finds the row stored for that content.
    """
    latest = {tuple(r.get(f) for f in KEY_FIELDS): r for r in rows}
    items = {(it.system, it.scenario.id): it for it in plan.items}
    out: dict[str, dict[str, Any]] = {}
    for system, missing in plan.missing.items():
        gone = set(missing)
        status: dict[str, Any] = {}
        for s in scenarios.scenarios:
            if s.id in gone:
                status[s.id] = ("missing", None)
                continue
            row = latest.get(items[system, s.id].key(scorer_id))
            if row is None:
                status[s.id] = ("not_scored", None)
            elif "error" in row:
                status[s.id] = ("failed", row)
            else:
                status[s.id] = ("ok", row)
        out[system] = status
    return out


def system_table(
    rows: Sequence[Mapping[str, Any]],
    scenarios: ScenarioSet,
    plan: Plan,
    scorer_id: str,
    *,
    common_only: bool = False,
    aggregation: str = "mean",
    decay: float = 0.5,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    min_label_mass: float = MIN_LABEL_MASS,
) -> dict[str, dict[str, Any]]:
    """Per system: coverage, counts, missing, failed and not-scored lists, Content Pass rate,
    dimension statistics, under the rule ``all`` or (``common_only``) ``common`` (:data:`RULES`);
    when the rows carry label mass, ``unreliable``: the (scenario, dimension) scores whose mass
    is below ``min_label_mass``; ``languages``: :func:`language_stats` of the units the
    statistics are over, by identified language; ``language_mismatches``: the scored responses
    identified as another language than their scenario hints at (``scenario``, ``hint``,
    ``language``).
    """
    from speech_drame.rolebench.multiturn import aggregate_turns
    from speech_drame.stats import PASS_THRESHOLD

    check_min_label_mass(min_label_mass)
    status = _status(rows, scenarios, plan, scorer_id)
    multi = scenarios.multi_turn
    # the units statistics are over: scenarios, or dialogues (their turns in order)
    units = scenarios.dialogues() if multi else {s.id: [s.id] for s in scenarios.scenarios}
    unit = "dialogue" if multi else "scenario"
    hints = {s.id: s.language_hint for s in scenarios.scenarios}

    def complete(system: str, u: str) -> bool:
        return all(status[system][t][0] == "ok" for t in units[u])

    common = [u for u in units if all(complete(system, u) for system in status)]
    rule = "common" if common_only else "all"
    # Content Pass is reported when the scorer gives one (for a system with no scored response
    # too: under the rule "all" its rate is 0)
    has_pass = not multi and any(
        row.get(CONTENT_PASS) is not None
        for st in status.values()
        for state, row in st.values()
        if state == "ok"
    )
    has_mass = any(
        "label_mass" in row for st in status.values() for state, row in st.values() if state == "ok"
    )
    table: dict[str, dict[str, Any]] = {}
    for system, st in status.items():
        ok = {sid: row for sid, (state, row) in st.items() if state == "ok"}
        scored_units = [u for u in units if complete(system, u)]
        entry: dict[str, Any] = {
            "rule": rule,
            "coverage": {"scored": len(scored_units), "total": len(units), "unit": unit,
                         "share": len(scored_units) / len(units) if units else math.nan},
            "n_scenarios": len(scenarios.scenarios),
            "n_scored": len(ok),
            "missing": [sid for sid, (state, _) in st.items() if state == "missing"],
            "failed": [{"scenario": sid, "error": row["error"],
                        "error_kind": row.get("error_kind", "model"),
                        "stage": row.get("stage", row.get("error_kind", "model"))}
                       for sid, (state, row) in st.items() if state == "failed"],
            "not_scored": [sid for sid, (state, _) in st.items() if state == "not_scored"],
        }  # fmt: skip
        if has_mass:
            entry["min_label_mass"] = min_label_mass
            entry["unreliable"] = [
                {"scenario": sid, "dimension": d, "label_mass": row["label_mass"][d]}
                for sid, row in ok.items()
                for d in unreliable_dimensions(row.get("label_mass", {}), min_label_mass)
            ]
        if multi:
            done = set(scored_units)
            entry.update(aggregation=aggregation, n_dialogues_scored=len(scored_units),
                         incomplete_dialogues=[u for u in units if u not in done])  # fmt: skip
        used = common if common_only else scored_units
        entry["n_units"] = len(used)
        dims = [d for d in dimensions(scenarios.mode) if any(d in r["scores"] for r in ok.values())]
        if multi:
            per_unit = [
                aggregate_turns([ok[t]["scores"] for t in units[u]], aggregation, decay=decay,
                                dims=dims)
                for u in used
            ]  # fmt: skip
        else:
            per_unit = [ok[u]["scores"] for u in used]
        x = np.array([[p[d] for d in dims] for p in per_unit], dtype=np.float64)
        x = x.reshape(len(per_unit), len(dims))
        counts = _counts(len(x), n_resamples, seed)
        entry["dimensions"] = {d: _stat(x[:, j], counts, confidence) for j, d in enumerate(dims)}
        entry["average"] = _stat(x.mean(axis=1) if dims else np.zeros(0), counts, confidence)
        unit_languages = []
        for u in used:
            found = {measured_language(ok[t]) for t in units[u]}
            unit_languages.append(found.pop() if len(found) == 1 else MIXED)
        scored_pass = (
            np.array([(ok[u].get(CONTENT_PASS) or 0.0) >= PASS_THRESHOLD for u in used], float)
            if has_pass
            else None
        )
        entry["languages"] = language_stats(
            unit_languages, x, scored_pass, dims,
            n_resamples=n_resamples, confidence=confidence, seed=seed,
        )  # fmt: skip
        entry["language_mismatches"] = [
            {"scenario": sid, "hint": hints[sid], "language": measured_language(row)}
            for sid, row in ok.items()
            if language_mismatch(hints[sid], measured_language(row))
        ]
        if has_pass:
            # all: every scenario, a response without a pass probability counts as not passing
            over = common if common_only else list(units)
            passed = np.zeros(len(over))
            for i, u in enumerate(over):
                p = ok[u].get(CONTENT_PASS) if u in ok else None
                passed[i] = p is not None and p >= PASS_THRESHOLD
            pass_counts = _counts(len(over), n_resamples, seed)
            entry[CONTENT_PASS] = _stat(passed, pass_counts, confidence)
        table[system] = entry
    return table


def rule_text(table: Mapping[str, Mapping[str, Any]]) -> str:
    """The sentence that says which scenarios the statistics of ``table`` are over."""
    e = next(iter(table.values()), None)
    if e is None:
        return RULES["all"]
    unit = e["coverage"]["unit"]
    return RULES[e["rule"]].format(unit=unit, n=e["n_units"])


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
    (:func:`speech_drame.stats.human_ranking_agreement`)."""
    from speech_drame.stats import human_ranking_agreement

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


def coverage_cell(e: Mapping[str, Any]) -> str:
    """``"11/12 (92%)"``: units scored of all."""
    c = e["coverage"]
    share = f" ({100 * c['share']:.0f}%)" if c["total"] else ""
    return f"{c['scored']}/{c['total']}{share}"


def _head_lines(
    table: Mapping[str, Mapping[str, Any]], meta: Mapping[str, Any] | None
) -> list[str]:
    """What the numbers below are: the scorer, the warning its training data calls for (synthetic
    labels), the statistics' rule."""
    lines = []
    if meta and meta.get("scorer"):
        about = f": {meta['scorer_description']}" if meta.get("scorer_description") else ""
        lines.append(f"Scorer `{meta['scorer']}`{about}.")
    if meta and meta.get("warning"):
        lines += ["", f"**Note:** {meta['warning']}."]
    lines += ["", f"Statistics over {rule_text(table)}."]
    return lines


def to_markdown(
    table: Mapping[str, Mapping[str, Any]],
    agreement: Mapping | None = None,
    meta: Mapping[str, Any] | None = None,
) -> str:
    """The leaderboard as a Markdown table (best first, coverage beside the rank), headed by the
    scorer, its synthetic-label warning (if any) and the rule it follows, with the missing,
    failed and not-scored responses below it, then the unreliable scores (label mass below the
    threshold) when the scorer has label mass."""
    has_pass, dims = _columns(table)
    has_mass = any("unreliable" in e for e in table.values())
    head = ["Rank", "System", "Coverage", *(["Content Pass"] if has_pass else []),
            *(RUBRIC_NAMES[d] for d in dims), "Avg.", "Missing", "Failed", "Not scored",
            *(["Unreliable"] if has_mass else [])]  # fmt: skip
    lines = [*_head_lines(table, meta), ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rank, system in enumerate(ranking(table), start=1):
        e = table[system]
        cells = [str(rank), system, coverage_cell(e)]
        if has_pass:
            cells.append(_cell(e[CONTENT_PASS], percent=True) if CONTENT_PASS in e else "n/a")
        cells += [_cell(e["dimensions"][d]) if d in e["dimensions"] else "n/a" for d in dims]
        cells += [_cell(e["average"]), str(len(e["missing"])), str(len(e["failed"])),
                  str(len(e["not_scored"]))]  # fmt: skip
        if has_mass:
            cells.append(str(len(e["unreliable"])))
        lines.append("| " + " | ".join(cells) + " |")
    notes = []
    for system in sorted(table):
        e = table[system]
        for s in e["missing"]:
            notes.append(f"- {system}: missing response for scenario {s}")
        for f in e["failed"]:
            again = (
                " (transient: the next run scores it again)" if f["error_kind"] != "input" else ""
            )
            notes.append(
                f"- {system}: {f['stage']} failure on {f['scenario']}: {f['error']}{again}"
            )
        for s in e["not_scored"]:
            notes.append(f"- {system}: not scored (no result for the current file): {s}")
        for d in e.get("incomplete_dialogues", []):
            notes.append(f"- {system}: dialogue {d} incomplete (a turn is missing or failed)")
    if notes:
        lines += ["", "Not scored:", *notes]
    flagged = [f"- {system}: {u['scenario']}, {RUBRIC_NAMES[u['dimension']]}: label mass "
               f"{u['label_mass']:.3f}"
               for system in sorted(table) for u in table[system].get("unreliable", [])]  # fmt: skip
    if flagged:
        threshold = next(iter(table.values()))["min_label_mass"]
        lines += ["", f"Unreliable (label mass below {threshold}; kept in the statistics):",
                  *flagged]  # fmt: skip
    lines += _language_lines(table)
    if agreement is not None and math.isfinite(agreement["spearman"]):
        lines += ["", f"System-ranking Spearman vs human scores: {agreement['spearman']:.3f} "
                      f"(Kendall {agreement['kendall']:.3f}, {agreement['n_systems']} systems)"]  # fmt: skip
    elif agreement is not None:
        lines += [
            "",
            f"System-ranking Spearman vs human scores: {agreement.get('note', 'undefined')}",
        ]
    return "\n".join(lines) + "\n"


def _language_lines(table: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The per-language table and the language mismatches; none when no response has an
    identified language."""
    found = {lang for e in table.values() for lang in e["languages"]}
    mismatches = [f"- {system}: {m['scenario']}: the scenario hints {m['hint']}, the response "
                  f"was identified as {m['language']}"
                  for system in sorted(table)
                  for m in table[system]["language_mismatches"]]  # fmt: skip
    if found <= {UNKNOWN} and not mismatches:
        return []
    has_pass, _ = _columns(table)
    head = ["System", "Language", "Scored", *(["Content Pass"] if has_pass else []), "Avg.",
            "Mismatches"]  # fmt: skip
    lines = ["", "Per language (identified by the scorer's ASR; over each system's scored "
             "responses of that language):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]  # fmt: skip
    for system in ranking(table):
        e = table[system]
        for lang, stats in e["languages"].items():
            name = f"{lang} ({LANGUAGE_NAMES[lang]})" if lang in LANGUAGE_NAMES else lang
            wrong = sum(m["language"] == lang for m in e["language_mismatches"])
            cells = [system, name, str(stats["n_units"])]
            if has_pass:
                cells.append(_cell(stats[CONTENT_PASS], percent=True) if CONTENT_PASS in stats
                             else "n/a")  # fmt: skip
            cells += [_cell(stats["average"]), str(wrong)]
            lines.append("| " + " | ".join(cells) + " |")
    if mismatches:
        lines += ["", f"Language mismatches ({len(mismatches)}):", *mismatches]
    return lines


CSV_COUNTS = ("rank", "system", "coverage", "n_scenarios", "n_scored", "n_missing", "n_failed",
              "n_not_scored")  # fmt: skip


def to_csv(table: Mapping[str, Mapping[str, Any]]) -> str:
    """One row per system: rank, coverage (share of units scored), counts, then mean, CI low
    and CI high of every statistic, and the rule (``all`` or ``common``, :data:`RULES`); with
    label mass, ``n_unreliable`` after the counts."""
    has_pass, dims = _columns(table)
    has_mass = any("unreliable" in e for e in table.values())
    stats = ([CONTENT_PASS] if has_pass else []) + dims + ["average"]
    header = [*CSV_COUNTS, *(["n_unreliable"] if has_mass else [])]
    header += [f"{s}{suffix}" for s in stats for suffix in ("", "_ci_low", "_ci_high")]
    header.append("rule")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for rank, system in enumerate(ranking(table), start=1):
        e = table[system]
        row: list[Any] = [rank, system, e["coverage"]["share"], e["n_scenarios"], e["n_scored"],
                          len(e["missing"]), len(e["failed"]), len(e["not_scored"])]  # fmt: skip
        if has_mass:
            row.append(len(e["unreliable"]))
        for s in stats:
            stat = e.get(s) if s in (CONTENT_PASS, "average") else e["dimensions"].get(s)
            row += [stat["mean"], *stat["ci"]] if stat else ["", "", ""]
        row.append(e["rule"])
        writer.writerow(row)
    return buf.getvalue()


def problems(table: Mapping[str, Mapping[str, Any]]) -> int:
    """Responses missing, failed or not scored, over all systems (non-zero: the run is not
    complete)."""
    return sum(len(e["missing"]) + len(e["failed"]) + len(e["not_scored"]) for e in table.values())


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
    order = ranking(table)
    doc = {
        **(meta or {}),
        "rule": next(iter(table.values()))["rule"] if table else "all",
        "rule_text": rule_text(table),
        "ranking": order,
        "leaderboard": [
            {"rank": rank, "system": system, "coverage": table[system]["coverage"]}
            for rank, system in enumerate(order, start=1)
        ],
        "systems": table,
        "language_mismatches": sum(len(e["language_mismatches"]) for e in table.values()),
    }
    if agreement is not None:
        doc["human_agreement"] = agreement
    write_text(paths["markdown"], to_markdown(table, agreement, meta))
    write_text(paths["csv"], to_csv(table))
    write_json(paths["json"], doc)
    if plots:
        paths["bars"], paths["radar"] = plot(table, out)
    return paths
