"""One way to name a scorer, on every command line and in Python: :func:`load_scorer`.

Specs:

- ``lite`` or ``lite:PATH``: a trained LiteScorer folder (one per config as ``PATH/<config>``,
  or a single config's folder); ``lite`` alone is :func:`~speech_drame.scorers.lite.model.default_scorer_dir`. A bare
  ``PATH`` is short for ``lite:PATH``. ``lite:ORG/NAME[@REVISION]`` that is not a local path
  is a LiteScorer pushed to the Hub (``train-lite --push-to-hub``), fetched with
  ``huggingface_hub.snapshot_download`` (its cache, or the network).
- ``drame-eval:PATH_OR_HUB_ID``: a DRAME-Eval evaluator folder, a ``train.py`` output folder
  (its ``evaluator/``) or a Hub id ``ORG/NAME``.
- ``judge:MODEL@URL``: a chat judge, e.g. ``judge:qwen2-audio@http://127.0.0.1:8000/v1``;
  ``judge:MODEL`` or ``judge`` take the URL (and model) from ``$SPEECH_DRAME_JUDGE_BASE_URL``
  (``$SPEECH_DRAME_JUDGE_MODEL``). Its settings are :class:`~.judge.JudgeOptions`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..schema import Config, check_config
from .base import Scorer, ScorerError

KINDS = ("lite", "drame-eval", "judge")
SPEC_HELP = (
    "lite[:PATH|:ORG/NAME[@REVISION]] (a trained LiteScorer, local or on the Hub; default "
    "artifacts/lite_scorer), "
    "drame-eval:PATH_OR_HUB_ID (a DRAME-Eval audio-LLM evaluator) or judge:MODEL@URL "
    "(a zero/few-shot chat judge); a bare PATH means lite:PATH"
)


@dataclass(frozen=True)
class ScorerSpec:
    """A parsed spec: the kind and what follows its colon (``""`` when nothing does)."""

    kind: str
    target: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}" if self.target else self.kind


def parse_spec(spec: str) -> ScorerSpec:
    """Split ``spec`` into kind and target.

    Example:
        >>> parse_spec("judge:gpt-4o-audio@http://127.0.0.1:8000/v1")
        ScorerSpec(kind='judge', target='gpt-4o-audio@http://127.0.0.1:8000/v1')
        >>> parse_spec("runs/my_scorer")
        ScorerSpec(kind='lite', target='runs/my_scorer')
    """
    spec = spec.strip()
    if not spec:
        raise ValueError(f"empty scorer spec; expected {SPEC_HELP}")
    kind, sep, target = spec.partition(":")
    if kind in KINDS:
        if kind == "drame-eval" and not target:
            raise ValueError("drame-eval needs a folder or Hub id: drame-eval:PATH_OR_HUB_ID")
        return ScorerSpec(kind, target)
    return ScorerSpec("lite", spec)


def load_scorer(
    spec: str | None,
    config: Config,
    *,
    cache: Any = "default",
    workers: int | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    decoding: str | None = None,
    prompt_profile: str | os.PathLike | None = None,
    judge_options: Any = None,
    on_retry: Callable[[str], None] | None = None,
) -> Scorer:
    """The scorer ``spec`` names, for ``config`` (``None`` is the default LiteScorer).

    Settings apply to the kinds that have them: ``cache`` (feature cache) and ``workers``
    (clips analysed at once) to a LiteScorer; ``batch_size``, ``device`` and ``decoding``
    (:data:`~.drame_eval.DECODINGS`; ``None``: expectation) and ``prompt_profile`` (the
    profile file of a checkpoint without one of its own) to DRAME-Eval; ``judge_options``
    (:class:`~.judge.JudgeOptions`) and ``on_retry`` to a chat judge.

    Raises:
        ScorerError: a scorer that cannot be loaded, or one for another config.
        ValueError: a malformed spec or setting, or ``decoding`` for a kind without one.
        FileNotFoundError: a DRAME-Eval folder that does not exist.
    """
    config = check_config(config)
    parsed = parse_spec(spec or "lite")
    if decoding is not None and parsed.kind != "drame-eval":
        raise ValueError(f"decoding {decoding!r} applies to drame-eval scorers only, not {parsed}")
    if prompt_profile is not None and parsed.kind != "drame-eval":
        raise ValueError(f"a prompt profile applies to drame-eval scorers only, not {parsed}")
    if parsed.kind == "lite":
        from .lite.scorer import LiteScorer, resolve_scorer_path

        folder = resolve_scorer_path(parsed.target)
        return LiteScorer.load(folder, config, cache=cache, workers=workers)
    if parsed.kind == "drame-eval":
        from .drame_eval import DrameEvalScorer

        scorer = DrameEvalScorer.from_pretrained(
            parsed.target, config=config, prompt_profile=prompt_profile, device=device,
            batch_size=batch_size or 4, decoding=decoding or "expectation",
        )  # fmt: skip
        if scorer.config != config:
            raise ScorerError(f"{parsed}: a DRAME-Eval evaluator for {scorer.config}, not {config}")
        return scorer
    from .judge import JudgeScorer

    model, _, url = parsed.target.partition("@")
    return JudgeScorer(model or None, url or None, config, judge_options, on_retry=on_retry)
