"""Judging one query: presentation order, the chat (audio LLM) judge, the offline comparator.

The baseline's and the candidate's responses are played in an order drawn from a recorded
seed (:func:`presentation_orders`). A judge returns a :class:`PositionVerdict` about the
responses *as played* (first, second): per verdict unit of the query (one per target
dimension, or one for a Dynamic Variation query; :attr:`.queries.Query.units`) the 0-3
ratings of both responses and the winner (0 = tie, 1 = first, 2 = second), with an analysis
that cites timestamps. The protocol maps it back to baseline/candidate. Any unusable verdict
raises :class:`~speech_drame.protocols.chat_answers.VerdictError`: it is counted, never a tie.

Only the chat judge is an audio-LLM judge like the released one; the offline comparator
(blueprint rules or an archetype scorer) is a stand-in that lets the protocol run offline
(``stand_in`` is true and every report says so).
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from speech_drame.audio import SCORED_SECONDS, probe_seconds
from speech_drame.features.blueprint import Blueprint
from speech_drame.judges.client import ChatClient
from speech_drame.scorers.base import Scorer

from ..chat_answers import VerdictError, ask_json
from .queries import Query
from .scorer_aspects import ScorerAspects

ASPECTS: tuple[str, ...] = ("content", "fluency", "paralinguistics")
ASPECT_NAMES: dict[str, dict[str, str]] = {
    "reading": {
        "content": "Content Accuracy",
        "fluency": "Fluency and Naturalness",
        "paralinguistics": "Paralinguistic Compliance",
    },
    "situational_adaptation": {
        "content": "Content Relevance",
        "fluency": "Fluency and Naturalness",
        "paralinguistics": "Paralinguistic Alignment",
    },
}
RATING_MAX = 3
TIMESTAMP = re.compile(r"\d+(?:\.\d+)?\s*(?:s\b|sec|-|–|:\d)")


def aspect_names(task: str) -> dict[str, str]:
    return ASPECT_NAMES["situational_adaptation" if task == "situational_adaptation" else "reading"]


def unit_label(unit: Sequence[str]) -> str:
    """The name of a verdict unit in prompts and answers: its dimension(s)."""
    return " + ".join(unit)


def presentation_orders(query_ids: Sequence[str], candidate: str, seed: int) -> dict[str, bool]:
    """Per query, whether the baseline is played first in the comparison with ``candidate``.

    Reproducible from ``seed`` (and the candidate's name, so candidates get different orders)
    and balanced: exactly ``len(query_ids) // 2`` queries put the baseline first.
    """
    import numpy as np

    ids = sorted(query_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate query ids")
    rng = np.random.default_rng([seed, zlib.crc32(candidate.encode("utf-8"))])
    shuffled = [ids[i] for i in rng.permutation(len(ids))]
    first = set(shuffled[: len(ids) // 2])
    return {q: q in first for q in query_ids}


@dataclass(frozen=True)
class Response:
    """A response as presented: its audio path and (for offline judges) its blueprint."""

    audio: str
    blueprint: Blueprint | None = None


@dataclass(frozen=True)
class UnitVerdict:
    """The verdict on one unit: ratings of the first and second response, and the winner."""

    unit: tuple[str, ...]
    ratings: tuple[dict[str, float], dict[str, float]]  # first, second
    winner: int  # 0 tie, 1 first, 2 second


@dataclass(frozen=True)
class PositionVerdict:
    units: tuple[UnitVerdict, ...]  # in the order of ``query.units``
    analysis: str
    raw: str | None = None

    @property
    def grounded(self) -> bool:
        """The analysis cites at least one timestamp."""
        return bool(TIMESTAMP.search(self.analysis))


class PairJudge(Protocol):
    name: str
    needs_blueprints: bool
    stand_in: bool  # not an audio-LLM judge like the released one
    description: str

    def wants_context(self, query: Query) -> bool:
        """Whether the blueprints of ``query``'s responses need their similarity to it."""
        ...

    def compare(self, query: Query, first: Response, second: Response) -> PositionVerdict: ...


# --- chat judge ----------------------------------------------------------------------------

SYSTEM = (
    "You are an expert listener who compares spoken responses of voice models, above all how "
    "they sound: their paralinguistic delivery."
)

TASK_TEXT = {
    "paralanguage_control": """Each speaker was asked to read a given sentence aloud with the requested paralinguistic \
features (for example an emotion, attitude, pauses, stress, pitch, speed, volume, timbre, or \
an overall speaking style).""",
    "dynamic_variation": """Each speaker was asked to read a given sentence aloud while changing one paralinguistic \
feature inside the utterance, from one value to another (a switch, or a gradual rise or fall). \
Give one verdict on the whole change.""",
    "situational_adaptation": """Each speaker heard a user's spoken message and replied by voice. How the user sounded \
(the user's state below: for example age, emotion, attitude, or a sigh or a laugh) tells the \
situation; a good reply answers what was said and fits its delivery to that state. Unless the \
user asks otherwise, a reply must be in the user's language; a reply in another language \
gets 0.""",
}

CRITERIA = """Judge each response on three aspects:
1. {content}: {content_question}
2. {fluency}: is the speech smooth and human-like in pace, pauses and prosody, without \
glitches, stutters or a mechanical sound?
3. {paralinguistics} (the main criterion): {para_question}
When neither response has a clear flaw in the first two aspects, decide on the third.

Rate each response from 0 to 3 for every target dimension listed below, separately and \
independently (how a response does on one dimension must not change its rating on another):
3 = fully right: the words are right, the speech is natural, and the target is rendered \
clearly, vividly and exactly;
2 = mostly right: the target is clearly audible but falls short in strength, consistency or \
timing somewhere;
1 = major problems: the target is faint, unclear or stiff, or the words or fluency have \
obvious faults;
0 = wrong: the target is absent or reversed, the words are wrong, or the audio is empty or \
unusable.

Fairness rules:
- The order in which the two responses are played was drawn at random: it says nothing about \
their quality. Do not favour the first or the second one.
- Do not favour the longer response, the speaker's gender or the voice's timbre, unless a \
target dimension asks for it.
- Do not reward exaggerated expressiveness that no target dimension asks for.

How to work: first reason about response 1 alone, then about response 2 alone (without \
comparing), pointing to the moments you rely on by their timestamps in the audio (for example \
"0.8-1.6 s"). Then compare the two on each target dimension, saying whether each difference \
is subtle or significant. Finally rate both responses on each dimension and name its winner: \
1 or 2, or 0 for a tie when neither is better."""

QUESTIONS = {
    "reading": (
        "are the spoken words exactly the sentence, nothing missing, added or mispronounced?",
        "are the requested features clearly and correctly rendered, and for a change within "
        "the utterance, does it go in the right direction, at the right time, smoothly?",
    ),
    "situational_adaptation": (
        "does the reply make sense for what the user said and their situation, and help them?",
        "does the delivery (emotion, tone, pace, vocalisations) suit the user's state, with "
        "empathy where it is needed?",
    ),
}

ANSWER_FORMAT = """Reply with one JSON object and nothing else:
{{"response_1": "reasoning about response 1", "response_2": "reasoning about response 2", \
"comparison": "the comparison, dimension by dimension", \
"verdicts": {{{verdicts}}}}}
where "verdicts" has exactly one entry for each target dimension, named as listed."""


def _ratings_block(label: str) -> str:
    return f'"{label}": {{"score_1": 0-3, "score_2": 0-3, "winner": 0|1|2}}'


def _score(block: Mapping[str, Any], key: str, where: str, raw: str) -> int | float:
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise VerdictError(f"{where}.{key} is {value!r}, expected a number 0-{RATING_MAX}", raw)
    if not 0 <= value <= RATING_MAX:
        raise VerdictError(f"{where}.{key} = {value!r} outside 0..{RATING_MAX}", raw)
    return value


def parse_verdict(query: Query, data: Mapping[str, Any], raw: str) -> PositionVerdict:
    """A verdict from the judge's JSON: reasoning on each response, a comparison, and per unit
    of ``query`` two 0-3 scores and a winner in {0, 1, 2}; anything missing or extra fails."""
    parts = []
    for key in ("response_1", "response_2", "comparison"):
        text = data.get(key)
        if not isinstance(text, str) or not text.strip():
            raise VerdictError(f"missing {key!r} reasoning", raw)
        parts.append(f"{key}: {text.strip()}")
    verdicts = data.get("verdicts")
    if not isinstance(verdicts, Mapping):
        raise VerdictError("missing 'verdicts'", raw)
    labels = {unit_label(u): u for u in query.units}
    missing, extra = sorted(set(labels) - set(verdicts)), sorted(set(verdicts) - set(labels))
    if missing or extra:
        raise VerdictError(f"verdicts: missing {missing}, unexpected {extra}", raw)
    units = []
    for label, unit in labels.items():
        block = verdicts[label]
        if not isinstance(block, Mapping):
            raise VerdictError(f"verdicts.{label} is not an object", raw)
        winner = block.get("winner")
        if isinstance(winner, bool) or winner not in (0, 1, 2):
            raise VerdictError(f"verdicts.{label}.winner is {winner!r}, expected 0, 1 or 2", raw)
        first, second = (_score(block, k, f"verdicts.{label}", raw) for k in ("score_1", "score_2"))
        units.append(UnitVerdict(unit, ({"score": first}, {"score": second}), int(winner)))
    return PositionVerdict(tuple(units), "\n".join(parts), raw)


class ChatPairJudge:
    """The audio-LLM judge over an OpenAI-compatible endpoint: both responses as audio, the
    query as text (its audio too with ``query_audio``), 0-3 scores and a winner per unit."""

    name = "chat"
    needs_blueprints = False
    stand_in = False

    def __init__(
        self,
        client: ChatClient,
        *,
        temperature: float = 1.0,
        max_tokens: int | None = None,
        system: str = SYSTEM,
        query_audio: bool = False,
    ):
        self.client, self.temperature = client, temperature
        self.max_tokens, self.system, self.query_audio = max_tokens, system, query_audio
        self.description = (
            f"chat audio-LLM judge {client.model} (temperature {temperature}, query as text"
            + (" and audio)" if query_audio else " only)")
        )

    def wants_context(self, query: Query) -> bool:
        return False

    def prompt(self, query: Query) -> str:
        """The instructions for ``query``: task, criteria, the query as text, its targets and
        the answer format."""
        kind = "situational_adaptation" if query.task == "situational_adaptation" else "reading"
        names = aspect_names(query.task)
        content_q, para_q = QUESTIONS[kind]
        lines = [
            TASK_TEXT[query.task],
            "",
            CRITERIA.format(**names, content_question=content_q, para_question=para_q),
            "",
        ]
        if kind == "reading":
            lines += [f"Instruction given: {query.instruction}", f"Sentence: {query.sentence}"]
        else:
            lines.append(f"What the user said (transcript): {query.instruction}")
        lines.append("Target dimensions:")
        for unit in query.units:
            wanted = "; ".join(f"{d}: {query.targets[d]}" for d in unit if query.targets.get(d))
            lines.append(f"- {unit_label(unit)}" + (f" ({wanted})" if wanted else ""))
        blocks = ", ".join(_ratings_block(unit_label(u)) for u in query.units)
        lines += ["", ANSWER_FORMAT.format(verdicts=blocks)]
        return "\n".join(lines)

    def payload(self, query: Query, first: Response, second: Response) -> dict[str, Any]:
        from speech_drame.judges.prompt import audio_part, text_part, wav_base64

        parts = [text_part(self.prompt(query))]
        if self.query_audio:
            if not query.audio:
                raise ValueError(f"query {query.id}: no query audio to send")
            parts += [text_part("\n\nThe spoken query:"), audio_part(wav_base64(query.audio))]
        for i, response in enumerate((first, second), start=1):
            parts += [text_part(f"\n\nResponse {i}:"), audio_part(wav_base64(response.audio))]
        parts.append(text_part("\n\nReply with the JSON object only."))
        payload: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": self.system},
                {"role": "user", "content": parts},
            ],
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    def compare(self, query: Query, first: Response, second: Response) -> PositionVerdict:
        def check(data: dict[str, Any], raw: str) -> PositionVerdict:
            return parse_verdict(query, data, raw)

        raw, data = ask_json(self.client, self.payload(query, first, second), check)
        return parse_verdict(query, data, raw)


# --- offline comparator --------------------------------------------------------------------

AspectScorer = Callable[[Query, tuple[str, ...], Blueprint], Mapping[str, float]]


class OfflineComparator:
    """A stand-in for the audio-LLM judge: rates both responses 0-3 on each aspect for each
    verdict unit and compares the summed ratings.

    ``scorer`` is either an :data:`AspectScorer` over blueprints (the rule scorer,
    :func:`.rule_scorer.rule_aspect_scores`, whose paralinguistics rating reads the unit's own
    targets) or any archetype :class:`~speech_drame.scorers.base.Scorer` (a LiteScorer,
    DRAME-Eval, a chat judge), whose scores of each response with the unit's prompt
    (:meth:`.queries.Query.unit_prompt`) as its role-play prompt are mapped to the aspects by
    :class:`.scorer_aspects.ScorerAspects`.

    A difference of at most ``margin`` is a tie. ``context`` (blueprint scorers): the queries
    whose response blueprints need their similarity to the query text: ``"situational"`` (what
    the rule scorer reads) or ``"all"``. The analysis names each response's speech span (from
    voice activity; for a :class:`Scorer`, the span it judged) and ratings, so it is grounded in
    timestamps like the chat judge's.
    """

    needs_blueprints: bool
    stand_in = True

    def __init__(
        self, scorer: AspectScorer | Scorer, margin: float = 0.25, context: str = "situational"
    ):
        if margin < 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        if context not in ("situational", "all"):
            raise ValueError(f"context must be 'situational' or 'all', got {context!r}")
        self.margin, self.context = margin, context
        self.aspects: ScorerAspects | None = None
        if isinstance(scorer, Scorer):
            self.aspects = ScorerAspects(scorer)
        self.scorer = scorer
        self.needs_blueprints = self.aspects is None
        self.name = "offline" if self.aspects is None else f"offline:{scorer.id}"
        what = (
            "blueprint rule features" if self.aspects is None else f"archetype scorer {scorer.id}"
        )
        self.description = (
            f"offline comparator on {what}: a STAND-IN for the released audio-LLM judge, "
            "not comparable with the paper's numbers"
        )

    def wants_context(self, query: Query) -> bool:
        return self.context == "all" or query.task == "situational_adaptation"

    def prepare(self, responses: Sequence[tuple[Query, str]]) -> None:
        """Score every ``(query, response audio)`` of a run at once (a :class:`Scorer` works in
        batches); nothing to do for a blueprint scorer."""
        if self.aspects is not None:
            self.aspects.prepare(responses)

    def _rate(self, query: Query, unit: tuple[str, ...], response: Response) -> Mapping[str, float]:
        if self.aspects is not None:
            return self.aspects.rate(query, unit, response.audio).aspects
        if response.blueprint is None:
            raise ValueError(f"offline comparator needs the blueprint of {response.audio}")
        return self.scorer(query, unit, response.blueprint)

    def _span(self, query: Query, response: Response) -> str:
        """What the ratings of ``response`` rest on: its speech span, or the span scored."""
        if self.aspects is not None:
            seconds = self.aspects.rate(query, query.units[0], response.audio).seconds
            if seconds is None:  # a scorer that reports no audio facts judged the first 30 s
                seconds = min(probe_seconds(response.audio), SCORED_SECONDS)
            return f"scored 0.00-{seconds:.2f} s"
        segments = response.blueprint.voice_activity.segments
        return f"speech {segments[0][0]:.2f}-{segments[-1][1]:.2f} s" if segments else "no speech"

    def compare(self, query: Query, first: Response, second: Response) -> PositionVerdict:
        units, notes = [], []
        for unit in query.units:
            ratings = []
            for i, response in enumerate((first, second), start=1):
                try:
                    rated = self._rate(query, unit, response)
                    r = {a: float(rated[a]) for a in ASPECTS}
                except ValueError as exc:  # e.g. a feature the scorer needs is undefined
                    raise VerdictError(f"response {i} ({response.audio}): {exc}") from None
                undefined = [a for a, v in r.items() if not math.isfinite(v)]
                if undefined:
                    raise VerdictError(f"response {i} ({response.audio}): {undefined} undefined")
                ratings.append(r)
            diff = sum(ratings[0].values()) - sum(ratings[1].values())
            winner = 0 if abs(diff) <= self.margin else (1 if diff > 0 else 2)
            units.append(UnitVerdict(unit, (ratings[0], ratings[1]), winner))
            notes.append(
                f"{unit_label(unit)}: "
                + "; ".join(
                    f"response {i} " + ", ".join(f"{a} {r[a]:.2f}" for a in ASPECTS)
                    for i, r in enumerate(ratings, start=1)
                )
            )
        spans = [f"response {i}: {self._span(query, r)}" for i, r in enumerate((first, second), 1)]
        return PositionVerdict(tuple(units), "; ".join(spans + notes))
