"""Strict reading of judge answers: a JSON object of scores, or label-token log-probabilities.

Nothing is guessed. An answer that is not a JSON object (a single markdown code fence around it
is allowed), lacks a dimension, or holds a score outside 1..5 raises :class:`AnswerError`; so
does a log-probability answer in which no label token was generated. Only when asked for the
official scoring (:func:`filled_json_answer`) does an unreadable key count as 1.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ..labels import FILL_SCORE
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


def read_answer_keys(
    data: Mapping[str, Any], config: Config
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each answer key of ``config`` read from a JSON object: ``(values, {key: why not})``.

    ``content_pass`` (archetype) must be a boolean, each dimension a number in 1..5 (as float).
    """
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    if config == "archetype":
        if CONTENT_PASS not in data:
            problems[CONTENT_PASS] = f"missing {CONTENT_PASS!r}"
        elif not isinstance(data[CONTENT_PASS], bool):
            problems[CONTENT_PASS] = (
                f"{CONTENT_PASS!r} is {data[CONTENT_PASS]!r}, expected true/false"
            )
        else:
            values[CONTENT_PASS] = data[CONTENT_PASS]
    for dim in dimensions(config):
        value = data.get(dim)
        if dim not in data:
            problems[dim] = f"missing dimension {dim!r}"
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            problems[dim] = f"{dim!r} is {value!r}, expected a number"
        elif not (math.isfinite(value) and SCORE_MIN <= value <= SCORE_MAX):
            problems[dim] = f"{dim!r} = {value!r} outside {SCORE_MIN}..{SCORE_MAX}"
        else:
            values[dim] = float(value)
    return values, problems


def parse_json_answer(text: str, config: Config) -> dict[str, Any]:
    """Scores of every ``config`` dimension (floats) and, for archetype, ``content_pass`` (bool).

    Example:
        >>> parse_json_answer('{"content_pass":true,"audio_quality":4,'
        ...                   '"human_likeness":3,"appropriateness":5}', "archetype")
        {'content_pass': True, 'audio_quality': 4.0, 'human_likeness': 3.0, 'appropriateness': 5.0}
    """
    values, problems = read_answer_keys(json_object(text), config)
    if problems:
        raise AnswerError(next(iter(problems.values())))
    return values


def filled_json_answer(text: str | None, config: Config) -> tuple[dict[str, Any], list[str]]:
    """The official scoring's reading of an answer: every key that cannot be read (the whole
    answer when it is no JSON object) counts as 1 (``content_pass``: 1 = passed).

    Returns the answer and the keys that were filled.

    Example:
        >>> answer, filled = filled_json_answer('{"content_pass":false,"audio_quality":4}', "archetype")
        >>> answer
        {'content_pass': False, 'audio_quality': 4.0, 'human_likeness': 1.0, 'appropriateness': 1.0}
        >>> filled
        ['human_likeness', 'appropriateness']
    """
    try:
        data = json_object(text or "")
    except AnswerError:
        data = {}
    values, problems = read_answer_keys(data, config)
    for key in problems:
        values[key] = True if key == CONTENT_PASS else float(FILL_SCORE)
    order = [CONTENT_PASS, *dimensions(config)]
    return {k: values[k] for k in order if k in values}, [k for k in order if k in problems]


def label_distribution(
    body: Mapping[str, Any], labels: tuple[str, ...] = LABELS
) -> dict[int, float]:
    """Probabilities of ``labels`` (digits; 1..5 by default) at the answer position,
    renormalised over the labels.

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
        if str(position.get("token", "")).strip() not in labels:
            continue
        mass: dict[int, float] = {}
        for entry in position.get("top_logprobs") or []:
            token = str(entry.get("token", "")).strip()
            logprob = entry.get("logprob")
            if token in labels and isinstance(logprob, (int, float)) and math.isfinite(logprob):
                mass[int(token)] = mass.get(int(token), 0.0) + math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            raise AnswerError("label token generated but absent from top_logprobs")
        return {label: mass[label] / total for label in sorted(mass)}
    generated = "".join(str(p.get("token", "")) for p in positions)
    raise AnswerError(f"no label token {'/'.join(labels)} in the answer {generated!r}")


def expected_score(distribution: Mapping[int, float]) -> float:
    """The expectation ``sum(label * p)`` of a label distribution."""
    return sum(label * p for label, p in distribution.items())
