"""Campaign progress, agreement, ceiling, intervals and rater checks
(speech_drame.campaign.stats), on test data and through the real store."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from campaign_standin import StandIn, make_clips, random_answers, rated_campaign

from speech_drame.atomic_io import strict_json
from speech_drame.campaign.export import annotation_lists, release_ratings
from speech_drame.campaign.stats import campaign_status, format_status, write_plots
from speech_drame.metrics import agreement, annotator_matrices, human_ceiling, resample_counts
from speech_drame.schema import dimensions


def _rows(camp) -> list[dict]:
    by_clip = release_ratings(camp.ratings())
    return [
        {
            k: [None if v == "N/A" else v for v in vs]
            for k, vs in annotation_lists(camp.config, by_clip[c.id]).items()
        }
        for c in camp.clips()
        if c.id in by_clip
    ]


def _direct_interval(rows, dim, policy, bootstrap, seed, stat):
    """The percentile interval recomputed from resampled annotation lists (same draws)."""
    values = []
    for block in resample_counts(len(rows), bootstrap, seed):
        for counts in block:
            picked = [rows[i] for i in np.repeat(np.arange(len(rows)), counts)]
            m = annotator_matrices(picked, [dim], label_policy=policy)[dim]
            values.append(agreement(m).overall if stat == "agreement" else human_ceiling(m).ceiling)
    values = np.array(values)
    return np.percentile(values[np.isfinite(values)], [2.5, 97.5])


@pytest.mark.parametrize("config, policy", [("realism", "paper"), ("archetype", "skip")])
def test_status_numbers_and_intervals(config, policy):
    camp = rated_campaign(config, n=16, k=3, seed=5, unrated=2)
    report = campaign_status(camp, bootstrap=200, seed=7, label_policy=policy)
    json.dumps(strict_json(report), allow_nan=False)
    p = report["progress"]
    assert p["clips"] == 16 and p["target_ratings"] == 48
    assert p["clips_complete"] == 10 and p["clips_started"] == 14  # every 4th clip has 2 ratings
    assert p["clips_by_ratings"] == {"0": 2, "2": 4, "3": 10}
    assert p["ratings"] == len(camp.ratings()) == 38
    assert report["label_policy"] == policy and report["samples"] == 14
    rows = _rows(camp)
    mats = annotator_matrices(rows, dimensions(config), label_policy=policy)
    assert list(report["dimensions"]) == list(dimensions(config))
    for dim, e in report["dimensions"].items():
        assert e["agreement"] == pytest.approx(agreement(mats[dim]).overall, abs=1e-12)
        c = human_ceiling(mats[dim])
        assert e["ceiling"] == pytest.approx(c.ceiling, abs=1e-12) or math.isnan(c.ceiling)
        for stat in ("agreement", "ceiling"):
            lo, hi = e[f"{stat}_interval"]
            want = _direct_interval(rows, dim, policy, 200, 7, stat)
            assert [lo, hi] == pytest.approx(want, abs=1e-9), (dim, stat)
            assert lo <= e[stat] <= hi or math.isnan(e[stat])


def test_agreement_interval_matches_scipy_percentile_bootstrap():
    from scipy.stats import bootstrap

    camp = rated_campaign("realism", n=40, k=3, seed=11, unrated=0)
    dim = "pitch_variation"
    report = campaign_status(camp, bootstrap=4000, seed=1)
    m = annotator_matrices(_rows(camp), [dim])[dim]
    std = agreement(m).std

    def stat(index):
        return float(np.clip(1 - np.nanmean(std[index.astype(int)]) / 4, 0, 1))

    ref = bootstrap((np.arange(std.size),), stat, n_resamples=4000, method="percentile",
                    vectorized=False, random_state=np.random.default_rng(2))  # fmt: skip
    lo, hi = report["dimensions"][dim]["agreement_interval"]
    width = hi - lo
    assert width > 0.02
    ci = ref.confidence_interval
    assert lo == pytest.approx(ci.low, abs=0.1 * width)
    assert hi == pytest.approx(ci.high, abs=0.1 * width)


def _archetype(score: int, passed: bool = True, **extra) -> dict:
    if not passed:
        return {"content_pass": False}
    return {"content_pass": True, "audio_quality": score, "human_likeness": score,
            "appropriateness": score, **extra}  # fmt: skip


def test_repeat_consistency_and_gold_checks():
    camp = StandIn("archetype", 2, make_clips("archetype", 4))
    camp.gold_list = [
        dataclasses.replace(c, gold=g)
        for c, g in zip(
            make_clips("archetype", 2, prefix="g"),
            [{"content_pass": False}, {"content_pass": True, "audio_quality": [4, 5]}],
            strict=True,
        )
    ]
    camp.rate("ann", "c00", _archetype(4))
    camp.rate("ann", "c01", _archetype(2))
    camp.rate("ann", "c02", _archetype(3, passed=False))
    camp.rate("ann", "c00", _archetype(5), kind="repeat")  # |diff| 1 on every dimension
    camp.rate("ann", "c01", _archetype(2), kind="repeat")  # exact
    camp.rate("ann", "c02", _archetype(3), kind="repeat")  # a Content Pass flip
    camp.rate("ann", "g00", _archetype(3, passed=False), kind="gold")  # passed
    camp.rate("ann", "g01", _archetype(3), kind="gold")  # audio quality 3: failed
    camp.rate("bob", "c00", _archetype(4))
    camp.rate("bob", "g01", _archetype(5), kind="gold")  # passed
    camp.rate("bob", "g00", _archetype(5), kind="gold")  # failed
    report = campaign_status(camp, bootstrap=0)
    ann, bob = report["raters"]["ann"], report["raters"]["bob"]
    assert (ann["regular"], ann["repeat"], ann["gold"]) == (3, 3, 2)
    assert ann["gold_passed"] == 1 and ann["gold_failed"] == ["g01"]
    assert bob["gold_passed"] == 1 and bob["gold_failed"] == ["g00"]
    rep = ann["repeats"]
    assert rep["pairs"] == 3 and rep["content_pass_flips"] == 1
    assert rep["mean_abs_diff"] == dict.fromkeys(dimensions("archetype"), 0.5)
    assert rep["exact_share"] == dict.fromkeys(dimensions("archetype"), 0.5)
    assert rep["compared"] == dict.fromkeys(dimensions("archetype"), 2)
    assert bob["repeats"]["pairs"] == 0
    assert all(math.isnan(v) for v in bob["repeats"]["mean_abs_diff"].values())
    # the repeats and gold checks are not part of agreement: c00 has ann's 4 and bob's 4
    assert report["dimensions"]["audio_quality"]["samples_used"] == 1
    assert report["dimensions"]["audio_quality"]["agreement"] == 1.0
    text = format_status(report)
    assert "ann" in text and "1/2" in text and "CP flips" in text


def test_realism_repeats_follow_the_label_policy():
    camp = StandIn("realism", 1, make_clips("realism", 1))
    base = dict.fromkeys(dimensions("realism"), 4)
    gated = {
        k: v for k, v in base.items() if k not in ("emotion_intensity_control", "dynamic_range")
    }
    camp.rate("ann", "c00", base)
    camp.rate("ann", "c00", {**gated, "emotion_accuracy": 2}, kind="repeat")
    paper = campaign_status(camp, bootstrap=0)["raters"]["ann"]["repeats"]
    skip = campaign_status(camp, bootstrap=0, label_policy="skip")["raters"]["ann"]["repeats"]
    assert paper["mean_abs_diff"]["emotion_intensity_control"] == 3.0  # N/A counts as 1
    assert paper["mean_abs_diff"]["emotion_accuracy"] == 2.0
    assert math.isnan(skip["mean_abs_diff"]["dynamic_range"])  # left out
    assert skip["compared"]["dynamic_range"] == 0 and "content_pass_flips" not in skip


def test_status_of_a_campaign_nobody_rated(tmp_path):
    camp = StandIn("realism", 3, make_clips("realism", 5))
    report = campaign_status(camp)
    assert report["dimensions"] == {} and report["raters"] == {} and report["samples"] == 0
    assert report["progress"]["clips_by_ratings"] == {"0": 5}
    assert "no clip rated yet" in format_status(report)
    assert [p.name for p in write_plots(report, tmp_path)] == [
        "progress.png",
        "agreement.png",
        "raters.png",
    ]


def test_format_status_and_plots(tmp_path):
    camp = rated_campaign("realism", n=20, k=3, seed=2, unrated=3)
    rng = np.random.default_rng(0)
    for r in list(camp.ratings())[:12]:
        camp.rate(r.rater, r.clip_id, random_answers("realism", rng, 3.0), kind="repeat")
    camp.gold_list = [dataclasses.replace(make_clips("realism", 1, prefix="g")[0],
                                          gold={"pitch_variation": [1, 2]})]  # fmt: skip
    camp.rate("r1", "g00", random_answers("realism", rng, 1.0), kind="gold")
    report = campaign_status(camp, bootstrap=100)
    text = format_status(report)
    assert "Emotion Transition (Dynamic Range)" in text
    assert "17 clips x 3" not in text and "20 clips x 3 raters = 60 ratings wanted" in text
    for name in ("r0", "r1", "r2", "r3"):
        assert name in text
    written = write_plots(report, tmp_path / "plots")
    assert [p.name for p in written] == ["progress.png", "agreement.png", "raters.png"]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_status_and_export_through_the_real_store(tmp_path):
    pytest.importorskip("sqlalchemy")
    from speech_drame.campaign.export import export_release
    from speech_drame.campaign.forms import validate_answers
    from speech_drame.campaign.store import create_campaign

    clips = make_clips("archetype", 4, tmp_path / "audio")
    gold = [dataclasses.replace(make_clips("archetype", 1, tmp_path / "gold", prefix="g")[0],
                                position=0, gold={"content_pass": False})]  # fmt: skip
    camp, _ = create_campaign(str(tmp_path / "c.db"), "archetype", clips, gold,
                              raters_per_clip=2, repeat_every=3, gold_every=4, seed=1)  # fmt: skip
    rng = np.random.default_rng(0)
    for name in ("ann", "bob"):
        camp.add_rater(name)
    for step in range(40):
        name = ("ann", "bob")[step % 2]
        task = camp.current_task(name)
        if task is None:
            continue
        answers = validate_answers("archetype", random_answers("archetype", rng, 3.5))
        assert camp.submit(name, task.task_id, f"sub-{step:04d}", answers) == "recorded"
    report = campaign_status(camp, bootstrap=20)
    assert report["progress"]["clips_complete"] == 4 and report["progress"]["ratings"] == 8
    kinds = {k: sum(e[k] for e in report["raters"].values()) for k in ("regular", "repeat", "gold")}
    assert kinds == {k: len(camp.ratings(kinds=(k,))) for k in kinds}
    assert kinds["regular"] == 8 and kinds["gold"] == 2
    passed = sum(e["gold_passed"] for e in report["raters"].values())
    assert passed == sum(not r.answers.content_pass for r in camp.ratings(kinds=("gold",)))
    out = export_release(camp, tmp_path / "release")
    assert out["records"] == 4 and out["ratings"] == 8 and out["raters"] == ["ann", "bob"]
