"""Options of ``train.py``: dataclasses parsed by ``HfArgumentParser``, optionally from YAML.

``--config FILE.yaml`` supplies defaults (keys are the option names below); options given on
the command line override them, so ``train.py --config configs/x.yaml --max_steps 20`` works.
``--recipe paper|official-code`` (:mod:`.recipes`) sets the defaults of the options where the
paper and the official code differ, beneath both: a value in the YAML or on the command line wins.

The machine is checked before anything is loaded: on a machine without a bf16-capable GPU,
``--tiny`` (a smoke run) switches to CPU settings itself (``--use_cpu --bf16 false
--model_dtype float32``, each unless given on the command line) and says so in one log line,
while a full run with bf16 stops with a :class:`~speech_drame.training.SetupError` naming the
options to change.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from transformers import HfArgumentParser, TrainingArguments

from ..audio_llm.qwen2_audio import (
    DEFAULT_MODEL,
    DEFAULT_PROMPT_ORDER,
    LORA_SCOPES,
    LOSS_SPANS,
    PROMPT_ORDERS,
)
from ..labels import DEFAULT_LABEL_POLICY, LABEL_POLICIES
from ..schema import Config
from . import SetupError
from .recipes import DEFAULT_RECIPE, SAMPLER_CHOICES, apply_recipe, describe_recipe

logger = logging.getLogger(__name__)

# What a run without a bf16-capable GPU needs (option name -> value).
CPU_SETTINGS: dict[str, Any] = {"use_cpu": True, "bf16": False, "model_dtype": "float32"}
NO_GPU_MESSAGE = (
    "no GPU with bf16 support: add --bf16 false --model_dtype float32 --use_cpu (slow), "
    "or run on a GPU"
)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        default=DEFAULT_MODEL,
        metadata={"help": "Base audio-LLM: a Hub id or a local folder (Qwen2-Audio family)."},
    )
    tiny: bool = field(
        default=False,
        metadata={
            "help": "Use a tiny random Qwen2-Audio built offline (tests and smoke runs); "
            "overrides --model_name_or_path."
        },
    )
    tiny_seed: int = field(default=0, metadata={"help": "Seed of the tiny model's weights."})
    model_dtype: Literal["auto", "bfloat16", "float16", "float32"] = field(
        default="auto",
        metadata={
            "help": "dtype to load the base weights in: auto (the checkpoint's), bfloat16, "
            "float16 or float32. LoRA weights are kept in float32."
        },
    )


@dataclass
class DataArguments:
    dataset: str = field(
        default="speech-drame",
        metadata={
            "help": "built dataset folder (speech-drame build), or hf://datasets/ORG/NAME for one "
            "pushed to the Hub"
        },
    )
    dataset_config_name: Config = field(
        default="archetype", metadata={"help": "Which evaluation: archetype or realism."}
    )
    train_split: str = field(default="train", metadata={"help": "Split to train on."})
    eval_splits: list[str] | None = field(
        default=None,
        metadata={
            "help": "Splits scored at the end (default: every split of the config except "
            "--train_split, e.g. test and test_real for realism)."
        },
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Use only the first N training clips (debugging)."}
    )
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "Score only the first N clips of each eval split."}
    )
    label_policy: Literal["paper", "skip"] = field(
        default=DEFAULT_LABEL_POLICY,
        metadata={
            "help": "What a null or N/A rating of a 1-5 dimension counts as, in the training "
            "targets and the end-of-training evaluation: "
            + "; ".join(f"{k}: {v}" for k, v in LABEL_POLICIES.items())
            + ". Content Pass votes are never changed."
        },
    )
    prompt_variation: bool = field(
        default=True,
        metadata={
            "help": "Draw the dimension's question per training example from the prompt "
            "profile's paraphrases (default profile: 30 per dimension, "
            "speech_drame/resources/instruction_pool.json; the paper samples prompts at random, "
            "the official code paraphrases only its realism RoleVariation records). Evaluation "
            "and scoring use the canonical one. Default: set by --recipe."
        },
    )
    prompt_profile: str | None = field(
        default=None,
        metadata={
            "help": "Prompt profile file (JSON/YAML, see `speech-drame prompt-profile show`) "
            "holding the query's words; the evaluator carries it and scoring uses it "
            "(default: this package's own wording). --prompt_order picks its order of that name."
        },
    )
    sampler: Literal["pairs", "random_dimension"] = field(
        default="pairs",
        metadata={
            "help": "What an epoch visits: "
            + "; ".join(f"{k}: {v}" for k, v in SAMPLER_CHOICES.items())
            + ". Default: set by --recipe."
        },
    )
    prompt_order: Literal["instruction_first", "context_first"] = field(
        default=DEFAULT_PROMPT_ORDER,
        metadata={
            "help": "Query layout, recorded with the evaluator and used for scoring: "
            + "; ".join(f"{k}: {v}" for k, v in PROMPT_ORDERS.items())
            + "."
        },
    )
    loss_on: Literal["answer_span", "label_token"] = field(
        default="answer_span",
        metadata={
            "help": "Tokens that carry the loss: "
            + "; ".join(f"{k}: {v}" for k, v in LOSS_SPANS.items())
            + ". Normalised by the loss tokens of the whole accumulated batch."
        },
    )


@dataclass
class LoraArguments:
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling alpha."})
    lora_dropout: float = field(default=0.1, metadata={"help": "Dropout on the LoRA input."})
    lora_scope: Literal["all", "language"] = field(
        default="all",
        metadata={
            "help": "Modules that get LoRA: "
            + "; ".join(f"{k}: {v}" for k, v in LORA_SCOPES.items())
            + "."
        },
    )
    lora_target_modules: str | None = field(
        default=None,
        metadata={
            "help": "Regex (full match) of the modules that get LoRA, overriding --lora_scope; "
            "unset, --lora_scope chooses them."
        },
    )


@dataclass
class DrameEvalTrainingArguments(TrainingArguments):
    """``TrainingArguments`` plus resuming and Hub export.

    ``--push_to_hub`` here uploads the exported evaluator (adapter, processor, model card,
    metrics) once, at the end; the Trainer itself never pushes checkpoints.
    """

    recipe: Literal["paper", "official-code"] = field(
        default=DEFAULT_RECIPE,
        metadata={
            "help": "Defaults of the settings where the paper (Appendix L.3) and the official "
            "code differ; a value in the YAML or on the command line wins. "
            + " | ".join(f"{r}: {describe_recipe(r)}" for r in ("paper", "official-code"))
        },
    )
    resume: bool = field(
        default=False,
        metadata={"help": "Resume from the last checkpoint in --output_dir, if there is one."},
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Start over in an --output_dir that holds an earlier run: its checkpoints "
            "are deleted first; its exported evaluator is replaced at the end."
        },
    )
    push_dry_run: bool = field(
        default=False,
        metadata={"help": "Print the files and target repo of the Hub push without uploading."},
    )
    remove_unused_columns: bool = field(
        default=False,
        metadata={"help": "Keep False: examples carry audio and text for the collator."},
    )


ARGUMENT_CLASSES = (ModelArguments, DataArguments, LoraArguments, DrameEvalTrainingArguments)


def build_parser() -> HfArgumentParser:
    parser = HfArgumentParser(ARGUMENT_CLASSES, description="Fine-tune a DRAME-Eval evaluator.")
    parser.add_argument(
        "--config",
        metavar="FILE.yaml",
        help="YAML file of option defaults; command-line options override it",
    )
    return parser


def load_yaml_defaults(path: str | Path, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The YAML mapping at ``path``, checked against the parser's option names."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of option names to values")
    known = {action.dest for action in parser._actions}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown option(s) {', '.join(unknown)}")
    return data


def bf16_accelerator_available() -> bool:
    """Whether ``TrainingArguments`` accepts ``bf16`` without ``use_cpu`` on this machine."""
    from transformers.utils import is_torch_bf16_gpu_available, is_torch_xla_available

    return is_torch_bf16_gpu_available() or is_torch_xla_available()


def explicit_options(argv: Sequence[str] | None) -> set[str]:
    """The option names given on the command line (not from ``--config`` or defaults)."""
    unset = object()
    parser = build_parser()
    parser.set_defaults(**{a.dest: unset for a in parser._actions if a.dest != "help"})
    given, _ = parser.parse_known_args(argv)
    return {name for name, value in vars(given).items() if value is not unset}


def _flags(settings: Mapping[str, Any]) -> str:
    return " ".join(
        f"--{k}" if v is True else f"--{k} {str(v).lower()}" for k, v in settings.items()
    )


def machine_defaults(values: argparse.Namespace, explicit: set[str]) -> dict[str, Any]:
    """Option defaults this machine needs, checked before anything is loaded.

    Without a bf16-capable GPU, ``--tiny`` gets :data:`CPU_SETTINGS` (those not given on the
    command line); any other run that would use bf16 off the CPU raises :class:`SetupError`.
    """
    if bf16_accelerator_available():
        return {}
    chosen: dict[str, Any] = {}
    if values.tiny:
        chosen = {
            k: v for k, v in CPU_SETTINGS.items() if k not in explicit and getattr(values, k) != v
        }
        if chosen:
            logger.info(
                "--tiny and no GPU with bf16 support: running on CPU with %s (give these "
                "options on the command line to choose otherwise)",
                _flags(chosen),
            )
    settings = {**vars(values), **chosen}
    if (settings["bf16"] or settings["bf16_full_eval"]) and not settings["use_cpu"]:
        raise SetupError(NO_GPU_MESSAGE)
    return chosen


def parse_args(
    argv: Sequence[str] | None = None,
) -> tuple[ModelArguments, DataArguments, LoraArguments, DrameEvalTrainingArguments]:
    """Parse the command line (``--config`` YAML first, then the explicit options).

    Raises:
        SetupError: the options need hardware this machine lacks (see :func:`machine_defaults`).
    """
    parser = build_parser()
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    from_yaml = load_yaml_defaults(known.config, parser) if known.config else {}
    parser.set_defaults(**from_yaml)
    values, _ = parser.parse_known_args(argv)
    explicit = explicit_options(argv)
    recipe, recipe_line = apply_recipe(values.recipe, vars(values), explicit | set(from_yaml))
    parser.set_defaults(**recipe)
    values, _ = parser.parse_known_args(argv)
    parser.set_defaults(**machine_defaults(values, explicit))
    logger.info(recipe_line)  # once the machine can run it
    # The parser also returns a namespace holding --config (already applied above).
    outputs = parser.parse_args_into_dataclasses(args=argv)
    return tuple(outputs[: len(ARGUMENT_CLASSES)])  # type: ignore[return-value]
