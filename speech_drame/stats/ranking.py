"""Rank agreement of systems between automatic and human scores (RoleBench)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from speech_drame.stats.correlation import _rank_correlations, _undefined_reason
from speech_drame.stats.inputs import _vector


def system_ranking_agreement(
    automatic: Mapping[str, float], human: Mapping[str, float]
) -> dict[str, Any]:
    """Rank agreement between automatic and human scores of systems (RoleBench).

    >>> system_ranking_agreement({"a": 3.1, "b": 2.0, "c": 4.2}, {"a": 3.5, "b": 2.9, "c": 4.0})
    {'spearman': 1.0, 'kendall': 1.0, 'n_systems': 3}
    """
    only_auto = sorted(set(automatic) - set(human))
    only_human = sorted(set(human) - set(automatic))
    if only_auto or only_human:
        raise ValueError(f"systems differ: only automatic {only_auto}, only human {only_human}")
    names = sorted(automatic)
    if len(names) < 2:
        raise ValueError(f"need at least 2 systems, got {len(names)}")
    a = _vector([automatic[k] for k in names], "automatic")
    h = _vector([human[k] for k in names], "human")
    undefined = _undefined_reason(a, h, ("automatic scores", "human scores"))
    rho, tau = (math.nan, math.nan) if undefined else _rank_correlations(a, h)
    out: dict[str, Any] = {"spearman": rho, "kendall": tau, "n_systems": len(names)}
    if undefined:
        out["note"] = undefined
    return out


def check_human_scores(human: Mapping[str, Any], systems: Iterable[str]) -> None:
    """Human system scores must be a mapping of at least 2 of ``systems`` (the ones a run
    scores) to finite numbers: checked before a run, so that a typo does not cost the run its
    report.

    >>> check_human_scores({"a": 3.0, "x": 2.0}, ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: human scores for systems this run did not score: ['x']
    """
    if not isinstance(human, Mapping):
        raise ValueError(
            f"human scores must be a JSON object of system -> score, got {type(human).__name__}"
        )
    if len(human) < 2:
        raise ValueError(f"need human scores of at least 2 systems, got {len(human)}")
    unknown = sorted(set(human) - set(systems))
    if unknown:
        raise ValueError(f"human scores for systems this run did not score: {unknown}")
    for name, value in human.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ValueError(f"human score of {name!r} is {value!r}, not a finite number")


def human_ranking_agreement(
    automatic: Mapping[str, float], human: Mapping[str, float]
) -> dict[str, Any]:
    """:func:`system_ranking_agreement` over the systems humans rated. A rated system whose
    automatic score is undefined (nothing scored) makes the ranking undefined: NaN with a
    ``note`` naming it, never an error that would lose a run's report.

    Raises:
        ValueError: ``human`` is not what :func:`check_human_scores` accepts for the systems
            of ``automatic``.
    """
    check_human_scores(human, automatic)
    undefined = sorted(k for k in human if not math.isfinite(automatic[k]))
    if undefined:
        return {"spearman": math.nan, "kendall": math.nan, "n_systems": len(human),
                "note": f"undefined: no automatic score for {', '.join(undefined)}"}  # fmt: skip
    return system_ranking_agreement({k: automatic[k] for k in human}, dict(human))
