"""The rating page's rubric and the validation of a rater's answers.

:func:`page_rubric` is the JSON the page renders: our own rubric wording
(:data:`speech_drame.prompts.RUBRICS`) with 1..5 anchors, the emotion gates and the comment and
confidence fields. :func:`validate_answers` turns the page's answers (one flat object keyed by
release field names, plus ``confidence``) into :class:`~speech_drame.campaign.records.Answers`
or raises :class:`FormError` naming the field.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..prompts import RUBRICS
from ..schema import (
    CONTENT_PASS,
    EMOTION_GATE_THRESHOLD,
    EMOTION_GATES,
    SCORE_MAX,
    SCORE_MIN,
    Config,
    check_config,
    dimensions,
)
from .records import Answers

COMMENT_MAX_CHARS = 2000
CONFIDENCE = "confidence"  # the page's field; realism exports it as annotator_confidence_rating
REALISM_COMMENTS = "comments"
_GATE_OF = dict(EMOTION_GATES)  # gated dimension -> the dimension that gates it


class FormError(InputError):
    """An answer the page should not have sent; ``field`` names it."""

    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


def comment_fields(config: Config) -> dict[str, str | None]:
    """Comment field -> the dimension it comments on (``None``: the clip as a whole)."""
    if check_config(config) == "archetype":
        return {f"{d}_comment": d for d in dimensions(config)}
    return {REALISM_COMMENTS: None}


def _entry(config: Config, key: str) -> dict[str, Any]:
    r = RUBRICS[config][key]
    anchors = sorted(r.levels, key=lambda level: int(level[0]))
    if key == CONTENT_PASS:
        values: list[Any] = [label == "1" for label, _ in anchors]
    else:
        values = [int(label) for label, _ in anchors]
    gate = _GATE_OF.get(key)
    return {
        "key": key,
        "name": r.name,
        "kind": "pass" if key == CONTENT_PASS else "score",
        "focus": r.focus,
        "context": list(r.context),
        "anchors": [
            {"value": v, "text": text} for v, (_, text) in zip(values, anchors, strict=True)
        ],
        "gate": {"dimension": gate, "min": EMOTION_GATE_THRESHOLD} if gate else None,
    }


def page_rubric(config: Config) -> dict[str, Any]:
    """The rubric of the rating page, as JSON-able values.

    ``dimensions``: in the order the page asks them, Content Pass first for archetype (anchors
    ``true``/``false``), then the 1..5 scales (anchors 1..5). A dimension with a ``gate`` is
    asked only when the gate dimension scored at least ``gate.min``; the archetype quality
    scales and confidence are asked only when Content Pass is ``true``.
    """
    keys = ((CONTENT_PASS,) if check_config(config) == "archetype" else ()) + dimensions(config)
    return {
        "config": config,
        "scale": {"min": SCORE_MIN, "max": SCORE_MAX},
        "dimensions": [_entry(config, k) for k in keys],
        "gates": [
            {"dimension": gated, "gate": gate, "min": EMOTION_GATE_THRESHOLD}
            for gated, gate in EMOTION_GATES
            if gated in keys
        ],
        "comments": [
            {"key": key, "dimension": dim, "max_chars": COMMENT_MAX_CHARS}
            for key, dim in comment_fields(config).items()
        ],
        "confidence": {
            "key": CONFIDENCE,
            "min": SCORE_MIN,
            "max": SCORE_MAX,
            "required": False,
            "text": "How confident are you in these ratings? (1 = guessing, 5 = certain)",
        },
    }


def _score(obj: dict[str, Any], key: str, *, required: bool) -> int | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise FormError(key, f"a score {SCORE_MIN}..{SCORE_MAX} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormError(key, f"expected an integer score, got {value!r}")
    if not SCORE_MIN <= value <= SCORE_MAX:
        raise FormError(key, f"score {value} outside {SCORE_MIN}..{SCORE_MAX}")
    return value


def validate_answers(config: Config, obj: Any) -> Answers:
    """The page's answers as :class:`Answers`; :class:`FormError` for anything wrong.

    Every asked dimension needs an integer 1..5. A gated dimension (:data:`EMOTION_GATES`) is
    asked only when its gate scored >= :data:`EMOTION_GATE_THRESHOLD` and must be absent (or
    null) otherwise. After a failed archetype Content Pass the quality scales and confidence
    must be absent. Comments are text of at most ``COMMENT_MAX_CHARS`` characters; confidence
    is optional, 1..5.
    """
    check_config(config)
    if not isinstance(obj, dict):
        raise FormError("answers", f"expected an object, got {type(obj).__name__}")
    dims = dimensions(config)
    comments = comment_fields(config)
    known = {*dims, *comments, CONFIDENCE} | ({CONTENT_PASS} if config == "archetype" else set())
    unknown = sorted(set(obj) - known)
    if unknown:
        raise FormError(unknown[0], f"unknown field; expected {', '.join(sorted(known))}")

    content_pass = None
    if config == "archetype":
        content_pass = obj.get(CONTENT_PASS)
        if not isinstance(content_pass, bool):
            raise FormError(CONTENT_PASS, f"expected true or false, got {content_pass!r}")
    scores: dict[str, int | None] = {}
    gated: set[str] = set()
    for dim in dims:
        if content_pass is False:
            if obj.get(dim) is not None:
                raise FormError(dim, "not asked when Content Pass failed")
            scores[dim] = None
            continue
        gate = _GATE_OF.get(dim)
        if gate is not None and not (scores[gate] or 0) >= EMOTION_GATE_THRESHOLD:
            if obj.get(dim) is not None:
                raise FormError(
                    dim,
                    f"not asked: {gate} is {scores[gate] if scores[gate] else 'not rated'} "
                    f"(asked only from {EMOTION_GATE_THRESHOLD})",
                )
            scores[dim] = None
            gated.add(dim)
            continue
        scores[dim] = _score(obj, dim, required=True)

    confidence = _score(obj, CONFIDENCE, required=False)
    if confidence is not None and content_pass is False:
        raise FormError(CONFIDENCE, "not asked when Content Pass failed")
    texts: dict[str, str] = {}
    for key in comments:
        text = obj.get(key)
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise FormError(key, f"expected text, got {text!r}")
        if len(text) > COMMENT_MAX_CHARS:
            raise FormError(key, f"{len(text)} characters; at most {COMMENT_MAX_CHARS}")
        texts[key] = text
    return Answers(config, scores, content_pass, frozenset(gated), confidence, texts)
