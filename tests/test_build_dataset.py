import json
import os

import numpy as np
import pytest
from conftest import REPO, archetype_record, realism_record, tone, write_release
from datasets import load_dataset

from speech_drame import hub_dataset
from speech_drame.hub_dataset import build_dataset
from speech_drame.schema import REALISM_DIMENSIONS, RecordError


def decode(audio) -> tuple[np.ndarray, int]:
    samples = audio.get_all_samples()
    return samples.data.numpy(), samples.sample_rate


def test_official_samples_round_trip(official_samples_dir, official_dataset_dir):
    report = json.loads((official_dataset_dir / "build_report.json").read_text())
    assert report["rows"] == {"archetype": {"test": 2}, "realism": {"test": 1}}
    assert [m["wav_path"].rsplit("/", 1)[1] for m in report["missing_audio"]] == [
        "role-eval_v1_0000.wav"
    ]

    for config in ("archetype", "realism"):
        raw = [
            json.loads(line)
            for line in (official_samples_dir / f"{config}_data" / "test.jsonl").open()
        ]
        raw = {r["id"]: r for r in raw}
        ds = load_dataset(str(official_dataset_dir), config)["test"]
        for row in ds:
            source = raw[row["id"]]
            for key, value in source.items():
                if key != "annotations":
                    assert row[key] == value, key
            assert row["annotations"] == source["annotations"]  # no N/A in these samples
            samples, sr = decode(row["audio"])
            assert sr == 16_000 and samples.shape[0] == 1
            assert samples.shape[1] / sr == pytest.approx(row["duration_s"], abs=0.01)


def test_not_applicable_becomes_null_and_is_flagged(tmp_path):
    src = write_release(tmp_path / "rel", {"realism_data/train.jsonl": [realism_record("r1")]})
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.not_applicable_scores == {"realism": 3}
    row = load_dataset(str(tmp_path / "out"), "realism")["train"][0]
    assert row["annotations"]["emotion_intensity_control"] == [3, None, 2]
    assert row["annotations"]["dynamic_range"] == [4, None, None]
    assert row["not_applicable"]["dynamic_range"] == [False, True, True]
    assert set(row["not_applicable"]) == set(REALISM_DIMENSIONS)


def test_semantic_match_only_when_present(tmp_path):
    with_sm = realism_record("r1")
    with_sm["annotations"]["semantic_match"] = [5, 4, "N/A"]
    src = write_release(
        tmp_path / "rel", {"realism_data/test.jsonl": [with_sm, realism_record("r2")]}
    )
    build_dataset(src, tmp_path / "out", progress=False)
    rows = {r["id"]: r for r in load_dataset(str(tmp_path / "out"), "realism")["test"]}
    assert rows["r1"]["annotations"]["semantic_match"] == [5, 4, None]
    assert rows["r2"]["annotations"]["semantic_match"] == [None, None, None]
    plain = write_release(tmp_path / "rel2", {"realism_data/test.jsonl": [realism_record("r3")]})
    build_dataset(plain, tmp_path / "out2", progress=False)
    row = load_dataset(str(tmp_path / "out2"), "realism")["test"][0]
    assert "semantic_match" not in row["annotations"]


def test_splits_come_from_file_names_and_mapping(tmp_path):
    src = write_release(
        tmp_path / "rel",
        {
            "archetype_data/train.jsonl": [archetype_record("a1"), archetype_record("a2")],
            "archetype_data/dev.jsonl": [archetype_record("a3")],
            "realism_data/test_real.jsonl": [realism_record("r1")],
        },
    )
    with pytest.raises(ValueError, match=r"dev\.jsonl.*--split-map dev\.jsonl=SPLIT"):
        build_dataset(src, tmp_path / "out", progress=False)
    report = build_dataset(src, tmp_path / "out", split_map={"dev": "test"}, progress=False)
    assert report.rows == {"archetype": {"train": 2, "test": 1}, "realism": {"test_real": 1}}
    assert set(load_dataset(str(tmp_path / "out"), "archetype")) == {"train", "test"}
    assert set(load_dataset(str(tmp_path / "out"))) == {"test_real"}  # realism is the default


BAD_RECORDS = {
    "score out of range": (
        lambda: realism_record(
            "bad", annotations={**realism_record("x")["annotations"], "pitch_variation": [4, 6, 3]}
        ),
        r"record 'bad'.*annotations\.pitch_variation\[1\].*score 6 outside 1\.\.5",
    ),
    "score zero": (
        lambda: archetype_record(
            "bad",
            annotations={**archetype_record("x")["annotations"], "audio_quality": [0, 5, None]},
        ),
        r"record 'bad'.*annotations\.audio_quality\[0\].*score 0 outside",
    ),
    "non-integer score": (
        lambda: archetype_record(
            "bad",
            annotations={
                **archetype_record("x")["annotations"],
                "human_likeness": ["good", 4, None],
            },
        ),
        r"record 'bad'.*annotations\.human_likeness\[0\].*expected an integer",
    ),
    "unequal annotator lists": (
        lambda: realism_record(
            "bad", annotations={**realism_record("x")["annotations"], "trait_embodiment": [4, 4]}
        ),
        r"record 'bad'.*annotations\.trait_embodiment.*2 annotators, other fields have 3",
    ),
    "missing required field": (
        lambda: {k: v for k, v in realism_record("bad").items() if k != "char_profile"},
        r"record 'bad'.*'char_profile'.*required field is missing",
    ),
    "missing annotation field": (
        lambda: archetype_record(
            "bad",
            annotations={
                k: v for k, v in archetype_record("x")["annotations"].items() if k != "confidence"
            },
        ),
        r"record 'bad'.*annotations\.confidence.*required field is missing",
    ),
    "wav_path escapes the source": (
        lambda: realism_record("bad", wav_path="../../outside/bad.wav"),
        r"record 'bad'.*wav_path.*resolves outside the source folder",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_invalid_record_is_an_error_naming_id_and_field(tmp_path, case):
    make, message = BAD_RECORDS[case]
    bad = make()
    config = "realism" if "local_scene" in bad or "char_age" in bad else "archetype"
    good = realism_record("good") if config == "realism" else archetype_record("good")
    src = write_release(tmp_path / "rel", {f"{config}_data/test.jsonl": [good, bad]})
    with pytest.raises(RecordError, match=message):
        build_dataset(src, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()

    report = build_dataset(src, tmp_path / "out", skip_invalid=True, progress=False)
    assert report.rows == {config: {"test": 1}}
    assert len(report.dropped) == 1 and "bad" in report.dropped[0]["reason"]
    saved = json.loads((tmp_path / "out" / "build_report.json").read_text())
    assert saved["dropped"] == report.dropped


def test_symlink_out_of_source_is_rejected(tmp_path):
    outside = tmp_path / "elsewhere.wav"
    import soundfile as sf

    sf.write(outside, tone(1.0), 16_000)
    src = write_release(
        tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]}, {"r1": None}
    )
    (src / "realism_data" / "r1.wav").symlink_to(outside)
    with pytest.raises(RecordError, match=r"record 'r1'.*wav_path.*outside the source folder"):
        build_dataset(src, tmp_path / "out", progress=False)


def test_duplicate_ids_and_invalid_json(tmp_path):
    src = write_release(
        tmp_path / "rel",
        {"archetype_data/test.jsonl": [archetype_record("a"), archetype_record("a")]},
    )
    with pytest.raises(
        RecordError, match=r"record 'a'.*'id'.*duplicate id, first seen at test\.jsonl:archetype:1"
    ):
        build_dataset(src, tmp_path / "out", progress=False)
    (src / "archetype_data" / "test.jsonl").write_text('{"id": "x", \n')
    with pytest.raises(RecordError, match=r"test\.jsonl:1.*invalid JSON"):
        build_dataset(src, tmp_path / "out", progress=False)


def test_unreadable_audio_names_record_and_file(tmp_path):
    src = write_release(
        tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]}, {"r1": None}
    )
    (src / "realism_data" / "r1.wav").write_bytes(b"RIFF-broken" * 50)
    with pytest.raises(RecordError, match=r"record 'r1'.*wav_path.*r1\.wav: unreadable audio"):
        build_dataset(src, tmp_path / "out", progress=False)
    nan = tone(1.0)
    nan[5] = np.nan
    import soundfile as sf

    sf.write(src / "realism_data" / "r1.wav", nan, 16_000, subtype="FLOAT")
    with pytest.raises(RecordError, match=r"record 'r1'.*non-finite"):
        build_dataset(src, tmp_path / "out", progress=False)


def test_missing_audio_is_reported_not_filled(tmp_path):
    src = write_release(
        tmp_path / "rel",
        {"archetype_data/test.jsonl": [archetype_record("a1"), archetype_record("a2")]},
        {"a2": None},
    )
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.rows == {"archetype": {"test": 1}}
    assert [m["where"].split("'")[1] for m in report.missing_audio] == ["a2"]
    empty = write_release(
        tmp_path / "rel2", {"archetype_data/test.jsonl": [archetype_record("b")]}, {"b": None}
    )
    with pytest.raises(hub_dataset.BuildError, match="no record could be built"):
        build_dataset(empty, tmp_path / "out2", progress=False)


def test_failed_build_keeps_previous_dataset(tmp_path):
    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    out = tmp_path / "out"
    build_dataset(src, out, progress=False)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    bad = realism_record(
        "r2", annotations={**realism_record("x")["annotations"], "dynamic_range": [9, 1, 1]}
    )
    write_release(src, {"realism_data/test.jsonl": [realism_record("r1"), bad]})
    with pytest.raises(RecordError):
        build_dataset(src, out, progress=False)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert [r["id"] for r in load_dataset(str(out), "realism")["test"]] == ["r1"]
    assert sorted(os.listdir(tmp_path)) == ["out", "rel"]  # no temporary folder left behind


def test_streams_into_several_shards(tmp_path, monkeypatch):
    records = [realism_record(f"r{i:02d}") for i in range(12)]
    audio = {r["id"]: tone(1.0, seed=i) for i, r in enumerate(records)}
    src = write_release(tmp_path / "rel", {"realism_data/train.jsonl": records}, audio)
    clip_bytes = (src / "realism_data" / "r00.wav").stat().st_size
    monkeypatch.setattr(hub_dataset, "SHARD_BYTES", 4 * clip_bytes)
    monkeypatch.setattr(hub_dataset, "ROW_GROUP_BYTES", 2 * clip_bytes)
    build_dataset(src, tmp_path / "out", progress=False)
    shards = sorted(p.name for p in (tmp_path / "out" / "realism").iterdir())
    assert shards == [f"train-{i:05d}-of-00003.parquet" for i in range(3)]
    ds = load_dataset(str(tmp_path / "out"), "realism")["train"]
    assert ds["id"] == [r["id"] for r in records]
    got, sr = decode(ds[7]["audio"])
    np.testing.assert_allclose(got[0], audio["r07"], atol=1e-4)


def test_demo_dataset_loads_from_repo_root(demo_dataset_dir, monkeypatch):
    monkeypatch.chdir(REPO)
    realism = load_dataset("speech-drame", "realism")
    archetype = load_dataset("speech-drame", "archetype")
    assert set(realism) == {"train", "test", "test_real"}
    assert set(archetype) == {"train", "test"}
    assert (
        realism["train"].num_rows + realism["test"].num_rows + realism["test_real"].num_rows >= 300
    )
    assert archetype["train"].num_rows + archetype["test"].num_rows >= 300
    for ds in (realism["test_real"], archetype["test"]):
        samples, sr = decode(ds[0]["audio"])
        assert sr == 16_000 and samples.shape[0] == 1 and samples.shape[1] > 0
