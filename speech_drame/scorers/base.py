"""The scorer contract: what every evaluator takes and gives, whatever model is behind it.

A :class:`Scorer` rates clips of one config (``archetype`` or ``realism``) on that config's
dimensions. It takes :class:`ClipInput` items (audio plus the context texts by their short
names, :data:`speech_drame.schema.CONTEXTS`) and returns one :class:`ClipScores` per clip, in
order. Its ``id`` changes whenever its weights or a setting that changes its outputs change,
so stored results of one scorer are never taken for another's.

A clip that cannot be scored comes back with ``error`` set and no scores; nothing is ever put
in place of a score. ``error_kind`` says whether scoring it again could help: ``"input"``
(unreadable audio, no speech, an undefined feature, a missing context text: the same answer
every time) or ``"model"`` (out of memory, a runtime error of the model, an endpoint that
failed: worth retrying).

Where a scorer reads its scores from a model's next-token distribution, ``label_mass`` says
how much of that distribution fell on the labels before they were renormalised. A (clip,
dimension) whose label mass is below a threshold (:data:`MIN_LABEL_MASS` by default) is
flagged unreliable (:func:`unreliable_dimensions`, the one rule every output applies to the
stored mass): its score stays, and the flag is shown and counted beside it.

Scorers are named on every command line and in :func:`speech_drame.scorers.specs.load_scorer`
by a spec: ``lite[:PATH]``, ``drame-eval:PATH_OR_HUB_ID`` or ``judge:MODEL@URL``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..audio import Audio, AudioFacts, AudioSource
from ..errors import SetupError
from ..schema import CONTENT_PASS, SCORE_MAX, SCORE_MIN, Config

ErrorKind = Literal["input", "model"]
N_LEVELS = SCORE_MAX - SCORE_MIN + 1  # a distribution holds the probabilities of 1..5
MIN_LABEL_MASS = 0.5  # below this label mass a (clip, dimension) is flagged unreliable


def check_min_label_mass(threshold: float) -> float:
    """``threshold`` if it is a probability, else ``ValueError`` naming it."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"min_label_mass must be in [0, 1], got {threshold}")
    return threshold


def unreliable_dimensions(label_mass: Mapping[str, float], threshold: float) -> list[str]:
    """The dimensions of ``label_mass`` (dimension -> mass) whose mass is below ``threshold``.

    Example:
        >>> unreliable_dimensions({"audio_quality": 0.92, "appropriateness": 0.31}, 0.5)
        ['appropriateness']
    """
    return [dim for dim, mass in label_mass.items() if mass < threshold]


class ScorerError(SetupError, RuntimeError):
    """A scorer that cannot be used (missing, malformed, for another config, bad spec)."""


@dataclass(frozen=True)
class ClipInput:
    """One clip to score: its id, its audio (a file, encoded bytes, ``(samples, rate)`` or a
    loaded :class:`Audio`) and the context texts by short name (``question``; or ``profile``,
    ``scene``, ``traits``)."""

    id: str
    audio: AudioSource | Audio
    context: Mapping[str, str]


@dataclass
class ClipScores:
    """One clip's result.

    ``scores``: per rated dimension the expected score on 1..5; ``distributions``: its
    probabilities of 1..5 (for a chat judge, the share of runs that answered each);
    ``label_mass``: where the model has one, the share of its next-token probability that fell
    on the labels before renormalising (see :meth:`unreliable`); ``decoding``: how the scores
    were read from that distribution, where the scorer has a choice (DRAME-Eval:
    ``expectation`` or ``official``); ``content_pass``: archetype's probability that the
    content passes (``None`` when the scorer has no Content Pass); ``transcript``: what an ASR
    heard, when the scorer runs one; ``language``: the spoken language its ASR identified
    (``zh``, ``en``, ``other`` or ``unknown``; see :mod:`speech_drame.languages`) and
    ``language_probability`` how sure it was, when the scorer runs one; ``audio``: what reading
    the clip measured and did (the 30 s cut, peak, gain); ``judgement``: for a chat judge, its
    :class:`~speech_drame.judges.JudgeResult` (every request behind the scores, failed ones
    too; not in :meth:`to_dict`).
    """

    id: str
    scores: dict[str, float] = field(default_factory=dict)
    distributions: dict[str, list[float]] = field(default_factory=dict)
    label_mass: dict[str, float] = field(default_factory=dict)
    decoding: str | None = None
    content_pass: float | None = None
    transcript: str | None = None
    language: str | None = None
    language_probability: float | None = None
    audio: AudioFacts | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    judgement: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def unreliable(self, threshold: float = MIN_LABEL_MASS) -> list[str]:
        """The dimensions (Content Pass included) whose label mass is below ``threshold``;
        none for a scorer without label mass."""
        return unreliable_dimensions(self.label_mass, threshold)

    @classmethod
    def failure(
        cls, clip_id: str, error: str, kind: ErrorKind, audio: AudioFacts | None = None
    ) -> ClipScores:
        return cls(str(clip_id), error=error, error_kind=kind, audio=audio)

    def to_dict(self, min_label_mass: float | None = None) -> dict[str, Any]:
        """A JSON-ready dict; with ``min_label_mass``, a scored clip with label mass also
        lists its ``unreliable`` dimensions (:meth:`unreliable`), possibly none."""
        out: dict[str, Any] = {"id": self.id}
        if not self.ok:
            out.update(error=self.error, error_kind=self.error_kind)
        else:
            if self.content_pass is not None:
                out[CONTENT_PASS] = self.content_pass
            out.update(scores=self.scores, distributions=self.distributions)
            if self.label_mass:
                out["label_mass"] = self.label_mass
                if min_label_mass is not None:
                    out["unreliable"] = self.unreliable(min_label_mass)
            if self.decoding is not None:
                out["decoding"] = self.decoding
            if self.transcript is not None:
                out["transcript"] = self.transcript
            if self.language is not None:
                out.update(language=self.language, language_probability=self.language_probability)
        if self.audio is not None:
            out["audio"] = self.audio.to_dict()
        return out


@runtime_checkable
class Scorer(Protocol):
    """An evaluator of one config.

    ``dimensions``: the rated 1..5 dimensions it scores (Content Pass is ``content_pass``);
    ``id``: a short fingerprint of its weights and output-changing settings; ``description``:
    what it is, for a person (reports, the Space); ``training_data``: its record of what it
    learned from (``dataset``, ``split``, ``n_train``, ``labels_are_synthetic``, ...), or
    ``None`` when it has none (a zero-shot judge). ``score`` reads ``clips`` lazily and works in
    batches of ``batch_size`` clips.
    """

    config: Config
    dimensions: tuple[str, ...]
    content_pass: bool
    id: str
    description: str
    training_data: Mapping[str, Any] | None
    batch_size: int

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]: ...


def iter_scores(
    scorer: Scorer, clips: Iterable[ClipInput], *, progress: bool = False
) -> Iterator[ClipScores]:
    """``scorer``'s results in order: each as soon as it is ready from a scorer that streams
    (one with an ``iter_scores`` method, the LiteScorer), else all after :meth:`Scorer.score`."""
    stream = getattr(scorer, "iter_scores", None)
    yield from (stream if stream is not None else scorer.score)(clips, progress=progress)


SYNTHETIC_LABELS_WARNING = (
    "this scorer learned from synthetic proxy labels (simulated annotators, not human ratings): "
    "its scores show the pipeline working, not agreement with people"
)


def synthetic_labels_warning(scorer: Scorer) -> str | None:
    """The warning every output of ``scorer`` carries beside its numbers when its record of
    its training data says the labels were synthetic (the demo corpus); ``None`` otherwise."""
    info = scorer.training_data or {}
    return SYNTHETIC_LABELS_WARNING if info.get("labels_are_synthetic") is True else None
