"""DRAME-Eval fine-tuning: LoRA on an audio-LLM with Trainer + PEFT (``train.py`` calls this)."""

from .._lazy import lazy_attributes
from ..errors import SetupError  # a run that cannot start as configured; train.py exits 2

__all__ = ["SetupError", "export_evaluator", "main", "push_evaluator", "train"]
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"export_evaluator": ".export", "main": ".run", "push_evaluator": ".hub", "train": ".run"},
)
