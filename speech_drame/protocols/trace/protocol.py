"""Running TRACE over a manifest of response pairs: blueprints, judge, fusion, failures.

A pair manifest is JSONL with ``id``, ``instruction`` (the request both systems answered),
``audio_1`` and ``audio_2`` (paths, relative to the manifest's folder). Blueprints come from
:func:`speech_drame.features.blueprint.extract_blueprints` with its on-disk cache, so a second
run over the same audio reads them. A pair whose audio fails or whose verdict is unusable is a
counted failure, listed with its reason and left out of the labels. A verdict without a content
decision follows the missing-content rule (:data:`~.labels.MISSING_CONTENT`): overall both_bad
(released) or a failure (``exclude``); one without a voice-quality or paralinguistics decision
follows the missing-other rule (:data:`~.labels.MISSING_OTHER`): no winner on that dimension
(released) or a failure (``fail``). Voice quality comes from the chosen DNSMOS variant
(:data:`~.blueprint.DNSMOS_MODELS`): the plain model's scores are read from the blueprint, the
personalised model's are computed once per clip and kept in the same feature cache. The run's
JSON names the fusion policy, the missing-content and missing-other rules and the blueprint's
cues (DNSMOS variant, emotion/accent model or absence).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.features import quality
from speech_drame.features.blueprint import (
    CLIP_ERRORS,
    DEFAULT_CACHE,
    Blueprint,
    CacheArg,
    extract_blueprints,
    resolve_cache,
)
from speech_drame.features.cache import FeatureCache
from speech_drame.jsonl import read_objects, repeated

from ..chat_answers import VerdictError
from .affect import ABSENT, KINDS, AudioClassifier, cached_clip_scores
from .blueprint import DNSMOS_DEFINITIONS, DNSMOS_MODELS, RELEASED_DNSMOS, Dnsmos, trace_blueprint
from .hcot import PairLabels
from .judges import TraceJudge
from .labels import (
    DIMENSIONS,
    MISSING_CONTENT,
    MISSING_OTHER,
    OTHER_DIMENSIONS,
    OVERALL,
    POLICY_DEFINITIONS,
    MissingContent,
    MissingLabel,
    MissingOther,
    Policy,
    check_missing_content,
    check_missing_other,
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


def cue_sources(
    classifiers: Sequence[AudioClassifier] = (), dnsmos: quality.Variant = RELEASED_DNSMOS
) -> dict[str, str]:
    """Which measurement feeds each blueprint cue, for reports."""
    given = {c.kind: c.name for c in classifiers}
    return {
        "dnsmos": f"{dnsmos}: {DNSMOS_MODELS[dnsmos]} ({DNSMOS_DEFINITIONS[dnsmos]})",
        **{k: given[k] if k in given else f"absent: {ABSENT[k]}" for k in KINDS},
    }


def voice_quality(
    path: str, bp: Blueprint, variant: quality.Variant, cache: FeatureCache | None
) -> Dnsmos:
    """``(variant, DNSMOS scores)`` of the clip at ``path``: the blueprint's own for ``plain``,
    else computed on the same first 30 s and kept in ``cache`` under the blueprint's sample hash.
    """
    if quality.check_variant(variant) == "plain":
        return variant, bp.quality
    scores = cached_clip_scores(
        cache,
        quality.CACHE_NAMES[variant],
        quality.VERSION,
        bp.sha256,
        path,
        lambda audio: asdict(quality.dnsmos(audio, variant)),
        f"DNSMOS ({variant})",
    )
    return variant, quality.QualityScores(**scores)


@dataclass
class TraceRun:
    """Labels of the judged pairs, their reasons, blueprints and the failures.

    ``missing_content`` lists the pairs whose judge gave no content decision: labelled
    both_bad overall under the ``both_bad`` rule, failures under ``exclude``.
    ``missing_other`` maps the pairs whose judge gave no voice-quality or paralinguistics
    decision to those dimensions: fused without a winner there under ``no-winner``, failures
    under ``fail``.
    """

    judge: str
    judge_description: str
    policy: str
    missing_content_rule: str = "both_bad"
    missing_other_rule: str = "no-winner"
    dnsmos: str = RELEASED_DNSMOS
    cues: dict[str, str] = field(default_factory=cue_sources)
    labels: list[PairLabels] = field(default_factory=list)
    reasons: dict[str, dict[str, str]] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    missing_content: list[str] = field(default_factory=list)
    missing_other: dict[str, list[str]] = field(default_factory=dict)
    blueprints: dict[str, dict[str, Any]] = field(default_factory=dict)  # audio path -> record
    extraction_seconds: float = 0.0
    judging_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "judge_description": self.judge_description,
            "policy": self.policy,
            "policy_definition": POLICY_DEFINITIONS[self.policy],
            "missing_content_rule": self.missing_content_rule,
            "missing_content_definition": MISSING_CONTENT[self.missing_content_rule],
            "missing_other_rule": self.missing_other_rule,
            "missing_other_definition": MISSING_OTHER[self.missing_other_rule],
            "dnsmos_variant": self.dnsmos,
            "dnsmos_definition": DNSMOS_DEFINITIONS[self.dnsmos],
            "blueprint_cues": self.cues,
            "n_pairs": len(self.labels) + len(self.failures),
            "n_failures": len(self.failures),
            "failures": self.failures,
            "n_missing_content": len(self.missing_content),
            "missing_content": self.missing_content,
            "n_missing_other": len(self.missing_other),
            "missing_other": self.missing_other,
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
    dnsmos: quality.Variant = RELEASED_DNSMOS,
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], str]]:
    """TRACE blueprints keyed by ``(audio path, instruction)`` and per-clip extraction errors.

    ``classifiers`` add their emotion/accent scores to every blueprint (cached per clip);
    ``dnsmos`` is the DNSMOS variant of the voice-quality figures (:func:`voice_quality`).
    """
    quality.check_variant(dnsmos)
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
            scores = voice_quality(k[0], bp, dnsmos, store)
        except CLIP_ERRORS as exc:
            errors[k] = str(exc)
            continue
        records[k] = trace_blueprint(bp, cues, scores)
    return records, errors


def run_trace(
    pairs: Sequence[Pair],
    judge: TraceJudge,
    policy: Policy = "content_first",
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = False,
    missing_content: MissingContent = "both_bad",
    classifiers: Sequence[AudioClassifier] = (),
    missing_other: MissingOther = "no-winner",
    dnsmos: quality.Variant = RELEASED_DNSMOS,
) -> TraceRun:
    """Judge every pair per dimension and fuse the decisions to the overall label.

    ``missing_content``: ``"both_bad"`` (released) labels a pair without a content decision
    both_bad overall and lists it in ``missing_content``; ``"exclude"`` makes it a failure.
    ``missing_other``: ``"no-winner"`` (released) fuses a pair without a voice-quality or
    paralinguistics decision with no winner there; ``"fail"`` makes it a failure; either way
    it is listed in ``missing_other``.
    ``classifiers``: optional emotion/accent models for the blueprint (:mod:`.affect`).
    ``dnsmos``: the DNSMOS variant of the blueprint's voice quality, ``"personalised"``
    (released) or ``"plain"``.
    """
    import time

    check_policy(policy)
    check_missing_content(missing_content)
    check_missing_other(missing_other)
    quality.check_variant(dnsmos)
    kinds = [c.kind for c in classifiers]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"one model per cue kind, got {kinds}")
    run = TraceRun(
        judge.name,
        judge.description,
        policy,
        missing_content,
        missing_other,
        dnsmos,
        cue_sources(classifiers, dnsmos),
    )
    start = time.perf_counter()
    records, errors = pair_blueprints(pairs, cache, progress, classifiers, dnsmos)
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
        if "content" not in labels:
            run.missing_content.append(pair.id)
        absent = [d for d in OTHER_DIMENSIONS if d not in labels]
        if absent:
            run.missing_other[pair.id] = absent
        try:
            labels[OVERALL] = fuse_labels(labels, policy, missing_content, missing_other)
        except MissingLabel as exc:
            run.failures[pair.id] = str(exc)
            continue
        run.labels.append(PairLabels(pair.id, labels))
        run.reasons[pair.id] = {d: decisions[d].reason for d in DIMENSIONS if d in decisions}
    run.judging_seconds = time.perf_counter() - start
    return run
