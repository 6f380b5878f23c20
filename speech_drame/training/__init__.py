"""DRAME-Eval fine-tuning: LoRA on an audio-LLM with Trainer + PEFT (``train.py`` calls this)."""

__all__ = ["SetupError"]


class SetupError(Exception):
    """The run cannot start as configured; the message says what to change (one line).

    Raised before anything is loaded or trained; ``train.py`` prints it and exits with status 2.
    """
