"""Train the LiteScorer on a Hub-ready dataset folder and evaluate it on every test split.

``speech-drame train-lite`` (and ``make demo``) call :func:`train_and_evaluate`: features of
every clip are extracted once (cached), one scorer per config is trained on ``train``, scored
on each other split with :func:`speech_drame.metrics.alignment_table`, printed as a
per-dimension table, and saved where ``speech-drame score`` and the Space look by default.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speech_drame.features.blueprint import DEFAULT_CACHE, CacheArg, extract_blueprints
from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES, SPLITS, Config, check_config, dimensions
from speech_drame.scorers.lite import (
    LiteScorer,
    TrainingOptions,
    default_scorer_dir,
    train_lite_scorer,
)

# realism context name -> dataset column
REALISM_CONTEXT_COLUMNS = {
    "profile": "char_profile",
    "scene": "local_scene",
    "traits": "char_style",
}


@dataclass
class Examples:
    """One split: clip sources (encoded bytes), contexts and annotator labels per dimension."""

    config: Config
    split: str
    ids: list[str]
    sources: list[bytes]
    contexts: list[dict[str, str]]
    labels: dict[str, list[list[Any]]]


def contexts_of(row: Mapping[str, Any], config: Config) -> dict[str, str]:
    """The context texts of a dataset row, named as the scorer names them."""
    if config == "archetype":
        return {"question": row["question"]}
    return {name: row[col] for name, col in REALISM_CONTEXT_COLUMNS.items()}


def load_examples(dataset_dir: str | os.PathLike, config: Config, split: str) -> Examples:
    """Read one split of a Hub-ready dataset folder (audio kept encoded)."""
    import datasets

    config = check_config(config)
    ds = datasets.load_dataset(str(dataset_dir), config, split=split)
    ds = ds.cast_column("audio", datasets.Audio(decode=False))
    keys = [d for d in dimensions(config) if d in ds.features["annotations"]]
    if config == "archetype":
        keys.append(CONTENT_PASS)
    ids, sources, contexts = [], [], []
    labels: dict[str, list[list[Any]]] = {k: [] for k in keys}
    for row in ds:
        audio = row["audio"]
        if not audio.get("bytes"):
            raise ValueError(f"{dataset_dir} {config}/{split} {row['id']}: audio bytes missing")
        ids.append(row["id"])
        sources.append(audio["bytes"])
        contexts.append(contexts_of(row, config))
        for k in keys:
            labels[k].append(list(row["annotations"][k]))
    return Examples(config, split, ids, sources, contexts, labels)


@dataclass
class SplitReport:
    """Alignment of one scorer on one split, and the clips it could not score."""

    split: str
    table: dict[str, Any]
    n_scored: int
    failures: dict[str, str]


def evaluate(
    scorer: LiteScorer, examples: Examples, cache: CacheArg, progress: bool
) -> SplitReport:
    """Score a split and compare with its annotators (``drame_metric``'s statistics)."""
    from speech_drame.metrics import alignment_table

    batch = extract_blueprints(examples.sources, examples.contexts, cache=cache, progress=progress)
    ok = [i for i, b in enumerate(batch.blueprints) if b is not None]
    failures = {examples.ids[i]: reason for i, reason in batch.errors.items()}
    scored = scorer.score_blueprints([batch.blueprints[i] for i in ok])
    dims = list(scorer.dimensions) + ([CONTENT_PASS] if scorer.content_pass else [])
    preds = [
        [s.scores[d] for d in scorer.dimensions] + ([s.content_pass] if scorer.content_pass else [])
        for s in scored
    ]
    refs = [[examples.labels[d][i] for d in dims] for i in ok]
    table = alignment_table(preds, refs, dims)
    return SplitReport(examples.split, table, len(ok), failures)


def _train_one(
    dataset_dir: Path, config: Config, options: TrainingOptions, cache: CacheArg, progress: bool
) -> tuple[LiteScorer, dict[str, str]]:
    train = load_examples(dataset_dir, config, "train")
    batch = extract_blueprints(train.sources, train.contexts, cache=cache, progress=progress)
    ok = [i for i, b in enumerate(batch.blueprints) if b is not None]
    failures = {train.ids[i]: reason for i, reason in batch.errors.items()}
    if len(ok) < 10:
        raise ValueError(
            f"{dataset_dir} {config}/train: only {len(ok)} clip(s) usable; failures: {failures}"
        )
    labels = {k: [v[i] for i in ok] for k, v in train.labels.items()}
    info = {"dataset": str(dataset_dir), "split": "train", "n_failed": len(failures)}
    scorer = train_lite_scorer([batch.blueprints[i] for i in ok], labels, config, options, info)
    return scorer, failures


def format_table(config: Config, reports: Sequence[SplitReport]) -> str:
    """Per-dimension Pearson (Content Pass: accuracy) of one scorer on each split."""
    dims = [d for d in dimensions(config) if f"{d}_pearson" in reports[0].table]
    head = f"{config:<38}" + "".join(f"{r.split:>12}" for r in reports)
    lines = [head, "-" * len(head)]

    def cell(value: Any) -> str:
        return (
            f"{value:>12.3f}"
            if isinstance(value, float) and not math.isnan(value)
            else f"{'n/a':>12}"
        )

    if f"{CONTENT_PASS}_accuracy" in reports[0].table:
        name = f"{RUBRIC_NAMES[CONTENT_PASS]} (accuracy)"
        lines.append(
            f"{name:<38}" + "".join(cell(r.table[f"{CONTENT_PASS}_accuracy"]) for r in reports)
        )
    for d in dims:
        lines.append(
            f"{RUBRIC_NAMES[d]:<38}" + "".join(cell(r.table[f"{d}_pearson"]) for r in reports)
        )
    lines.append(
        f"{'average Pearson':<38}" + "".join(cell(r.table["avg_pearson"]) for r in reports)
    )
    lines.append(f"{'clips scored':<38}" + "".join(f"{r.n_scored:>12d}" for r in reports))
    lines.append(f"{'clips failed':<38}" + "".join(f"{len(r.failures):>12d}" for r in reports))
    return "\n".join(lines)


def train_and_evaluate(
    dataset_dir: str | os.PathLike,
    out_dir: str | os.PathLike | None = None,
    configs: Sequence[str] = ("archetype", "realism"),
    options: TrainingOptions | None = None,
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = True,
    echo: bool = True,
) -> dict[str, list[SplitReport]]:
    """Train one scorer per config on ``train``, evaluate on the other splits, save them.

    Scorers go to ``out_dir/<config>`` (default :func:`default_scorer_dir`). Returns the
    reports per config; with ``echo`` the tables and failure counts are printed.
    """
    dataset_dir = Path(dataset_dir)
    out = Path(out_dir) if out_dir is not None else default_scorer_dir()
    results: dict[str, list[SplitReport]] = {}
    for config in configs:
        config = check_config(config)
        scorer, train_failures = _train_one(
            dataset_dir, config, options or TrainingOptions(), cache, progress
        )
        reports = [
            evaluate(scorer, load_examples(dataset_dir, config, split), cache, progress)
            for split in SPLITS[config]
            if split != "train"
        ]
        scorer.info["evaluation"] = {
            r.split: {k: v for k, v in r.table.items() if k.endswith(("_pearson", "_accuracy"))}
            for r in reports
        }
        scorer.save(out / config)
        results[config] = reports
        if echo:
            print(format_table(config, reports))
            if train_failures:
                print(f"{len(train_failures)} train clip(s) skipped: {_first(train_failures)}")
            for r in reports:
                if r.failures:
                    print(f"{len(r.failures)} {r.split} clip(s) not scored: {_first(r.failures)}")
            print(f"saved {out / config}\n")
    return results


def _first(failures: Mapping[str, str], k: int = 3) -> str:
    items = list(failures.items())
    shown = "; ".join(f"{cid}: {why}" for cid, why in items[:k])
    return shown + (f"; ... ({len(items) - k} more)" if len(items) > k else "")


def labels_are_synthetic(dataset_dir: str | os.PathLike) -> bool:
    """True when the folder's dataset card says its labels are simulated (the demo corpus)."""
    card = Path(dataset_dir) / "README.md"
    return card.is_file() and "synthetic proxy labels" in card.read_text(encoding="utf-8").lower()
