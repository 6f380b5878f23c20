"""A scorer attached to a campaign: every clip scored once, kept by scorer id (``campaign attach``).

:func:`attach_scorer` runs any :class:`~speech_drame.scorers.base.Scorer` (the LiteScorer,
DRAME-Eval, a chat judge: the one contract) over the clips of the campaign proper, ``chunk``
clips per call, and stores each chunk's results in one transaction under the scorer's id. An
attach that stops (killed, interrupted) resumes where it stopped; a scorer whose weights or
output-changing settings differ has another id, so results are never taken for another
scorer's. A clip the scorer could not score keeps its error and its kind: ``input`` failures
(the same answer every time) are kept, ``model`` failures are scored again by the next attach
(``retry_failed`` retries both); no score is ever put in a failure's place. Several scorers can
be attached, each under its own name; :mod:`.evaluator_agreement` compares them with the
ratings.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from ..atomic_io import strict_json
from .records import AttachedScorer, CampaignClip


@dataclass
class AttachReport:
    """What an attach did: ``scored_now`` clips scored in this run (``failed_now`` of them
    failed, by kind), ``cached`` clips whose result was already stored; over every clip of
    the campaign, ``scored`` with scores and ``failures`` by kind."""

    scorer: AttachedScorer
    clips: int
    scored_now: int = 0
    cached: int = 0
    failed_now: Counter = field(default_factory=Counter)
    scored: int = 0
    failures: Counter = field(default_factory=Counter)


def default_name(spec: str) -> str:
    """A scorer's name in a campaign when none is given: its kind and the last part of its
    target.

    >>> default_name("lite"), default_name("drame-eval:runs/exp3/evaluator")
    ('lite', 'drame-eval:evaluator')
    >>> default_name("judge:qwen2-audio@http://127.0.0.1:8000/v1"), default_name("runs/lite_v2")
    ('judge:qwen2-audio', 'lite:lite_v2')
    """
    from ..scorers.specs import parse_spec

    parsed = parse_spec(spec)
    target = parsed.target.partition("@")[0] if parsed.kind == "judge" else parsed.target
    tail = PurePath(target.rstrip("/")).name if target else ""
    return f"{parsed.kind}:{tail}" if tail else parsed.kind


def _finite(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


def stored_result(result: Any) -> tuple[dict[str, Any], str | None]:
    """A :class:`~speech_drame.scorers.base.ClipScores` as stored: its dict without the id
    and its error kind (``None`` when scored). A scored clip with a non-finite score or
    probability is stored as a ``model`` failure, never as a score; any other non-finite
    number (a measurement of the audio) as null, which JSON (and PostgreSQL) can hold."""
    row = result.to_dict()
    row.pop("id", None)
    if not result.ok:
        return strict_json(row), result.error_kind or "model"
    numbers = {k: row.get(k) for k in ("scores", "distributions", "content_pass", "label_mass")}
    if not _finite(numbers):
        why = f"{result.id}: the scorer returned a non-finite score or probability"
        return {"error": why, "error_kind": "model"}, "model"
    return strict_json(row), None


def _chunk_failure(clips: list[CampaignClip], why: str) -> list[tuple[str, dict, str]]:
    return [(c.id, {"error": f"{c.id}: {why}", "error_kind": "model"}, "model") for c in clips]


def attach_scorer(
    campaign: Any,
    scorer: Any,
    spec: str,
    name: str | None = None,
    *,
    chunk: int | None = None,
    retry_failed: bool = False,
    progress: bool = False,
    on_chunk: Callable[[int, int], None] | None = None,
) -> AttachReport:
    """Attach ``scorer`` (loaded from ``spec``) to ``campaign`` as ``name`` (default
    :func:`default_name` of ``spec``) and score every clip without a final result of it.

    ``chunk`` clips (default the scorer's ``batch_size``) go to each
    :meth:`~speech_drame.scorers.base.Scorer.score` call, and their results are committed
    before the next call; a call that raises fails its chunk as ``model`` failures (counted,
    retried next time). ``on_chunk(done, pending)`` runs after each commit. Uses
    ``campaign.config``, ``clips()``, ``attach()``, ``scorer_results()``, ``store_results()``.

    Raises:
        CampaignError: a scorer of another config, or a name or scorer id already attached
            otherwise (see :meth:`~.store.Campaign.attach`).
        ValueError: ``chunk`` below 1.
    """
    from ..scorers.base import ClipInput
    from .store import CampaignError

    if scorer.config != campaign.config:
        raise CampaignError(
            f"{spec}: a {scorer.config} scorer; the campaign rates {campaign.config} clips"
        )
    size = chunk if chunk is not None else max(1, int(getattr(scorer, "batch_size", 1) or 1))
    if size < 1:
        raise ValueError(f"chunk must be at least 1 clip, got {size}")
    entry = campaign.attach(
        AttachedScorer(name or default_name(spec), scorer.id, spec, scorer.description,
                       tuple(scorer.dimensions), bool(scorer.content_pass), campaign.clock())
    )  # fmt: skip
    clips = campaign.clips()
    stored = campaign.scorer_results(entry.scorer_id)
    settled = {"input"} if not retry_failed else set()
    pending = [c for c in clips if c.id not in stored or (
        not stored[c.id].ok and stored[c.id].error_kind not in settled)]  # fmt: skip
    report = AttachReport(entry, len(clips), cached=len(clips) - len(pending))

    from tqdm.auto import tqdm

    bar = tqdm(total=len(pending), unit="clip", desc=f"scoring ({entry.name})",
               disable=not progress)  # fmt: skip
    for start in range(0, len(pending), size):
        part = pending[start : start + size]
        inputs = [ClipInput(c.id, c.audio_path, c.context) for c in part]
        try:
            results = scorer.score(inputs)
            ids = [getattr(r, "id", None) for r in results]
            if ids != [c.id for c in part]:
                raise RuntimeError(f"returned results for {ids} instead of {[c.id for c in part]}")
        except Exception as exc:  # noqa: BLE001 - a failed call is a counted, retried failure
            rows = _chunk_failure(part, f"the scorer failed on a chunk of {len(part)} clips: "
                                  f"{type(exc).__name__}: {exc}")  # fmt: skip
        else:
            rows = [(c.id, *stored_result(r)) for c, r in zip(part, results, strict=True)]
        campaign.store_results(entry.scorer_id, rows)
        report.scored_now += len(rows)
        report.failed_now.update(kind for _, _, kind in rows if kind is not None)
        bar.update(len(part))
        if on_chunk is not None:
            on_chunk(start + len(part), len(pending))
    bar.close()
    final = campaign.scorer_results(entry.scorer_id)
    report.scored = sum(r.ok for r in final.values())
    report.failures = Counter(r.error_kind for r in final.values() if not r.ok)
    return report
