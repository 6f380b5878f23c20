"""TRACE judges: per-dimension typed-tie decisions from two responses' blueprints.

:class:`RuleJudge` decides offline from blueprint numbers; :class:`ChatTraceJudge` sends the
textual blueprints to a text LLM over an OpenAI-compatible endpoint and reads per-dimension
labels and reasons from structured JSON. Both follow the HCoT order: first decide whether each
response is acceptable on the dimension, then compare only if both are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from speech_drame.judges.client import ChatClient
from speech_drame.text_metrics import count_words

from ..chat_answers import VerdictError, ask_json
from .blueprint import render_text
from .labels import DIMENSIONS, parse_label


@dataclass(frozen=True)
class DimensionDecision:
    label: str
    reason: str


class TraceJudge(Protocol):
    """Per-dimension decisions for one pair; raises :class:`VerdictError` on failure."""

    name: str
    description: str  # what the judge is, and whether it stands in for the released LLM judge

    def decide(
        self, instruction: str, first: Mapping[str, Any], second: Mapping[str, Any]
    ) -> tuple[dict[str, DimensionDecision], str | None]:
        """Decisions by dimension and the raw answer (``None`` for offline judges).

        A dimension may be absent (a judge that gave no decision on it); the run's
        missing-content and missing-other rules then decide the pair.
        """
        ...


def typed_decision(ok1: bool, ok2: bool, score1: float, score2: float, margin: float) -> str:
    """HCoT order: acceptability first, then a comparison (with a tie margin) only if both pass."""
    if not (ok1 or ok2):
        return "both_bad"
    if ok1 != ok2:
        return "1" if ok1 else "2"
    if abs(score1 - score2) <= margin:
        return "both_good"
    return "1" if score1 > score2 else "2"


@dataclass(frozen=True)
class RuleThresholds:
    """Acceptability floors and tie margins of :class:`RuleJudge`.

    Content: at least ``min_words`` recognised (:func:`~speech_drame.text_metrics.count_words`:
    a Mandarin character is a word), Whisper no-speech probability below ``max_no_speech`` and,
    when the blueprint carries it, a USE-multilingual similarity to the request of at least
    ``min_relevance``; compared by that similarity (else ASR confidence).
    Voice quality: DNSMOS OVRL of at least ``min_ovrl[variant]`` for the P.835 model the
    blueprints name (``dnsmos_variant``; both responses must use the same); compared by OVRL.
    Paralinguistics: a word rate within ``words_per_s`` and an F0 spread of at least
    ``min_f0_std_st`` semitones (not monotone); compared by expressiveness, the F0 spread in
    semitones plus the loudness spread in dB / 3.
    The defaults were set by looking at the demo set's piper voice (plain OVRL: clean 2.0-3.1,
    noisy 1.5-1.8; lively F0 spread 3-9 st, flat 1-1.7 st); they are not fitted to human labels.
    The personalised model scores higher: white noise at 5 dB SNR gives OVRL 1.7-2.3 (demo
    clips and five LibriVox recordings), clean LibriVox speech 2.7-4.2 and the demo's flat
    clean clips 3.2-3.7, so its floor, 2.5, sits in that gap. It also scores the demo's lively
    clips (pitch range widened by WORLD resynthesis) low, 1.5-2.1, as it does noisy speech.
    """

    min_words: int = 1
    max_no_speech: float = 0.6
    min_relevance: float = 0.4
    content_margin: float = 0.15
    min_ovrl: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({"plain": 1.9, "personalised": 2.5})
    )
    ovrl_margin: float = 0.3
    words_per_s: tuple[float, float] = (1.0, 6.0)
    min_f0_std_st: float = 2.0
    expressiveness_margin: float = 3.0


class RuleJudge:
    """Offline TRACE judge: thresholds and margins over blueprint numbers (no model call)."""

    name = "rule"
    description = (
        "STAND-IN: fixed thresholds and margins over the blueprint numbers, not the released "
        "TRACE LLM judge"
    )

    def __init__(self, thresholds: RuleThresholds | None = None):
        self.t = thresholds or RuleThresholds()

    def _content(self, bp: Mapping[str, Any]) -> tuple[bool, float]:
        c = bp["content"]
        ok = count_words(c["transcript"]) >= self.t.min_words
        ok = ok and c["no_speech_prob"] < self.t.max_no_speech
        relevance = c.get("relevance")
        if relevance is None:
            return ok, c["asr_avg_logprob"]
        return ok and relevance >= self.t.min_relevance, relevance

    def _para(self, bp: Mapping[str, Any]) -> tuple[bool, float]:
        p = bp["paralinguistics"]
        lo, hi = self.t.words_per_s
        ok = lo <= p["words_per_s"] <= hi and p["f0_std_st"] >= self.t.min_f0_std_st
        return ok, p["f0_std_st"] + p["loudness_std_db"] / 3.0

    def _ovrl_floor(self, first: Mapping[str, Any], second: Mapping[str, Any]) -> float:
        """``min_ovrl`` of the DNSMOS variant both blueprints name.

        Raises:
            ValueError: a blueprint without ``dnsmos_variant``, two different variants, or a
                variant without a floor.
        """
        variants = {bp["voice_quality"].get("dnsmos_variant") for bp in (first, second)}
        if None in variants or len(variants) != 1:
            raise ValueError(
                f"the rule judge needs both blueprints scored by one DNSMOS variant "
                f"(voice_quality.dnsmos_variant), got {sorted(map(str, variants))}"
            )
        (variant,) = variants
        if variant not in self.t.min_ovrl:
            raise ValueError(f"no min_ovrl for DNSMOS variant {variant!r}")
        return self.t.min_ovrl[variant]

    def decide(
        self, instruction: str, first: Mapping[str, Any], second: Mapping[str, Any]
    ) -> tuple[dict[str, DimensionDecision], None]:
        t = self.t
        (c1, s1), (c2, s2) = self._content(first), self._content(second)
        o1 = first["voice_quality"]["dnsmos_ovrl"]
        o2 = second["voice_quality"]["dnsmos_ovrl"]
        floor = self._ovrl_floor(first, second)
        (p1, e1), (p2, e2) = self._para(first), self._para(second)
        labels = {
            "content": (typed_decision(c1, c2, s1, s2, t.content_margin), s1, s2, c1, c2),
            "voice_quality": (
                typed_decision(o1 >= floor, o2 >= floor, o1, o2, t.ovrl_margin),
                o1,
                o2,
                o1 >= floor,
                o2 >= floor,
            ),
            "paralinguistics": (
                typed_decision(p1, p2, e1, e2, t.expressiveness_margin),
                e1,
                e2,
                p1,
                p2,
            ),
        }
        return {
            dim: DimensionDecision(
                label,
                f"score {a:.2f} vs {b:.2f}; acceptable: {'yes' if ok1 else 'no'} / "
                f"{'yes' if ok2 else 'no'}",
            )
            for dim, (label, a, b, ok1, ok2) in labels.items()
        }, None


TRACE_SYSTEM = "You are a meticulous evaluator of spoken responses from voice assistants."

TRACE_INSTRUCTIONS = """\
You cannot hear the two spoken responses below. Instead, each comes with a blueprint of \
measurements taken from its audio: what was said (an automatic transcript), how clean the \
voice sounds (DNSMOS, 1-5), and how it was delivered (pitch, loudness, rate, pauses, and \
emotion or accent scores when a model measured them). The blueprint says which cues were not \
measured and when only the start of a long response was analysed.

Judge three dimensions separately, in this order, using only the blueprints and the request:
- content: does the response say what the request asks for, correctly and completely?
- voice_quality: is the voice clean and clear (no noise, distortion or artefacts)?
- paralinguistics: does the delivery (pitch movement, loudness, pace, pauses, implied \
emotion or emphasis) suit the request?

For each dimension, first decide on its own whether each response is acceptable. If neither \
is, answer "both_bad". If only one is, name it ("1" or "2"). Only if both are acceptable, \
compare them: name the better one, or answer "both_good" when neither is clearly better. \
Do not give an overall verdict.

Reply with one JSON object and nothing else:
{"content": {"label": "1|2|both_good|both_bad", "reason": "..."}, \
"voice_quality": {"label": "...", "reason": "..."}, \
"paralinguistics": {"label": "...", "reason": "..."}}"""


def parse_trace_answer(data: Mapping[str, Any], raw: str) -> dict[str, DimensionDecision]:
    """Per-dimension decisions of a TRACE JSON answer.

    A decision that is absent or null (no entry, or no label) is left out of the result:
    :func:`~.labels.fuse_labels` applies the missing-content or missing-other rule to it. An
    entry that is not an object, an invalid label or a reason that is not text fails.
    """
    out: dict[str, DimensionDecision] = {}
    for dim in DIMENSIONS:
        entry = data.get(dim)
        if entry is None or (isinstance(entry, Mapping) and entry.get("label") is None):
            continue
        if not isinstance(entry, Mapping):
            raise VerdictError(f"{dim} is {entry!r}, expected an object with a label", raw)
        try:
            label = parse_label(entry.get("label"), dim)
        except ValueError as exc:
            raise VerdictError(str(exc), raw) from None
        reason = entry.get("reason", "")
        if not isinstance(reason, str):
            raise VerdictError(f"{dim} reason is {reason!r}, expected text", raw)
        out[dim] = DimensionDecision(label, reason)
    return out


class ChatTraceJudge:
    """TRACE's LLM stage: textual blueprints in, per-dimension typed-tie labels out (JSON)."""

    name = "chat"
    description = "a text LLM reading both blueprints (the released TRACE setup)"

    def __init__(
        self,
        client: ChatClient,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        system: str = TRACE_SYSTEM,
    ):
        self.client, self.temperature = client, temperature
        self.max_tokens, self.system = max_tokens, system

    def payload(
        self, instruction: str, first: Mapping[str, Any], second: Mapping[str, Any]
    ) -> dict[str, Any]:
        text = (
            f"{TRACE_INSTRUCTIONS}\n\nRequest given to both systems: {instruction}\n\n"
            f"Response 1 blueprint:\n{render_text(dict(first))}\n\n"
            f"Response 2 blueprint:\n{render_text(dict(second))}"
        )
        payload: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": self.system},
                {"role": "user", "content": text},
            ],
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    def decide(
        self, instruction: str, first: Mapping[str, Any], second: Mapping[str, Any]
    ) -> tuple[dict[str, DimensionDecision], str]:
        raw, data = ask_json(
            self.client, self.payload(instruction, first, second), parse_trace_answer
        )
        return parse_trace_answer(data, raw), raw
