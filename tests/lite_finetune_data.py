"""New ratings for fine-tuning a LiteScorer (``train-lite --init``): a rating campaign of the
demo dataset's held-out clips whose simulated raters disagree with the initial scorer in a known
way, exported (``campaign export --test-share``) and built, as a lab's round trip does.

Scenarios (``truth`` per clip and dimension, from the initial scorer's own expected score ``s``):

- ``inverted``: ``6 - s`` (the raters rank every clip the other way round);
- ``shifted``: ``s - 1.5`` on the clips the scorer identified as Mandarin, ``s`` elsewhere (the
  raters agree, except that they mark the Mandarin voices down).

Each of three raters answers ``round(truth + N(0, 0.6))`` clipped to 1..5, with the realism gates
applied and Content Pass given.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from campaign_standin import StandIn

from speech_drame.campaign.export import export_release
from speech_drame.campaign.intake import read_clips
from speech_drame.data.build import build_dataset
from speech_drame.schema import dimensions
from speech_drame.scorers.base import ClipInput

SCENARIOS = ("inverted", "shifted")
RATERS = ("r0", "r1", "r2")


def _truth(scenario: str, score: float, language: str | None) -> float:
    if scenario == "inverted":
        return 6.0 - score
    if scenario == "shifted":
        return score - 1.5 if language == "zh" else score
    raise ValueError(f"unknown scenario {scenario!r}; expected one of {SCENARIOS}")


def _answers(config: str, truth: dict[str, float], rng: np.random.Generator) -> dict:
    def rate(d: str) -> int:
        return int(np.clip(round(truth[d] + rng.normal(0, 0.6)), 1, 5))

    if config == "archetype":
        return {"content_pass": True, **{d: rate(d) for d in dimensions(config)}}
    out: dict[str, int] = {}
    for d in dimensions(config):
        if d == "emotion_intensity_control" and out["emotion_accuracy"] < 3:
            continue  # gated, as the rating page asks
        if d == "dynamic_range" and out.get("emotion_intensity_control", 0) < 3:
            continue
        out[d] = rate(d)
    return out


def planted_dataset(
    dataset_dir: Path,
    config: str,
    split: str,
    parent,
    scenario: str,
    work: Path,
    *,
    seed: int = 0,
    test_share: float = 0.3,
) -> Path:
    """The built dataset of a campaign over ``dataset_dir``'s ``config``/``split`` clips, rated
    by raters who disagree with the scorer ``parent`` as ``scenario`` says; written under
    ``work``."""
    clips = read_clips(dataset_dir, config, split=split, audio_out=work / "audio")
    scored = parent.score([ClipInput(c.id, c.audio_path, c.context) for c in clips])
    failed = [s.id for s in scored if not s.ok]
    assert not failed, f"the initial scorer failed on {failed}"
    rng = np.random.default_rng(seed)
    camp = StandIn(config, len(RATERS), clips)
    for clip, s in zip(clips, scored, strict=True):
        truth = {d: _truth(scenario, v, s.language) for d, v in s.scores.items()}
        for rater in RATERS:
            camp.rate(rater, clip.id, _answers(config, truth, rng))
    export_release(camp, work / "release", test_share=test_share)
    built = work / "built"
    build_dataset(work / "release", built, license_id="cc-by-4.0", progress=False)
    return built
