"""A SpeechParaling-Bench run: every candidate against the baseline on every query.

Responses live at ``<responses>/<system>/<query id>.wav``. For each candidate the play order
of each query comes from :func:`.judges.presentation_orders` with the run's seed (recorded in
the report). Offline judges get blueprints from the feature cache, with the similarity of a
response to its query text (the ``question`` context) where the judge asks for it; a judge
with a ``prepare`` method gets every response (with its query) before the first comparison,
so a scorer can rate them in batches. A missing or unreadable response (or one the ASR heard
no words in, when a similarity is needed), or an unusable verdict, is a failed judgment:
counted per group, listed with its reason, never scored as a tie.
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
from speech_drame.metrics import check_human_scores, human_ranking_agreement
from speech_drame.paths import id_path, safe_name

from ..chat_answers import VerdictError
from .judges import PairJudge, Response, presentation_orders
from .queries import Query
from .scoring import (
    Judgment,
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
) -> ParalingRun:
    """Judge every candidate against ``baseline`` on ``queries`` and score the run.

    ``human`` is checked before any judging (it may name only the run's systems), so a
    summary statistic can be undefined afterwards but never lose the judgments.
    """
    if not candidates or baseline in candidates:
        raise ValueError(f"need candidates other than the baseline {baseline!r}: {candidates}")
    for system in (baseline, *candidates):
        safe_name(system, "system name")  # it names a folder under ``responses``
    if human is not None:
        check_human_scores(human, [baseline, *candidates])
    root = Path(responses)
    run = ParalingRun(baseline, list(candidates), judge.name, seed)
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
            j = Judgment(q.id, q.task, q.dimensions, cand, orders[q.id])
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
            j.winner_position = v.winner
            j.winner = winner_role(v.winner, j.baseline_first)
            j.ratings = {
                "baseline" if s == baseline else "candidate": dict(r)
                for s, r in zip(played, v.ratings, strict=True)
            }
            j.analysis, j.grounded, j.raw = v.analysis, v.grounded, v.raw
    run.report = build_report(run.judgments, baseline, human)
    return run


def build_report(
    judgments: Sequence[Judgment], baseline: str, human: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """Scores by task, over all queries and by dimension; position bias; failures; and the
    rank agreement with ``human`` scores of the systems when given."""
    valid = [j for j in judgments if j.ok]
    report: dict[str, Any] = {
        "by_task": group_scores(judgments, lambda j: [j.task]),
        "overall": group_scores(judgments, lambda j: ["all"]).get("all", {}),
        "by_dimension": group_scores(judgments, lambda j: j.dimensions),
        "position_bias": position_bias(judgments),
        "n_judgments": len(judgments),
        "n_failures": len(judgments) - len(valid),
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
