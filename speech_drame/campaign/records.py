"""What a rating campaign holds, as plain values shared by its store, page, statistics and export.

A campaign rates :class:`CampaignClip` s of one config. Each rater's answers to one clip are an
:class:`Answers` (validated by :mod:`speech_drame.campaign.forms`); the store keeps each as a
:class:`StoredRating`, in order of arrival.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..schema import NOT_APPLICABLE, Config

TaskKind = Literal["regular", "repeat", "gold"]
TASK_KINDS: tuple[TaskKind, ...] = ("regular", "repeat", "gold")


@dataclass(frozen=True)
class CampaignClip:
    """One clip to rate.

    ``context``: the texts raters read, by short name (``question``; ``profile``, ``scene``,
    ``traits``; :data:`speech_drame.schema.CONTEXTS`). ``extra``: release text fields that are
    not context (realism ``transcript``, ``char_age``, ``data_source``), exported as they are.
    ``gold``: for an attention-check clip, what a careful rater answers (``content_pass``: a
    bool; a dimension: ``[low, high]``); ``None`` for a clip of the campaign proper.
    """

    id: str
    position: int
    audio_path: str
    context: dict[str, str]
    extra: dict[str, str] = field(default_factory=dict)
    gold: dict[str, Any] | None = None


@dataclass(frozen=True)
class Answers:
    """One rater's validated answers to one clip.

    ``scores`` holds every rated dimension of the config: an int 1..5, or ``None`` when the
    dimension was not rated, either because the rubric gated it (listed in ``gated``, exported
    as ``"N/A"``) or because the rater failed the clip on Content Pass (exported as null).
    ``content_pass`` is ``None`` for realism. ``comments``: archetype ``{dim}_comment`` fields or
    realism ``comments``; empty text when the rater wrote none.
    """

    config: Config
    scores: dict[str, int | None]
    content_pass: bool | None = None
    gated: frozenset[str] = frozenset()
    confidence: int | None = None
    comments: dict[str, str] = field(default_factory=dict)

    def release_value(self, dim: str) -> int | str | None:
        """The release's value of ``dim``: the score, ``"N/A"`` when gated, else null."""
        return NOT_APPLICABLE if dim in self.gated else self.scores.get(dim)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "scores": self.scores,
            "content_pass": self.content_pass,
            "gated": sorted(self.gated),
            "confidence": self.confidence,
            "comments": self.comments,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Answers:
        return cls(
            obj["config"],
            dict(obj["scores"]),
            obj["content_pass"],
            frozenset(obj["gated"]),
            obj["confidence"],
            dict(obj["comments"]),
        )


@dataclass(frozen=True)
class StoredRating:
    """A rating as stored: ``rating_id`` gives the order of arrival."""

    rating_id: int
    rater: str
    clip_id: str
    kind: TaskKind
    answers: Answers
    submitted_at: float  # Unix seconds


@dataclass(frozen=True)
class AttachedScorer:
    """A scorer attached to a campaign (``campaign attach``): its ``name`` there, its ``id``
    (:attr:`speech_drame.scorers.base.Scorer.id`: the cache key of its results), the ``spec``
    it was loaded from, its description, the 1..5 ``dimensions`` it scores and whether it gives
    a Content Pass probability."""

    name: str
    scorer_id: str
    spec: str
    description: str
    dimensions: tuple[str, ...]
    content_pass: bool
    attached_at: float  # Unix seconds


@dataclass(frozen=True)
class StoredScore:
    """One clip's result of one scorer as stored: ``result`` is
    :meth:`~speech_drame.scorers.base.ClipScores.to_dict` without the id (for a failure its
    ``error`` and ``error_kind``); ``error_kind`` is ``None`` for a scored clip."""

    clip_id: str
    result: dict[str, Any]
    error_kind: str | None
    scored_at: float  # Unix seconds

    @property
    def ok(self) -> bool:
        return self.error_kind is None
