"""Writing a trained evaluator: adapter, processor, config, predictions, metrics, model card."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model_card import read_dataset_card, render_model_card
from .hub import upload_files

if TYPE_CHECKING:
    from ..scorers.drame_eval import ClipScores, EvaluatorInfo
    from .arguments import DataArguments, DrameEvalTrainingArguments, LoraArguments

METRICS_FILE = "metrics.json"
PREDICTIONS_DIR = "predictions"


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats replaced by None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def training_recipe(
    lora_args: LoraArguments, args: DrameEvalTrainingArguments, metrics: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """The rows of the model card's training-procedure table."""
    precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    train = metrics["train"]
    return [
        ("method", "LoRA (PEFT), base weights frozen"),
        (
            "LoRA rank / alpha / dropout",
            f"{lora_args.lora_r} / {lora_args.lora_alpha} / {lora_args.lora_dropout}",
        ),
        ("LoRA target modules", f"`{lora_args.lora_target_modules}`"),
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
        ("target sampling", "one annotator per draw, uniformly among valid ratings"),
    ]


def export_evaluator(
    output_dir: str | os.PathLike,
    *,
    model: Any,
    processor: Any,
    info: EvaluatorInfo,
    metrics: Mapping[str, Any],
    predictions: Mapping[str, list[ClipScores]],
    data_args: DataArguments,
    lora_args: LoraArguments,
    args: DrameEvalTrainingArguments,
    hub_model_id: str | None,
) -> list[Path]:
    """Write the evaluator into ``output_dir``; returns the files a Hub push uploads.

    Contents: ``adapter_model.safetensors`` + ``adapter_config.json`` (PEFT), the processor
    files, ``drame_eval_config.json``, ``predictions/<split>.jsonl``, ``metrics.json`` and the
    model card ``README.md``.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    info.save(out)
    (out / PREDICTIONS_DIR).mkdir(exist_ok=True)
    for split, results in predictions.items():
        lines = [json.dumps(json_safe(r.to_dict()), ensure_ascii=False) for r in results]
        (out / PREDICTIONS_DIR / f"{split}.jsonl").write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8"
        )
    (out / METRICS_FILE).write_text(
        json.dumps(json_safe(metrics), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    model_id = hub_model_id or out.resolve().name
    card = render_model_card(
        model_id=model_id,
        base_model=info.base_model,
        config=info.config,
        dimensions=info.dimensions,
        metrics=metrics,
        dataset=data_args.dataset,
        train_split=data_args.train_split,
        recipe=training_recipe(lora_args, args, metrics),
        dataset_card=read_dataset_card(data_args.dataset),
        load_id=hub_model_id or str(out),
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    return upload_files(out)
