"""One check for a named option whose value must be one of a fixed set."""

from __future__ import annotations

from collections.abc import Iterable


def check_choice(value: str, choices: Iterable[str], what: str) -> str:
    """``value`` if it is one of ``choices``; a ValueError naming ``what`` and them otherwise."""
    options = tuple(choices)
    if value not in options:
        raise ValueError(f"unknown {what} {value!r}; use one of {', '.join(options)}")
    return value
