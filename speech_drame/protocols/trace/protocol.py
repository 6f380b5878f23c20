"""Running TRACE over a manifest of response pairs: blueprints, judge, fusion, failures.

A pair manifest is JSONL with ``id``, ``instruction`` (the request both systems answered),
``audio_1`` and ``audio_2`` (paths, relative to the manifest's folder). Blueprints come from
:func:`speech_drame.features.blueprint.extract_blueprints` with its on-disk cache, so a second
run over the same audio reads them. A pair whose audio fails or whose verdict is unusable is a
counted failure, listed with its reason and left out of the labels.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.features.blueprint import DEFAULT_CACHE, CacheArg, extract_blueprints
from speech_drame.jsonl import read_objects, repeated

from ..chat_answers import VerdictError
from .blueprint import trace_blueprint
from .hcot import PairLabels
from .judges import TraceJudge
from .labels import DIMENSIONS, OVERALL, Policy, check_policy, fuse_labels


@dataclass(frozen=True)
class Pair:
    id: str
    instruction: str
    audio_1: str
    audio_2: str


def load_pairs(path: str | os.PathLike) -> list[Pair]:
    """Read a pair manifest; relative audio paths are resolved against its folder.

    Raises:
        ValueError: invalid JSON, a missing field or a duplicate id (naming the line).
    """
    path = Path(path)
    pairs: list[Pair] = []
    for where, rec in read_objects(path):
        missing = [k for k in ("id", "instruction", "audio_1", "audio_2") if not rec.get(k)]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        audio = [str(path.parent / rec[k]) for k in ("audio_1", "audio_2")]
        pairs.append(Pair(str(rec["id"]), rec["instruction"], *audio))
    dup = repeated(p.id for p in pairs)
    if dup:
        raise ValueError(f"{path}: duplicate ids {dup[:5]}")
    return pairs


@dataclass
class TraceRun:
    """Labels of the judged pairs, their reasons, blueprints and the failures."""

    judge: str
    policy: str
    labels: list[PairLabels] = field(default_factory=list)
    reasons: dict[str, dict[str, str]] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    blueprints: dict[str, dict[str, Any]] = field(default_factory=dict)  # audio path -> record
    extraction_seconds: float = 0.0
    judging_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "policy": self.policy,
            "n_pairs": len(self.labels) + len(self.failures),
            "n_failures": len(self.failures),
            "failures": self.failures,
            "labels": [{"id": p.id, **dict(p.labels)} for p in self.labels],
            "reasons": self.reasons,
            "raw": self.raw,
            "blueprints": self.blueprints,
            "extraction_seconds": self.extraction_seconds,
            "judging_seconds": self.judging_seconds,
        }


def pair_blueprints(
    pairs: Sequence[Pair], cache: CacheArg = DEFAULT_CACHE, progress: bool = False
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], str]]:
    """TRACE blueprints keyed by ``(audio path, instruction)`` and per-clip extraction errors."""
    keys = sorted({(a, p.instruction) for p in pairs for a in (p.audio_1, p.audio_2)})
    batch = extract_blueprints(
        [k[0] for k in keys],
        contexts=[{"question": k[1]} for k in keys],
        cache=cache,
        progress=progress,
    )
    records = {
        k: trace_blueprint(bp)
        for k, bp in zip(keys, batch.blueprints, strict=True)
        if bp is not None
    }
    errors = {keys[i]: reason for i, reason in batch.errors.items()}
    return records, errors


def run_trace(
    pairs: Sequence[Pair],
    judge: TraceJudge,
    policy: Policy = "content_first",
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = False,
) -> TraceRun:
    """Judge every pair per dimension and fuse the decisions to the overall label."""
    import time

    check_policy(policy)
    run = TraceRun(judge.name, policy)
    start = time.perf_counter()
    records, errors = pair_blueprints(pairs, cache, progress)
    run.extraction_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for pair in pairs:
        keys = [(pair.audio_1, pair.instruction), (pair.audio_2, pair.instruction)]
        bad = [f"audio_{i}: {errors[k]}" for i, k in enumerate(keys, start=1) if k in errors]
        if bad:
            run.failures[pair.id] = "; ".join(bad)
            continue
        first, second = (records[k] for k in keys)
        run.blueprints.setdefault(pair.audio_1, first)
        run.blueprints.setdefault(pair.audio_2, second)
        try:
            decisions, raw = judge.decide(pair.instruction, first, second)
        except VerdictError as exc:
            run.failures[pair.id] = exc.reason
            if exc.raw is not None:
                run.raw[pair.id] = exc.raw
            continue
        if raw is not None:
            run.raw[pair.id] = raw
        labels = {d: decisions[d].label for d in DIMENSIONS}
        labels[OVERALL] = fuse_labels(labels, policy)
        run.labels.append(PairLabels(pair.id, labels))
        run.reasons[pair.id] = {d: decisions[d].reason for d in DIMENSIONS}
    run.judging_seconds = time.perf_counter() - start
    return run
