"""A campaign's ratings as an official release (speech_drame.campaign.export), built and read
back with the real dataset builder, ``datasets`` and ``speech-drame agreement``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from campaign_standin import StandIn, make_clips, rated_campaign

from speech_drame.campaign.export import ExportError, annotation_lists, export_release
from speech_drame.campaign.stats import campaign_status
from speech_drame.schema import DATA_DIRS, validate_record

OFFICIAL = Path(__file__).resolve().parents[1] / "official_samples"


def official_record(config: str) -> dict:
    with open(OFFICIAL / DATA_DIRS[config] / "test.jsonl", encoding="utf-8") as f:
        return json.loads(f.readline())


def test_archetype_lists_follow_the_release(tmp_path):
    camp = StandIn("archetype", 3, make_clips("archetype", 1))
    camp.rate("ann", "c00", {"content_pass": True, "audio_quality": 4, "human_likeness": 2,
                             "appropriateness": 5, "confidence": 3,
                             "human_likeness_comment": "stiff"})  # fmt: skip
    camp.rate("bob", "c00", {"content_pass": False})
    camp.rate("cy", "c00", {"content_pass": True, "audio_quality": 5, "human_likeness": 4,
                            "appropriateness": 4})  # fmt: skip
    ratings = camp.ratings()
    lists = annotation_lists("archetype", ratings[::-1])  # order of arrival, whatever the input
    assert list(lists) == list(official_record("archetype")["annotations"])
    assert lists == {
        "content_pass": [True, False, True],
        "audio_quality": [4, None, 5],
        "human_likeness": [2, None, 4],
        "appropriateness": [5, None, 4],
        "confidence": [3, None, None],
        "audio_quality_comment": ["", "", ""],
        "human_likeness_comment": ["stiff", "", ""],
        "appropriateness_comment": ["", "", ""],
    }


def test_realism_lists_mark_gated_scores_and_uncollected_fields(tmp_path):
    camp = StandIn("realism", 2, make_clips("realism", 1))
    base = {d: 4 for d in ("pitch_variation", "rhythmic_naturalness", "stress_and_emphasis",
                           "voice_identity_matching", "trait_embodiment", "local_story_fit",
                           "global_story_coherence")}  # fmt: skip
    camp.rate("ann", "c00", {**base, "emotion_accuracy": 2, "confidence": 4, "comments": "flat"})
    camp.rate("bob", "c00", {**base, "emotion_accuracy": 3, "emotion_intensity_control": 2})
    lists = annotation_lists("realism", camp.ratings())
    assert list(lists) == list(official_record("realism")["annotations"])
    assert lists["emotion_accuracy"] == [2, 3]
    assert lists["emotion_intensity_control"] == ["N/A", 2]
    assert lists["dynamic_range"] == ["N/A", "N/A"]
    assert lists["annotator_confidence_rating"] == [4, None]
    assert lists["comments"] == ["flat", ""]
    for key in ("multi-speaker_influence", "observed_character_style_dimensions", "sufficient",
                "contradictory", "prmopt_quality"):  # fmt: skip
        assert lists[key] == [None, None]


def test_lists_need_ratings_of_the_config():
    with pytest.raises(ValueError, match="no ratings"):
        annotation_lists("realism", [])
    camp = StandIn("archetype", 1, make_clips("archetype", 1))
    camp.rate("ann", "c00", {"content_pass": False})
    with pytest.raises(ValueError, match="answers of archetype"):
        annotation_lists("realism", camp.ratings())


@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_export_writes_the_release(tmp_path, config):
    camp = rated_campaign(config, n=6, k=3, folder=tmp_path / "audio", unrated=2)
    regular = camp.ratings()
    camp.rate(regular[0].rater, regular[0].clip_id, {"content_pass": False} if config ==
              "archetype" else dict.fromkeys(("pitch_variation", "rhythmic_naturalness",
              "stress_and_emphasis", "emotion_accuracy", "voice_identity_matching",
              "trait_embodiment", "local_story_fit", "global_story_coherence"), 1),
              kind="repeat")  # fmt: skip
    camp.gold_list = make_clips(config, 1, tmp_path / "gold", prefix="g")
    camp.rate("r0", "g00", {"content_pass": False} if config == "archetype" else
              dict.fromkeys(("pitch_variation", "rhythmic_naturalness", "stress_and_emphasis",
              "emotion_accuracy", "voice_identity_matching", "trait_embodiment",
              "local_story_fit", "global_story_coherence"), 2), kind="gold")  # fmt: skip
    # a second regular rating of the same clip by the same rater is not exported
    camp.rate(regular[0].rater, regular[0].clip_id, {"content_pass": True, "audio_quality": 1,
              "human_likeness": 1, "appropriateness": 1} if config == "archetype" else
              camp.rating_list[-1].answers.scores | {"emotion_intensity_control": None,
              "dynamic_range": None})  # fmt: skip
    out = tmp_path / "release"
    report = export_release(camp, out)
    folder = out / DATA_DIRS[config]
    lines = (folder / "test.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ["c00", "c01", "c02", "c03"]
    assert report["records"] == 4 and report["clips"] == 6
    assert report["clips_without_ratings"] == 2 and report["clips_under_target"] == 1
    assert report["ratings"] == sum(len(next(iter(r["annotations"].values()))) for r in records)
    assert json.loads((out / "CAMPAIGN.json").read_text()) == report
    official = official_record(config)
    for record in records:
        assert list(record) == list(official)
        assert record["wav_path"] == f"{record['id']}.wav"
        assert (folder / record["wav_path"]).read_bytes() == Path(
            camp.clip_list[int(record["id"][1:])].audio_path
        ).read_bytes()
        validate_record(record, config)
    first = next(r for r in records if r["id"] == regular[0].clip_id)
    by_clip = [r for r in regular if r.clip_id == regular[0].clip_id]
    assert first["annotations"] == annotation_lists(config, by_clip)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["test.jsonl", *(f"{r['id']}.wav" for r in records)]
    )
    assert not list(tmp_path.glob(".release.*"))  # no staging left beside OUT


def test_existing_out_is_refused_then_replaced_whole(tmp_path):
    camp = rated_campaign("archetype", n=3, k=2, folder=tmp_path / "audio", unrated=0)
    out = tmp_path / "release"
    export_release(camp, out)
    (out / "mine.txt").write_text("keep me")
    with pytest.raises(ExportError, match="holds an earlier campaign export: pass --overwrite"):
        export_release(camp, out)
    assert (out / "mine.txt").is_file()
    # a failing export leaves the old folder as it was
    Path(camp.clip_list[1].audio_path).unlink()
    with pytest.raises(ExportError, match="c01.*missing"):
        export_release(camp, out, overwrite=True)
    assert (out / "mine.txt").is_file()
    assert not list(tmp_path.glob(".release.*"))
    camp.clip_list = camp.clip_list[:1]
    report = export_release(camp, out, overwrite=True)
    assert report["records"] == 1 and not (out / "mine.txt").exists()


def test_export_refuses_unknown_splits_and_empty_campaigns(tmp_path):
    camp = StandIn("archetype", 2, make_clips("archetype", 2, tmp_path / "audio"))
    with pytest.raises(ExportError, match="nothing to export"):
        export_release(camp, tmp_path / "out")
    with pytest.raises(ExportError, match="test_real"):
        export_release(camp, tmp_path / "out", split="test_real")
    assert not (tmp_path / "out").exists()
    report_dir = tmp_path / "realism"
    real = rated_campaign("realism", n=2, k=2, folder=tmp_path / "r", unrated=0)
    assert export_release(real, report_dir, split="test_real")["split"] == "test_real"
    assert (report_dir / "realism_data" / "test_real.jsonl").is_file()


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_built_export_round_trips_and_matches_status(tmp_path, config):
    from datasets import load_dataset

    from speech_drame.commands.agreement import agreement_report
    from speech_drame.data.build import build_dataset

    camp = rated_campaign(config, n=14, k=3, folder=tmp_path / "audio", seed=3)
    release = tmp_path / "release"
    export_release(camp, release)
    built = tmp_path / "built"
    build_dataset(release, built, license_id="apache-2.0", progress=False)
    ds = load_dataset(str(built), config, split="test")
    records = [
        json.loads(line)
        for line in (release / DATA_DIRS[config] / "test.jsonl").read_text().splitlines()
    ]
    assert ds["id"] == [r["id"] for r in records]
    for row, record in zip(ds, records, strict=True):
        for key, values in record["annotations"].items():
            got = row["annotations"][key]
            assert got == [None if v == "N/A" else v for v in values], key
            if key in row["not_applicable"]:
                assert row["not_applicable"][key] == [v == "N/A" for v in values], key
        assert row["duration_s"] == pytest.approx(1.2, abs=0.01)
    if config == "realism":
        assert any(any(m) for row in ds for m in row["not_applicable"].values())
    else:
        assert any(None in row["annotations"]["audio_quality"] for row in ds)

    for policy in ("paper", "skip"):
        expected = agreement_report(str(built), config, "test", policy, "pearson", False)
        status = campaign_status(camp, bootstrap=50, label_policy=policy)
        assert status["samples"] == expected["samples"] == len(records)
        assert list(status["dimensions"]) == list(expected["dimensions"])
        for dim, e in expected["dimensions"].items():
            got = status["dimensions"][dim]
            assert _same(got["agreement"], e["agreement"]), (policy, dim)
            assert _same(got["ceiling"], e["ceiling"]), (policy, dim)
            for key in ("samples_used", "null_ratings", "null_ratings_counted_as_1",
                        "ceiling_counts"):  # fmt: skip
                assert got[key] == e[key], (policy, dim, key)
