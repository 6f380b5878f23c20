"""Strict reading of the JSON verdicts the pairwise protocols ask chat judges for.

Shared by TRACE and SpeechParaling-Bench. The assistant text must be one JSON object
(a single markdown code fence around it is allowed, as in :mod:`speech_drame.judges.parse`);
a refusal, an empty answer, a failed request or anything else is a :class:`VerdictError` that
the protocols count as a failure, never replace by a default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from speech_drame.judges import parse
from speech_drame.judges.client import ChatClient, JudgeRequestError
from speech_drame.judges.parse import AnswerError, message_text


class VerdictError(ValueError):
    """A verdict that cannot be used; ``raw`` keeps the answer text when there was one."""

    def __init__(self, reason: str, raw: str | None = None):
        self.reason, self.raw = reason, raw
        super().__init__(reason)


def json_object(text: str) -> dict[str, Any]:
    """``text`` as a JSON object (optionally inside one code fence), else :class:`VerdictError`."""
    try:
        return parse.json_object(text)
    except AnswerError as exc:
        raise VerdictError(str(exc), text) from None


def ask_json(
    client: ChatClient,
    payload: Mapping[str, Any],
    check: Callable[[dict[str, Any], str], object] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Send ``payload``; return the answer text and its JSON object.

    ``check(data, raw)`` (raising :class:`VerdictError`) is the caller's full reading of the
    verdict: only answers that pass it are stored in the client's response cache.

    Raises:
        VerdictError: the request failed for good, the model refused or answered nothing,
            or the answer is not a JSON object.
    """

    def usable(body: dict[str, Any]) -> None:
        raw = message_text(body)
        data = json_object(raw)
        if check is not None:
            check(data, raw)

    try:
        response = client.complete(dict(payload), usable=usable)
    except JudgeRequestError as exc:
        raise VerdictError(f"request failed: {exc.reason}") from None
    try:
        raw = message_text(response.body)
    except AnswerError as exc:
        raise VerdictError(exc.reason) from None
    return raw, json_object(raw)
