"""Any scorer against a split's annotators: the statistics ``drame_metric`` reports.

:func:`evaluate_scorer` streams a split of a Hub-ready dataset folder through a
:class:`~.base.Scorer` (the audio stays encoded until the scorer reads it, a batch at a time)
and compares its scores with every annotator's ratings
(:func:`speech_drame.metrics.alignment_table`). Clips the scorer could not score are left out
of the statistics and listed with their reasons; nothing is put in their place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..schema import CONTENT_PASS
from .base import ClipInput, Scorer


@dataclass
class SplitReport:
    """Alignment of one scorer on one split, and the clips it could not score."""

    split: str
    table: dict[str, Any]
    n_scored: int
    failures: dict[str, str]  # clip id -> reason


def evaluate_scorer(
    scorer: Scorer, dataset_dir: str | os.PathLike, split: str, progress: bool = False
) -> SplitReport:
    """Score every clip of ``split`` (of ``scorer.config``) and compare with its annotators.

    Raises:
        ValueError: the split does not exist, or no clip of it could be scored.
    """
    from ..metrics import alignment_table
    from .lite_training import SplitStream

    stream = SplitStream(dataset_dir, scorer.config, split)
    labels: dict[str, dict[str, list[Any]]] = {}

    def inputs():
        for example in stream:
            labels[example.id] = example.labels
            yield ClipInput(example.id, example.source, example.contexts)

    results = scorer.score(inputs(), progress=progress)
    ok = [r for r in results if r.ok]
    failures = {r.id: str(r.error) for r in results if not r.ok}
    if not ok:
        raise ValueError(f"{stream.where}: no clip could be scored ({len(failures)} failed)")
    dims = [d for d in scorer.dimensions if d in stream.label_keys]
    with_pass = scorer.content_pass and CONTENT_PASS in stream.label_keys
    preds = [[r.scores[d] for d in dims] + ([r.content_pass] if with_pass else []) for r in ok]
    names = dims + ([CONTENT_PASS] if with_pass else [])
    refs = [[labels[r.id][d] for d in names] for r in ok]
    return SplitReport(split, alignment_table(preds, refs, names), len(ok), failures)
