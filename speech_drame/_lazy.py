"""Lazy package attributes (PEP 562): a name is imported from its module on first access.

A package lists its public names in ``__all__`` and maps each to the module that defines it::

    __getattr__, __dir__ = lazy_attributes(__name__, {"build_dataset": ".build"})

so ``import speech_drame.data`` stays cheap (no ``datasets``, ``pyarrow`` or ``torch``) while
``speech_drame.data.build_dataset`` works. Resolved values are cached in the package namespace.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``; ``names`` maps each lazy name to the
    module defining it (absolute, or relative to ``package`` when it starts with a dot)."""

    def __getattr__(name: str) -> Any:
        try:
            module = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
