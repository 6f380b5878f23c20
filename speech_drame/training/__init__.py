"""DRAME-Eval fine-tuning: LoRA on an audio-LLM with Trainer + PEFT (``train.py`` calls this)."""

from .._lazy import lazy_attributes

__all__ = ["SetupError", "export_evaluator", "main", "push_evaluator", "train"]
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"export_evaluator": ".export", "main": ".run", "push_evaluator": ".hub", "train": ".run"},
)


class SetupError(Exception):
    """The run cannot start as configured; the message says what to change (one line).

    Raised before anything is loaded or trained; ``train.py`` prints it and exits with status 2.
    """
