"""Options of ``train.py``: dataclasses parsed by ``HfArgumentParser``, optionally from YAML.

``--config FILE.yaml`` supplies defaults (keys are the option names below); options given on
the command line override them, so ``train.py --config configs/x.yaml --max_steps 20`` works.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from transformers import HfArgumentParser, TrainingArguments

from ..audio_llm.qwen2_audio import DEFAULT_MODEL, LORA_TARGET_REGEX


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
        metadata={"help": "Hub-ready dataset: a local folder or a Hub dataset id."},
    )
    dataset_config_name: Literal["archetype", "realism"] = field(
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


@dataclass
class LoraArguments:
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling alpha."})
    lora_dropout: float = field(default=0.1, metadata={"help": "Dropout on the LoRA input."})
    lora_target_modules: str = field(
        default=LORA_TARGET_REGEX,
        metadata={
            "help": "Regex (full match) of the modules that get LoRA; the default is the "
            "language model's attention and MLP projections, not the audio encoder."
        },
    )


@dataclass
class DrameEvalTrainingArguments(TrainingArguments):
    """``TrainingArguments`` plus resuming and Hub export.

    ``--push_to_hub`` here uploads the exported evaluator (adapter, processor, model card,
    metrics) once, at the end; the Trainer itself never pushes checkpoints.
    """

    resume: bool = field(
        default=False,
        metadata={"help": "Resume from the last checkpoint in --output_dir, if there is one."},
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


def parse_args(
    argv: Sequence[str] | None = None,
) -> tuple[ModelArguments, DataArguments, LoraArguments, DrameEvalTrainingArguments]:
    """Parse the command line (``--config`` YAML first, then the explicit options)."""
    parser = build_parser()
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    if known.config:
        parser.set_defaults(**load_yaml_defaults(known.config, parser))
    # The parser also returns a namespace holding --config (already applied above).
    outputs = parser.parse_args_into_dataclasses(args=argv)
    return tuple(outputs[: len(ARGUMENT_CLASSES)])  # type: ignore[return-value]
