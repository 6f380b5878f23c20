"""Few-shot exemplars from a train split: clips whose annotators agree with their rounded mean.

For each dimension the gold answer is the annotators' mean rounded half up. A clip's distance
is the mean absolute gap between each annotator's score and that gold value over all rated
(dimension, annotator) pairs; for archetype the share of Content Pass votes against the
majority is added. Realism ``"N/A"`` scores (gated emotion dimensions) count as 1, as in the
paper's analysis. Clips with a dimension nobody rated, or a tied Content Pass vote, have no
complete gold answer and are skipped. ``k`` exemplars are drawn with a seeded RNG from the
clips at or below the ``k``-th smallest distance (Speech-DRAME, Appendix L.1).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Mapping
from typing import Any

from ..schema import CONTENT_PASS, SCORE_MIN, Config, dimensions
from .prompt import JudgeItem, wav_base64


def round_half_up(value: float) -> int:
    """2.5 -> 3, 3.5 -> 4 (Python's ``round`` would give 2 and 4)."""
    return math.floor(value + 0.5)


def gold_answer(
    annotations: Mapping[str, list[Any]],
    config: Config,
    not_applicable: Mapping[str, list[bool]] | None = None,
) -> tuple[dict[str, Any], float] | None:
    """``(gold answer, distance)`` of one clip, or ``None`` if it has no complete gold answer.

    Example:
        >>> ann = {"content_pass": [True, True, False], "audio_quality": [4, 5, None],
        ...        "human_likeness": [3, 4, None], "appropriateness": [4, 4, None]}
        >>> gold, distance = gold_answer(ann, "archetype")
        >>> gold, round(distance, 4)
        ({'content_pass': True, 'audio_quality': 5, 'human_likeness': 4, 'appropriateness': 4}, 0.6667)
    """
    not_applicable = not_applicable or {}
    gold: dict[str, Any] = {}
    gaps: list[float] = []
    extra = 0.0
    if config == "archetype":
        votes = [v for v in annotations[CONTENT_PASS] if v is not None]
        passes = sum(votes)
        if not votes or 2 * passes == len(votes):
            return None
        gold[CONTENT_PASS] = 2 * passes > len(votes)
        extra = sum(v != gold[CONTENT_PASS] for v in votes) / len(votes)
    for dim in dimensions(config):
        na = not_applicable.get(dim) or [False] * len(annotations[dim])
        scores = [
            SCORE_MIN if flagged else score
            for score, flagged in zip(annotations[dim], na, strict=True)
            if flagged or score is not None
        ]
        if not scores:
            return None
        gold[dim] = round_half_up(sum(scores) / len(scores))
        gaps += [abs(s - gold[dim]) for s in scores]
    return gold, sum(gaps) / len(gaps) + extra


def select_exemplars(
    dataset_dir: str | os.PathLike,
    config: Config,
    k: int,
    *,
    split: str = "train",
    seed: int = 0,
) -> list[JudgeItem]:
    """``k`` exemplars (audio, context, gold answer) from ``split`` of a built dataset folder."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    from datasets import Audio, load_dataset

    ds = load_dataset(str(dataset_dir), config, split=split)
    meta = ds.remove_columns("audio")
    candidates: list[tuple[float, str, int, dict[str, Any]]] = []
    for index, row in enumerate(meta):
        found = gold_answer(row["annotations"], config, row.get("not_applicable"))
        if found is not None:
            candidates.append((found[1], row["id"], index, found[0]))
    if len(candidates) < k:
        raise ValueError(
            f"{dataset_dir} ({config}/{split}): {len(candidates)} clip(s) with a complete gold "
            f"answer, {k} exemplar(s) asked for"
        )
    candidates.sort(key=lambda c: (c[0], c[1]))
    threshold = candidates[k - 1][0]
    pool = [c for c in candidates if c[0] <= threshold]
    chosen = sorted(random.Random(seed).sample(pool, k), key=lambda c: (c[0], c[1]))
    audio = ds.cast_column("audio", Audio(decode=False))
    items = []
    for _, rid, index, gold in chosen:
        row = audio[index]
        items.append(
            JudgeItem(
                audio_b64=wav_base64(row["audio"]["bytes"]),
                question=row.get("question") or "",
                profile=row.get("char_profile") or "",
                scene=row.get("local_scene") or "",
                traits=row.get("char_style") or "",
                id=rid,
                gold=gold,
            )
        )
    return items
