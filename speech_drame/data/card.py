"""The README.md dataset card of the Hub-ready folder: YAML configs/features + documentation.

The body is the Jinja template ``model_card/datasetcard.md`` (:mod:`speech_drame.templates`); the front
matter is a ``huggingface_hub.DatasetCardData``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .. import templates
from ..schema import (
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
    from huggingface_hub import DatasetCardData

    from .build import BuildReport
    from .licence import Licence

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


def card_data(
    report: BuildReport,
    features: dict[Config, Features],
    shards: dict[Config, dict[str, list[str]]],
    licence: Licence,
) -> DatasetCardData:
    """The card's YAML front matter: licence (with ``license_name`` and ``license_link`` when
    ``other``), tags, and the configs (realism the default) with their data files, features and
    split sizes, which ``datasets`` reads to load the folder."""
    from huggingface_hub import DatasetCardData

    configs, infos = [], []
    for config in sorted(shards, key=lambda c: c != DEFAULT_CONFIG):
        entry: dict = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": [f"{config}/{name}" for name in names]}
            for split, names in shards[config].items()
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
    custom = {"license_name": licence.name, "license_link": licence.link} if licence.name else {}
    return DatasetCardData(
        license=licence.id,
        **custom,
        pretty_name="Speech-DRAME EvalBench",
        task_categories=["audio-classification"],
        tags=["speech", "role-play", "evaluation", "human-alignment", "speech-drame"],
        configs=configs,
        dataset_info=infos,
    )


def _dimensions(dims: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"field": d, "name": RUBRIC_NAMES[d]} for d in dims]


def render_card(
    report: BuildReport,
    features: dict[Config, Features],
    shards: dict[Config, dict[str, list[str]]],
    licence: Licence,
    source_note: str | None,
) -> str:
    """The full README.md text (front matter + body) for the built folder, rendered from the
    template ``model_card/datasetcard.md`` with ``huggingface_hub``'s
    ``DatasetCard``."""
    from huggingface_hub import DatasetCard

    return templates.render(
        DatasetCard,
        card_data(report, features, shards, licence),
        templates.read_template(templates.DATASET_CARD),
        source_note=source_note,
        content_pass=CONTENT_PASS,
        counts=[
            {
                "config": config,
                "split": split,
                "clips": n,
                "with_audio": sum(report.with_audio.get(config, {}).get(split, {}).values()),
                "hours": report.hours[config][split],
                "languages": ", ".join(
                    f"{k}: {v} ({report.with_audio[config][split].get(k, 0)} with audio)"
                    for k, v in report.languages.get(config, {}).get(split, {}).items()
                ),
            }
            for config, splits in report.rows.items()
            for split, n in splits.items()
        ],
        audio_dirs=len(report.audio_dirs),
        missing_audio=len(report.missing_audio),
        dropped=len(report.dropped),
        archetype_dimensions=_dimensions(ARCHETYPE_DIMENSIONS),
        realism_dimensions=_dimensions(REALISM_DIMENSIONS),
        semantic_match={"field": SEMANTIC_MATCH, "name": RUBRIC_NAMES[SEMANTIC_MATCH]},
        gate=EMOTION_GATE_THRESHOLD,
        licence=licence,
        source_hub=report.source_hub,
        official_hub_id=OFFICIAL_HUB_ID,
    )
