"""Model cards of trained DRAME-Eval evaluators, rendered from the template
``model_card/modelcard.md`` (:mod:`speech_drame.templates`).

The front matter is built with ``huggingface_hub.ModelCardData`` (``library_name: peft``,
``base_model``, ``datasets``, ``pipeline_tag`` and a ``model-index`` holding the measured
per-dimension Pearson and Content Pass accuracy); the body is the Jinja template, rendered by
``huggingface_hub.ModelCard.from_template``.

A pushed LiteScorer's card (:func:`render_lite_model_card`, template ``lite_modelcard.md``) is
built the same way from the ``metrics.json`` of ``speech-drame train-lite``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import templates
from ..audio import SCORED_SECONDS
from ..audio_llm.qwen2_audio import (
    DEFAULT_PROMPT_ORDER,
    LOSS_SPANS,
    PROMPT_ORDERS,
    prefix_text,
    suffix_text,
)
from ..audio_llm.tiny import TINY_MODEL
from ..distribution_fit import shared_average
from ..labels import DEFAULT_LABEL_POLICY, LABEL_POLICIES
from ..languages import LANGUAGES
from ..prompt_profile import PromptProfile, default_profile
from ..prompts import rubric
from ..schema import CONTENT_PASS
from ..schema import dimensions as rated_dimensions
from ..stats import AlignmentTable, headline_statistic

PIPELINE_TAG = "audio-text-to-text"
TASK_TYPE = "audio-classification"
_SOURCE_NOTE = re.compile(r"^> \*\*Source\.\*\* (.+)$", re.MULTILINE)
_EXAMPLE_FIELDS = {
    "archetype": {"question": "You are a firefighter. A child is trapped by smoke. You say:"},
    "realism": {
        "char_profile": "<who the character is>",
        "local_scene": "<what is happening>",
        "char_style": "<traits, comma separated>",
    },
}


@dataclass
class DatasetCardInfo:
    """Licence and source note of the training data, read from its dataset card."""

    license: str
    source_note: str | None = None


def read_data_card(dataset: str | os.PathLike) -> DatasetCardInfo:
    """Read the dataset card of a local folder or Hub id.

    When the card cannot be read, the licence says so with the reason (nothing is guessed).
    """
    from huggingface_hub import DatasetCard

    local = Path(dataset) / "README.md"
    try:
        card = DatasetCard.load(local if local.is_file() else str(dataset))
    except Exception as exc:  # noqa: BLE001 - any failure is reported in the card text
        return DatasetCardInfo(f"unknown (dataset card not readable: {exc})")
    note = _SOURCE_NOTE.search(card.text)
    return DatasetCardInfo(
        str(card.data.get("license") or "not stated in the dataset card"),
        note.group(1).strip() if note else None,
    )


def dataset_name(dataset: str | os.PathLike) -> str:
    """A local folder is named by its folder name, a Hub id by itself."""
    return Path(dataset).name if Path(dataset).is_dir() else str(dataset)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def eval_results(
    evaluation: Mapping[str, Mapping[str, Any]],
    dimensions: Sequence[str],
    *,
    dataset: str,
    config: str,
) -> list[Any]:
    """``EvalResult`` entries of the model-index: finite Pearson r and Content Pass accuracy."""
    from huggingface_hub import EvalResult

    results = []
    for split, table in evaluation.items():
        typed = AlignmentTable.from_flat(table)
        for dim in dimensions:
            metric_type, label = (
                ("accuracy", "Content Pass accuracy")
                if dim == CONTENT_PASS
                else ("pearsonr", f"Pearson r, {rubric(config, dim).name}")
            )
            value = typed.value(dim, headline_statistic(dim))
            if not _finite(value):
                continue
            results.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=f"Spoken role-play evaluation ({config})",
                    dataset_type=dataset,
                    dataset_name=f"Speech-DRAME EvalBench ({dataset})",
                    dataset_config=config,
                    dataset_split=split,
                    metric_type=metric_type,
                    metric_name=label,
                    metric_config=dim,
                    metric_value=round(float(value), 4),
                )
            )
    return results


def _results_rows(
    evaluation: Mapping[str, Mapping[str, Any]], dimensions: Sequence[str], config: str
) -> list[dict[str, Any]]:
    rows = []
    for split, table in evaluation.items():
        typed = AlignmentTable.from_flat(table)
        for dim in dimensions:
            cp = dim == CONTENT_PASS
            value = typed.value(dim, headline_statistic(dim))
            note = typed.note(dim, headline_statistic(dim))
            why = "not computed" if note is None else note
            shown = f"{value:.4f}" if _finite(value) else f"undefined ({why})"
            rows.append(
                {
                    "split": split,
                    "metric": "accuracy" if cp else "Pearson r",
                    "dimension": rubric(config, dim).name,
                    "value": shown,
                    "count": "" if typed.value(dim, "count") is None else typed.value(dim, "count"),
                }
            )
    return rows


def _shared_part(profile: PromptProfile, order: str) -> str:
    """What the queries of one clip share in ``order`` of ``profile``: the parts placed before
    the instruction (the shared-prefix KV cache covers exactly those)."""
    head = profile.orders[order].split("{instruction}")[0]
    parts = [name for name in ("audio", "preamble", "context") if "{" + name + "}" in head]
    if not parts:
        return "the system turn"
    return "the " + (f"{', '.join(parts[:-1])} and {parts[-1]}" if len(parts) > 1 else parts[0])


def render_model_card(
    *,
    model_id: str,
    base_model: str,
    config: str,
    dimensions: Sequence[str],
    metrics: Mapping[str, Any],
    dataset: str | os.PathLike,
    train_split: str,
    recipe: Sequence[tuple[str, Any]],
    data_card: DatasetCardInfo,
    load_id: str,
    prompt_order: str = DEFAULT_PROMPT_ORDER,
    profile: PromptProfile | None = None,
    loss_on: str = "answer_span",
    label_policy: str = DEFAULT_LABEL_POLICY,
    template_path: str | os.PathLike | None = None,
) -> str:
    """The README.md of an exported evaluator.

    ``metrics`` is the run's ``metrics.json`` content (``train`` and ``eval`` sections);
    ``recipe`` the (setting, value) rows of the training-procedure table; ``data_card`` what
    :func:`read_data_card` read of the training data's card; ``prompt_order``, ``profile``
    (the prompt profile; default: this package's), ``loss_on`` and ``label_policy`` the run's
    settings of those options. ``template_path``: a Jinja template
    file to use instead of ``model_card/modelcard.md``.
    """
    from huggingface_hub import ModelCard, ModelCardData

    template = (
        templates.read_template(templates.MODEL_CARD)
        if template_path is None
        else Path(template_path).read_text(encoding="utf-8")
    )
    name = dataset_name(dataset)
    card_data = ModelCardData(
        library_name="peft",
        base_model=base_model,
        datasets=[name],
        pipeline_tag=PIPELINE_TAG,
        tags=["speech-drame", "drame-eval", "role-play", "speech-evaluation", "lora"],
        model_name=model_id,
        eval_results=eval_results(metrics["eval"], dimensions, dataset=name, config=config),
    )
    train = metrics["train"]
    evaluation = metrics["eval"]
    example_dim = dimensions[-1]
    context = (
        "the role-and-scene prompt (`question`)"
        if config == "archetype"
        else "the character profile, local scene and traits (`char_profile`, `local_scene`, `char_style`)"
    )
    if base_model == TINY_MODEL:
        base_text = "a tiny random Qwen2-Audio built offline (`speech_drame.audio_llm.tiny`)"
    elif Path(base_model).is_dir():
        base_text = f"the local checkpoint `{base_model}`"
    else:
        base_text = f"[`{base_model}`](https://huggingface.co/{base_model})"
    return templates.render(
        ModelCard,
        card_data,
        template,
        model_id=model_id,
        config=config,
        base_model=base_model,
        base_model_text=base_text,
        tiny_base=base_model == TINY_MODEL,
        source_note=data_card.source_note,
        dimensions=[
            {
                "key": d,
                "name": rubric(config, d).name,
                "answer": "P(pass), 0..1" if d == CONTENT_PASS else "expected score, 1..5",
            }
            for d in dimensions
        ],
        prompt_prefix=prefix_text(config, _EXAMPLE_FIELDS[config], prompt_order, profile).replace(
            "<|AUDIO|>", "<|AUDIO|> x N"
        ),
        prompt_suffix=suffix_text(
            config, example_dim, _EXAMPLE_FIELDS[config], prompt_order, profile=profile
        ),
        prompt_order=prompt_order,
        prompt_order_text=(
            PROMPT_ORDERS[prompt_order]
            if profile is None or profile.digest == default_profile().digest
            else f"an order of the prompt profile {profile.label} (`prompt_profile.json`)"
        ),
        shared_part=_shared_part(profile or default_profile(), prompt_order),
        answer_prefix=(profile or default_profile()).answer_prefix,
        answer_suffix=(profile or default_profile()).answer_suffix,
        loss_on=loss_on,
        loss_text=LOSS_SPANS[loss_on],
        label_policy=label_policy,
        label_policy_text=LABEL_POLICIES[label_policy],
        context_description=context,
        scored_seconds=int(SCORED_SECONDS),
        dataset=name,
        train_split=train_split,
        training_clips=train["training_clips"],
        training_pairs=train["training_pairs"],
        skipped=", ".join(f"{k} {v}" for k, v in train["skipped_no_valid_score"].items()),
        dataset_license=data_card.license,
        recipe=[(k, v) for k, v in recipe],
        results=_results_rows(evaluation, dimensions, config),
        failures=sum(len(t.get("failures", [])) for t in evaluation.values()),
        load_id=load_id,
        example_fields=_EXAMPLE_FIELDS[config],
    )


# --- LiteScorer ------------------------------------------------------------------------------

LITE_TAGS = ["speech-drame", "lite-scorer", "role-play", "speech-evaluation"]


def _measured(config: str, table: Mapping[str, Any]) -> list[str]:
    """The dimensions an alignment table measured: Content Pass (when there), then the rated."""
    typed = AlignmentTable.from_flat(table)
    rated = [d for d in rated_dimensions(config) if d in typed.dimensions]
    return ([CONTENT_PASS] if typed.content_pass is not None else []) + rated


def lite_data_card(dataset: str | os.PathLike) -> DatasetCardInfo:
    """The training data's card when its folder is here, else a licence of "not recorded"."""
    if (Path(dataset) / "README.md").is_file():
        return read_data_card(dataset)
    return DatasetCardInfo("not recorded")


def _language_rows(config: str, splits: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for split, entry in splits.items():
        for language, group in entry.get("by_language", {}).items():
            table = group.get("table")
            value = AlignmentTable.from_flat(table).avg_pearson if table else None
            shown = (
                f"{value:.4f}"
                if _finite(value)
                else f"undefined ({group.get('reason') or 'not computed'})"
            )
            rows.append(
                {
                    "config": config,
                    "split": split,
                    "language": language,
                    "count": group.get("count", 0),
                    "avg_pearson": shown,
                }
            )
    return rows


def _shown(value: Any) -> str:
    """A card cell: 4 decimals, ``undefined`` (NaN) or ``not scored`` (a new head's parent)."""
    if value is None:
        return "not scored"
    return f"{value:.4f}" if _finite(value) else "undefined"


def _fine_tuning(config: str, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the card says of a fine-tuned config (``metrics.json`` ``init`` and
    ``parent_splits``): the parent, the schedule, each dimension's fate and, per evaluated
    split, the parent's figure beside this scorer's."""
    init = entry.get("init")
    if not init:
        return None
    parent = init["parent"]
    rows = []
    for split, before in entry.get("parent_splits", {}).items():
        after = AlignmentTable.from_flat(entry["splits"][split]["table"])
        earlier = AlignmentTable.from_flat(before["table"])
        for dim in _measured(config, entry["splits"][split]["table"]):
            values = [_shown(t.value(dim, headline_statistic(dim))) for t in (earlier, after)]
            rows.append(
                {
                    "config": config,
                    "split": split,
                    "metric": "accuracy" if dim == CONTENT_PASS else "Pearson r",
                    "dimension": rubric(config, dim).name,
                    "parent": values[0],
                    "value": values[1],
                }
            )
        fits = [before.get("distribution_fit"), entry["splits"][split].get("distribution_fit")]
        if all(fits):
            parent_nll, nll, shared = shared_average(*fits)
            everything = len(shared) == len(fits[1]["dimensions"])
            rows.append(
                {
                    "config": config,
                    "split": split,
                    "metric": "NLL of the ratings (lower is better)",
                    "dimension": "average"
                    if everything
                    else f"average of {', '.join(rubric(config, d).name for d in shared)}",
                    "parent": _shown(parent_nll),
                    "value": _shown(nll),
                }
            )
    own = {
        split: AlignmentTable.from_flat(table).avg_pearson
        for split, table in parent.get("evaluation", {}).items()
    }
    names = {fate: [rubric(config, d).name for d in dims]
             for fate, dims in init["dimensions"].items()}  # fmt: skip
    return {
        "config": config,
        "parent_id": parent["id"],
        "source": parent.get("hub_id") or parent.get("source") or "a model in memory",
        "parent_dataset": dataset_name(parent["dataset"]) if parent.get("dataset") else None,
        "parent_own": ", ".join(f"{s} {v:.4f}" for s, v in own.items() if _finite(v)),
        "lineage": " <- ".join(parent["lineage"]),
        "epochs": init["epochs"],
        "anchor": init["anchor"],
        "dimensions": names,
        "content_pass": init.get("content_pass"),
        "drift": {rubric(config, d).name: f"{v:.3f}" for d, v in init["kept_drift"].items()},
        "rows": rows,
    }


def render_lite_model_card(
    *,
    model_id: str,
    metrics: Mapping[str, Any],
    feature_versions: Mapping[str, Mapping[str, str]],
    data_card: DatasetCardInfo,
) -> str:
    """The README.md of a pushed LiteScorer folder.

    ``metrics`` is the ``metrics.json`` that ``train-lite`` wrote (``dataset``, ``configs``);
    ``feature_versions`` each config's ``config.json`` ``feature_versions``; ``data_card`` what
    is known of the training data's card (:func:`lite_data_card`). The model-index holds every
    finite Pearson r and Content Pass accuracy of every evaluated split. A config fine-tuned
    with ``train-lite --init`` gets a section naming its parent (id, source, lineage, what was
    updated) with the parent's figures beside its own; a parent from the Hub is the
    ``base_model``.
    """
    from huggingface_hub import ModelCard, ModelCardData

    configs = metrics["configs"]
    name = dataset_name(metrics["dataset"])
    results: list[Any] = []
    rows: list[dict[str, Any]] = []
    languages: list[dict[str, Any]] = []
    scorers = []
    for config, entry in configs.items():
        tables = {split: e["table"] for split, e in entry["splits"].items()}
        dims = list(dict.fromkeys(d for t in tables.values() for d in _measured(config, t)))
        results += eval_results(tables, dims, dataset=name, config=config)
        rows += [{"config": config, **r} for r in _results_rows(tables, dims, config)]
        languages += _language_rows(config, entry["splits"])
        training = entry["training"]
        scorers.append(
            {
                "config": config,
                "dimensions": [rubric(config, d).name for d in dims],
                "clips_used": training["clips_used"],
                "clips_failed": training["clips_failed"],
                "feature_versions": dict(feature_versions[config]),
            }
        )
    fine_tuned = [f for c, e in configs.items() if (f := _fine_tuning(c, e)) is not None]
    hub_parents = sorted({e["init"]["parent"]["hub_id"] for e in configs.values()
                          if e.get("init") and e["init"]["parent"].get("hub_id")})  # fmt: skip
    trainings = [entry["training"] for entry in configs.values()]
    policy = trainings[0]["options"]["label_policy"]
    synthetic = [t for t in trainings if t["labels_are_synthetic"]]
    seen = {g for e in configs.values() for s in e["splits"].values() for g in s["by_language"]}
    card_data = ModelCardData(
        library_name="speech-drame",
        datasets=[name],
        language=[code for code in LANGUAGES if code in seen] or None,
        tags=LITE_TAGS + (["synthetic-labels"] if synthetic else []),
        model_name=model_id,
        eval_results=results or None,
        base_model=(hub_parents[0] if len(hub_parents) == 1 else hub_parents) or None,
    )
    return templates.render(
        ModelCard,
        card_data,
        templates.read_template(templates.LITE_MODEL_CARD),
        model_id=model_id,
        configs=list(configs),
        synthetic=bool(synthetic),
        synthetic_note=(synthetic[0]["label_note"] if synthetic else None) or "",
        scorers=scorers,
        dataset=name,
        dataset_license=data_card.license,
        source_note=data_card.source_note,
        label_policy=policy,
        label_policy_text=LABEL_POLICIES[policy],
        results=rows,
        languages=languages,
        fine_tuned=fine_tuned,
    )
