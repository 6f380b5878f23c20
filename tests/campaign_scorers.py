"""A scorer with planted failures, for the campaign tests and benchmarks/bench_campaign_assign.py
(which puts tests/ on ``sys.path``).

:class:`PlantedScorer` follows the scorer contract (:mod:`speech_drame.scorers.base`) and answers
from a table: per clip its known true score plus seeded noise, as a 1..5 distribution (a
discretised normal) whose expectation is the score, except on the planted ``failures``, where it
is confidently wrong (the far end of the scale), or, on the ``wide`` ones among them, wrong and
unsure (a wide distribution). A clip missing from the table fails with an ``input`` error.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from speech_drame.schema import dimensions
from speech_drame.scorers.base import ClipInput, ClipScores

LEVELS = np.arange(1, 6)


def distribution(centre: float, sd: float) -> np.ndarray:
    """A discretised normal over the scores 1..5."""
    p = np.exp(-0.5 * ((LEVELS - centre) / sd) ** 2)
    return p / p.sum()


def hashed_truth(config: str, clip_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    """A true score per clip and dimension, spread over 1..5 by a hash of the clip id."""
    out = {}
    for clip_id in clip_ids:
        digest = hashlib.sha256(clip_id.encode()).digest()
        out[clip_id] = {d: 1 + 4 * digest[k] / 255 for k, d in enumerate(dimensions(config))}
    return out


@dataclass
class PlantedScorer:
    config: str
    truth: dict[str, dict[str, float]]  # clip id -> dimension -> true score
    failures: frozenset[str] = frozenset()
    wide: frozenset[str] = frozenset()  # failures it is unsure of
    noise: float = 0.3
    seed: int = 0
    name: str = "planted"
    batch_size: int = 8
    training_data: dict | None = None
    content_pass: bool = False
    calls: list[int] = field(default_factory=list)  # clips per score() call

    @property
    def dimensions(self) -> tuple[str, ...]:
        return dimensions(self.config)

    @property
    def id(self) -> str:
        text = repr((self.name, self.seed, self.noise, sorted(self.failures), sorted(self.wide)))
        return f"planted-{hashlib.sha256(text.encode()).hexdigest()[:12]}"

    @property
    def description(self) -> str:
        return f"a simulated scorer ({self.name}) wrong on {len(self.failures)} planted clips"

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]:
        out = []
        for clip in clips:
            if clip.id not in self.truth:
                out.append(ClipScores.failure(clip.id, f"{clip.id}: no speech heard", "input"))
                continue
            rng = np.random.default_rng([self.seed, zlib.crc32(clip.id.encode())])
            scores, dists = {}, {}
            for dim in self.dimensions:
                true = self.truth[clip.id][dim]
                centre = (1.0 if true > 3 else 5.0) if clip.id in self.failures else true
                centre = float(np.clip(centre + rng.normal(0, self.noise), 1, 5))
                p = distribution(centre, 1.8 if clip.id in self.wide else 0.45)
                scores[dim], dists[dim] = float(LEVELS @ p), p.tolist()
            out.append(ClipScores(clip.id, scores, dists))
        self.calls.append(len(out))
        return out
