"""The typed-tie label space of HCoT/TRACE and the deterministic fusion to an overall label.

Every dimension (content, voice quality, paralinguistics) and the overall judgment take one
of four labels: ``"1"`` or ``"2"`` (that response wins), ``"both_good"`` (both acceptable, no
winner) or ``"both_bad"`` (neither acceptable).

Fusion policies (TRACE; the rules are written in :func:`fuse`):

- ``content_first`` (SpeakBench): both_bad on content or paralinguistics makes the pair
  both_bad; otherwise a content winner wins; a content tie is broken by paralinguistics, then
  by voice quality; with no winner anywhere the pair is both_good.
- ``acceptability_cap`` (S2S-Arena): both_bad on content or paralinguistics makes the pair
  both_bad; content and paralinguistics are equal gates, so a winner on one of them wins when
  the other is tied, but when they name different winners each response lost a gate and
  neither may win (both_bad); with both gates tied, voice quality breaks the tie.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

LABELS: tuple[str, ...] = ("1", "2", "both_good", "both_bad")
WINNERS: tuple[str, ...] = ("1", "2")
DIMENSIONS: tuple[str, ...] = ("content", "voice_quality", "paralinguistics")
OVERALL = "overall"
POLICIES: tuple[str, ...] = ("content_first", "acceptability_cap")
Policy = Literal["content_first", "acceptability_cap"]


def parse_label(value: Any, where: str = "label") -> str:
    """``value`` as a label; JSON integers 1 and 2 are read as ``"1"``/``"2"``.

    Raises:
        ValueError: anything outside the label space (names ``where`` and the value).
    """
    if isinstance(value, int) and not isinstance(value, bool) and value in (1, 2):
        return str(value)
    if isinstance(value, str) and value in LABELS:
        return value
    raise ValueError(f"{where}: {value!r} is not one of {', '.join(LABELS)}")


def check_policy(policy: str) -> Policy:
    if policy not in POLICIES:
        raise ValueError(f"unknown fusion policy {policy!r}; use one of {', '.join(POLICIES)}")
    return policy  # type: ignore[return-value]


def fuse(content: str, voice_quality: str, paralinguistics: str, policy: Policy) -> str:
    """The overall label of a pair from its three dimension labels under ``policy``."""
    check_policy(policy)
    for name, value in (
        ("content", content),
        ("voice_quality", voice_quality),
        ("paralinguistics", paralinguistics),
    ):
        parse_label(value, name)
    if "both_bad" in (content, paralinguistics):
        return "both_bad"
    if policy == "content_first":
        for label in (content, paralinguistics, voice_quality):
            if label in WINNERS:
                return label
        return "both_good"
    gates = {label for label in (content, paralinguistics) if label in WINNERS}
    if len(gates) == 2:
        return "both_bad"
    if gates:
        return gates.pop()
    return voice_quality if voice_quality in WINNERS else "both_good"


def fuse_labels(labels: Mapping[str, str], policy: Policy) -> str:
    """:func:`fuse` over a mapping holding the three dimension labels."""
    missing = [d for d in DIMENSIONS if d not in labels]
    if missing:
        raise ValueError(f"dimension labels missing: {', '.join(missing)}")
    return fuse(labels["content"], labels["voice_quality"], labels["paralinguistics"], policy)
