"""Running TRACE over a manifest of response pairs: blueprints, judge, fusion, failures.

A pair manifest is JSONL with ``id``, ``instruction`` (the request both systems answered),
``audio_1`` and ``audio_2`` (paths, relative to the manifest's folder). Blueprints come from
:func:`speech_drame.features.blueprint.extract_blueprints` with its on-disk cache, so a second
run over the same audio reads them. A pair whose audio fails or whose verdict is unusable is a
counted failure, listed with its reason and left out of the labels. A verdict without a content
decision follows the missing-content rule (:data:`~.labels.MISSING_CONTENT`): overall both_bad
(released) or a failure (``exclude``). The run's JSON names the fusion policy, the
missing-content rule and the blueprint's cues (DNSMOS variant, emotion/accent model or absence).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.features.blueprint import (
    CLIP_ERRORS,
    DEFAULT_CACHE,
    CacheArg,
    extract_blueprints,
    resolve_cache,
)
from speech_drame.jsonl import read_objects, repeated

from ..chat_answers import VerdictError
from .affect import ABSENT, KINDS, AudioClassifier
from .blueprint import DNSMOS_VARIANT, RELEASED_DNSMOS, trace_blueprint
from .hcot import PairLabels
from .judges import TraceJudge
from .labels import (
    DIMENSIONS,
    MISSING_CONTENT,
    OVERALL,
    POLICY_DEFINITIONS,
    MissingContent,
    MissingContentLabel,
    Policy,
    check_missing_content,
    check_policy,
    fuse_labels,
)


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


def cue_sources(classifiers: Sequence[AudioClassifier] = ()) -> dict[str, str]:
    """Which measurement feeds each blueprint cue, for reports."""
    given = {c.kind: c.name for c in classifiers}
    return {
        "dnsmos": f"{DNSMOS_VARIANT} ({RELEASED_DNSMOS})",
        **{k: given[k] if k in given else f"absent: {ABSENT[k]}" for k in KINDS},
    }


@dataclass
class TraceRun:
    """Labels of the judged pairs, their reasons, blueprints and the failures.

    ``missing_content`` lists the pairs whose judge gave no content decision: labelled
    both_bad overall under the ``both_bad`` rule, failures under ``exclude``.
    """

    judge: str
    policy: str
    missing_content_rule: str = "both_bad"
    cues: dict[str, str] = field(default_factory=cue_sources)
    labels: list[PairLabels] = field(default_factory=list)
    reasons: dict[str, dict[str, str]] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    missing_content: list[str] = field(default_factory=list)
    blueprints: dict[str, dict[str, Any]] = field(default_factory=dict)  # audio path -> record
    extraction_seconds: float = 0.0
    judging_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "policy": self.policy,
            "policy_definition": POLICY_DEFINITIONS[self.policy],
            "missing_content_rule": self.missing_content_rule,
            "missing_content_definition": MISSING_CONTENT[self.missing_content_rule],
            "blueprint_cues": self.cues,
            "n_pairs": len(self.labels) + len(self.failures),
            "n_failures": len(self.failures),
            "failures": self.failures,
            "n_missing_content": len(self.missing_content),
            "missing_content": self.missing_content,
            "labels": [{"id": p.id, **dict(p.labels)} for p in self.labels],
            "reasons": self.reasons,
            "raw": self.raw,
            "blueprints": self.blueprints,
            "extraction_seconds": self.extraction_seconds,
            "judging_seconds": self.judging_seconds,
        }


def pair_blueprints(
    pairs: Sequence[Pair],
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = False,
    classifiers: Sequence[AudioClassifier] = (),
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], str]]:
    """TRACE blueprints keyed by ``(audio path, instruction)`` and per-clip extraction errors.

    ``classifiers`` add their emotion/accent scores to every blueprint (cached per clip).
    """
    store = resolve_cache(cache)
    keys = sorted({(a, p.instruction) for p in pairs for a in (p.audio_1, p.audio_2)})
    batch = extract_blueprints(
        [k[0] for k in keys],
        contexts=[{"question": k[1]} for k in keys],
        cache=store,
        progress=progress,
    )
    errors = {keys[i]: reason for i, reason in batch.errors.items()}
    records = {}
    for k, bp in zip(keys, batch.blueprints, strict=True):
        if bp is None:
            continue
        try:
            cues = {c.kind: (c.name, c.cached_scores(k[0], bp.sha256, store)) for c in classifiers}
        except CLIP_ERRORS as exc:
            errors[k] = str(exc)
            continue
        records[k] = trace_blueprint(bp, cues)
    return records, errors


def run_trace(
    pairs: Sequence[Pair],
    judge: TraceJudge,
    policy: Policy = "content_first",
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = False,
    missing_content: MissingContent = "both_bad",
    classifiers: Sequence[AudioClassifier] = (),
) -> TraceRun:
    """Judge every pair per dimension and fuse the decisions to the overall label.

    ``missing_content``: ``"both_bad"`` (released) labels a pair without a content decision
    both_bad overall and lists it in ``missing_content``; ``"exclude"`` makes it a failure.
    ``classifiers``: optional emotion/accent models for the blueprint (:mod:`.affect`).
    """
    import time

    check_policy(policy)
    check_missing_content(missing_content)
    kinds = [c.kind for c in classifiers]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"one model per cue kind, got {kinds}")
    run = TraceRun(judge.name, policy, missing_content, cue_sources(classifiers))
    start = time.perf_counter()
    records, errors = pair_blueprints(pairs, cache, progress, classifiers)
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
        labels = {d: decisions[d].label for d in DIMENSIONS if d in decisions}
        try:
            labels[OVERALL] = fuse_labels(labels, policy, missing_content)
        except MissingContentLabel as exc:
            run.failures[pair.id] = str(exc)
            run.missing_content.append(pair.id)
            continue
        if "content" not in labels:
            run.missing_content.append(pair.id)
        run.labels.append(PairLabels(pair.id, labels))
        run.reasons[pair.id] = {d: decisions[d].reason for d in DIMENSIONS if d in decisions}
    run.judging_seconds = time.perf_counter() - start
    return run
