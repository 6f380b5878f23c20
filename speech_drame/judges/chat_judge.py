"""Zero/few-shot audio-LLM judges over an OpenAI-compatible endpoint (Speech-DRAME, App. L.1).

:class:`ChatJudge` asks for every dimension at once as minified JSON and averages ``runs``
separate requests (5 by default, as for the paper's commercial models). :class:`LogprobJudge`
asks for one dimension at a time and turns the log-probabilities of the label tokens into a
score (the paper's mode for open models): the expectation over 1..5, and for archetype's
Content Pass the probability of the pass label ``1`` against the reject label ``0``.

Few-shot exemplars are a fixed list, or a function ``(clip key, run) -> exemplars`` such as
:meth:`.exemplars.ExemplarPool.draw` that draws them anew for every clip and run; the clip key
is the clip's id (or a hash of its audio when it has none).

An answer that cannot be used (:data:`FAILED_AS`) is, by default (``"skip"``), a counted failure
with its raw text kept and no score in its place; it is never stored in the response cache (a
rerun asks again). ``failed_as="1"`` is the official scoring, for comparing with the paper's
tables: a failed run, or a key missing or invalid in an answer, counts as 1 (Content Pass: 1 =
passed, as the official scorer reads it); the run keeps its error and lists what was filled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..audio import AudioSource
from ..labels import FILL_SCORE
from ..prompts import scored_dimensions
from ..schema import CONTENT_PASS, Config, check_config, dimensions
from .client import ChatClient, JudgeRequestError
from .parse import (
    AnswerError,
    expected_score,
    filled_json_answer,
    label_distribution,
    message_text,
    parse_json_answer,
)
from .prompt import (
    DEFAULT_SYSTEM,
    JudgeItem,
    build_dimension_messages,
    build_messages,
    dimension_labels,
    resolve_rubric,
    wav_base64,
)

FAILED_AS: dict[str, str] = {
    "skip": "an unusable answer is a counted failure and gives no score",
    "1": "an unusable answer, or a key missing from an answer, counts as 1 "
    "(the official scoring of the paper's zero/few-shot tables)",
}
Exemplars = Sequence[JudgeItem] | Callable[[str, int], Sequence[JudgeItem]]


def check_failed_as(value: str) -> str:
    """``value`` if it is a known :data:`FAILED_AS` mode; ``ValueError`` otherwise."""
    if value not in FAILED_AS:
        raise ValueError(f"failed_as must be one of {', '.join(FAILED_AS)}, got {value!r}")
    return value


@dataclass
class RunOutput:
    """One request: its raw text, what was read from it, or why it failed.

    ``filled`` lists the keys counted as 1 under ``failed_as="1"`` (the run keeps its error);
    ``exemplars`` the ids of the exemplars shown.
    """

    run: int
    dimension: str | None = None  # set in the per-dimension logprob mode
    raw: str | None = None
    answer: dict[str, Any] | None = None
    distribution: dict[int, float] | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    exemplars: list[str] = field(default_factory=list)
    filled: list[str] = field(default_factory=list)


@dataclass
class JudgeResult:
    """Scores of one clip with every run behind them.

    ``scores`` holds the mean over the runs with an answer of each dimension that has one;
    ``content_pass`` (archetype) is the share of those runs answering true (JSON mode) or the
    probability of the pass label (logprob mode). ``failed_as`` says how unusable answers
    were counted.
    """

    clip: str
    config: Config
    failed_as: str = "skip"
    scores: dict[str, float] = field(default_factory=dict)
    content_pass: float | None = None
    runs: list[RunOutput] = field(default_factory=list)

    @property
    def failures(self) -> list[RunOutput]:
        return [r for r in self.runs if r.error is not None]

    @property
    def n_failures(self) -> int:
        return len(self.failures)

    @staticmethod
    def _name(run: RunOutput) -> str:
        return f"run {run.run}{f' ({run.dimension})' if run.dimension else ''}"

    @property
    def reasons(self) -> list[str]:
        return [f"{self._name(r)}: {r.error}" for r in self.failures]

    @property
    def filled(self) -> list[str]:
        """One line per run with keys counted as 1, e.g. ``run 2: human_likeness``."""
        return [f"{self._name(r)}: {', '.join(r.filled)}" for r in self.runs if r.filled]

    @property
    def ok(self) -> bool:
        """Every dimension (and archetype's Content Pass) has a score."""
        has_pass = self.config != "archetype" or self.content_pass is not None
        return has_pass and all(d in self.scores for d in dimensions(self.config))

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
            "failed_as": self.failed_as,
            "filled": self.filled,
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


def clip_key(item: JudgeItem) -> str:
    """What seeds a clip's exemplar draws: its id, or a hash of its audio when it has none."""
    return item.id or hashlib.sha256(item.audio_b64.encode("ascii")).hexdigest()[:16]


def _exemplar_source(exemplars: Exemplars) -> Callable[[str, int], Sequence[JudgeItem]]:
    if callable(exemplars):
        return exemplars
    fixed = list(exemplars)
    return lambda clip, run: fixed


class ChatJudge:
    """Every dimension per request as minified JSON; the mean of ``runs`` requests.

    Args:
        client: the endpoint.
        config: ``"archetype"`` or ``"realism"``.
        rubric: text put before the answer format; ``None``: the built-in rubric
            (:func:`.prompt.default_rubric`); ``""``: none.
        exemplars: few-shot demonstrations with gold answers, or a function
            ``(clip key, run) -> exemplars`` (see :mod:`.exemplars`).
        runs: separate requests per clip (each its own cache entry).
        temperature: sampling temperature sent with each request.
        max_tokens: answer length limit (``None``: the server's default).
        failed_as: ``"skip"`` or ``"1"`` (:data:`FAILED_AS`).
    """

    def __init__(
        self,
        client: ChatClient,
        config: Config,
        rubric: str | None = None,
        exemplars: Exemplars = (),
        *,
        runs: int = 5,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        failed_as: str = "skip",
        system: str = DEFAULT_SYSTEM,
    ):
        self.config = check_config(config)
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        self.client, self.rubric = client, resolve_rubric(config, rubric)
        self.exemplars = _exemplar_source(exemplars)
        self.runs, self.temperature = runs, temperature
        self.max_tokens, self.system = max_tokens, system
        self.failed_as = check_failed_as(failed_as)

    def payload(self, item: JudgeItem, exemplars: Sequence[JudgeItem] = ()) -> dict[str, Any]:
        """The request body (without ``model``) for ``item`` shown after ``exemplars``."""
        _check_context(item, self.config)
        messages = build_messages(self.config, self.rubric, item, exemplars, self.system)
        payload: dict[str, Any] = {"messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    def read(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The answer text and its scores; :class:`AnswerError` if it cannot be used."""
        raw = message_text(body)
        return raw, parse_json_answer(raw, self.config)

    def judge_item(self, item: JudgeItem) -> JudgeResult:
        result = JudgeResult(item.id, self.config, self.failed_as)
        key = clip_key(item)
        for run in range(self.runs):
            shots = list(self.exemplars(key, run))
            out = RunOutput(run, exemplars=[e.id for e in shots])
            try:
                response = self.client.complete(
                    self.payload(item, shots), run=run, usable=self.read
                )
                out.cached, out.attempts = response.cached, response.attempts
                out.raw = message_text(response.body)
                out.answer = parse_json_answer(out.raw, self.config)
            except JudgeRequestError as exc:
                out.error = f"request failed: {exc.reason}"
            except AnswerError as exc:
                out.error = exc.reason
            if out.error is not None and self.failed_as == "1":
                out.answer, out.filled = filled_json_answer(out.raw, self.config)
            result.runs.append(out)
        answers = [r.answer for r in result.runs if r.answer is not None]
        if answers:
            for dim in dimensions(self.config):
                result.scores[dim] = sum(a[dim] for a in answers) / len(answers)
            if self.config == "archetype":
                result.content_pass = sum(a[CONTENT_PASS] for a in answers) / len(answers)
        return result

    def judge(self, audio: AudioSource, **context: str) -> JudgeResult:
        """Judge one clip; ``context``: ``question`` or ``profile``/``scene``/``traits``, ``clip_id``."""
        return self.judge_item(make_item(audio, **context))


class LogprobJudge:
    """One request per dimension (archetype: Content Pass too) at temperature 0; a 1..5
    dimension scores the expectation over its label tokens, Content Pass the probability of
    the pass label ``1`` against the reject label ``0``.

    The endpoint must return ``logprobs`` with ``top_logprobs`` (as vLLM and other
    OpenAI-style servers of open models do). The exemplars of a clip (run 0 of its draws) are
    the same in every dimension's request. ``rubric`` and ``failed_as`` as for
    :class:`ChatJudge`; a filled dimension gets all its probability on 1.
    """

    def __init__(
        self,
        client: ChatClient,
        config: Config,
        rubric: str | None = None,
        exemplars: Exemplars = (),
        *,
        top_logprobs: int = 20,
        max_tokens: int = 8,
        failed_as: str = "skip",
        system: str = DEFAULT_SYSTEM,
    ):
        self.config = check_config(config)
        if not 1 <= top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 1..20, got {top_logprobs}")
        self.client, self.rubric = client, resolve_rubric(config, rubric)
        self.exemplars = _exemplar_source(exemplars)
        self.top_logprobs, self.max_tokens, self.system = top_logprobs, max_tokens, system
        self.failed_as = check_failed_as(failed_as)

    def payload(
        self, item: JudgeItem, dimension: str, exemplars: Sequence[JudgeItem] = ()
    ) -> dict[str, Any]:
        _check_context(item, self.config)
        messages = build_dimension_messages(
            self.config, self.rubric, item, dimension, exemplars, self.system
        )
        return {
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }

    def judge_item(self, item: JudgeItem) -> JudgeResult:
        result = JudgeResult(item.id, self.config, self.failed_as)
        shots = list(self.exemplars(clip_key(item), 0))
        for dim in scored_dimensions(self.config):
            labels = dimension_labels(dim)
            out = RunOutput(0, dimension=dim, exemplars=[e.id for e in shots])
            try:
                response = self.client.complete(
                    self.payload(item, dim, shots),
                    usable=lambda body, labels=labels: label_distribution(body, labels),
                )
                out.cached, out.attempts = response.cached, response.attempts
                out.raw = message_text(response.body)
                out.distribution = label_distribution(response.body, labels)
            except JudgeRequestError as exc:
                out.error = f"request failed: {exc.reason}"
            except AnswerError as exc:
                out.error = exc.reason
            if out.error is not None and self.failed_as == "1":
                out.distribution, out.filled = {FILL_SCORE: 1.0}, [dim]
            if out.distribution is not None:
                if dim == CONTENT_PASS:
                    result.content_pass = out.distribution.get(1, 0.0)
                else:
                    result.scores[dim] = expected_score(out.distribution)
            result.runs.append(out)
        return result

    def judge(self, audio: AudioSource, **context: str) -> JudgeResult:
        """Judge one clip; ``context``: ``question`` or ``profile``/``scene``/``traits``, ``clip_id``."""
        return self.judge_item(make_item(audio, **context))
