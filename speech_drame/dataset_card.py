"""The README.md dataset card of the Hub-ready folder: YAML configs/features + documentation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from .schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    EMOTION_GATE_THRESHOLD,
    REALISM_DIMENSIONS,
    RUBRIC_NAMES,
    SEMANTIC_MATCH,
    Config,
)

if TYPE_CHECKING:
    from datasets import Features

    from .hub_dataset import BuildReport

DEFAULT_CONFIG: Config = "realism"
OFFICIAL_HUB_ID = "ftshijt/speech-drame-evalbench"
SYNTHETIC_MARK = "synthetic proxy labels"  # what a card says when its labels are simulated


def synthetic_label_note(dataset_dir: str | os.PathLike) -> str | None:
    """The dataset card's note that its labels are simulated ("synthetic proxy labels"), or
    ``None`` when the card does not say so (or there is no card)."""
    card = Path(dataset_dir) / "README.md"
    if not card.is_file():
        return None
    for line in card.read_text(encoding="utf-8").splitlines():
        if SYNTHETIC_MARK in line.lower():
            return line.lstrip("> ").removeprefix("**Source.**").strip()
    return None


def labels_are_synthetic(dataset_dir: str | os.PathLike) -> bool:
    """True when the folder's dataset card says its labels are simulated (the demo corpus)."""
    return synthetic_label_note(dataset_dir) is not None


def _front_matter(
    report: BuildReport,
    features: dict[Config, Features],
    shards: dict[Config, dict[str, list[str]]],
    license_id: str,
) -> dict:
    configs, infos = [], []
    for config in sorted(shards, key=lambda c: c != DEFAULT_CONFIG):
        entry: dict = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": f"{config}/{split}-*.parquet"} for split in shards[config]
        ]
        configs.append(entry)
        infos.append(
            {
                "config_name": config,
                "features": features[config]._to_yaml_list(),
                "splits": [
                    {
                        "name": split,
                        "num_bytes": report.parquet_bytes[config][split],
                        "num_examples": report.rows[config][split],
                    }
                    for split in shards[config]
                ],
            }
        )
    return {
        "license": license_id,
        "pretty_name": "Speech-DRAME EvalBench",
        "task_categories": ["audio-classification"],
        "tags": ["speech", "role-play", "evaluation", "human-alignment", "speech-drame"],
        "configs": configs,
        "dataset_info": infos,
    }


def _dimension_table(dims: tuple[str, ...]) -> str:
    rows = ["| field | rubric (paper name) |", "|---|---|"]
    rows += [f"| `{d}` | {RUBRIC_NAMES[d]} |" for d in dims]
    return "\n".join(rows)


def _counts_table(report: BuildReport) -> str:
    rows = ["| config | split | clips | audio (h) |", "|---|---|---:|---:|"]
    for config, splits in report.rows.items():
        for split, n in splits.items():
            rows.append(f"| {config} | {split} | {n} | {report.hours[config][split]:.3f} |")
    return "\n".join(rows)


def render_card(
    report: BuildReport,
    features: dict[Config, Features],
    shards: dict[Config, dict[str, list[str]]],
    license_id: str,
    source_note: str | None,
) -> str:
    """The full README.md text (front matter + body) for the built folder."""
    front = yaml.safe_dump(_front_matter(report, features, shards, license_id), sort_keys=False)
    note = f"\n> **Source.** {source_note}\n" if source_note else ""
    gate = EMOTION_GATE_THRESHOLD
    return f"""---
{front}---

# Speech-DRAME EvalBench (Hub-ready build)
{note}
Human-annotated data for training and testing speech evaluation models (SEMs) of spoken role-play,
from *Speech-DRAME: A Framework for Human-Aligned Benchmarks in Speech Role-Play*. Two configs:

- **`archetype`** (top-down): a role-and-scene prompt (`question`) and a spoken response. Annotators
  first decide **Content Pass** (`{CONTENT_PASS}`, per annotator); only passed clips are rated.
- **`realism`** (default, bottom-up): a character profile (`char_profile`, `char_style`, `char_age`), a local
  scene (`local_scene`) and the spoken line (`transcript`), mostly real human performances plus constructed
  negatives (swapped scenes or profiles, re-synthesized speech). Split `test_real` holds real human
  recordings only.

```python
from datasets import load_dataset
ds = load_dataset("speech-drame", "realism")          # from the folder that contains this card
clip = ds["test"][0]["audio"]                           # decoded to 16 kHz mono
```

## Contents of this build

{_counts_table(report)}

Records left out because their audio file is absent: {len(report.missing_audio)};
dropped as invalid: {len(report.dropped)} (details in `build_report.json`).

## Fields

Official field names are kept exactly, including the release's quirks (`prmopt_quality`,
`multi-speaker_influence`). Annotations are positional lists, one entry per annotator. Added typed
columns: `audio` (the original file bytes; decodes to 16 kHz mono), `duration_s`, and for realism
`not_applicable`, which marks the nulls that were `"N/A"` in the release (gated emotion ratings) so they
stay distinguishable from missing ratings.

### Archetype dimensions (1 = worst, 5 = best)

{_dimension_table(ARCHETYPE_DIMENSIONS)}

Also `confidence` (annotator confidence in the Appropriateness rating) and a comment per dimension.
Scores are null for annotators who failed Content Pass.

### Realism dimensions (1 = worst, 5 = best)

{_dimension_table(REALISM_DIMENSIONS)}

The paper's eleventh dimension, {RUBRIC_NAMES[SEMANTIC_MATCH]}, has no field in the public release; it is
present here only if the source release carries `{SEMANTIC_MATCH}`.

## Annotation protocol (summary of the paper)

- Every clip is rated by at least three annotators; only the first 30 seconds are judged.
- Archetype: Content Pass screens out instruction failures, irrelevant or fourth-wall-breaking content,
  foreign-language content and clips of 1-2 s; Audio Quality and Human Likeness ignore context;
  Appropriateness judges the tonal fit to role and scene.
- Realism: emotion ratings are gated. Emotion Intensity Control is rated only if Emotion Accuracy
  >= {gate}, and Emotion Transition (`dynamic_range`) only if Intensity >= {gate}; otherwise the release
  holds `"N/A"` (null here, flagged in `not_applicable`). The paper's analysis counts such N/A as 1.
- Mandarin and English scores come from different annotator pools and are not comparable across
  languages.

## Licence

This build inherits the licence of its source release (`license: {license_id}` above); check it before
redistributing. The official annotation samples come from the Apache-2.0 repository
`Anuttacon/speech_drame`.

## Building from the full official release

On a machine with access to the Hugging Face Hub:

```bash
huggingface-cli download {OFFICIAL_HUB_ID} --repo-type dataset --local-dir evalbench_raw
python dataset_scripts/build_dataset.py --source evalbench_raw --out speech-drame
```

The source folder must contain `archetype_data/*.jsonl` and `realism_data/*.jsonl` with the audio beside
them; `wav_path` prefixes from the authors' machine are resolved under the source folder.
"""
