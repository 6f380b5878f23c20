"""``judge:MODEL@URL``: a zero/few-shot chat judge (:mod:`speech_drame.judges`) as a scorer.

The JSON mode (:class:`~speech_drame.judges.ChatJudge`) averages ``runs`` answers; the
distribution of a dimension is the share of valid runs answering each of 1..5 (an answer
between two levels is split between them, so the distribution's expectation is the mean
answer). The logprob mode (:class:`~speech_drame.judges.LogprobJudge`) gives the label
distribution the endpoint returned, and Content Pass the probability of the pass label. A clip
without a score on every dimension is a failure of kind ``"model"`` (the endpoint or its answers
failed; a rerun asks again), unreadable audio one of kind ``"input"``. With
``failed_as="1"`` (the official scoring) unusable answers count as 1 instead, so every clip
the endpoint was asked about gets scores; the description says which mode is used.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..audio import Audio, AudioError
from ..labels import DEFAULT_LABEL_POLICY
from ..schema import CONTENT_PASS, SCORE_MIN, Config, check_config, dimensions
from .base import N_LEVELS, ClipInput, ClipScores


@dataclass(frozen=True)
class JudgeOptions:
    """Settings of a chat judge (see ``speech-drame judge --help``)."""

    runs: int = 5
    temperature: float = 1.0
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int = 20
    rubric: str | None = None  # None: the built-in rubric; "": no rubric; else the user's text
    shots: int = 0
    exemplars: str = "random"  # how exemplars are drawn (judges.EXEMPLAR_STRATEGIES)
    train_dataset: str | None = None  # built dataset folder the few-shot exemplars come from
    exemplar_seed: int = 0
    label_policy: str = DEFAULT_LABEL_POLICY  # how null ratings enter the exemplars' gold
    failed_as: str = "skip"  # "skip" or "1" (judges.FAILED_AS)
    timeout: float = 120.0
    max_retries: int = 5
    response_cache: str | None = None


def answer_distribution(values: Sequence[float]) -> list[float]:
    """Shares of 1..5 among ``values``; a value between two levels is split between them.

    Example:
        >>> answer_distribution([4, 4, 3.5])
        [0.0, 0.0, 0.16666666666666666, 0.8333333333333333, 0.0]
    """
    out = [0.0] * N_LEVELS
    for v in values:
        low = min(math.floor(v), SCORE_MIN + N_LEVELS - 2)
        frac = v - low
        out[low - SCORE_MIN] += (1 - frac) / len(values)
        out[low - SCORE_MIN + 1] += frac / len(values)
    return out


def describe(options: JudgeOptions) -> str:
    """How a judge with ``options`` asks and counts, in one line."""
    o = options
    mode = "logprob" if o.logprobs else f"JSON, mean of {o.runs} runs"
    shots = (
        f"{o.shots}-shot, {o.exemplars} exemplars, {o.label_policy} labels"
        if o.shots
        else "zero-shot"
    )
    rubric = {None: "built-in rubric", "": "no rubric"}.get(o.rubric, "user rubric")
    failed = "unusable answers count as 1" if o.failed_as == "1" else "unusable answers skipped"
    return f"{mode}, {shots}, {rubric}, {failed}"


class JudgeScorer:
    """A chat judge over an OpenAI-compatible endpoint, as a :class:`~.base.Scorer`."""

    content_pass: bool
    batch_size = 1

    def __init__(
        self,
        model: str | None,
        url: str | None,
        config: Config,
        options: JudgeOptions | None = None,
        *,
        on_retry: Callable[[str], None] | None = None,
    ):
        from ..judges import ChatClient, ChatJudge, ExemplarPool, LogprobJudge

        self.config = check_config(config)
        self.options = o = options or JudgeOptions()
        if o.shots and not o.train_dataset:
            raise ValueError("few-shot judging (shots > 0) needs the train dataset folder")
        self.client = ChatClient(url, model, timeout=o.timeout, max_retries=o.max_retries,
                                 cache_dir=o.response_cache, on_retry=on_retry)  # fmt: skip
        pool = None
        if o.shots:
            pool = ExemplarPool(o.train_dataset, config, o.shots, strategy=o.exemplars,
                                seed=o.exemplar_seed, label_policy=o.label_policy)  # fmt: skip
        exemplars: Any = pool.draw if pool else ()
        if o.logprobs:
            self.judge: Any = LogprobJudge(self.client, config, o.rubric, exemplars,
                                           top_logprobs=o.top_logprobs, failed_as=o.failed_as)  # fmt: skip
        else:
            self.judge = ChatJudge(self.client, config, o.rubric, exemplars, runs=o.runs,
                                   temperature=o.temperature, max_tokens=o.max_tokens,
                                   failed_as=o.failed_as)  # fmt: skip
        self.dimensions = dimensions(config)
        self.content_pass = config == "archetype"
        settings = {**asdict(o), "response_cache": None, "rubric": self.judge.rubric,
                    "model": self.client.model, "url": self.client.base_url,
                    "exemplar_ids": pool.ids if pool else []}  # fmt: skip
        digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
        self.id = f"judge-{digest[:16]}"
        self.description = (
            f"chat judge {self.client.model} at {self.client.base_url} ({describe(o)})"
        )
        self.training_data = None

    @property
    def stats(self) -> Any:
        """The request counters of its client so far (:class:`~speech_drame.judges.client.ClientStats`:
        requests, cache hits, corrupt cache entries, ...)."""
        return self.client.stats

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]:
        from tqdm.auto import tqdm

        from ..judges import make_item

        out = []
        for clip in tqdm(clips, desc="judging", unit="clip", disable=not progress):
            try:
                audio = clip.audio
                if isinstance(audio, Audio):  # already read: its 16 kHz samples
                    audio = (audio.samples, audio.sample_rate)
                item = make_item(audio, clip_id=clip.id, **dict(clip.context))
            except AudioError as exc:
                out.append(ClipScores.failure(clip.id, str(exc), "input"))
                continue
            try:
                result = self.judge.judge_item(item)
            except ValueError as exc:  # a context text the judge needs is missing
                out.append(ClipScores.failure(clip.id, f"{clip.id}: {exc}", "input"))
                continue
            out.append(self._scores(clip.id, result))
        return out

    def _scores(self, clip_id: str, result: Any) -> ClipScores:
        if not result.ok:
            why = "; ".join(result.reasons) or "no usable answer"
            failure = ClipScores.failure(clip_id, f"{clip_id}: {why}", "model")
            failure.judgement = result
            return failure
        if self.options.logprobs:
            dists = {
                r.dimension: [r.distribution.get(k, 0.0) for k in range(1, N_LEVELS + 1)]
                for r in result.runs
                if r.distribution is not None and r.dimension != CONTENT_PASS
            }
        else:
            answers = [r.answer for r in result.runs if r.answer is not None]
            dists = {d: answer_distribution([a[d] for a in answers]) for d in self.dimensions}
        return ClipScores(
            clip_id,
            scores={d: result.scores[d] for d in self.dimensions},
            distributions=dists,
            content_pass=result.content_pass,
            judgement=result,
        )
