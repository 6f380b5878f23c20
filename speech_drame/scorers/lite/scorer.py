"""The LiteScorer as a :class:`~speech_drame.scorers.base.Scorer` (``lite[:PATH]``, also
``lite:ORG/NAME[@REVISION]`` for one pushed to the Hub), like
:class:`~speech_drame.scorers.drame_eval.DrameEvalScorer` and
:class:`~speech_drame.scorers.judge.JudgeScorer`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator, Sized
from pathlib import Path
from typing import Any

from speech_drame.hub.fetch import fetch_lite_scorer
from speech_drame.hub.refs import parse_ref
from speech_drame.schema import Config
from speech_drame.scorers.base import ClipInput, ClipScores, ScorerError

from .features import check_blueprint
from .model import LiteModel, lite_model_id, load_lite_model, scorer_folder


def resolve_scorer_path(target: str | None) -> Path | None:
    """Where the scorer ``lite:TARGET`` is: ``None`` (the default folder) for no target, the
    local path when it exists, else the Hub snapshot of ``ORG/NAME[@REVISION]``
    (:func:`speech_drame.hub.fetch.fetch_lite_scorer`); any other target stays a (missing) local
    path."""
    if not target:
        return None
    if Path(target).exists():
        return Path(target)
    ref = parse_ref(target)
    if ref is None:
        return Path(target)
    try:
        return fetch_lite_scorer(ref)
    except FileNotFoundError as exc:
        raise ScorerError(f"lite:{target}: no such local folder, and {exc}") from None


class LiteScorer:
    """A trained :class:`~.model.LiteModel` as a :class:`~speech_drame.scorers.base.Scorer`
    (``lite[:PATH]``).

    Each clip's blueprint is extracted (read from the feature cache ``cache`` when there,
    ``workers`` clips at once, ``batch_size`` clips decoded at a time) and scored. A clip the
    features cannot use (unreadable, no speech heard, an undefined feature) is a failure of kind
    ``"input"``; an extractor or network that crashes on it one of kind ``"model"``.
    """

    def __init__(
        self,
        model: LiteModel,
        folder: str | os.PathLike | None = None,
        *,
        cache: Any = "default",
        workers: int | None = None,
        batch_size: int = 32,
    ):
        self.model, self.cache, self.workers, self.batch_size = model, cache, workers, batch_size
        self.config: Config = model.mode
        self.dimensions = model.dimensions
        self.content_pass = model.content_pass
        self.id = lite_model_id(model)
        where = f" {folder}" if folder is not None else ""
        self.description = f"LiteScorer{where} ({self.config})"
        self.training_data = model.info

    @classmethod
    def load(cls, path: str | os.PathLike | None, config: Config, **settings: Any) -> LiteScorer:
        """The scorer of ``config`` at ``path`` (see :func:`~.model.load_lite_model`)."""
        folder = scorer_folder(config, path)
        return cls(load_lite_model(config, folder), folder, **settings)

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]:
        return list(self.iter_scores(clips, progress=progress))

    def iter_scores(
        self, clips: Iterable[ClipInput], *, progress: bool = False
    ) -> Iterator[ClipScores]:
        """:meth:`score`'s results, each as soon as its clip is scored (in order)."""
        from collections import deque

        from speech_drame.features.blueprint import iter_blueprints

        ids: deque[str] = deque()

        def sources():
            for clip in clips:
                ids.append(clip.id)
                yield clip.audio, clip.context

        total = len(clips) if isinstance(clips, Sized) else None
        stream = iter_blueprints(sources(), self.cache, self.workers, progress,
                                 batch_size=self.batch_size, total=total)  # fmt: skip
        for blueprint, failure in stream:
            clip_id = ids.popleft()
            if blueprint is None:
                yield ClipScores.failure(clip_id, failure.reason, failure.kind)
                continue
            try:
                check_blueprint(blueprint, self.config)
            except ValueError as exc:
                yield ClipScores.failure(clip_id, str(exc), "input", blueprint.audio)
                continue
            try:
                (result,) = self.model.score_blueprints([blueprint])
            except RuntimeError as exc:
                why = f"{clip_id}: the LiteScorer failed ({type(exc).__name__}: {exc})"
                yield ClipScores.failure(clip_id, why, "model", blueprint.audio)
                continue
            result.id = clip_id
            yield result


def lite_evaluator(stacklevel: int = 2) -> type[LiteScorer]:
    """:class:`LiteScorer` under its deprecated name ``LiteEvaluator``, with a
    ``DeprecationWarning`` pointing ``stacklevel`` frames up (removed in a later release)."""
    warnings.warn(
        "LiteEvaluator is deprecated: use speech_drame.scorers.lite.LiteScorer (the Scorer; the "
        "network is speech_drame.scorers.lite.LiteModel)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return LiteScorer


def __getattr__(name: str) -> Any:
    if name == "LiteEvaluator":  # warns on every use, so it is never cached in the module
        return lite_evaluator(stacklevel=2)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
