"""The DRAME-Eval training run: data, LoRA model, Trainer, final evaluation, export, push.

``main(argv)`` is what ``train.py`` calls. Steps:

1. open ``<dataset>``/``<config>`` (:func:`speech_drame.data.reader.open_split`; the clips with
   audio, the others counted) and index the training pairs;
2. load the base model (or build the tiny one) and wrap it with LoRA (PEFT);
3. train with ``transformers.Trainer`` (resuming from the last checkpoint with ``--resume``);
4. on the main process: score the eval splits with :class:`DrameEvalScorer` and measure them
   with :func:`speech_drame.stats.alignment_table` (the ``drame_metric`` computation);
5. export adapter, processor, ``drame_eval_config.json``, predictions, ``metrics.json`` and
   the model card into ``<output_dir>/evaluator`` (swapped in whole); push exactly those
   files with ``--push_to_hub`` (or only list them with ``--push_dry_run``).

Everything that can stop a run is checked before step 1: the machine (see ``arguments``), the
output folder (an earlier run needs ``--resume`` or ``--overwrite_output_dir``) and, for a
push, the token and the Hub (``whoami``). Such problems raise :class:`SetupError`, which
``main`` prints as one line (exit status 2).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic_io import strict_json
from ..audio_llm.tiny import TINY_MODEL
from ..data.reader import ATTACH_HINT
from ..errors import UsageError
from ..hub.refs import is_repo_id
from ..labels import describe_label_policy
from ..prompt_profile import PROFILE_FILE, PromptProfile, default_profile, load_profile
from ..prompts import scored_dimensions
from ..schema import SPLITS, Config, check_config
from ..scorers.base import ClipScores
from ..scorers.drame_eval import DrameEvalScorer, EvaluatorInfo
from . import SetupError
from .export import evaluator_dir

if TYPE_CHECKING:  # the arguments module imports transformers
    from ..data.reader import BuiltSplit
    from .arguments import DataArguments, DrameEvalTrainingArguments, LoraArguments, ModelArguments

logger = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a run produced: metrics (``metrics.json``), the export folder and its files."""

    metrics: dict[str, Any]
    folder: Path
    files: list[Path]


def _dtype(name: str) -> Any:
    """The torch dtype of a ``--model_dtype`` value (None for ``auto``)."""
    import torch

    return {
        "auto": None,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
        "float32": torch.float32,
    }[name]


def base_model_spec(model_args: ModelArguments) -> str:
    return TINY_MODEL if model_args.tiny else model_args.model_name_or_path


def load_data(data_args: DataArguments) -> tuple[Config, dict[str, BuiltSplit], tuple[str, ...]]:
    """``(config, split name -> split, dimensions)``; dimensions include extras the data
    carries. A training split without any audio stops here, before any model is loaded."""
    from ..data.reader import DatasetError, dataset_splits, open_split, require_audio

    config = check_config(data_args.dataset_config_name)
    try:
        data = {
            s: open_split(data_args.dataset, config, s)
            for s in dataset_splits(data_args.dataset, config)
        }
        if data_args.train_split not in data:
            raise SetupError(
                f"{data_args.dataset} ({config}) has no split {data_args.train_split!r}; "
                f"splits: {', '.join(data) or 'none'}"
            )
        require_audio([data[data_args.train_split]], "train.py")
    except DatasetError as exc:
        raise SetupError(str(exc)) from None
    annotation_keys = set(data[data_args.train_split].annotation_keys)
    extra = tuple(k for k in ("semantic_match",) if k in annotation_keys)
    return config, data, scored_dimensions(config, extra)


def eval_splits(data_args: DataArguments, config: Config, available: Sequence[str]) -> list[str]:
    """The splits scored at the end (explicit, or every known split but the training one)."""
    if data_args.eval_splits:
        missing = [s for s in data_args.eval_splits if s not in available]
        if missing:
            raise SetupError(f"eval split(s) {', '.join(missing)} not in {', '.join(available)}")
        return list(data_args.eval_splits)
    return [s for s in SPLITS[config] if s in available and s != data_args.train_split]


def build_model(model_args: ModelArguments, lora_args: LoraArguments) -> tuple[Any, Any]:
    """(PEFT model with fresh LoRA weights, processor)."""
    from peft import LoraConfig, get_peft_model

    from ..audio_llm.qwen2_audio import load_base, lora_targets

    model, processor = load_base(
        base_model_spec(model_args), dtype=_dtype(model_args.model_dtype), seed=model_args.tiny_seed
    )
    lora = LoraConfig(
        r=lora_args.lora_r,
        lora_alpha=lora_args.lora_alpha,
        lora_dropout=lora_args.lora_dropout,
        target_modules=lora_args.lora_target_modules or lora_targets(lora_args.lora_scope),
    )
    return get_peft_model(model, lora), processor


def evaluate_split(
    scorer: DrameEvalScorer, rows: Any, dimensions: Sequence[str], label_policy: str
) -> tuple[dict[str, Any], list[ClipScores]]:
    """Score every clip of ``rows`` and compare with the annotators (``alignment_table``,
    null ratings read through ``label_policy``).

    Failed clips are left out of the statistics and listed under ``failures``; if no clip
    can be scored the split raises ``RuntimeError`` with the first reasons.
    """
    from ..scorers.join import clip_predictions, join
    from ..stats import alignment_table

    results = scorer.score_rows(rows, progress=True)
    annotations = rows.select_columns(["annotations"])["annotations"]
    ok = [(r, a) for r, a in zip(results, annotations, strict=True) if r.ok]
    failures = [{"id": r.id, "reason": r.error} for r in results if not r.ok]
    if not ok:
        reasons = "; ".join(f["reason"] for f in failures[:3])
        raise RuntimeError(f"no clip of the split could be scored: {reasons}")
    joined = join((clip_predictions(r) for r, _ in ok), {r.id: a for r, a in ok}, dimensions)
    table = alignment_table(
        joined.predictions, joined.references, joined.dimensions, label_policy=label_policy
    )
    table["clips_scored"] = len(ok)
    table["failures"] = failures
    return table, results


def checkpoint_to_resume(args: DrameEvalTrainingArguments) -> str | None:
    """The checkpoint to resume from (or None); refuses to start over an earlier run unless
    ``--resume`` or ``--overwrite_output_dir`` says what to do with it. Changes nothing."""
    from transformers.trainer_utils import get_last_checkpoint

    out = Path(args.output_dir)
    last = get_last_checkpoint(str(out)) if out.is_dir() else None
    resuming = args.resume or args.resume_from_checkpoint
    if resuming and args.overwrite_output_dir:
        raise SetupError("--overwrite_output_dir starts over, --resume continues: pass one of them")
    if args.resume_from_checkpoint:
        return args.resume_from_checkpoint
    if args.resume:
        if last is None:
            logger.warning("--resume: no checkpoint in %s, starting from scratch", out)
        return last
    held = [f"checkpoints up to {Path(last).name}"] if last else []
    if evaluator_dir(out).is_dir():
        held.append(f"an exported {evaluator_dir(out).name}/")
    if held and not args.overwrite_output_dir:
        raise SetupError(
            f"{out} already holds a run ({' and '.join(held)}): pass --resume to continue it, "
            "--overwrite_output_dir to start over, or choose another --output_dir"
        )
    return None


def remove_checkpoints(output_dir: str | os.PathLike) -> None:
    """Delete the Trainer checkpoints of an earlier run (``--overwrite_output_dir``)."""
    old = sorted(p for p in Path(output_dir).glob("checkpoint-*") if p.is_dir())
    if old:
        names = ", ".join(p.name for p in old)
        logger.info("--overwrite_output_dir: deleting %s from %s", names, output_dir)
    for path in old:
        shutil.rmtree(path)


PAPER_EFFECTIVE_BATCH = 32  # Appendix L.3: 4 per device x 4 accumulation steps x 2 GPUs


def effective_batch(args: DrameEvalTrainingArguments) -> int:
    """Examples per optimizer step: per-device batch x accumulation steps x processes."""
    return args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size


def report_batch(args: DrameEvalTrainingArguments) -> None:
    """Say at the start what batch the run trains with, and warn when it is not the paper's."""
    batch = effective_batch(args)
    logger.info(
        "effective batch %d = %d per device x %d accumulation steps x %d process(es)",
        batch, args.per_device_train_batch_size, args.gradient_accumulation_steps, args.world_size,
    )  # fmt: skip
    if batch != PAPER_EFFECTIVE_BATCH:
        steps = PAPER_EFFECTIVE_BATCH // max(1, args.per_device_train_batch_size * args.world_size)
        logger.warning(
            "effective batch %d differs from the paper's %d (Appendix L.3: 4 per device x 4 "
            "accumulation steps x 2 GPUs); with %d process(es) at %d per device, "
            "--gradient_accumulation_steps %d gives it",
            batch, PAPER_EFFECTIVE_BATCH, args.world_size, args.per_device_train_batch_size,
            steps,
        )  # fmt: skip


def preflight(args: DrameEvalTrainingArguments) -> tuple[str | None, str | None]:
    """Check everything that would stop the run later; ``(checkpoint to resume, push token)``.

    The Hub is asked (``whoami``) only for a real push, and only by the main process.
    """
    from .hub import check_push_access

    wants_push = args.push_to_hub or args.push_dry_run
    if wants_push and not (args.hub_model_id and is_repo_id(args.hub_model_id)):
        raise SetupError(
            f"--push_to_hub / --push_dry_run need --hub_model_id ORG/NAME (got {args.hub_model_id!r})"
        )
    resume_from = checkpoint_to_resume(args)
    token = None
    if args.push_to_hub and not args.push_dry_run and args.process_index == 0:
        token = check_push_access(args.hub_model_id, args.hub_token)
    return resume_from, token


def train(
    model_args: ModelArguments,
    data_args: DataArguments,
    lora_args: LoraArguments,
    args: DrameEvalTrainingArguments,
) -> RunResult | None:
    """Run training, evaluation and export; returns None on non-main processes."""
    from transformers import Trainer, set_seed

    from ..audio_llm.qwen2_audio import PromptEncoder
    from .data import SAMPLERS, DrameEvalCollator, answer_token_loss
    from .export import export_evaluator
    from .hub import push_evaluator

    resume_from, token = preflight(args)
    # the Trainer pickles its arguments into every checkpoint (training_args.bin): the token,
    # checked and kept above for the push, must not be among them
    args.hub_token = None
    report_batch(args)
    push = args.push_to_hub or args.push_dry_run
    dry_run = args.push_dry_run  # a dry run never uploads, whatever else is given
    args.push_to_hub = False  # the Trainer must not push checkpoints; the export is pushed below
    if args.overwrite_output_dir and args.process_index == 0:
        remove_checkpoints(args.output_dir)
    set_seed(args.seed)

    config, data, dims = load_data(data_args)
    splits = eval_splits(data_args, config, list(data))
    without_audio = {s: len(data[s].without_audio) for s in [data_args.train_split, *splits]}
    not_evaluated = {
        s: f"no audio ({data[s].n_rows} clips)" for s in splits if not data[s].n_with_audio
    }
    splits = [s for s in splits if s not in not_evaluated]
    for split, why in not_evaluated.items():
        logger.warning("%s/%s is not evaluated: %s; %s", config, split, why, ATTACH_HINT)
    train_rows = data[data_args.train_split].to_dataset(with_audio_only=True)
    if data_args.max_train_samples is not None:
        train_rows = train_rows.select(range(min(data_args.max_train_samples, len(train_rows))))
    profile = training_profile(data_args, config, dims)
    paraphrases = profile.paraphrases.get(config) if data_args.prompt_variation else None
    dataset_class = SAMPLERS[data_args.sampler]
    train_set = dataset_class(train_rows, dims, data_args.label_policy, paraphrases)
    logger.info(
        "%d training pairs from %d clips (%d without audio left out; sampler %s: %d examples "
        "per epoch); label policy %s; skipped (no usable label): %s; null ratings counted as 1: %s",
        len(train_set.index.pairs),
        len(train_rows),
        without_audio[data_args.train_split],
        data_args.sampler,
        len(train_set),
        data_args.label_policy,
        train_set.index.skipped,
        train_set.index.filled,
    )

    model, processor = build_model(model_args, lora_args)
    if args.activation_checkpointing:
        # Frozen embeddings: with reentrant checkpointing the blocks would get no gradient.
        model.enable_input_require_grads()
    encoder = PromptEncoder(processor, config, dims, data_args.prompt_order, profile)
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train_set,
        data_collator=DrameEvalCollator(encoder, data_args.loss_on),
        processing_class=processor,
        compute_loss_func=answer_token_loss,
    )
    if resume_from:
        logger.info("resuming from %s", resume_from)
    train_result = trainer.train(resume_from_checkpoint=resume_from)
    trainer.log_metrics("train", train_result.metrics)
    if not trainer.is_world_process_zero():
        return None

    scorer = DrameEvalScorer(
        trainer.model,
        processor,
        config,
        dimensions=dims,
        batch_size=args.per_device_eval_batch_size,
        prompt_order=data_args.prompt_order,
        profile=profile,
    )
    evaluation, predictions = {}, {}
    for split in splits:
        rows = data[split].to_dataset(with_audio_only=True)
        if data_args.max_eval_samples is not None:
            rows = rows.select(range(min(data_args.max_eval_samples, len(rows))))
        evaluation[split], predictions[split] = evaluate_split(
            scorer, rows, dims, data_args.label_policy
        )
        evaluation[split]["clips_without_audio"] = without_audio[split]
        trainer.log_metrics(
            f"eval_{split}",
            {k: v for k, v in evaluation[split].items() if isinstance(v, int | float)},
        )
    choices = training_choices(data_args, lora_args, args)
    metrics = {
        "config": config,
        "dimensions": list(dims),
        **describe_label_policy(data_args.label_policy),
        "training_choices": choices,
        "train": {
            **train_result.metrics,
            "global_step": trainer.state.global_step,
            "effective_batch_size": effective_batch(args),
            "training_pairs": len(train_set.index.pairs),
            "examples_per_epoch": len(train_set),
            "training_clips": len(train_rows),
            "training_clips_without_audio": without_audio[data_args.train_split],
            "skipped_no_valid_score": train_set.index.skipped,
            "null_ratings_counted_as_1": train_set.index.filled,
        },
        "eval": evaluation,
        "not_evaluated": not_evaluated,
    }
    base_dtype = str(model.get_base_model().dtype).removeprefix("torch.")
    info = EvaluatorInfo(
        config, list(dims), base_model_spec(model_args), base_dtype, model_args.tiny_seed,
        training_data=training_data(data_args.dataset, data_args.train_split, len(train_rows)),
        **{k: choices[k] for k in ("prompt_order", "lora_scope", "loss_on", "prompt_variation",
                                   "label_policy")},
        prompt_profile=PROFILE_FILE, prompt_profile_digest=profile.digest,
    )  # fmt: skip
    folder, files = export_evaluator(
        args.output_dir,
        model=trainer.model,
        processor=processor,
        info=info,
        profile=profile,
        metrics=metrics,
        predictions=predictions,
        data_args=data_args,
        lora_args=lora_args,
        args=args,
        hub_model_id=args.hub_model_id,
    )
    logger.info("exported the evaluator to %s", folder)
    if push:
        push_evaluator(
            folder,
            files,
            args.hub_model_id,
            dry_run=dry_run,
            private=args.hub_private_repo,
            token=token,
        )
    return RunResult(metrics, folder, files)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``train.py``: 0 on success; on a refusal (a setup problem, a missing
    ``train`` extra, input that cannot be used: a :class:`~speech_drame.errors.SpeechDrameError`)
    one ``error:`` line and the error's exit status (2)."""
    from ..errors import SpeechDrameError
    from ..extras import require

    try:
        for module in ("transformers", "peft", "accelerate"):
            require(module, "train.py")
    except SpeechDrameError as exc:  # MissingExtra
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    from .arguments import parse_args

    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO
    )
    try:
        result = train(*parse_args(argv))
    except SpeechDrameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    if result is not None:
        from ..stats import AlignmentTable

        summary = {
            split: AlignmentTable.from_flat(table).headline()
            for split, table in result.metrics["eval"].items()
        }
        print(json.dumps(strict_json(summary), indent=2))
    return 0


def training_profile(
    data_args: DataArguments, config: Config, dims: Sequence[str]
) -> PromptProfile:
    """The prompt profile of a run (``--prompt_profile``, else the default), checked against
    its config, dimensions, ``--prompt_order`` and ``--prompt_variation``.

    Raises:
        UsageError: naming the option the profile cannot serve.
    """
    profile = (
        load_profile(data_args.prompt_profile) if data_args.prompt_profile else default_profile()
    )
    where = f"--prompt_profile {data_args.prompt_profile or '(default)'}"
    try:
        profile.check_order(data_args.prompt_order)
        for d in dims:
            profile.instruction(config, d)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    if data_args.prompt_variation and not profile.paraphrases.get(config):
        raise UsageError(
            f"{where}: no {config} paraphrases for --prompt_variation; add them to the profile "
            "or give --prompt_variation false"
        )
    return profile


def training_choices(
    data_args: DataArguments, lora_args: LoraArguments, args: DrameEvalTrainingArguments
) -> dict[str, Any]:
    """The recipe switches of a run, as ``metrics.json`` and the evaluator config record them."""
    from ..audio_llm.qwen2_audio import lora_targets

    return {
        "recipe": args.recipe,
        "sampler": data_args.sampler,
        "dataloader_drop_last": args.dataloader_drop_last,
        "prompt_order": data_args.prompt_order,
        "lora_scope": "custom" if lora_args.lora_target_modules else lora_args.lora_scope,
        "lora_target_modules": lora_args.lora_target_modules or lora_targets(lora_args.lora_scope),
        "loss_on": data_args.loss_on,
        "prompt_variation": data_args.prompt_variation,
        "label_policy": data_args.label_policy,
    }


def training_data(dataset: str, split: str, n_train: int) -> dict[str, Any]:
    """What the evaluator learned from, as its config records it (the Space shows it). A Hub
    dataset's card is not read here, so whether its labels are synthetic stays unknown."""
    from speech_drame.data.card import synthetic_label_note

    local = Path(dataset).is_dir()
    note = synthetic_label_note(dataset) if local else None
    return {
        "dataset": dataset,
        "split": split,
        "n_train": n_train,
        "labels_are_synthetic": (note is not None) if local else None,
        "label_note": note,
    }
