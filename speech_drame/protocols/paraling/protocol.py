"""A SpeechParaling-Bench run: every candidate against the baseline on every query.

Responses live at ``<responses>/<system>/<query id>.wav``. For each candidate the play order
of each query comes from :func:`.judges.presentation_orders` with the run's seed (recorded in
the report). Offline judges get blueprints from the feature cache, with the similarity of a
response to its query text (the ``question`` context) where the judge asks for it; a judge
with a ``prepare`` method gets every response (with its query) before the first comparison,
so a scorer can rate them in batches. A missing or unreadable response (or one the ASR heard
no words in, when a similarity is needed), or an unusable verdict, is a failed judgment: each
of the query's verdict units fails, is listed with its reason, never scored as a tie, and
counts by ``failed_as`` (:data:`.scoring.FAILED_AS`; ``loss`` by default, as released).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_json
from speech_drame.audio import AudioError
from speech_drame.features.blueprint import DEFAULT_CACHE, Blueprint, CacheArg, extract_blueprints
from speech_drame.paths import id_path, safe_name
from speech_drame.stats import check_human_scores, human_ranking_agreement

from ..chat_answers import VerdictError
from .judges import PairJudge, Response, presentation_orders
from .queries import Query
from .scoring import (
    FAILED_AS,
    VERDICT_UNIT,
    Judgment,
    UnitResult,
    check_failed_as,
    group_scores,
    position_bias,
    system_scores,
    winner_role,
)


def response_path(root: str | os.PathLike, system: str, query_id: str) -> Path:
    """``<root>/<system>/<query id>.wav``; names that are not plain file names are refused."""
    return id_path(id_path(root, system, what="system name"), query_id, ".wav", "query id")


@dataclass
class ParalingRun:
    baseline: str
    candidates: list[str]
    judge: str
    seed: int
    failed_as: str = "loss"
    judgments: list[Judgment] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> list[Judgment]:
        return [j for j in self.judgments if not j.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidates": self.candidates,
            "judge": self.judge,
            "seed": self.seed,
            "failed_as": self.failed_as,
            "report": self.report,
            "judgments": [j.to_dict() for j in self.judgments],
        }

    def write(self, path: str | os.PathLike) -> Path:
        """The run as strict JSON (undefined statistics are ``null`` beside their ``note``),
        written atomically."""
        return write_json(path, self.to_dict())


def _blueprints(
    queries: Sequence[Query],
    root: Path,
    systems: Sequence[str],
    cache: CacheArg,
    judge: PairJudge,
) -> tuple[dict[str, Blueprint], dict[str, str]]:
    clips = [
        (str(response_path(root, s, q.id)), q)
        for q in queries
        for s in systems
        if response_path(root, s, q.id).is_file()
    ]
    contexts = [{"question": q.instruction} if judge.wants_context(q) else {} for _, q in clips]
    batch = extract_blueprints([c for c, _ in clips], contexts, cache=cache, progress=False)
    found = {c: bp for (c, _), bp in zip(clips, batch.blueprints, strict=True) if bp is not None}
    return found, {clips[i][0]: reason for i, reason in batch.errors.items()}


def run_paraling(
    queries: Sequence[Query],
    responses: str | os.PathLike,
    baseline: str,
    candidates: Sequence[str],
    judge: PairJudge,
    seed: int = 0,
    cache: CacheArg = DEFAULT_CACHE,
    human: Mapping[str, float] | None = None,
    failed_as: str = "loss",
) -> ParalingRun:
    """Judge every candidate against ``baseline`` on ``queries`` and score the run.

    ``human`` is checked before any judging (it may name only the run's systems), so a
    summary statistic can be undefined afterwards but never lose the judgments. ``failed_as``:
    how a failed verdict unit counts (:data:`.scoring.FAILED_AS`).
    """
    check_failed_as(failed_as)
    if getattr(judge, "query_audio", False):
        silent = [q.id for q in queries if not q.audio]
        if silent:
            raise ValueError(
                f"the judge hears the spoken query, but queries {silent[:5]} have none"
            )
    if not candidates or baseline in candidates:
        raise ValueError(f"need candidates other than the baseline {baseline!r}: {candidates}")
    for system in (baseline, *candidates):
        safe_name(system, "system name")  # it names a folder under ``responses``
    if human is not None:
        check_human_scores(human, [baseline, *candidates])
    root = Path(responses)
    run = ParalingRun(baseline, list(candidates), judge.name, seed, failed_as)
    blueprints: dict[str, Blueprint] = {}
    errors: dict[str, str] = {}
    if judge.needs_blueprints:
        blueprints, errors = _blueprints(queries, root, [baseline, *candidates], cache, judge)
    prepare = getattr(judge, "prepare", None)
    if prepare is not None:  # e.g. a scorer rates every response at once, in its batches
        prepare([(q, str(p)) for q in queries for s in (baseline, *candidates)
                 if (p := response_path(root, s, q.id)).is_file()])  # fmt: skip
    for cand in candidates:
        orders = presentation_orders([q.id for q in queries], cand, seed)
        for q in queries:
            j = Judgment(q.id, q.task, q.dimensions, cand, orders[q.id],
                         [UnitResult(u) for u in q.units])  # fmt: skip
            run.judgments.append(j)
            paths = {s: str(response_path(root, s, q.id)) for s in (baseline, cand)}
            problems = [
                f"{s}: missing response {p}" if not os.path.isfile(p) else f"{s}: {errors[p]}"
                for s, p in paths.items()
                if not os.path.isfile(p) or p in errors
            ]
            if problems:
                j.error = "; ".join(problems)
                continue
            played = [baseline, cand] if j.baseline_first else [cand, baseline]
            first, second = (Response(paths[s], blueprints.get(paths[s])) for s in played)
            try:
                v = judge.compare(q, first, second)
            except VerdictError as exc:
                j.error, j.raw = exc.reason, exc.raw
                continue
            except AudioError as exc:
                j.error = str(exc)
                continue
            if [u.unit for u in v.units] != list(q.units):
                raise ValueError(f"{judge.name} judged units {[u.unit for u in v.units]} of "
                                 f"query {q.id}, not {list(q.units)}")  # fmt: skip
            for unit, uv in zip(j.units, v.units, strict=True):
                unit.winner_position = uv.winner
                unit.winner = winner_role(uv.winner, j.baseline_first)
                unit.ratings = {
                    "baseline" if s == baseline else "candidate": dict(r)
                    for s, r in zip(played, uv.ratings, strict=True)
                }
            j.analysis, j.grounded, j.raw = v.analysis, v.grounded, v.raw
    run.report = build_report(run.judgments, baseline, human, failed_as, judge_label(judge))
    return run


def judge_label(judge: PairJudge) -> dict[str, Any]:
    """What the report says about the judge: its name, whether it is a stand-in, in words."""
    return {"name": judge.name, "stand_in": judge.stand_in, "description": judge.description}


def build_report(
    judgments: Sequence[Judgment],
    baseline: str,
    human: Mapping[str, float] | None = None,
    failed_as: str = "loss",
    judge: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Scores by task, over all verdict units and by dimension; position bias; failures; the
    conventions used (and the ``judge`` label when given); and the rank agreement with
    ``human`` scores of the systems when given."""
    check_failed_as(failed_as)
    valid = [j for j in judgments if j.ok]
    n_units = sum(len(j.units) for j in judgments)
    n_failed_units = sum(not u.ok for j in judgments for u in j.units)
    report: dict[str, Any] = {}
    if judge is not None:
        report["judge"] = dict(judge)
    report |= {
        "failed_as": {"value": failed_as, "definition": FAILED_AS[failed_as]},
        "verdict_unit": VERDICT_UNIT,
        "by_task": group_scores(judgments, lambda j, u: [j.task], failed_as),
        "overall": group_scores(judgments, lambda j, u: ["all"], failed_as).get("all", {}),
        "by_dimension": group_scores(judgments, lambda j, u: u.dimensions, failed_as),
        "position_bias": position_bias(judgments),
        "n_judgments": len(judgments),
        "n_failures": len(judgments) - len(valid),
        "n_units": n_units,
        "n_failed_units": n_failed_units,
        "failures": {f"{j.candidate}/{j.query_id}": j.error for j in judgments if not j.ok},
        "grounded_share": sum(j.grounded for j in valid) / len(valid) if valid else math.nan,
    }
    if not valid:
        report["grounded_share_note"] = "no valid verdict"
    if human is not None and not report["overall"]:
        report["human_agreement"] = {"spearman": math.nan, "kendall": math.nan,
                                     "n_systems": len(human), "note": "undefined: no judgment"}  # fmt: skip
    elif human is not None:
        report["human_agreement"] = human_ranking_agreement(
            system_scores(report["overall"], baseline), human
        )
    return report
