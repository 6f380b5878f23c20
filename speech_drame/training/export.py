"""Writing a trained evaluator: adapter, processor, config, predictions, metrics, model card.

The export is its own folder, ``<output_dir>/evaluator`` (the Trainer's checkpoints stay in
``<output_dir>``, so ``--resume`` finds them). It is built in a staging folder beside it and
swapped in whole (:mod:`speech_drame.atomic_io`): a kill leaves the previous export or the new
one, never a mix, and nothing of an earlier run survives in it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic_io import replace_dir, staging_dir, strict_json, write_json, write_text
from ..audio_llm.qwen2_audio import LORA_SCOPES, LOSS_SPANS, PROMPT_ORDERS, PROMPT_VARIATION
from ..hub.cards import read_data_card, render_model_card
from ..labels import LABEL_POLICIES
from ..prompt_profile import save_profile
from ..scorers.drame_eval import EVALUATOR_DIR
from .recipes import SAMPLER_CHOICES, describe_recipe

if TYPE_CHECKING:
    from ..prompt_profile import PromptProfile
    from ..scorers.base import ClipScores
    from ..scorers.drame_eval import EvaluatorInfo
    from .arguments import DataArguments, DrameEvalTrainingArguments, LoraArguments

METRICS_FILE = "metrics.json"
PREDICTIONS_DIR = "predictions"


def evaluator_dir(output_dir: str | os.PathLike) -> Path:
    """Where ``train.py`` exports the evaluator of a run in ``output_dir``."""
    return Path(output_dir) / EVALUATOR_DIR


def folder_files(folder: str | os.PathLike) -> list[Path]:
    """Every file under ``folder``, relative and sorted."""
    root = Path(folder)
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def training_recipe(
    lora_args: LoraArguments, args: DrameEvalTrainingArguments, metrics: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """The rows of the model card's training-procedure table; each recipe switch says whether
    it is the official code's setting, and the first row which recipe (:mod:`.recipes`) set
    the defaults where the paper and the official code differ."""
    precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    train, choices = metrics["train"], metrics["training_choices"]
    scope = choices["lora_scope"]
    scope_text = (
        "set by --lora_target_modules" if scope == "custom" else f"`{scope}`: {LORA_SCOPES[scope]}"
    )
    return [
        ("recipe", f"`{choices['recipe']}`: {describe_recipe(choices['recipe'])}"),
        ("method", "LoRA (PEFT), base weights frozen"),
        (
            "LoRA rank / alpha / dropout",
            f"{lora_args.lora_r} / {lora_args.lora_alpha} / {lora_args.lora_dropout}",
        ),
        ("LoRA scope", scope_text),
        ("LoRA target modules", f"`{choices['lora_target_modules']}`"),
        ("prompt order", _choice(choices["prompt_order"], PROMPT_ORDERS)),
        ("prompt variation", PROMPT_VARIATION[choices["prompt_variation"]]),
        ("loss span", _choice(choices["loss_on"], LOSS_SPANS)),
        ("label policy", _choice(choices["label_policy"], LABEL_POLICIES)),
        ("optimizer", str(args.optim.value if hasattr(args.optim, "value") else args.optim)),
        ("peak learning rate", args.learning_rate),
        ("schedule", str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type))),
        ("warm-up steps", args.warmup_steps),
        ("weight decay", args.weight_decay),
        ("gradient clipping (max norm)", args.max_grad_norm),
        ("optimizer steps", train["global_step"]),
        (
            "batch (per device x accumulation x devices = effective)",
            f"{args.per_device_train_batch_size} x {args.gradient_accumulation_steps} x "
            f"{args.world_size} = {train['effective_batch_size']}",
        ),
        ("precision", precision),
        ("activation (gradient) checkpointing", args.activation_checkpointing),
        ("seed", args.seed),
        ("target sampling", "one annotator per draw, uniformly among the usable labels"),
        ("sampler", f"`{choices['sampler']}`: {SAMPLER_CHOICES[choices['sampler']]}"),
        ("drop the last incomplete batch", choices["dataloader_drop_last"]),
    ]


def _choice(value: str, descriptions: Mapping[str, str]) -> str:
    return f"`{value}`: {descriptions[value]}"


def export_evaluator(
    output_dir: str | os.PathLike,
    *,
    model: Any,
    processor: Any,
    info: EvaluatorInfo,
    profile: PromptProfile,
    metrics: Mapping[str, Any],
    predictions: Mapping[str, list[ClipScores]],
    data_args: DataArguments,
    lora_args: LoraArguments,
    args: DrameEvalTrainingArguments,
    hub_model_id: str | None,
) -> tuple[Path, list[Path]]:
    """Export the evaluator to ``<output_dir>/evaluator``, replacing an earlier export whole.

    Contents: ``adapter_model.safetensors`` + ``adapter_config.json`` (PEFT; its
    ``base_model_name_or_path`` is the base model, so PEFT's loaders find it), the processor
    files, ``drame_eval_config.json``, the prompt profile it was trained with
    (``prompt_profile.json``, which ``info`` names), ``predictions/<split>.jsonl``,
    ``metrics.json`` and the model card ``README.md``. Returns the folder and its files
    (relative, sorted), listed from the staged export: exactly what a Hub push uploads.
    """
    target = evaluator_dir(output_dir)
    for leftover in target.parent.glob(f".{target.name}.staging-*"):  # of a killed export
        shutil.rmtree(leftover, ignore_errors=True)
    stage = staging_dir(target)
    try:
        for adapter in model.peft_config.values():
            adapter.base_model_name_or_path = info.base_model
        model.save_pretrained(stage, safe_serialization=True)
        processor.save_pretrained(stage)
        save_profile(profile, stage)
        info.save(stage)
        for split, results in predictions.items():
            lines = [
                json.dumps(strict_json(r.to_dict()), ensure_ascii=False, allow_nan=False)
                for r in results
            ]
            write_text(stage / PREDICTIONS_DIR / f"{split}.jsonl", "".join(f"{x}\n" for x in lines))
        write_json(stage / METRICS_FILE, metrics, indent=2)
        card = render_model_card(
            model_id=hub_model_id or Path(output_dir).resolve().name,
            base_model=info.base_model,
            config=info.config,
            dimensions=info.dimensions,
            metrics=metrics,
            dataset=data_args.dataset,
            train_split=data_args.train_split,
            recipe=training_recipe(lora_args, args, metrics),
            data_card=read_data_card(data_args.dataset),
            load_id=hub_model_id or str(target),
            prompt_order=info.prompt_order,
            profile=profile,
            loss_on=info.loss_on,
            label_policy=info.label_policy,
        )
        write_text(stage / "README.md", card)
        files = folder_files(stage)
        replace_dir(stage, target)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return target, files
