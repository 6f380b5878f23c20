"""The typed-tie label space of HCoT/TRACE and the deterministic fusion to an overall label.

Every dimension (content, voice quality, paralinguistics) and the overall judgment take one
of four labels: ``"1"`` or ``"2"`` (that response wins), ``"both_good"`` (both acceptable, no
winner) or ``"both_bad"`` (neither acceptable).

Fusion policies (one-line definitions in :data:`POLICY_DEFINITIONS`; the rules are in
:func:`fuse`):

- ``content_first`` (SpeakBench; the released TRACE fusion): the pair is both_bad only when
  content and paralinguistics are both both_bad; otherwise the first dimension that names a
  winner, in the order content, paralinguistics, voice quality, decides; with no winner
  anywhere the pair is both_good if content is both_good and both_bad otherwise. Voice
  quality and paralinguistics only break content ties.
- ``acceptability_cap`` (S2S-Arena; the released TRACE fusion): both_bad on content or
  paralinguistics makes the pair both_bad; content and paralinguistics are equal gates, so a
  winner on one of them wins when the other is tied, but when they name different winners
  each response lost a gate and neither may win (both_bad); with both gates tied, voice
  quality breaks the tie.
- ``content_first_gated`` (this package's earlier content-first rule, kept for comparison):
  both_bad on content *or* paralinguistics makes the pair both_bad; otherwise content,
  paralinguistics, voice quality name the winner in that order; no winner gives both_good.
  It differs from ``content_first`` on 22 of the 64 label triples.

A missing content label (:data:`MISSING_CONTENT`): the released fusion turns it into an
overall both_bad (``both_bad``); ``exclude`` treats the pair as a failure instead.
A missing voice-quality or paralinguistics label (:data:`MISSING_OTHER`): the released fusion
reads it as an unknown label, which never names a winner (``no-winner``; :func:`fuse` takes it
as ``None``); ``fail`` treats the pair as a failure instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from speech_drame.choices import check_choice

LABELS: tuple[str, ...] = ("1", "2", "both_good", "both_bad")
WINNERS: tuple[str, ...] = ("1", "2")
DIMENSIONS: tuple[str, ...] = ("content", "voice_quality", "paralinguistics")
OTHER_DIMENSIONS: tuple[str, ...] = DIMENSIONS[1:]  # those the missing-label rule covers
OVERALL = "overall"
POLICY_DEFINITIONS: dict[str, str] = {
    "content_first": (
        "released SpeakBench fusion: both_bad only if content and paralinguistics are both "
        "both_bad; else the first winner in content > paralinguistics > voice quality; "
        "no winner: both_good if content is both_good, else both_bad"
    ),
    "acceptability_cap": (
        "released S2S-Arena fusion: content and paralinguistics cap acceptability (both_bad on "
        "either, or different winners on them, gives both_bad); else the first winner in "
        "content > paralinguistics > voice quality; no winner: both_good"
    ),
    "content_first_gated": (
        "this package's earlier rule: both_bad if content or paralinguistics is both_bad; else "
        "the first winner in content > paralinguistics > voice quality; no winner: both_good"
    ),
}
POLICIES: tuple[str, ...] = tuple(POLICY_DEFINITIONS)
Policy = Literal["content_first", "acceptability_cap", "content_first_gated"]
MISSING_CONTENT: dict[str, str] = {
    "both_bad": (
        "released TRACE convention: a pair whose content label is missing is labelled both_bad "
        "overall and counted"
    ),
    "exclude": (
        "this package's earlier convention: a pair whose content label is missing is a failure, "
        "left out of every number"
    ),
}
MissingContent = Literal["both_bad", "exclude"]
MISSING_OTHER: dict[str, str] = {
    "no-winner": (
        "released TRACE convention: a missing voice-quality or paralinguistics label names no "
        "winner and is neither both_good nor both_bad; acceptability_cap reads a missing "
        "paralinguistics label as both responses unacceptable (overall both_bad)"
    ),
    "fail": (
        "this package's earlier convention: a pair missing its voice-quality or "
        "paralinguistics label is a failure, left out of every number"
    ),
}
MissingOther = Literal["no-winner", "fail"]


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
    return check_choice(policy, POLICIES, "fusion policy")  # type: ignore[return-value]


def check_missing_content(rule: str) -> MissingContent:
    return check_choice(rule, MISSING_CONTENT, "missing-content rule")  # type: ignore[return-value]


def check_missing_other(rule: str) -> MissingOther:
    return check_choice(rule, MISSING_OTHER, "missing-label rule")  # type: ignore[return-value]


def _first_winner(*labels: str | None) -> str | None:
    return next((label for label in labels if label in WINNERS), None)


def fuse(
    content: str, voice_quality: str | None, paralinguistics: str | None, policy: Policy
) -> str:
    """The overall label of a pair from its three dimension labels under ``policy``.

    ``None`` is a missing voice-quality or paralinguistics label, read as the released fusion
    reads an unknown label: it is no winner, no both_good and no both_bad, except that the
    acceptability cap (``acceptability_cap``) counts a missing paralinguistics label as
    unacceptable for both responses.
    """
    check_policy(policy)
    parse_label(content, "content")
    for name, value in (("voice_quality", voice_quality), ("paralinguistics", paralinguistics)):
        if value is not None:
            parse_label(value, name)
    winner = _first_winner(content, paralinguistics, voice_quality)
    if policy == "content_first":
        if content == paralinguistics == "both_bad":
            return "both_bad"
        if winner is not None:
            return winner
        return "both_good" if content == "both_good" else "both_bad"
    if "both_bad" in (content, paralinguistics):
        return "both_bad"
    if policy == "acceptability_cap" and paralinguistics is None:
        return "both_bad"
    if policy == "content_first_gated":
        return winner or "both_good"
    gates = {label for label in (content, paralinguistics) if label in WINNERS}
    if len(gates) == 2:
        return "both_bad"
    return winner or "both_good"


class MissingLabel(ValueError):
    """A dimension label is missing and the chosen rule makes the pair a failure."""


class MissingContentLabel(MissingLabel):
    """The content label is missing and the ``exclude`` rule makes the pair a failure."""


def fuse_labels(
    labels: Mapping[str, str],
    policy: Policy,
    missing_content: MissingContent = "both_bad",
    missing_other: MissingOther = "no-winner",
) -> str:
    """:func:`fuse` over a mapping holding the dimension labels (absent or ``None``: missing).

    A missing ``content`` label gives ``both_bad`` under ``missing_content="both_bad"``
    (whatever the other two say, as in the released fusion) and raises
    :class:`MissingContentLabel` under ``"exclude"``. A missing voice-quality or
    paralinguistics label is passed to :func:`fuse` as ``None`` under
    ``missing_other="no-winner"`` and raises :class:`MissingLabel` under ``"fail"`` (checked
    first, so ``fail`` fails such a pair whatever its content label).
    """
    check_policy(policy)
    check_missing_content(missing_content)
    check_missing_other(missing_other)
    missing = [d for d in OTHER_DIMENSIONS if labels.get(d) is None]
    if missing and missing_other == "fail":
        plural = "s" if len(missing) > 1 else ""
        raise MissingLabel(f"missing dimension{plural} {', '.join(map(repr, missing))}")
    if labels.get("content") is None:
        if missing_content == "exclude":
            raise MissingContentLabel("missing dimension 'content'")
        return "both_bad"
    return fuse(
        labels["content"], labels.get("voice_quality"), labels.get("paralinguistics"), policy
    )
