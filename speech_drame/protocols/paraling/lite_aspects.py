"""Aspect ratings from the embedded default scorer (:class:`~speech_drame.scorers.lite.LiteScorer`).

An archetype-mode LiteScorer rates a clip against its instruction (the query text, given to
the blueprint as the ``question`` context). Its outputs are mapped to the paper's 0-3 aspects:

- content: ``3 x`` the Content Pass probability;
- fluency and naturalness: the mean of audio quality and human likeness, 1-5 -> 0-3;
- paralinguistics: appropriateness (how well the delivery fits the instruction), 1-5 -> 0-3.
"""

from __future__ import annotations

from speech_drame.features.blueprint import Blueprint
from speech_drame.schema import SCORE_MAX, SCORE_MIN

from .queries import Query

NEEDED: tuple[str, ...] = ("audio_quality", "human_likeness", "appropriateness")


def _to_0_3(score: float) -> float:
    return 3.0 * (score - SCORE_MIN) / (SCORE_MAX - SCORE_MIN)


class LiteAspectScorer:
    """Callable ``(query, blueprint) -> {content, fluency, paralinguistics}`` over a LiteScorer."""

    def __init__(self, scorer):
        missing = [d for d in NEEDED if d not in scorer.dimensions]
        if scorer.mode != "archetype" or missing or not scorer.content_pass:
            raise ValueError(
                "the paraling comparator needs an archetype LiteScorer with Content Pass and "
                f"{', '.join(NEEDED)} (got mode {scorer.mode!r}, dimensions {scorer.dimensions})"
            )
        self.scorer = scorer

    def __call__(self, query: Query, bp: Blueprint) -> dict[str, float]:
        (clip,) = self.scorer.score_blueprints([bp])
        s = clip.scores
        return {
            "content": 3.0 * float(clip.content_pass),
            "fluency": _to_0_3((s["audio_quality"] + s["human_likeness"]) / 2),
            "paralinguistics": _to_0_3(s["appropriateness"]),
        }
