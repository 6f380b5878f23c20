"""A printable summary of a built dataset: rows, hours, clips per language and label
distributions per split, and whether its labels are synthetic (the dataset card says so for
the demo corpus)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..schema import CONTENT_PASS, SCORE_MAX, SCORE_MIN, dimensions
from .build import UNSTATED
from .card import synthetic_label_note
from .reader import dataset_configs, dataset_splits, open_split

SYNTHETIC_WARNING = (
    "These labels are synthetic proxy labels (simulated annotators), not human ratings: "
    "numbers measured on them show that code works, not that an evaluator agrees with people."
)


def label_distribution(annotations: list[dict], key: str) -> dict[str, int]:
    """Counts of each score (and of nulls) over every annotator of every row."""
    counts = Counter(v for row in annotations for v in row[key])
    out = {str(s): counts.get(s, 0) for s in range(SCORE_MIN, SCORE_MAX + 1)}
    out["null"] = counts.get(None, 0)
    return out


def language_counts(languages: list[str | None] | None) -> dict[str, int] | None:
    """Clips per language of a split's ``language`` column (null: ``unstated``), sorted; None
    for a dataset built before the column existed.

    >>> language_counts(["zh", None, "en", "zh"])
    {'en': 1, 'unstated': 1, 'zh': 2}
    """
    if languages is None:
        return None
    return dict(sorted(Counter(v or UNSTATED for v in languages).items()))


def summarize_dataset(folder: str | Path) -> dict:
    """Rows, clips with audio, hours and per-dimension label counts of every config and split
    in ``folder``.

    Returns ``{"dataset", "synthetic_labels", "label_note", "configs": {config: {split: ...}}}``;
    ``label_note`` is the card's note when it says the labels are synthetic, else ``None``. A
    split's ``languages`` is :func:`language_counts` of its ``language`` column (None: the
    dataset was built before it existed); ``with_audio`` counts its clips with audio.
    """
    folder = str(folder)
    report = json.loads((Path(folder) / "build_report.json").read_text(encoding="utf-8"))
    note = synthetic_label_note(folder)
    configs: dict = {}
    summary = {"dataset": folder, "synthetic_labels": note is not None, "label_note": note,
               "configs": configs}  # fmt: skip
    for config in dataset_configs(folder):
        configs[config] = {}
        for split in dataset_splits(folder, config):
            data = open_split(folder, config, split)
            rows = list(data.rows(["annotations"], optional=["language"]))
            annotations = [r["annotations"] for r in rows]
            entry = {
                "rows": data.n_rows,
                "with_audio": data.n_with_audio,
                "hours": report["hours"][config][split],
                "languages": language_counts(
                    [r["language"] for r in rows] if data.has("language") else None
                ),
                "annotators_per_clip": dict(
                    sorted(Counter(len(a[dimensions(config)[0]]) for a in annotations).items())
                ),
                "labels": {d: label_distribution(annotations, d) for d in dimensions(config)},
            }
            if config == "archetype":
                votes = [v for a in annotations for v in a[CONTENT_PASS] if v is not None]
                entry["content_pass_rate"] = sum(votes) / len(votes) if votes else float("nan")
            configs[config][split] = entry
    return summary


def format_summary(summary: dict) -> str:
    lines = []
    if summary["synthetic_labels"]:
        lines += [f"NOTE: {SYNTHETIC_WARNING}", f"  dataset card: {summary['label_note']}", ""]
    for config, splits in summary["configs"].items():
        for split, entry in splits.items():
            audio = entry.get("with_audio", entry["rows"])
            head = (
                f"{config}/{split}: {entry['rows']} clips ({audio} with audio), "
                f"{entry['hours'] * 60:.1f} min"
            )
            if "content_pass_rate" in entry:
                head += f", content pass {entry['content_pass_rate']:.0%} of votes"
            lines.append(head)
            languages = entry.get("languages")
            lines.append(
                "  languages: " + ", ".join(f"{k} {v}" for k, v in languages.items())
                if languages is not None
                else "  languages: not recorded (built before the language column; rebuild "
                "with `speech-drame build` to count them)"
            )
            lines.append(f"  annotators per clip: {entry['annotators_per_clip']}")
            lines.append(
                f"  {'dimension':28s}"
                + "".join(f"{k:>6s}" for k in ("1", "2", "3", "4", "5", "null"))
            )
            for dim, counts in entry["labels"].items():
                lines.append(f"  {dim:28s}" + "".join(f"{v:6d}" for v in counts.values()))
    return "\n".join(lines)
