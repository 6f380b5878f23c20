"""Strict reading of judge answers: a JSON object of scores, or label-token log-probabilities.

Nothing is guessed. An answer that is not a JSON object (a single markdown code fence around it
is allowed), lacks a dimension, or holds a score outside 1..5 raises :class:`AnswerError`; so
does a log-probability answer in which no label token ``"1"``..``"5"`` was generated.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ..schema import CONTENT_PASS, SCORE_MAX, SCORE_MIN, Config, dimensions

LABELS: tuple[str, ...] = tuple(str(s) for s in range(SCORE_MIN, SCORE_MAX + 1))
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


class AnswerError(ValueError):
    """A judge answer that cannot be used; ``reason`` says why."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def message_text(body: Mapping[str, Any]) -> str:
    """The assistant text of a chat-completion body; a refusal or empty reply is an error."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise AnswerError(f"response has no choices[0].message: {str(body)[:200]}") from None
    refusal = message.get("refusal")
    if refusal:
        raise AnswerError(f"refusal: {refusal}")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise AnswerError("empty answer")
    return content


def json_object(text: str) -> dict[str, Any]:
    """``text`` as one JSON object (optionally inside a single code fence), else AnswerError."""
    stripped = text.strip()
    if fence := _FENCE.match(stripped):
        stripped = fence.group(1).strip()
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(data, dict):
        raise AnswerError(f"expected a JSON object, got {type(data).__name__}")
    return data


def parse_json_answer(text: str, config: Config) -> dict[str, Any]:
    """Scores of every ``config`` dimension (floats) and, for archetype, ``content_pass`` (bool).

    Example:
        >>> parse_json_answer('{"content_pass":true,"audio_quality":4,'
        ...                   '"human_likeness":3,"appropriateness":5}', "archetype")
        {'content_pass': True, 'audio_quality': 4.0, 'human_likeness': 3.0, 'appropriateness': 5.0}
    """
    data = json_object(text)
    answer: dict[str, Any] = {}
    if config == "archetype":
        if CONTENT_PASS not in data:
            raise AnswerError(f"missing {CONTENT_PASS!r}")
        if not isinstance(data[CONTENT_PASS], bool):
            raise AnswerError(f"{CONTENT_PASS!r} is {data[CONTENT_PASS]!r}, expected true/false")
        answer[CONTENT_PASS] = data[CONTENT_PASS]
    for dim in dimensions(config):
        if dim not in data:
            raise AnswerError(f"missing dimension {dim!r}")
        value = data[dim]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise AnswerError(f"{dim!r} is {value!r}, expected a number")
        if not (math.isfinite(value) and SCORE_MIN <= value <= SCORE_MAX):
            raise AnswerError(f"{dim!r} = {value!r} outside {SCORE_MIN}..{SCORE_MAX}")
        answer[dim] = float(value)
    return answer


def label_distribution(body: Mapping[str, Any]) -> dict[int, float]:
    """Probabilities of the labels 1..5 at the answer position, renormalised over the labels.

    The answer position is the first generated token that is itself a label (surrounding
    whitespace ignored); its ``top_logprobs`` give the distribution. Labels absent from the
    top list get probability 0. Raises :class:`AnswerError` if no label was generated or the
    response carries no log-probabilities.

    Example:
        >>> body = {"choices": [{"logprobs": {"content": [
        ...     {"token": "4", "logprob": -0.5, "top_logprobs": [
        ...         {"token": "4", "logprob": math.log(0.6)},
        ...         {"token": " 3", "logprob": math.log(0.2)},
        ...         {"token": "x", "logprob": math.log(0.2)}]}]}}]}
        >>> {k: round(v, 3) for k, v in label_distribution(body).items()}
        {3: 0.25, 4: 0.75}
    """
    try:
        positions = body["choices"][0]["logprobs"]["content"]
    except (KeyError, IndexError, TypeError):
        raise AnswerError("response carries no logprobs (choices[0].logprobs.content)") from None
    if not isinstance(positions, list):
        raise AnswerError("response carries no logprobs (choices[0].logprobs.content)")
    for position in positions:
        if str(position.get("token", "")).strip() not in LABELS:
            continue
        mass: dict[int, float] = {}
        for entry in position.get("top_logprobs") or []:
            token = str(entry.get("token", "")).strip()
            logprob = entry.get("logprob")
            if token in LABELS and isinstance(logprob, (int, float)) and math.isfinite(logprob):
                mass[int(token)] = mass.get(int(token), 0.0) + math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            raise AnswerError("label token generated but absent from top_logprobs")
        return {label: mass[label] / total for label in sorted(mass)}
    generated = "".join(str(p.get("token", "")) for p in positions)
    raise AnswerError(f"no label token {SCORE_MIN}..{SCORE_MAX} in the answer {generated!r}")


def expected_score(distribution: Mapping[int, float]) -> float:
    """The expectation ``sum(label * p)`` of a label distribution."""
    return sum(label * p for label, p in distribution.items())
