"""Training recipes: the Speech-DRAME paper's (Appendix L.3) or the public official code's.

The two agree on most of the recipe (LoRA rank 16, alpha 32, dropout 0.1 on the q/k/v/o/gate/
up/down projections; AdamW, peak learning rate 5e-5, cosine schedule, weight decay 0.01,
gradient clipping 1.0, 10,000 steps, accumulation 4, bf16, gradient checkpointing, ZeRO-1 on
2 GPUs). Where they differ, ``train.py --recipe paper|official-code`` sets the defaults of the
options below (:data:`RECIPES`); a value given in the ``--config`` YAML or on the command line
wins. The official values are read from ``Anuttacon/speech_drame``: ``finetuning/conf/
sft_lora.yaml`` and ``ds_zero1.json``, the sampler and prompts in
``finetuning/src/dataset/dataset.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_RECIPE = "paper"
# What an epoch visits (train.py --sampler; the datasets are in .data).
SAMPLER_CHOICES = {
    "pairs": "every (clip, dimension) pair once per epoch (this package)",
    "random_dimension": "every clip once per epoch, one of its dimensions drawn at random at each "
    "visit (the official code)",
}
# option -> recipe -> (value, where it comes from)
RECIPES: dict[str, dict[str, tuple[Any, str]]] = {
    "per_device_train_batch_size": {
        "paper": (4, "Appendix L.3"),
        "official-code": (8, "sft_lora.yaml"),
    },
    "warmup_steps": {
        "paper": (500, "Appendix L.3"),
        "official-code": (1000, "sft_lora.yaml"),
    },
    "dataloader_drop_last": {
        "paper": (False, "not stated; the transformers default"),
        "official-code": (True, "sft_lora.yaml"),
    },
    "prompt_variation": {
        "paper": (True, "Appendix L.3: prompts sampled at random during fine-tuning"),
        "official-code": (
            False,
            "dataset.py: paraphrases only for its realism RoleVariation records, otherwise "
            "the canonical prompt",
        ),
    },
    "sampler": {
        "paper": ("pairs", "not stated; this package's choice"),
        "official-code": (
            "random_dimension",
            "dataset.py: one random dimension per clip per visit",
        ),
    },
}
RECIPE_NAMES = ("paper", "official-code")
# What no train.py option sets: said with the recipe, so that nothing differs silently.
NOT_SET_BY_TRAIN_PY = {
    "paper": "ZeRO-1 without offload (configs/deepspeed_zero1.json)",
    "official-code": "its ZeRO-1 config offloads the optimizer to the CPU (ds_zero1.json): use "
    "configs/deepspeed_zero1_offload.json in the accelerate config",
}


def check_recipe(name: str) -> str:
    """``name`` if it is a recipe; ``ValueError`` naming ``recipe`` and the choices otherwise."""
    if name not in RECIPE_NAMES:
        raise ValueError(
            f"recipe: unknown value {name!r}; expected one of {', '.join(RECIPE_NAMES)}"
        )
    return name


def recipe_defaults(name: str) -> dict[str, Any]:
    """The option values of recipe ``name`` (where the two recipes differ)."""
    check_recipe(name)
    return {option: sources[name][0] for option, sources in RECIPES.items()}


def describe_recipe(name: str) -> str:
    """One line per differing setting: ``option value (source)``."""
    check_recipe(name)
    return "; ".join(f"{o} {_text(s[name][0])} ({s[name][1]})" for o, s in RECIPES.items())


def apply_recipe(
    name: str, current: Mapping[str, Any], given: set[str]
) -> tuple[dict[str, Any], str]:
    """``(defaults, line)``: the defaults recipe ``name`` sets (those of its options not in
    ``given``, set in the YAML or on the command line) and the line that says the effective
    recipe, what it changed from ``current`` (the values before it) and what was kept as given."""
    values = recipe_defaults(name)
    chosen = {k: v for k, v in values.items() if k not in given}
    changed = {k: v for k, v in chosen.items() if current.get(k) != v}
    kept = {k: current[k] for k in values if k in given}
    line = (
        f"recipe {name}: {describe_recipe(name)}; changed: {_settings(changed) or 'nothing'}; "
        f"kept as given: {_settings(kept) or 'nothing'}; not set by train.py: "
        f"{NOT_SET_BY_TRAIN_PY[name]}"
    )
    return chosen, line


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _settings(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {_text(v)}" for k, v in values.items())
