"""The paper's evaluator tables (Speech-DRAME Tables 2 and 3) from predictions files.

A predictions file is JSONL, one clip per line, in the layout of
:meth:`speech_drame.scorers.base.ClipScores.to_dict`: ``{"id", "scores": {dimension: score},
"content_pass": probability?}`` or ``{"id", "error", ...}`` for a clip that could not be
scored. ``train.py`` exports it (``<output_dir>/evaluator/predictions/<split>.jsonl``) and
``speech-drame import-predictions`` writes it from the official pipelines' outputs.

Each file becomes one row, scored by :func:`speech_drame.stats.alignment_table` against
:class:`References` (a built dataset split's ``annotations``, or the ``ground_truth_ratings`` an
official fine-tuning result folder carries) under a label policy (:mod:`speech_drame.labels`): archetype
(Table 2) Content Pass accuracy, the Pearson of Audio Quality, Human Likeness and
Appropriateness and their average; realism (Table 3) the Pearson of the ten dimensions and
their average. Clips are matched by id without a trailing ``.wav``
(:func:`~speech_drame.official_formats.clip_key`); ids on one side only are counted and
listed, never guessed. A clip without a prediction for a dimension is left out of that
dimension only (``missing_predictions``).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jsonl import read_objects
from .labels import DEFAULT_LABEL_POLICY, check_label_policy, describe_label_policy
from .official_formats import clip_key, parse_score, scored_dimensions
from .schema import CONTENT_PASS, Config, check_config

__all__ = [
    "COLUMNS",
    "FORMATS",
    "Predictions",
    "References",
    "load_references",
    "paper_rows",
    "paper_table",
    "parse_predictions",
    "read_predictions",
    "render_table",
]

FORMATS = ("markdown", "csv", "latex")
ACCURACY = f"{CONTENT_PASS}_accuracy"
# Per config: (statistic of alignment_table, column label, column group) in the paper's order.
COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "archetype": (
        (ACCURACY, "Content Pass Acc.", ""),
        ("audio_quality_pearson", "Audio Quality", ""),
        ("human_likeness_pearson", "Human Likeness", ""),
        ("appropriateness_pearson", "Appropriateness", ""),
        ("avg_pearson", "Avg.", ""),
    ),
    "realism": (
        ("pitch_variation_pearson", "Pitch", "Prosodic Dynamics"),
        ("rhythmic_naturalness_pearson", "Rhythm", "Prosodic Dynamics"),
        ("stress_and_emphasis_pearson", "Stress", "Prosodic Dynamics"),
        ("emotion_accuracy_pearson", "Accuracy", "Emotional Expressiveness"),
        ("emotion_intensity_control_pearson", "Intensity", "Emotional Expressiveness"),
        ("dynamic_range_pearson", "Transition", "Emotional Expressiveness"),
        ("voice_identity_matching_pearson", "Identity", "Character Consistency"),
        ("trait_embodiment_pearson", "Traits", "Character Consistency"),
        ("local_story_fit_pearson", "Local", "Contextual Relevance"),
        ("global_story_coherence_pearson", "Global", "Contextual Relevance"),
        ("avg_pearson", "Avg.", ""),
    ),
}
_LIST = 10  # ids listed in text output (JSON lists them all)


@dataclass
class Predictions:
    """A predictions file: per clip key the scores (Content Pass included) and the id as
    written, and the clips recorded as failed (key -> error)."""

    path: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def read_predictions(path: str | os.PathLike) -> Predictions:
    """Read a predictions JSONL file (see the module docstring and :func:`parse_predictions`)."""
    return parse_predictions(read_objects(path), str(path))


def parse_predictions(rows: Iterable[tuple[str, Mapping[str, Any]]], path: str) -> Predictions:
    """Predictions from ``(file:line, row)`` pairs of the predictions-file layout.

    Raises:
        ValueError: naming ``file:line`` for a missing id, an id given twice, scores that are
            not an object, or a score that is not a number on its scale.
    """
    out = Predictions(path)
    seen: dict[str, str] = {}
    for where, row in rows:
        clip = row.get("id")
        if not isinstance(clip, str) or not clip:
            raise ValueError(f"{where}: no clip id (a non-empty string 'id')")
        key = clip_key(clip)
        if key in seen:
            raise ValueError(f"{where}: clip {clip!r} already given at {seen[key]}")
        seen[key], out.ids[key] = where, clip
        if row.get("error"):
            out.failed[key] = str(row["error"])
            continue
        scores = row.get("scores", {})
        if not isinstance(scores, Mapping):
            raise ValueError(f"{where}: 'scores' must be an object of dimension -> score")
        values = {**scores, **({CONTENT_PASS: row[CONTENT_PASS]} if CONTENT_PASS in row else {})}
        out.scores[key] = {}
        for dim, value in values.items():
            score, why = parse_score(value, dim)
            if score is None:
                raise ValueError(f"{where}: {dim}: {why}")
            out.scores[key][dim] = score
    return out


@dataclass
class References:
    """The annotator ratings predictions are scored against: per clip its id and its
    ``annotations`` (release field -> annotator list), and what they are (``source``, for every
    report; ``dataset`` and ``split`` when they come from a built dataset)."""

    source: str
    ids: list[str]
    annotations: list[Mapping[str, Sequence[Any]]]
    dataset: str | None = None
    split: str | None = None


def load_references(dataset: str | os.PathLike, config: Config, split: str) -> References:
    """The ids and ``annotations`` of a built dataset's split (no audio is read: an
    annotation-only build serves as well)."""
    from .data.reader import open_split

    data = open_split(dataset, check_config(config), split)
    rows = list(data.rows(["id", "annotations"]))
    ids, annotations = [r["id"] for r in rows], [r["annotations"] for r in rows]
    return References(f"{config}/{split} of {dataset}", ids, annotations, str(dataset), split)


def paper_rows(config: str, split: str) -> dict[str, Any] | None:
    """The paper's own rows for ``config``/``split`` (archetype/test: Table 2; realism/test:
    Table 3; realism/test_real: Table 4) as ``{"table", "about", "rows": [{"name", "table"}]}``
    (each ``table`` keyed like :func:`speech_drame.stats.alignment_table`), or ``None`` for a
    split the paper reports no evaluator table for."""
    import json
    from importlib import resources

    text = (resources.files("speech_drame.resources") / "paper_tables.json").read_text("utf-8")
    for entry in json.loads(text)["tables"]:
        if (entry["config"], entry["split"]) == (config, split):
            rows = [{"name": f"{r['model']} ({r['setting']})", "table": r["values"]}
                    for r in entry["rows"]]  # fmt: skip
            return {"table": entry["table"], "about": entry["about"], "rows": rows}
    return None


def _listed(ids: Sequence[str]) -> dict[str, Any]:
    return {"count": len(ids), "ids": list(ids)}


def table_row(
    preds: Predictions,
    refs: References,
    config: Config,
    *,
    name: str,
    label_policy: str = DEFAULT_LABEL_POLICY,
    bootstrap: int = 0,
    seed: int | None = None,
) -> dict[str, Any]:
    """One row: the alignment table of ``preds`` on the reference clips they cover, and what
    could not be matched."""
    from .scorers.join import join
    from .stats import alignment_table, headline_statistic, stat_key

    ids, annotations = refs.ids, refs.annotations
    dims = scored_dimensions(config)
    index: dict[str, int] = {}
    for i, clip in enumerate(ids):
        if clip_key(clip) in index:
            raise ValueError(f"the references hold {ids[index[clip_key(clip)]]!r} and {clip!r}")
        index[clip_key(clip)] = i
    given = preds.ids.keys()
    matched = [k for k in preds.scores if k in index]
    if not matched:
        raise ValueError(
            f"{preds.path}: none of its {len(given)} clips is in the references ({refs.source}) "
            f"(first: {', '.join(list(preds.ids.values())[:3]) or 'none'})"
        )
    if not any(d in preds.scores[k] for k in matched for d in dims):
        found = sorted({d for k in matched for d in preds.scores[k]})
        raise ValueError(
            f"{preds.path}: no scores of the {config} dimensions ({', '.join(dims)}); "
            f"found {', '.join(found) or 'none'}"
        )
    joined = join(
        ((k, preds.scores[k]) for k in matched), {k: annotations[index[k]] for k in matched}, dims
    )
    table = alignment_table(
        joined.predictions,
        joined.references,
        dims,
        label_policy=label_policy,
        bootstrap=bootstrap,
        seed=seed,
    )
    for dim in dims:
        if joined.missing[dim] == len(matched):
            stat = stat_key(dim, headline_statistic(dim))
            table["notes"][stat] = "no usable prediction for this dimension"
    return {
        "name": name,
        "predictions": preds.path,
        "clips_scored": len(matched),
        "missing_predictions": joined.missing,
        "failed": _listed([preds.ids[k] for k in preds.failed if k in index]),
        "not_in_dataset": _listed([preds.ids[k] for k in given if k not in index]),
        "without_prediction": _listed([c for c in ids if clip_key(c) not in given]),
        "table": table,
    }


def paper_table(
    predictions: Sequence[str | os.PathLike | Predictions],
    dataset: str | os.PathLike | References,
    config: str,
    split: str = "test",
    *,
    names: Sequence[str] | None = None,
    label_policy: str = DEFAULT_LABEL_POLICY,
    bootstrap: int = 0,
    seed: int | None = None,
    paper: bool = False,
) -> dict[str, Any]:
    """The paper's table of ``config`` with one row per predictions file or
    :class:`Predictions` (row name: the file stem or ``names``), scored against ``dataset``'s
    ``split`` (or the :class:`References` given) under ``label_policy``. Every file is read
    before the dataset is. With ``paper`` the report's ``paper`` holds the paper's own rows for
    ``config``/``split`` (:func:`paper_rows`; ``None`` when it has none)."""
    config = check_config(config)
    check_label_policy(label_policy)
    if not predictions:
        raise ValueError("no predictions files")
    if names is not None and len(names) != len(predictions):
        raise ValueError(f"{len(names)} names for {len(predictions)} predictions files")
    read = [p if isinstance(p, Predictions) else read_predictions(p) for p in predictions]
    refs = dataset if isinstance(dataset, References) else load_references(dataset, config, split)
    rows = [
        table_row(
            preds,
            refs,
            config,
            name=names[i] if names else Path(preds.path).stem,
            label_policy=label_policy,
            bootstrap=bootstrap,
            seed=seed,
        )
        for i, preds in enumerate(read)
    ]
    return {
        "references": refs.source,
        "dataset": refs.dataset,
        "config": config,
        "split": refs.split,
        "clips_in_split": len(refs.ids),
        **describe_label_policy(label_policy),
        "bootstrap": bootstrap,
        "seed": seed,
        "columns": [
            {"statistic": s, "label": label, "group": g} for s, label, g in COLUMNS[config]
        ],
        "rows": rows,
        **({"paper": paper_rows(config, refs.split or split)} if paper else {}),
    }


# ----------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------


def _number(value: float | None, stat: str, percent: str = "%") -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{100 * value:.1f}{percent}" if stat == ACCURACY else f"{value:.3f}"


def _cell(table: Mapping[str, Any], stat: str, percent: str = "%") -> str:
    text = _number(table.get(stat, math.nan), stat, percent)
    ci = table.get(f"{stat}_ci")
    if ci and text != "n/a":
        text += f" [{_number(ci[0], stat, percent)}, {_number(ci[1], stat, percent)}]"
    return text


def _notes(report: Mapping[str, Any]) -> list[str]:
    def some(listed: Mapping[str, Any]) -> str:
        shown = ", ".join(listed["ids"][:_LIST])
        return shown + (", ..." if listed["count"] > _LIST else "")

    lines = [
        f"references: {report['references']} ({report['clips_in_split']} clips); label policy "
        f"{report['label_policy']}: {report['label_policy_rule']}",
        (
            "Content Pass: accuracy of the prediction (>= 0.5 = pass) against the annotators' "
            "majority (ties left out); other columns: "
            if report["config"] == "archetype"
            else "Columns: "
        )
        + "Pearson with the mean annotator rating; Avg.: mean of the Pearson columns",
    ]
    if "paper" in report:
        found = report["paper"]
        lines.append(
            f"paper rows: Speech-DRAME {found['table']}, {found['about']}, as published (other "
            "data, models and runs than the rows above)"
            if found
            else f"paper rows: the paper reports no evaluator table for {report['config']}/"
            f"{report['split']}"
        )
    if report["bootstrap"]:
        conf = report["rows"][0]["table"].get("confidence", 0.95)
        lines.append(
            f"[low, high]: {conf:.0%} bootstrap interval, {report['bootstrap']} resamples of "
            f"clips, seed {report['seed']}"
        )
    stats = {s for s, _, _ in COLUMNS[report["config"]]}
    for row in report["rows"]:
        lines.append(f"{row['name']}: {row['clips_scored']} clips scored ({row['predictions']})")
        for key, what in (
            ("not_in_dataset", "predictions whose id is not in the references"),
            ("without_prediction", "clips of the references without a prediction"),
            ("failed", "clips recorded as failed in the predictions"),
        ):
            if row[key]["count"]:
                lines.append(f"  {row[key]['count']} {what}: {some(row[key])}")
        gaps = {d: n for d, n in row["missing_predictions"].items() if n}
        if gaps:
            lines.append(
                "  left out for lack of a usable prediction: "
                + ", ".join(f"{d} {n}" for d, n in gaps.items())
            )
        for stat, why in row["table"]["notes"].items():
            if stat in stats:
                lines.append(f"  {stat} is undefined: {why}")
    return lines


def _markdown(report: Mapping[str, Any]) -> str:
    cols = COLUMNS[report["config"]]
    lines = [
        "| Model | " + " | ".join(label for _, label, _ in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for row in report["rows"]:
        cells = [_cell(row["table"], s) for s, _, _ in cols]
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    for row in _paper(report):
        cells = [_cell(row["table"], s) for s, _, _ in cols]
        lines.append(f"| *paper: {row['name']}* | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", *_notes(report)])


def _paper(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The paper's rows a report carries (``table --paper``), else none."""
    return (report.get("paper") or {}).get("rows", [])


def _csv(report: Mapping[str, Any]) -> str:
    cols = COLUMNS[report["config"]]
    boot = bool(report["bootstrap"])
    header = ["model"]
    for _, label, _ in cols:
        header += [label, f"{label} CI low", f"{label} CI high"] if boot else [label]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*header, "clips", "label_policy"])

    def num(value: float | None) -> str:
        return "" if value is None or math.isnan(value) else f"{value:.6g}"

    for row in report["rows"]:
        table, cells = row["table"], [row["name"]]
        for stat, _, _ in cols:
            cells.append(num(table.get(stat, math.nan)))
            if boot:
                cells += [num(v) for v in table.get(f"{stat}_ci", [math.nan, math.nan])]
        writer.writerow([*cells, row["clips_scored"], report["label_policy"]])
    for row in _paper(report):
        cells = [f"paper: {row['name']}"]
        for stat, _, _ in cols:
            cells += [num(row["table"].get(stat, math.nan))] + (["", ""] if boot else [])
        writer.writerow([*cells, "", "paper"])
    return buf.getvalue().rstrip("\n")


_LATEX_SPECIAL = {c: f"\\{c}" for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
    "\\": r"\textbackslash{}",
}


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(text))


def _latex(report: Mapping[str, Any]) -> str:
    cols = COLUMNS[report["config"]]
    lines = [f"% {note}" for note in _notes(report)]
    lines += [r"\begin{tabular}{l" + "c" * len(cols) + "}", r"\toprule"]
    if any(g for _, _, g in cols):
        groups: list[tuple[str, int]] = []
        for _, _, g in cols:
            if groups and groups[-1][0] == g:
                groups[-1] = (g, groups[-1][1] + 1)
            else:
                groups.append((g, 1))
        cells = [rf"\multicolumn{{{n}}}{{c}}{{{_tex(g)}}}" if g else "" for g, n in groups]
        lines.append(" & ".join(["", *cells]) + r" \\")
    lines.append(" & ".join(["Model", *(_tex(label) for _, label, _ in cols)]) + r" \\")
    lines.append(r"\midrule")
    for row in report["rows"]:
        cells = [_tex(row["name"]), *(_cell(row["table"], s, r"\%") for s, _, _ in cols)]
        lines.append(" & ".join(cells) + r" \\")
    if _paper(report):
        lines.append(r"\midrule")
    for row in _paper(report):
        cells = [
            _tex(f"paper: {row['name']}"),
            *(_cell(row["table"], s, r"\%") for s, _, _ in cols),
        ]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def render_table(report: Mapping[str, Any], fmt: str = "markdown") -> str:
    """The table of :func:`paper_table` as Markdown (with notes), CSV (numbers only: accuracy
    as a fraction; columns ``clips`` and ``label_policy``) or LaTeX (booktabs; notes as
    ``%`` comments)."""
    renderers = {"markdown": _markdown, "csv": _csv, "latex": _latex}
    if fmt not in renderers:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return renderers[fmt](report)
