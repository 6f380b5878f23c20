"""The label policy: what a null or ``"N/A"`` annotator rating counts as.

EvalBench annotator lists hold nulls: a gated emotion rating (``"N/A"`` in the release, kept
as null plus the ``not_applicable`` mask in the built dataset) and, for archetype, the quality
ratings of an annotator who failed the clip on Content Pass. The built dataset keeps this raw
truth; every place that turns annotator lists into numbers reads it through one policy:

- ``paper`` (default): every null or ``"N/A"`` rating of a 1..5 dimension counts as 1. The
  Speech-DRAME paper counts ``"N/A"`` as 1; the official code counts both as 1 in its archetype
  training targets, in the zero/few-shot reference and in few-shot exemplar gold, while its
  realism training draws and its fine-tuning result parser count ``"N/A"`` as 1 but leave plain
  nulls out (a realism clip whose votes are all null gets 1). See the README's table "Paper vs
  official code vs this package".
- ``skip``: nulls and ``"N/A"`` are left out (and counted where they are reported).

Content Pass votes are never changed: a null vote is left out under both policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .schema import CONTENT_PASS, NOT_APPLICABLE, SCORE_MIN

LabelPolicy = Literal["paper", "skip"]
DEFAULT_LABEL_POLICY: LabelPolicy = "paper"
LABEL_POLICIES: dict[str, str] = {
    "paper": 'null and "N/A" ratings count as 1 (the Speech-DRAME paper and official code)',
    "skip": 'null and "N/A" ratings are left out and counted',
}
FILL_SCORE = SCORE_MIN  # what ``paper`` counts a null rating as
# Annotation fields that are not 1..5 rubric ratings: the policy never touches them.
_NOT_RATINGS = frozenset({CONTENT_PASS, "confidence", "annotator_confidence_rating"})


def check_label_policy(policy: str) -> LabelPolicy:
    """``policy`` if it is known; ``ValueError`` naming the known ones otherwise."""
    if policy not in LABEL_POLICIES:
        raise ValueError(
            f"unknown label policy {policy!r}; expected one of {', '.join(LABEL_POLICIES)}"
        )
    return policy  # type: ignore[return-value]


def is_rating(dimension: str) -> bool:
    """Whether the policy applies to ``dimension`` (a 1..5 rubric rating, not Content Pass)."""
    return dimension not in _NOT_RATINGS


def apply_label_policy(
    values: Sequence[Any], dimension: str, policy: str = DEFAULT_LABEL_POLICY
) -> list[Any]:
    """One annotator list of ``dimension`` with the policy applied (``None`` = left out).

    Example:
        >>> apply_label_policy([4, None, 2], "emotion_intensity_control", "paper")
        [4, 1, 2]
        >>> apply_label_policy([4, None, 2], "emotion_intensity_control", "skip")
        [4, None, 2]
        >>> apply_label_policy([4, "N/A", 2], "dynamic_range", "skip")
        [4, None, 2]
        >>> apply_label_policy([True, None], "content_pass", "paper")
        [True, None]
    """
    fill = None if check_label_policy(policy) == "skip" else FILL_SCORE
    if not is_rating(dimension):
        return list(values)
    return [fill if _is_null(v) else v for v in values]


def _is_null(value: Any) -> bool:
    """A null rating: ``None`` or the release's ``"N/A"``."""
    return value is None or (isinstance(value, str) and value.strip().upper() == NOT_APPLICABLE)


def describe_label_policy(policy: str) -> dict[str, str]:
    """``{"label_policy": name, "label_policy_rule": text}``: what every report states."""
    return {"label_policy": check_label_policy(policy), "label_policy_rule": LABEL_POLICIES[policy]}
