"""Zero/few-shot audio-LLM judges over an OpenAI-compatible endpoint (Speech-DRAME, App. L.1).

:class:`ChatJudge` asks for every dimension at once as minified JSON and averages ``runs``
separate requests (5 by default, as for the paper's commercial models). :class:`LogprobJudge`
asks for one dimension at a time and turns the log-probabilities of the label tokens 1..5 into
an expected score (the paper's mode for open models). An answer that cannot be used is a
counted failure with its raw text kept; no default score is ever put in its place, and it is
never stored in the response cache (a rerun asks again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..audio import AudioSource
from ..schema import CONTENT_PASS, Config, check_config, dimensions
from .client import ChatClient, JudgeRequestError
from .parse import (
    AnswerError,
    expected_score,
    label_distribution,
    message_text,
    parse_json_answer,
)
from .prompt import (
    DEFAULT_SYSTEM,
    JudgeItem,
    build_dimension_messages,
    build_messages,
    wav_base64,
)


@dataclass
class RunOutput:
    """One request: its raw text, what was read from it, or why it failed."""

    run: int
    dimension: str | None = None  # set in the per-dimension logprob mode
    raw: str | None = None
    answer: dict[str, Any] | None = None
    distribution: dict[int, float] | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0


@dataclass
class JudgeResult:
    """Scores of one clip with every run behind them.

    ``scores`` holds the mean over valid runs of each dimension that has one;
    ``content_pass`` (archetype, JSON mode) is the share of valid runs answering true.
    """

    clip: str
    config: Config
    scores: dict[str, float] = field(default_factory=dict)
    content_pass: float | None = None
    runs: list[RunOutput] = field(default_factory=list)

    @property
    def failures(self) -> list[RunOutput]:
        return [r for r in self.runs if r.error is not None]

    @property
    def n_failures(self) -> int:
        return len(self.failures)

    @property
    def reasons(self) -> list[str]:
        return [
            f"run {r.run}{f' ({r.dimension})' if r.dimension else ''}: {r.error}"
            for r in self.failures
        ]

    @property
    def ok(self) -> bool:
        """Every dimension has a score (from at least one valid run)."""
        return all(d in self.scores for d in dimensions(self.config))

    @property
    def retries(self) -> int:
        return sum(max(r.attempts - 1, 0) for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "clip": self.clip,
            "config": self.config,
            "ok": self.ok,
            "scores": self.scores,
            "content_pass": self.content_pass,
            "n_failures": self.n_failures,
            "reasons": self.reasons,
            "runs": [asdict(r) for r in self.runs],
        }


def make_item(
    audio: AudioSource,
    *,
    question: str = "",
    profile: str = "",
    scene: str = "",
    traits: str = "",
    clip_id: str = "",
) -> JudgeItem:
    """A clip to judge: its first 30 s encoded once, plus its context."""
    return JudgeItem(wav_base64(audio), question, profile, scene, traits, clip_id)


def _check_context(item: JudgeItem, config: Config) -> None:
    if config == "archetype" and not item.question:
        raise ValueError("archetype judging needs the question (role and scene)")
    if config == "realism" and not (item.profile and item.scene):
        raise ValueError("realism judging needs the character profile and the local scene")


class ChatJudge:
    """Every dimension per request as minified JSON; the mean of ``runs`` requests.

    Args:
        client: the endpoint.
        config: ``"archetype"`` or ``"realism"``.
        rubric: rubric text put before the answer format.
        exemplars: few-shot demonstrations with gold answers (see :mod:`.exemplars`).
        runs: separate requests per clip (each its own cache entry).
        temperature: sampling temperature sent with each request.
        max_tokens: answer length limit (``None``: the server's default).
    """

    def __init__(
        self,
        client: ChatClient,
        config: Config,
        rubric: str = "",
        exemplars: Sequence[JudgeItem] = (),
        *,
        runs: int = 5,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        system: str = DEFAULT_SYSTEM,
    ):
        self.config = check_config(config)
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        self.client, self.rubric, self.exemplars = client, rubric, list(exemplars)
        self.runs, self.temperature = runs, temperature
        self.max_tokens, self.system = max_tokens, system

    def payload(self, item: JudgeItem) -> dict[str, Any]:
        """The request body (without ``model``) for ``item``."""
        _check_context(item, self.config)
        payload: dict[str, Any] = {
            "messages": build_messages(self.config, self.rubric, item, self.exemplars, self.system),
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    def read(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The answer text and its scores; :class:`AnswerError` if it cannot be used."""
        raw = message_text(body)
        return raw, parse_json_answer(raw, self.config)

    def judge_item(self, item: JudgeItem) -> JudgeResult:
        payload = self.payload(item)
        result = JudgeResult(item.id, self.config)
        for run in range(self.runs):
            out = RunOutput(run)
            try:
                response = self.client.complete(payload, run=run, usable=self.read)
            except JudgeRequestError as exc:
                out.error = f"request failed: {exc.reason}"
                result.runs.append(out)
                continue
            out.cached, out.attempts = response.cached, response.attempts
            try:
                out.raw = message_text(response.body)
                out.answer = parse_json_answer(out.raw, self.config)
            except AnswerError as exc:
                out.error = exc.reason
            result.runs.append(out)
        valid = [r.answer for r in result.runs if r.answer is not None]
        if valid:
            for dim in dimensions(self.config):
                result.scores[dim] = sum(a[dim] for a in valid) / len(valid)
            if self.config == "archetype":
                result.content_pass = sum(a[CONTENT_PASS] for a in valid) / len(valid)
        return result

    def judge(self, audio: AudioSource, **context: str) -> JudgeResult:
        """Judge one clip; ``context``: ``question`` or ``profile``/``scene``/``traits``, ``clip_id``."""
        return self.judge_item(make_item(audio, **context))


class LogprobJudge:
    """One request per dimension; the score is the expectation over the label tokens 1..5.

    The endpoint must return ``logprobs`` with ``top_logprobs`` (as vLLM and other
    OpenAI-style servers of open models do). Requests use temperature 0.
    """

    def __init__(
        self,
        client: ChatClient,
        config: Config,
        rubric: str = "",
        exemplars: Sequence[JudgeItem] = (),
        *,
        top_logprobs: int = 20,
        max_tokens: int = 8,
        system: str = DEFAULT_SYSTEM,
    ):
        self.config = check_config(config)
        if not 1 <= top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 1..20, got {top_logprobs}")
        self.client, self.rubric, self.exemplars = client, rubric, list(exemplars)
        self.top_logprobs, self.max_tokens, self.system = top_logprobs, max_tokens, system

    def payload(self, item: JudgeItem, dimension: str) -> dict[str, Any]:
        _check_context(item, self.config)
        messages = build_dimension_messages(
            self.config, self.rubric, item, dimension, self.exemplars, self.system
        )
        return {
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }

    @staticmethod
    def read(body: dict[str, Any]) -> tuple[str, dict[int, float]]:
        """The answer text and its label distribution; :class:`AnswerError` if unusable."""
        return message_text(body), label_distribution(body)

    def judge_item(self, item: JudgeItem) -> JudgeResult:
        result = JudgeResult(item.id, self.config)
        for dim in dimensions(self.config):
            out = RunOutput(0, dimension=dim)
            try:
                response = self.client.complete(self.payload(item, dim), usable=self.read)
            except JudgeRequestError as exc:
                out.error = f"request failed: {exc.reason}"
                result.runs.append(out)
                continue
            out.cached, out.attempts = response.cached, response.attempts
            try:
                out.raw = message_text(response.body)
                out.distribution = label_distribution(response.body)
            except AnswerError as exc:
                out.error = exc.reason
            else:
                result.scores[dim] = expected_score(out.distribution)
            result.runs.append(out)
        return result

    def judge(self, audio: AudioSource, **context: str) -> JudgeResult:
        """Judge one clip; ``context``: ``question`` or ``profile``/``scene``/``traits``, ``clip_id``."""
        return self.judge_item(make_item(audio, **context))
