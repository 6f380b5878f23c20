import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO, archetype_record, realism_record, tone, write_release
from datasets import load_dataset

from speech_drame.data import build as data_build
from speech_drame.data.build import build_dataset
from speech_drame.schema import REALISM_DIMENSIONS, RecordError


def decode(audio) -> tuple[np.ndarray, int]:
    samples = audio.get_all_samples()
    return samples.data.numpy(), samples.sample_rate


def test_official_samples_round_trip(official_samples_dir, official_dataset_dir):
    report = json.loads((official_dataset_dir / "build_report.json").read_text())
    # every record is a row; the one whose clip the samples lack has no audio
    assert report["rows"] == {"archetype": {"test": 2}, "realism": {"test": 2}}
    assert report["with_audio"] == {
        "archetype": {"test": {"zh": 2}},
        "realism": {"test": {"en": 1}},
    }
    assert [m["wav_path"].rsplit("/", 1)[1] for m in report["missing_audio"]] == [
        "role-eval_v1_0000.wav"
    ]
    # archetype ids carry "_zh_"; the realism samples are told by their English transcripts
    assert report["languages"] == {"archetype": {"test": {"zh": 2}}, "realism": {"test": {"en": 2}}}
    card = (official_dataset_dir / "README.md").read_text()
    assert "| archetype | test | 2 | 2 |" in card and "| zh: 2 (2 with audio) |" in card

    for config in ("archetype", "realism"):
        raw = [
            json.loads(line)
            for line in (official_samples_dir / f"{config}_data" / "test.jsonl").open()
        ]
        raw = {r["id"]: r for r in raw}
        ds = load_dataset(str(official_dataset_dir), config)["test"]
        assert sorted(ds["id"]) == sorted(raw)
        for row in ds:
            source = raw[row["id"]]
            for key, value in source.items():
                if key != "annotations":
                    assert row[key] == value, key
            assert row["annotations"] == source["annotations"]  # no N/A in these samples
            assert row["language"] == ("zh" if config == "archetype" else "en")
            if row["id"] == "role-eval_v1_0000":
                assert row["audio"] is None and row["duration_s"] is None
                continue
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


def test_archetype_not_applicable_is_accepted_and_flagged(tmp_path):
    record = archetype_record("a1")
    record["annotations"]["human_likeness"] = [3, "N/A", None]
    src = write_release(tmp_path / "rel", {"archetype_data/test.jsonl": [record]})
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.not_applicable_scores == {"archetype": 1}
    row = load_dataset(str(tmp_path / "out"), "archetype")["test"][0]
    # raw truth kept: both nulls, only the "N/A" one flagged
    assert row["annotations"]["human_likeness"] == [3, None, None]
    assert row["not_applicable"]["human_likeness"] == [False, True, False]
    assert row["not_applicable"]["audio_quality"] == [False, False, False]


def test_a_rebuilt_folder_never_loads_the_previous_build_from_the_cache(tmp_path):
    """``datasets`` keys its cache on the card: a corrected rating that keeps every size must
    still reach ``load_dataset`` (the shard names carry their content hash)."""
    record = archetype_record("a1")
    src = write_release(tmp_path / "rel", {"archetype_data/test.jsonl": [record]})
    build_dataset(src, tmp_path / "out", progress=False)
    before = load_dataset(str(tmp_path / "out"), "archetype", split="test")[0]["annotations"]
    assert before["audio_quality"] == [4, 5, None]
    record["annotations"]["audio_quality"] = [5, 4, None]  # same sizes, other content
    (src / "archetype_data" / "test.jsonl").write_text(json.dumps(record) + "\n")
    build_dataset(src, tmp_path / "out", progress=False)
    after = load_dataset(str(tmp_path / "out"), "archetype", split="test")[0]["annotations"]
    assert after["audio_quality"] == [5, 4, None]


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
    "missing rated dimension": (
        lambda: archetype_record(
            "bad",
            annotations={
                k: v
                for k, v in archetype_record("x")["annotations"].items()
                if k != "human_likeness"
            },
        ),
        r"record 'bad'.*annotations\.human_likeness.*required field is missing",
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


def test_missing_audio_is_a_row_without_audio_never_filled(tmp_path):
    src = write_release(
        tmp_path / "rel",
        {"archetype_data/test.jsonl": [archetype_record("a1"), archetype_record("a2")]},
        {"a2": None},
    )
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.rows == {"archetype": {"test": 2}}
    assert report.with_audio == {"archetype": {"test": {"en": 1}}}
    assert [m["id"] for m in report.missing_audio] == ["a2"]
    rows = {r["id"]: r for r in load_dataset(str(tmp_path / "out"), "archetype")["test"]}
    assert rows["a2"]["audio"] is None and rows["a2"]["duration_s"] is None
    assert rows["a1"]["audio"] is not None


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
    monkeypatch.setattr(data_build, "SHARD_BYTES", 4 * clip_bytes)
    monkeypatch.setattr(data_build, "ROW_GROUP_BYTES", 2 * clip_bytes)
    build_dataset(src, tmp_path / "out", progress=False)
    shards = sorted(p.name for p in (tmp_path / "out" / "realism").iterdir())
    assert [n[: -len("-123456789abc.parquet")] for n in shards] == [
        f"train-{i:05d}-of-00003" for i in range(3)
    ]
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


# --- where a build may write ---------------------------------------------------------------


def _snapshot(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_out_that_is_holds_or_lies_inside_the_source_is_refused(tmp_path):
    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    before = _snapshot(src)
    for out, message in (
        (src, "is the source folder"),
        (src / "built", "inside the source folder"),
        (tmp_path, "holds the source folder"),
    ):
        with pytest.raises(data_build.BuildError, match=message):
            build_dataset(src, out, progress=False)
        assert _snapshot(src) == before
    assert sorted(os.listdir(tmp_path)) == ["rel"]


def test_cli_refuses_out_dot_above_the_source_with_one_line(tmp_path, monkeypatch, capsys):
    from speech_drame.cli import main

    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    before = _snapshot(src)
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--source", "rel", "--out", ".", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "holds the source" in err
    assert _snapshot(src) == before


def test_a_folder_that_is_not_an_earlier_build_is_never_replaced(tmp_path, capsys):
    from speech_drame.cli import main

    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    with pytest.raises(data_build.BuildError, match=r"not an earlier build: choose another folder"):
        build_dataset(src, out, progress=False)
    for extra in ([], ["--overwrite"]):  # --overwrite replaces only an earlier build
        assert main(["build", "--source", str(src), "--out", str(out), "--quiet", *extra]) == 2
        assert "only an earlier build is ever replaced" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "my notes"
    (out / "notes.txt").unlink()
    build_dataset(src, out, progress=False)
    build_dataset(src, out, progress=False)  # an earlier build is replaced without asking
    (tmp_path / "empty").mkdir()
    build_dataset(src, tmp_path / "empty", progress=False)  # so is an empty folder
    assert [r["id"] for r in load_dataset(str(tmp_path / "empty"), "realism")["test"]] == ["r1"]


def test_stale_temporary_folders_of_killed_builds_are_removed_and_reported(tmp_path, capsys):
    from speech_drame.cli import main

    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = [tmp_path / f".out.tmp-{dead.stdout.strip()}", tmp_path / ".out.staging-k1ll3d"]
    for folder in stale:
        (folder / "realism").mkdir(parents=True)
        (folder / "realism" / "test-00000.parquet.part").write_bytes(b"PAR1 half")
    live = tmp_path / f".out.tmp-{os.getppid()}"  # a running process: not touched
    live.mkdir()
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert sorted(report.cleanup) == sorted(
        f"removed stale temporary folder {p} (left by a killed build)" for p in stale
    )
    assert (
        json.loads((tmp_path / "out" / "build_report.json").read_text())["cleanup"]
        == report.cleanup
    )
    assert sorted(os.listdir(tmp_path)) == sorted(["out", "rel", live.name])
    live.rmdir()
    (tmp_path / ".out.staging-again").mkdir()
    assert main(["build", "--source", str(src), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "removed stale temporary folder" in capsys.readouterr().out


KILL_POINTS = {
    # staged dataset complete, swap not begun: the old dataset stays
    "before the swap": "data_build.render_card = die",
    # the two-rename fallback, killed with the old folder moved aside: the next run restores it
    "between the renames": textwrap.dedent(
        """
        atomic_io._exchange = lambda a, b: False
        rename = Path.rename
        def rename_then_die(self, target):
            rename(self, target)
            if Path(target).name.startswith(".out.old-"):
                die()
        Path.rename = rename_then_die
        """
    ),
    # the atomic exchange done, the old copy not yet removed: the new dataset is in place
    "after the exchange": textwrap.dedent(
        """
        exchange = atomic_io._exchange
        def exchange_then_die(a, b):
            if exchange(a, b):
                die()
            return False
        atomic_io._exchange = exchange_then_die
        """
    ),
}


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_a_build_killed_during_the_swap_leaves_a_complete_dataset(tmp_path, point):
    src = write_release(tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r1")]})
    out = tmp_path / "out"
    build_dataset(src, out, progress=False)
    write_release(src, {"realism_data/test.jsonl": [realism_record("r1"), realism_record("r2")]})
    child = textwrap.dedent(
        """
        import os, signal
        from pathlib import Path
        from speech_drame import atomic_io
        from speech_drame.data import build as data_build

        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    child += KILL_POINTS[point]
    child += f"\ndata_build.build_dataset({str(src)!r}, {str(out)!r}, progress=False)\n"
    proc = subprocess.run([sys.executable, "-c", child], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    messages = data_build.recover_output(out)
    ids = [r["id"] for r in load_dataset(str(out), "realism", split="test")]
    assert ids == (["r1", "r2"] if point == "after the exchange" else ["r1"])
    assert messages and all(str(tmp_path) in m for m in messages)
    assert sorted(os.listdir(tmp_path)) == ["out", "rel"]


# --- shards and counts ----------------------------------------------------------------------


def test_files_mapped_to_one_split_keep_all_their_rows(tmp_path, monkeypatch):
    """The README's --split-map dev.jsonl=test example: test.jsonl and dev.jsonl feed one split."""
    import yaml

    src = write_release(
        tmp_path / "rel",
        {
            "archetype_data/test.jsonl": [archetype_record(f"t{i}") for i in range(3)],
            "archetype_data/dev.jsonl": [archetype_record(f"d{i}") for i in range(2)],
        },
    )
    report = build_dataset(src, tmp_path / "out", split_map={"dev": "test"}, progress=False)
    ds = load_dataset(str(tmp_path / "out"), "archetype", split="test")
    assert sorted(ds["id"]) == ["d0", "d1", "t0", "t1", "t2"]
    card = (tmp_path / "out" / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    (info,) = front["dataset_info"]
    (split,) = info["splits"]
    assert split["name"] == "test" and split["num_examples"] == ds.num_rows
    assert report.rows == {"archetype": {"test": ds.num_rows}}
    saved = json.loads((tmp_path / "out" / "build_report.json").read_text())
    assert saved["rows"] == report.rows
    assert saved["hours"]["archetype"]["test"] == pytest.approx(sum(ds["duration_s"]) / 3600)
    assert "| archetype | test | 5 |" in card

    clip_bytes = (src / "archetype_data" / "t0.wav").stat().st_size
    monkeypatch.setattr(data_build, "SHARD_BYTES", 2 * clip_bytes)  # shards of two clips
    build_dataset(src, tmp_path / "out2", split_map={"dev": "test"}, progress=False)
    shards = sorted(p.name for p in (tmp_path / "out2" / "archetype").iterdir())
    assert [n[: -len("-123456789abc.parquet")] for n in shards] == [
        f"test-{i:05d}-of-00003" for i in range(3)
    ]  # numbered across files
    ds2 = load_dataset(str(tmp_path / "out2"), "archetype", split="test")
    assert sorted(ds2["id"]) == sorted(ds["id"])
