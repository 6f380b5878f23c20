"""SpeechParaling-Bench arithmetic: points, normalized scores, the baseline's weighted score.

The scored unit is a *verdict unit* (:attr:`.queries.Query.units`): one (query, dimension)
verdict for Paralanguage Control and Situational Adaptation, one verdict per query for Dynamic
Variation; each unit counts for its dimensions and once for its task and the overall score.
The winner of a unit gets 1 point and a tie gives 0.5 to each side.

A unit whose verdict failed (no usable answer, a missing response) counts by ``failed_as``:

- ``loss`` (the released scorer, which divides by fixed unit counts): it stays in the
  denominator with 0 points for the candidate, so the baseline wins it;
- ``skip``: it leaves the denominator (scores are over valid verdicts only).

Either way failures are counted per group and candidate. A candidate's score on a group of
units (a task, a dimension, or all) is its points over the units counted, in percent. The
baseline's score is the paper's equation 3: its pairwise scores against every candidate (in
percent), averaged with weights ``S(M_k) / sum_j S(M_j)``, the candidates' point totals on
that group, so a win against a strong candidate counts more. When every candidate totals 0
points the weights are equal, as in the released scorer. A statistic that stays undefined (no
unit counted) is NaN with a ``note`` beside it; JSON output writes it as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

CANDIDATE_POINTS = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}
FAILED_AS: dict[str, str] = {
    "loss": "a failed verdict unit counts as a candidate loss (baseline win): fixed "
    "denominators, as the released scorer",
    "skip": "a failed verdict unit is left out: scores are over valid verdicts only",
}
VERDICT_UNIT = (
    "one verdict per target dimension (Paralanguage Control, Situational Adaptation) or per "
    "query (Dynamic Variation); each counts for its dimension, its task and overall"
)


@dataclass
class UnitResult:
    """The verdict of one unit, mapped back from play order to the systems."""

    dimensions: tuple[str, ...]
    winner: str | None = None  # "baseline", "candidate", "tie"; None when the verdict failed
    winner_position: int | None = None  # 0 tie, 1 first played, 2 second played
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)  # role -> 0-3 ratings

    @property
    def ok(self) -> bool:
        return self.winner is not None


@dataclass
class Judgment:
    """One query judged for one candidate (one comparison), with a result per verdict unit."""

    query_id: str
    task: str
    dimensions: tuple[str, ...]
    candidate: str
    baseline_first: bool
    units: list[UnitResult] = field(default_factory=list)
    analysis: str = ""
    grounded: bool = False
    error: str | None = None
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.units) and all(u.ok for u in self.units)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["dimensions"] = list(self.dimensions)
        for unit in out["units"]:
            unit["dimensions"] = list(unit["dimensions"])
        return out


def winner_role(position: int, baseline_first: bool) -> str:
    """``"tie"``, ``"baseline"`` or ``"candidate"`` for a winner index of the play order."""
    if position == 0:
        return "tie"
    if position not in (1, 2):
        raise ValueError(f"winner index {position!r} not in 0, 1, 2")
    return "baseline" if (position == 1) == baseline_first else "candidate"


def check_failed_as(failed_as: str) -> None:
    if failed_as not in FAILED_AS:
        raise ValueError(f"failed_as must be one of {', '.join(FAILED_AS)}, got {failed_as!r}")


def equation3_weights(totals: Mapping[str, float]) -> dict[str, float]:
    """``totals[k] / sum_j totals[j]``; equal weights when every total is 0 (released)."""
    denom = sum(totals.values())
    if denom == 0:
        return {k: 1.0 / len(totals) for k in totals}
    return {k: t / denom for k, t in totals.items()}


def weighted_baseline(pairwise: Mapping[str, float], totals: Mapping[str, float]) -> float:
    """Equation 3: ``sum_k pairwise[k] * w_k`` with :func:`equation3_weights`; NaN with no
    candidate.

    >>> weighted_baseline({"a": 100.0, "b": 50.0}, {"a": 0.0, "b": 0.0})
    75.0
    """
    if set(pairwise) != set(totals):
        raise ValueError(f"candidates differ: {sorted(pairwise)} vs {sorted(totals)}")
    if not pairwise:
        return math.nan
    weights = equation3_weights(totals)
    return sum(pairwise[k] * weights[k] for k in pairwise)


Groups = Callable[[Judgment, UnitResult], Iterable[str]]


def group_scores(
    judgments: Sequence[Judgment], groups: Groups, failed_as: str = "loss"
) -> dict[str, dict[str, Any]]:
    """Scores per group (``groups(j, unit)`` lists the groups a verdict unit counts in).

    Each group holds ``candidates`` (per candidate: ``score`` in percent, ``points``, ``n``
    units counted, ``valid`` verdicts, ``failures``) and ``baseline`` (``score`` by equation
    3, ``pairwise`` percentages and ``weights``).
    """
    check_failed_as(failed_as)
    raw: dict[str, dict[str, dict[str, float]]] = {}
    for j in judgments:
        for unit in j.units:
            for g in groups(j, unit):
                s = raw.setdefault(g, {}).setdefault(
                    j.candidate, {"points": 0.0, "n": 0, "valid": 0, "failures": 0}
                )
                if unit.ok:
                    s["points"] += CANDIDATE_POINTS[unit.winner]  # type: ignore[index]
                    s["n"] += 1
                    s["valid"] += 1
                else:
                    s["failures"] += 1
                    s["n"] += failed_as == "loss"
    out: dict[str, dict[str, Any]] = {}
    for g, per in sorted(raw.items()):
        cands: dict[str, dict[str, Any]] = {}
        for c, s in sorted(per.items()):
            cands[c] = {**s, "score": 100.0 * s["points"] / s["n"] if s["n"] else math.nan}
            if not s["valid"]:
                cands[c]["note"] = "no valid verdict" + (": every unit counted as a loss"
                                                         if s["n"] else "")  # fmt: skip
        counted = {c: s for c, s in cands.items() if s["n"]}
        pairwise = {c: 100.0 - s["score"] for c, s in counted.items()}
        totals = {c: s["points"] for c, s in counted.items()}
        baseline: dict[str, Any] = {
            "score": weighted_baseline(pairwise, totals),
            "pairwise": pairwise,
            "weights": equation3_weights(totals) if totals else {},
        }
        if not counted:
            baseline["note"] = "no valid verdict in this group"
        elif sum(totals.values()) == 0:
            baseline["note"] = "every candidate scored 0 points: equal equation 3 weights"
        out[g] = {"candidates": cands, "baseline": baseline}
    return out


def position_bias(judgments: Sequence[Judgment]) -> dict[str, Any]:
    """How often the first-played response wins, over valid verdict units (ties apart).

    ``first_win_rate`` is first wins / decisive verdicts (0.5 = no bias).
    """
    valid = [(j, u) for j in judgments for u in j.units if u.ok]
    first = sum(u.winner_position == 1 for _, u in valid)
    second = sum(u.winner_position == 2 for _, u in valid)
    decisive = first + second
    out: dict[str, Any] = {
        "n": len(valid),
        "first_wins": first,
        "second_wins": second,
        "ties": len(valid) - decisive,
        "first_win_rate": first / decisive if decisive else math.nan,
        "baseline_first_share": (
            sum(j.baseline_first for j, _ in valid) / len(valid) if valid else math.nan
        ),
    }
    if not decisive:
        out["note"] = "no valid verdict" if not valid else "no decisive verdict (only ties)"
    return out


def system_scores(group: Mapping[str, Any], baseline: str) -> dict[str, float]:
    """``{system: score}`` of one group of :func:`group_scores`, the baseline included."""
    out = {c: s["score"] for c, s in group["candidates"].items()}
    out[baseline] = group["baseline"]["score"]
    return out
