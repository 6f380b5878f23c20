"""What a rating campaign holds, as plain values shared by its store, page, statistics and export.

A campaign rates :class:`CampaignClip` s of one config. Each rater's answers to one clip are an
:class:`Answers` (validated by :mod:`speech_drame.campaign.forms`); the store keeps each as a
:class:`StoredRating`, in order of arrival.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..schema import Config

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
