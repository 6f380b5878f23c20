"""Test data for the campaign statistics and export: a stand-in holding the plain values a
``Campaign`` hands out (config, K, clips, gold clips, ratings), built from real records."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
from conftest import tone

from speech_drame.campaign.forms import validate_answers
from speech_drame.campaign.records import AttachedScorer, CampaignClip, StoredRating, StoredScore
from speech_drame.schema import dimensions


@dataclass
class StandIn:
    config: str
    raters_per_clip: int
    clip_list: list[CampaignClip]
    rating_list: list[StoredRating] = field(default_factory=list)
    gold_list: list[CampaignClip] = field(default_factory=list)
    assign: str = "balanced"
    scorer_list: list[AttachedScorer] = field(default_factory=list)
    results: dict[str, dict[str, StoredScore]] = field(default_factory=dict)  # by scorer id

    def clips(self) -> list[CampaignClip]:
        return list(self.clip_list)

    def gold_clips(self) -> list[CampaignClip]:
        return list(self.gold_list)

    def ratings(self, kinds=("regular",)) -> list[StoredRating]:
        return sorted((r for r in self.rating_list if r.kind in kinds), key=lambda r: r.rating_id)

    def attached_scorers(self) -> list[AttachedScorer]:
        return list(self.scorer_list)

    def scorer_results(self, scorer_id: str) -> dict[str, StoredScore]:
        return dict(self.results.get(scorer_id, {}))

    def rate(self, rater: str, clip_id: str, answers: dict, kind: str = "regular") -> None:
        rid = len(self.rating_list) + 1
        self.rating_list.append(
            StoredRating(rid, rater, clip_id, kind, validate_answers(self.config, answers), rid)
        )


def context(config: str, i: int) -> dict[str, str]:
    if config == "archetype":
        return {"question": f"You are a lighthouse keeper (scene {i}). A storm hits. You say:"}
    return {
        "profile": f"Mara {i} is a calm lighthouse keeper.",
        "scene": f"Mara warns sailors of storm {i}.",
        "traits": "Calm, Warm",
    }


def make_clips(
    config: str, n: int, folder: Path | None = None, prefix: str = "c"
) -> list[CampaignClip]:
    """``n`` clips; with ``folder``, each with a real 1.2 s WAV file there."""
    clips = []
    for i in range(n):
        audio = f"/nonexistent/{prefix}{i:02d}.wav"
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            audio = str(folder / f"{prefix}{i:02d}.wav")
            sf.write(audio, tone(1.2, freq=200 + 10 * i, seed=i), 16_000)
        extra = {"transcript": f"Storm {i} is coming.", "char_age": "Adult", "data_source": "test"}
        clips.append(
            CampaignClip(
                f"{prefix}{i:02d}",
                i,
                audio,
                context(config, i),
                extra if config == "realism" else {},
            )  # fmt: skip
        )
    return clips


def random_answers(config: str, rng: np.random.Generator, truth: float) -> dict:
    """A plausible answer around ``truth`` (1..5), gates and Content Pass as the page asks."""

    def score() -> int:
        return int(np.clip(round(truth + rng.normal(0, 0.8)), 1, 5))

    if config == "archetype":
        if rng.random() < 0.15:
            return {"content_pass": False}
        out = {"content_pass": True, **{d: score() for d in dimensions(config)}}
        out["confidence"] = int(rng.integers(1, 6))
        out["human_likeness_comment"] = "stiff" if out["human_likeness"] < 3 else ""
        return out
    out = {}
    for d in dimensions(config):
        if d == "emotion_intensity_control" and out["emotion_accuracy"] < 3:
            continue
        if d == "dynamic_range" and out.get("emotion_intensity_control", 0) < 3:
            continue
        out[d] = score()
    out["confidence"] = int(rng.integers(1, 6))
    out["comments"] = "" if rng.random() < 0.7 else "odd pause"
    return out


def rated_campaign(config: str, n: int = 12, k: int = 3, folder: Path | None = None,
                   seed: int = 0, unrated: int = 1) -> StandIn:  # fmt: skip
    """``n`` clips of which the last ``unrated`` have no rating, the others 2..k regular
    ratings from raters r0..r{k}, in an interleaved order of arrival."""
    rng = np.random.default_rng(seed)
    clips = make_clips(config, n, folder)
    camp = StandIn(config, k, clips)
    truths = rng.uniform(1.5, 4.5, n)
    raters = [f"r{j}" for j in range(k + 1)]
    plan = []
    for i, clip in enumerate(clips[: n - unrated]):
        many = k if i % 4 else 2
        for rater in rng.choice(raters, size=many, replace=False):
            plan.append((str(rater), i, clip.id))
    for idx in rng.permutation(len(plan)):
        rater, i, cid = plan[idx]
        camp.rate(rater, cid, random_answers(config, rng, truths[i]))
    return camp
