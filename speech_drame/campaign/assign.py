"""Which clip a rater gets next: the assignment rules (``campaign create --assign``).

Every rule keeps the store's guarantees (:mod:`.store`): a regular task goes to a clip with
fewer than K ratings plus live claims that the rater has not had, the least loaded first, so
every clip gets its n-th rating before any clip gets its (n+1)-th and each ends with exactly K
distinct raters; hidden repeats and gold checks come at their cadence; a rater is never shown a
score. The rules only order the clips of equal load, by a priority (highest first), then by
position:

- ``balanced`` (the default): no priority, by position;
- ``uncertain``: clips the attached scorers are least sure of first. Per (scorer, dimension)
  the larger of the width of the predicted 1..5 distribution (its standard deviation divided
  by 2, the widest possible, so 0..1) and the label mass missing (1 - label mass, for a scorer
  that reports one), averaged over the scorers that scored the clip and their dimensions;
- ``disagreement``: clips the attached scorers disagree on first. Per dimension the spread of
  the scorers' scores (their standard deviation, with two scorers or more) plus, once the
  clip has ratings, the mean distance of each scorer's score from the raters' mean rating
  (null ratings counted as the default label policy counts them), averaged over the
  dimensions, in score points.

A clip no attached scorer could score has priority 0: its ratings cannot be compared with any
scorer, so it comes last among the clips of its load. The store keeps each clip's priority and
updates it in the transaction that stores the clip's scores (``campaign attach``) or, for
``disagreement``, one of its ratings; before any scorer is attached every rule deals as
``balanced`` does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..labels import DEFAULT_LABEL_POLICY, apply_label_policy
from ..schema import SCORE_MAX, SCORE_MIN, Config, dimensions
from .records import Answers

ASSIGN_RULES: dict[str, str] = {
    "balanced": "the least-rated clips first, by position (every clip once before any twice)",
    "uncertain": "among the least-rated clips, first those whose attached scorers' "
    "distributions are widest or whose label mass is lowest",
    "disagreement": "among the least-rated clips, first those where the attached scorers "
    "disagree most with each other and, once rated, with the raters",
}
DEFAULT_RULE = "balanced"
LEVELS = range(SCORE_MIN, SCORE_MAX + 1)
WIDEST = (SCORE_MAX - SCORE_MIN) / 2  # the standard deviation of half 1s and half 5s


def check_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`ASSIGN_RULES`, else ``ValueError`` naming them."""
    if rule not in ASSIGN_RULES:
        raise ValueError(f"unknown assignment rule {rule!r}; expected one of "
                         f"{', '.join(ASSIGN_RULES)}")  # fmt: skip
    return rule


def distribution_width(probabilities: Sequence[float]) -> float:
    """The standard deviation of a distribution over the scores 1..5, divided by 2 (the
    widest possible): 0 for a certain score, 1 for half 1s and half 5s.

    >>> distribution_width([0, 0, 1, 0, 0]), distribution_width([0.5, 0, 0, 0, 0.5])
    (0.0, 1.0)
    """
    total = sum(probabilities)
    mean = sum(p * s for p, s in zip(probabilities, LEVELS, strict=True)) / total
    var = sum(p * (s - mean) ** 2 for p, s in zip(probabilities, LEVELS, strict=True)) / total
    return math.sqrt(var) / WIDEST


def uncertainty(results: Sequence[Mapping[str, Any]]) -> float:
    """The ``uncertain`` priority of a clip from its attached scorers' results (each a
    :meth:`~speech_drame.scorers.base.ClipScores.to_dict` of a scored clip).

    >>> uncertainty([{"scores": {"audio_quality": 3.0},
    ...               "distributions": {"audio_quality": [0.5, 0, 0, 0, 0.5]}},
    ...              {"scores": {"audio_quality": 4.0}, "label_mass": {"audio_quality": 0.8}}])
    0.6
    """
    terms = []
    for result in results:
        dists, mass = result.get("distributions") or {}, result.get("label_mass") or {}
        for dim in result.get("scores", {}):
            parts = []
            if dists.get(dim) is not None:
                parts.append(distribution_width(dists[dim]))
            if dim in mass:
                parts.append(1.0 - mass[dim])
            if parts:
                terms.append(max(parts))
    return sum(terms) / len(terms) if terms else 0.0


def mean_ratings(config: Config, ratings: Sequence[Answers]) -> dict[str, float]:
    """Per dimension, the mean of the raters' values after the default label policy (a
    dimension nobody gave a value counts none)."""
    out = {}
    for dim in dimensions(config):
        values = [v for v in apply_label_policy([a.release_value(dim) for a in ratings], dim,
                                                DEFAULT_LABEL_POLICY) if v is not None]  # fmt: skip
        if values:
            out[dim] = sum(values) / len(values)
    return out


def disagreement(
    config: Config, results: Sequence[Mapping[str, Any]], ratings: Sequence[Answers] = ()
) -> float:
    """The ``disagreement`` priority of a clip from its attached scorers' results and its
    ratings so far (release ratings: the first regular rating of each rater).

    >>> a = {"scores": {"audio_quality": 2.0}}
    >>> b = {"scores": {"audio_quality": 4.0}}
    >>> disagreement("archetype", [a, b])  # spread 1.0
    1.0
    >>> r = Answers("archetype", {"audio_quality": 5, "human_likeness": 4, "appropriateness": 4},
    ...             True)
    >>> disagreement("archetype", [a, b], [r])  # 1.0 + (3 + 1) / 2
    3.0
    """
    means = mean_ratings(config, ratings)
    terms = []
    for dim in dimensions(config):
        scores = [r["scores"][dim] for r in results if dim in r.get("scores", {})]
        if not scores:
            continue
        centre = sum(scores) / len(scores)
        spread = math.sqrt(sum((s - centre) ** 2 for s in scores) / len(scores))
        gap = sum(abs(s - means[dim]) for s in scores) / len(scores) if dim in means else 0.0
        if len(scores) > 1 or dim in means:
            terms.append(spread + gap)
    return sum(terms) / len(terms) if terms else 0.0


def priority(
    rule: str, config: Config, results: Sequence[Mapping[str, Any]], ratings: Sequence[Answers]
) -> float | None:
    """A clip's priority under ``rule`` (``None`` for ``balanced``, which has none)."""
    if check_rule(rule) == "balanced":
        return None
    if rule == "uncertain":
        return uncertainty(results)
    return disagreement(config, results, ratings)
