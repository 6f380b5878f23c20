"""Aspect ratings from any archetype scorer (:class:`~speech_drame.scorers.base.Scorer`).

A LiteScorer, a DRAME-Eval evaluator or a chat judge rates a response as an archetype clip
whose role-play prompt (the ``question`` context) is the query text narrowed to one verdict
unit (:meth:`.queries.Query.unit_prompt`), so each target dimension of a query is rated on its
own. Its outputs are mapped to the paper's 0-3 aspects:

- content: ``3 x`` the Content Pass probability;
- fluency and naturalness: the mean of audio quality and human likeness, 1-5 -> 0-3;
- paralinguistics: appropriateness (how well the delivery fits the instruction), 1-5 -> 0-3.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from speech_drame.schema import SCORE_MAX, SCORE_MIN
from speech_drame.scorers.base import ClipInput, ClipScores, Scorer, ScorerError

from .queries import Query

NEEDED: tuple[str, ...] = ("audio_quality", "human_likeness", "appropriateness")


def _to_0_3(score: float) -> float:
    return 3.0 * (score - SCORE_MIN) / (SCORE_MAX - SCORE_MIN)


def clip_aspects(clip: ClipScores) -> dict[str, float]:
    """The 0-3 aspects of one scored clip.

    Raises:
        ValueError: a clip that was not scored, or lacks Content Pass or a needed dimension.
    """
    if not clip.ok:
        raise ValueError(clip.error)
    missing = [d for d in NEEDED if d not in clip.scores]
    if clip.content_pass is None or missing:
        raise ValueError(f"{clip.id}: no score for {', '.join(missing or ['Content Pass'])}")
    s = clip.scores
    return {
        "content": 3.0 * float(clip.content_pass),
        "fluency": _to_0_3((s["audio_quality"] + s["human_likeness"]) / 2),
        "paralinguistics": _to_0_3(s["appropriateness"]),
    }


@dataclass(frozen=True)
class RatedResponse:
    """A response's aspects and the seconds of its audio the scorer judged."""

    aspects: dict[str, float]
    seconds: float | None


class ScorerAspects:
    """Rates responses with ``scorer`` (archetype, with Content Pass and :data:`NEEDED`).

    :meth:`prepare` scores many responses in the scorer's batches; :meth:`rate` reads those
    results (scoring a response not prepared on its own). A response the scorer could not
    score raises ``ValueError`` with the scorer's reason.

    Raises:
        ScorerError: a scorer of another config, or without Content Pass or a needed dimension.
    """

    def __init__(self, scorer: Scorer):
        missing = [d for d in NEEDED if d not in scorer.dimensions]
        if scorer.config != "archetype" or missing or not scorer.content_pass:
            raise ScorerError(
                "the paraling comparator needs an archetype scorer with Content Pass and "
                f"{', '.join(NEEDED)}; {scorer.description} has config {scorer.config}, "
                f"dimensions {', '.join(scorer.dimensions)}"
                + ("" if scorer.content_pass else " and no Content Pass")
            )
        self.scorer = scorer
        self._scored: dict[tuple[str, str], ClipScores] = {}

    def prepare(self, responses: Iterable[tuple[Query, str]], *, progress: bool = False) -> None:
        """Score every ``(query, audio path)`` for every verdict unit of the query (each unit's
        prompt once), in one pass of the scorer."""
        todo = {(str(a), p): ClipInput(str(a), a, {"question": p})
                for q, a in responses for p in dict.fromkeys(map(q.unit_prompt, q.units))}  # fmt: skip
        todo = {k: c for k, c in todo.items() if k not in self._scored}
        if todo:
            results = self.scorer.score(list(todo.values()), progress=progress)
            self._scored.update(zip(todo, results, strict=True))

    def rate(self, query: Query, unit: tuple[str, ...], audio: str) -> RatedResponse:
        """The aspects of the response ``audio`` to ``query`` for the verdict ``unit``."""
        key = (str(audio), query.unit_prompt(unit))
        if key not in self._scored:
            self.prepare([(query, audio)])
        clip = self._scored[key]
        return RatedResponse(clip_aspects(clip), clip.audio.seconds if clip.audio else None)
