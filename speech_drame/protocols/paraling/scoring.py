"""SpeechParaling-Bench arithmetic: points, normalized scores, the baseline's weighted score.

For each query the winner gets 1 point and a tie gives 0.5 to each side; a failed verdict is
excluded (and counted). A candidate's score on a group of queries (a task, a dimension, or
all) is its points over its valid verdicts, in percent. The baseline's score is the paper's
equation 3: its pairwise scores against every candidate (in percent), averaged with weights
``S(M_k) / sum_j S(M_j)``, the candidates' point totals on that group, so a win against a
strong candidate counts more. When every candidate totals 0 points the weights are 0/0, but the
baseline then won every valid verdict: every pairwise score is 100, and so is any weighted mean
of them, which is its score (with a note). A statistic that stays undefined (no valid verdict)
is NaN with a ``note`` beside it; JSON output writes it as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

CANDIDATE_POINTS = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}


@dataclass
class Judgment:
    """One query judged for one candidate, mapped back from play order to the systems."""

    query_id: str
    task: str
    dimensions: tuple[str, ...]
    candidate: str
    baseline_first: bool
    winner: str | None = None  # "baseline", "candidate", "tie"; None when the verdict failed
    winner_position: int | None = None  # 0 tie, 1 first played, 2 second played
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)  # system role -> aspects
    analysis: str = ""
    grounded: bool = False
    error: str | None = None
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.winner is not None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["dimensions"] = list(self.dimensions)
        return out


def winner_role(position: int, baseline_first: bool) -> str:
    """``"tie"``, ``"baseline"`` or ``"candidate"`` for a winner index of the play order."""
    if position == 0:
        return "tie"
    if position not in (1, 2):
        raise ValueError(f"winner index {position!r} not in 0, 1, 2")
    return "baseline" if (position == 1) == baseline_first else "candidate"


def weighted_baseline(pairwise: Mapping[str, float], totals: Mapping[str, float]) -> float:
    """Equation 3: ``sum_k pairwise[k] * totals[k] / sum_j totals[j]``.

    When all totals are 0 the weights are undefined; if the pairwise scores are then all equal
    (as they are when the baseline won every verdict: 100), every choice of weights gives that
    value, which is returned. Otherwise (or with no candidate) the result is NaN.

    >>> weighted_baseline({"a": 100.0, "b": 100.0}, {"a": 0.0, "b": 0.0})
    100.0
    """
    if set(pairwise) != set(totals):
        raise ValueError(f"candidates differ: {sorted(pairwise)} vs {sorted(totals)}")
    denom = sum(totals.values())
    if denom == 0:
        values = set(pairwise.values())
        return float(values.pop()) if len(values) == 1 else math.nan
    return sum(pairwise[k] * totals[k] / denom for k in pairwise)


def group_scores(
    judgments: Sequence[Judgment], groups: Callable[[Judgment], Iterable[str]]
) -> dict[str, dict[str, Any]]:
    """Scores per group (``groups(j)`` lists the groups a judgment counts in).

    Each group holds ``candidates`` (per candidate: ``score`` in percent, ``points``, ``n``
    valid verdicts, ``failures``) and ``baseline`` (``score`` by equation 3, ``pairwise``
    percentages and ``weights``).
    """
    raw: dict[str, dict[str, dict[str, float]]] = {}
    for j in judgments:
        for g in groups(j):
            s = raw.setdefault(g, {}).setdefault(
                j.candidate, {"points": 0.0, "n": 0, "failures": 0}
            )
            if j.ok:
                s["points"] += CANDIDATE_POINTS[j.winner]  # type: ignore[index]
                s["n"] += 1
            else:
                s["failures"] += 1
    out: dict[str, dict[str, Any]] = {}
    for g, per in sorted(raw.items()):
        cands = {
            c: {**s, "score": 100.0 * s["points"] / s["n"]}
            if s["n"]
            else {**s, "score": math.nan, "note": "no valid verdict"}
            for c, s in sorted(per.items())
        }
        valid = {c: s for c, s in cands.items() if s["n"]}
        pairwise = {c: 100.0 - s["score"] for c, s in valid.items()}
        totals = {c: s["points"] for c, s in valid.items()}
        denom = sum(totals.values())
        baseline: dict[str, Any] = {
            "score": weighted_baseline(pairwise, totals),
            "pairwise": pairwise,
            "weights": {c: t / denom for c, t in totals.items()} if denom else {},
        }
        if not valid:
            baseline["note"] = "no valid verdict in this group"
        elif denom == 0:
            baseline["note"] = (
                "every candidate scored 0 points: the baseline won every valid verdict, so its "
                "score is 100 for any equation 3 weights (the weights themselves are undefined)"
            )
        out[g] = {"candidates": cands, "baseline": baseline}
    return out


def position_bias(judgments: Sequence[Judgment]) -> dict[str, Any]:
    """How often the first-played response wins, over valid verdicts (ties reported apart).

    ``first_win_rate`` is first wins / decisive verdicts (0.5 = no bias).
    """
    valid = [j for j in judgments if j.ok]
    first = sum(j.winner_position == 1 for j in valid)
    second = sum(j.winner_position == 2 for j in valid)
    decisive = first + second
    out: dict[str, Any] = {
        "n": len(valid),
        "first_wins": first,
        "second_wins": second,
        "ties": len(valid) - decisive,
        "first_win_rate": first / decisive if decisive else math.nan,
        "baseline_first_share": (
            sum(j.baseline_first for j in valid) / len(valid) if valid else math.nan
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
