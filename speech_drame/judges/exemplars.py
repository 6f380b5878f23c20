"""Few-shot exemplars from the train split of a built dataset (Speech-DRAME, Appendix L.1).

An exemplar's gold answer is, per dimension, the annotators' mean rounded half up, with null and
``"N/A"`` ratings read through the label policy (:mod:`speech_drame.labels`; under ``paper``
they count as 1, so a clip that failed Content Pass has 1 on its quality scores), and for
archetype the majority Content Pass vote. A clip whose Content Pass vote is tied, or with a
dimension left without any rating, has no complete gold answer and is never shown.

Two ways to pick ``k`` exemplars (:data:`EXEMPLAR_STRATEGIES`):

- ``random`` (default, the official few-shot code): a fresh draw for every clip and every run,
  uniform over the clips with a gold answer (rejected clips included) except the judged clip
  itself, from a generator seeded by ``(seed, clip key, run)``: the same seed repeats the same
  draws.
- ``agreement``: one draw for the whole run, from the clips whose annotators agree best with
  their gold answer. A clip's distance is the mean absolute gap between each counted rating and
  the gold value, plus for archetype the share of Content Pass votes against the majority; the
  ``k`` exemplars are drawn with the seed from the clips at or below the ``k``-th smallest
  distance.

Exemplars are played to the judge, so only clips with audio are candidates; the split's clips
without audio are counted (``ExemplarPool.no_audio``), and a split with none stops before any
request (:class:`~speech_drame.data.reader.NoAudioError`).
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..labels import DEFAULT_LABEL_POLICY, apply_label_policy, check_label_policy
from ..schema import CONTENT_PASS, CONTEXT_COLUMNS, CONTEXTS, Config, check_config, dimensions
from .prompt import JudgeItem, wav_base64

EXEMPLAR_STRATEGIES: dict[str, str] = {
    "random": "k exemplars drawn at random for every clip and run (seeded)",
    "agreement": "one set of k exemplars whose annotators agree best with their rounded mean",
}


def round_half_up(value: float) -> int:
    """2.5 -> 3, 3.5 -> 4 (Python's ``round`` would give 2 and 4)."""
    return math.floor(value + 0.5)


def gold_answer(
    annotations: Mapping[str, list[Any]],
    config: Config,
    label_policy: str = DEFAULT_LABEL_POLICY,
) -> tuple[dict[str, Any], float] | None:
    """``(gold answer, distance)`` of one clip, or ``None`` if it has no complete gold answer.

    Example:
        >>> ann = {"content_pass": [True, True, False], "audio_quality": [4, 5, None],
        ...        "human_likeness": [3, 4, None], "appropriateness": [4, 4, None]}
        >>> gold, distance = gold_answer(ann, "archetype")  # paper: the nulls count as 1
        >>> gold, round(distance, 4)
        ({'content_pass': True, 'audio_quality': 3, 'human_likeness': 3, 'appropriateness': 3}, 1.6667)
        >>> gold, distance = gold_answer(ann, "archetype", "skip")
        >>> gold, round(distance, 4)
        ({'content_pass': True, 'audio_quality': 5, 'human_likeness': 4, 'appropriateness': 4}, 0.6667)
    """
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
        counted = apply_label_policy(annotations[dim], dim, label_policy)
        scores = [s for s in counted if s is not None]
        if not scores:
            return None
        gold[dim] = round_half_up(sum(scores) / len(scores))
        gaps += [abs(s - gold[dim]) for s in scores]
    return gold, sum(gaps) / len(gaps) + extra


ITEM_CACHE = 64  # encoded exemplars kept (each up to ~1.3 MB of base64 WAV)


@dataclass(frozen=True, eq=False)  # hashed by identity: the draws reuse the same objects
class _Candidate:
    distance: float
    id: str
    index: int  # row of the split
    gold: dict[str, Any]
    context: dict[str, str]  # by EvalBench column


def _draw_seed(seed: int, clip: str, run: int) -> int:
    """A generator seed from ``(seed, clip, run)``, the same in every process."""
    digest = hashlib.sha256(f"{seed}\0{clip}\0{run}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class ExemplarPool:
    """The clips of ``split`` with a complete gold answer; :meth:`draw` picks ``k`` of them.

    Args:
        dataset_dir: a built dataset folder (``speech-drame build``).
        config: ``"archetype"`` or ``"realism"``.
        k: exemplars per request.
        strategy: ``"random"`` or ``"agreement"`` (see the module docstring).
        split: the split the exemplars come from.
        seed: seed of the draws.
        label_policy: how null and ``"N/A"`` ratings enter the gold answers.
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        config: Config,
        k: int,
        *,
        strategy: str = "random",
        split: str = "train",
        seed: int = 0,
        label_policy: str = DEFAULT_LABEL_POLICY,
    ):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if strategy not in EXEMPLAR_STRATEGIES:
            raise ValueError(
                f"unknown exemplar strategy {strategy!r}; expected one of "
                f"{', '.join(EXEMPLAR_STRATEGIES)}"
            )
        from ..data.reader import open_split, require_audio

        self.config, self.k, self.strategy, self.seed = check_config(config), k, strategy, seed
        self.label_policy = check_label_policy(label_policy)
        self._split = open_split(dataset_dir, self.config, split)
        require_audio([self._split], "few-shot exemplars")
        columns = ["id", "annotations", *(CONTEXT_COLUMNS[c] for c in CONTEXTS[self.config])]
        self.no_audio = self._split.without_audio
        missing = set(self.no_audio)
        self.candidates: list[_Candidate] = []
        for index, row in enumerate(self._split.rows(columns)):
            found = gold_answer(row["annotations"], config, label_policy)
            if found is not None and row["id"] not in missing:
                context = {c: row[c] or "" for c in columns[2:]}
                self.candidates.append(_Candidate(found[1], row["id"], index, found[0], context))
        if len(self.candidates) < k:
            raise ValueError(
                f"{self._split.where}: {len(self.candidates)} clip(s) with audio and a "
                f"complete gold answer ({len(self.no_audio)} without audio), {k} exemplar(s) "
                "asked for"
            )
        # Encoded exemplars are reused across draws, but only the most recent: random draws
        # reach the whole split, whose base64 audio would not fit in memory.
        self._item = lru_cache(maxsize=ITEM_CACHE)(self._load_item)
        self._fixed = self._agreement() if strategy == "agreement" else None

    def _agreement(self) -> list[_Candidate]:
        ranked = sorted(self.candidates, key=lambda c: (c.distance, c.id))
        threshold = ranked[self.k - 1].distance
        pool = [c for c in ranked if c.distance <= threshold]
        chosen = random.Random(self.seed).sample(pool, self.k)
        return sorted(chosen, key=lambda c: (c.distance, c.id))

    @property
    def ids(self) -> list[str]:
        """The ids the draws choose from (the one fixed set under ``agreement``)."""
        return [c.id for c in (self._fixed or self.candidates)]

    def draw(self, clip: str, run: int) -> list[JudgeItem]:
        """The exemplars shown for run ``run`` of the clip keyed ``clip`` (its id)."""
        if self._fixed is not None:
            return [self._item(c) for c in self._fixed]
        pool = [c for c in self.candidates if c.id != clip]
        if len(pool) < self.k:
            raise ValueError(
                f"clip {clip!r}: {len(pool)} other clip(s) with a gold answer in the exemplar "
                f"split, {self.k} exemplar(s) asked for"
            )
        rng = random.Random(_draw_seed(self.seed, clip, run))
        return [self._item(c) for c in rng.sample(pool, self.k)]

    def _load_item(self, candidate: _Candidate) -> JudgeItem:
        audio = self._split.row(candidate.index, ["audio"])["audio"]
        context = candidate.context
        return JudgeItem(
            audio_b64=wav_base64(audio["bytes"]),
            question=context.get("question", ""),
            profile=context.get("char_profile", ""),
            scene=context.get("local_scene", ""),
            traits=context.get("char_style", ""),
            id=candidate.id,
            gold=candidate.gold,
        )


def select_exemplars(
    dataset_dir: str | os.PathLike,
    config: Config,
    k: int,
    *,
    split: str = "train",
    seed: int = 0,
    label_policy: str = DEFAULT_LABEL_POLICY,
) -> list[JudgeItem]:
    """The ``agreement`` exemplars: ``k`` clips (audio, context, gold answer) of ``split``."""
    pool = ExemplarPool(dataset_dir, config, k, strategy="agreement", split=split, seed=seed,
                        label_policy=label_policy)  # fmt: skip
    return pool.draw("", 0)
