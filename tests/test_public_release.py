"""The public EvalBench as it is: annotation records without audio, audio attached later.

Releases here are written by the tests in the shape of the Hub's ``ftshijt/speech-drame-
evalbench`` (JSON-array record files, the authors' ``wav_path`` prefix, a card with the licence,
no audio), and in the variants the official loader accepts (JSON Lines, ratings at the top
level, optional fields absent). Numbers are compared with computations written out here
(numpy, scipy), not with the package's own.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import (
    PREFIX,
    archetype_record,
    realism_record,
    tone,
    write_json_release,
    write_release,
)
from datasets import load_dataset
from scipy.stats import pearsonr

from speech_drame.cli import main
from speech_drame.data.build import BuildError, build_dataset, failed_report_path
from speech_drame.data.reader import DatasetError, NoAudioError, open_split
from speech_drame.schema import REALISM_DIMENSIONS, RecordError, score_keys

SPLITS = {"archetype": ("train", "test"), "realism": ("train", "test", "test_real")}
SYSTEMS = ("Qwen2.5-Omni-7B", "Cascaded-Qwen3-CosyTTS")


def _archetype(i: int, split: str, rng: random.Random) -> dict:
    lang = "zh" if i % 3 else "en"
    rid = f"250814_{lang}_{split}_{i // 2:04d}_{SYSTEMS[i % 2]}.wav"
    passed = [rng.random() > 0.25 for _ in range(3)]
    scores = {
        d: [rng.randint(1, 5) if p else None for p in passed]
        for d in ("audio_quality", "human_likeness", "appropriateness", "confidence")
    }
    annotations = {**archetype_record(rid)["annotations"], "content_pass": passed, **scores}
    return archetype_record(rid, annotations=annotations, wav_path=f"{PREFIX}/archetype_data/{rid}")


def _realism(i: int, split: str, rng: random.Random) -> dict:
    rid = f"role-eval_{split}_{i:04d}"
    annotations = dict(realism_record(rid)["annotations"])
    for dim in REALISM_DIMENSIONS:
        annotations[dim] = [rng.randint(1, 5) for _ in range(3)]
    annotations["dynamic_range"] = [
        "N/A" if v < 3 else rng.randint(1, 5) for v in annotations["emotion_intensity_control"]
    ]
    return realism_record(rid, annotations=annotations)


def hub_records(seed: int = 0, n: int = 6) -> dict[str, list[dict]]:
    """``{"archetype_data/train.json": [...], ...}``: every split of both configs."""
    rng = random.Random(seed)
    make = {"archetype": _archetype, "realism": _realism}
    return {
        f"{config}_data/{split}.json": [make[config](i, split, rng) for i in range(n)]
        for config, splits in SPLITS.items()
        for split in splits
    }


@pytest.fixture(scope="module")
def hub_release(tmp_path_factory) -> tuple[Path, dict[str, list[dict]]]:
    records = hub_records()
    return write_json_release(tmp_path_factory.mktemp("hub") / "evalbench_raw", records), records


@pytest.fixture(scope="module")
def annotation_only(hub_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "evalbench"
    build_dataset(hub_release[0], out, progress=False)
    return out


def _mean_ratings(lists: list[list], fill: float | None = 1.0) -> np.ndarray:
    """Per clip the mean rating, nulls and "N/A" counted as ``fill`` (None: left out)."""
    out = []
    for values in lists:
        kept = [fill if v is None or v == "N/A" else v for v in values]
        kept = [v for v in kept if v is not None]
        out.append(np.mean(kept))
    return np.array(out)


# --- the build --------------------------------------------------------------------------


def test_annotation_only_release_builds_every_record(hub_release, annotation_only, capsys):
    release, records = hub_release
    report = json.loads((annotation_only / "build_report.json").read_text())
    for config, splits in SPLITS.items():
        for split in splits:
            source = records[f"{config}_data/{split}.json"]
            assert report["rows"][config][split] == len(source)
            assert sum(report["with_audio"][config][split].values()) == 0
            ds = load_dataset(str(annotation_only), config, split=split)
            assert ds.num_rows == len(source)
            for row, raw in zip(ds, source, strict=True):
                assert row["id"] == raw["id"] and row["audio"] is None
                assert row["duration_s"] is None and row["wav_path"] == raw["wav_path"]
                for key, values in raw["annotations"].items():
                    na = key in score_keys(config)
                    expected = [None if na and v == "N/A" else v for v in values]
                    assert row["annotations"][key] == expected, key
    all_ids = [r["id"] for c in SPLITS for s in SPLITS[c] for r in records[f"{c}_data/{s}.json"]]
    assert sorted(m["id"] for m in report["missing_audio"]) == sorted(all_ids)
    assert report["license"]["id"] == "cc-by-nc-4.0"
    card = (annotation_only / "README.md").read_text()
    assert f"Clips without audio: {len(all_ids)}" in card
    assert "| realism | test | 6 | 0 |" in card

    # the terminal names a few ids and the count; the report holds them all
    assert main(["build", "--source", str(release), "--out", str(annotation_only), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert f"no audio: {len(all_ids)} clip(s)" in printed and "... (" in printed
    assert "realism   test_real 6 clips (en 6), 0 with audio (en 0)" in printed
    assert main(["summary", "--dataset", str(annotation_only)]) == 0
    summary = capsys.readouterr().out
    assert "realism/test: 6 clips (0 with audio)" in summary
    assert "archetype/train: 6 clips (0 with audio)" in summary


def test_json_lines_and_top_level_ratings_build_the_same_rows(tmp_path):
    nested = [realism_record(f"r{i}") for i in range(3)]
    flat = []
    for record in nested:
        record = dict(record)
        flat.append({**{k: v for k, v in record.items() if k != "annotations"},
                     **record["annotations"]})  # fmt: skip
    a = write_release(
        tmp_path / "a", {"realism_data/test.jsonl": nested}, {r["id"]: None for r in nested}
    )
    b = write_release(
        tmp_path / "b", {"realism_data/test.jsonl": flat}, {r["id"]: None for r in flat}
    )
    build_dataset(a, tmp_path / "out_a", progress=False)
    build_dataset(b, tmp_path / "out_b", progress=False)
    rows_a = list(open_split(tmp_path / "out_a", "realism", "test").rows(["id", "annotations"]))
    rows_b = list(open_split(tmp_path / "out_b", "realism", "test").rows(["id", "annotations"]))
    assert rows_a == rows_b and len(rows_a) == 3

    clash = {**flat[0], "annotations": {"pitch_variation": [1, 1, 1]}}
    c = write_release(tmp_path / "c", {"realism_data/test.jsonl": [clash]}, {"r0": None})
    with pytest.raises(RecordError, match=r"'pitch_variation'.*top level and under 'annotations'"):
        build_dataset(c, tmp_path / "out_c", progress=False)


def test_optional_fields_may_be_absent_and_are_counted(tmp_path):
    realism = realism_record("r1", dataset_name="RoleVariation", audio_info=None)
    for key in ("data_source", "char_age", "transcript"):
        del realism[key]
    for key in ("comments", "prmopt_quality", "annotator_confidence_rating"):
        del realism["annotations"][key]
    archetype = archetype_record("a1.wav")
    for key in ("confidence", "audio_quality_comment"):
        del archetype["annotations"][key]
    src = write_release(
        tmp_path / "rel",
        {"realism_data/test.jsonl": [realism], "archetype_data/test.jsonl": [archetype]},
        {"r1": None, "a1.wav": None},
    )
    report = build_dataset(src, tmp_path / "out", progress=False)
    assert report.absent_fields == {
        "archetype": {"annotations.audio_quality_comment": 1, "annotations.confidence": 1},
        "realism": {"annotations.annotator_confidence_rating": 1, "annotations.comments": 1,
                    "annotations.prmopt_quality": 1, "char_age": 1, "data_source": 1,
                    "transcript": 1},
    }  # fmt: skip
    assert report.ignored_fields == {"realism": {"audio_info": 1, "dataset_name": 1}}
    row = open_split(tmp_path / "out", "realism", "test").row(0, ["data_source", "annotations"])
    assert row["data_source"] is None and row["annotations"]["comments"] is None
    assert row["annotations"]["pitch_variation"] == [4, 3, 5]
    row = open_split(tmp_path / "out", "archetype", "test").row(0, ["annotations"])
    assert row["annotations"]["confidence"] is None

    del realism["char_profile"]  # a context text a scorer is given stays required
    bad = write_release(tmp_path / "bad", {"realism_data/test.jsonl": [realism]}, {"r1": None})
    with pytest.raises(RecordError, match=r"record 'r1'.*'char_profile'.*required field"):
        build_dataset(bad, tmp_path / "out2", progress=False)


def test_a_build_without_rows_writes_the_report_of_why(tmp_path):
    good = write_release(tmp_path / "good", {"realism_data/test.jsonl": [realism_record("r1")]})
    out = tmp_path / "out"
    build_dataset(good, out, progress=False)
    before = sorted(p.name for p in (out / "realism").iterdir())
    broken = realism_record("r2", annotations={"pitch_variation": [9]})
    bad = write_json_release(tmp_path / "bad", {"realism_data/test.json": [broken, ["x"]]})
    with pytest.raises(BuildError, match="no record could be built") as err:
        build_dataset(bad, out, skip_invalid=True, overwrite=True, progress=False)
    failed = failed_report_path(out)
    assert str(failed) in str(err.value)
    reasons = [d["reason"] for d in json.loads(failed.read_text())["dropped"]]
    assert len(reasons) == 2 and "expected a JSON object" in reasons[1]
    assert sorted(p.name for p in (out / "realism").iterdir()) == before  # kept
    build_dataset(good, out, progress=False)
    assert not failed.exists()  # a successful build removes the stale report


# --- audio kept elsewhere ---------------------------------------------------------------


def _wav(path: Path, seed: int, sr: int = 16_000) -> np.ndarray:
    samples = tone(1.0 + 0.1 * seed, sr=sr, freq=180.0 + 20 * seed, seed=seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, samples, sr, format="FLAC" if path.suffix == ".flac" else "WAV")
    return samples


def test_audio_dir_attaches_audio_by_name_and_id_archives_included(hub_release, tmp_path):
    release, records = hub_release
    realism = records["realism_data/test.json"]
    archetype = records["archetype_data/test.json"]
    audio = tmp_path / "audio"
    written = {
        realism[0]["id"]: _wav(audio / "realism" / f"{realism[0]['id']}.wav", 0),  # wav_path name
        realism[1]["id"]: _wav(audio / f"{realism[1]['id']}.flac", 1),  # id + suffix
        archetype[0]["id"]: _wav(audio / "deep" / "er" / archetype[0]["id"], 2),  # id (ends .wav)
    }
    packed = tmp_path / "packed"
    with zipfile.ZipFile(audio / "more.zip", "w") as zf:
        written[archetype[1]["id"]] = _wav(packed / archetype[1]["id"], 3)
        zf.write(packed / archetype[1]["id"], f"clips/{archetype[1]['id']}")
    out = tmp_path / "evalbench"
    argv = ["build", "--source", str(release), "--out", str(out), "--audio-dir", str(audio)]
    assert main([*argv, "--quiet"]) == 0
    report = json.loads((out / "build_report.json").read_text())
    assert report["audio_found"] == {"release": 0, "audio_dir": 4}
    assert report["audio_dirs"][0]["extracted"][0]["archive"] == "more.zip"
    assert sum(report["with_audio"]["realism"]["test"].values()) == 2
    assert sum(report["with_audio"]["archetype"]["test"].values()) == 2
    assert len(report["missing_audio"]) == sum(len(v) for v in records.values()) - 4
    for config in ("realism", "archetype"):
        split = open_split(out, config, "test")
        for row in split.rows(["id", "audio", "duration_s"], with_audio_only=True):
            decoded, sr = sf.read(io.BytesIO(row["audio"]["bytes"]))
            assert sr == 16_000
            np.testing.assert_allclose(decoded, written[row["id"]], atol=1e-4)
            assert row["duration_s"] == pytest.approx(len(decoded) / sr)
        assert split.n_with_audio == 2

    # a rebuild with a second folder attaches more and replaces the earlier build
    extra = tmp_path / "extra"
    _wav(extra / f"{realism[2]['id']}.wav", 4)
    assert main([*argv, "--audio-dir", str(extra), "--quiet"]) == 0
    assert open_split(out, "realism", "test").n_with_audio == 3


def test_two_different_files_under_one_name_are_refused(hub_release, tmp_path):
    release, records = hub_release
    name = f"{records['realism_data/test.json'][0]['id']}.wav"
    _wav(tmp_path / "a" / name, 0)
    _wav(tmp_path / "b" / name, 1)
    (tmp_path / "c").mkdir()
    shutil.copy(tmp_path / "a" / name, tmp_path / "c" / name)
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    with pytest.raises(
        BuildError, match=rf"two different audio files are named '{name}'.*a/{name} and .*b/{name}"
    ):
        build_dataset(release, tmp_path / "out", audio_dirs=dirs, progress=False)
    same = [str(tmp_path / "a"), str(tmp_path / "c")]  # identical copies are one file
    report = build_dataset(release, tmp_path / "out", audio_dirs=same, progress=False)
    assert report.audio_found["audio_dir"] == 1


def test_an_output_holding_an_audio_dir_is_refused(hub_release, tmp_path):
    (tmp_path / "out" / "audio").mkdir(parents=True)
    with pytest.raises(BuildError, match="holds the --audio-dir folder"):
        build_dataset(hub_release[0], tmp_path / "out", audio_dirs=[tmp_path / "out" / "audio"],
                      progress=False)  # fmt: skip
    assert main(["build", "--source", str(hub_release[0]), "--out", str(tmp_path / "o2"),
                 "--audio-dir", str(tmp_path / "nowhere"), "--quiet"]) == 2  # fmt: skip


def test_the_shipped_official_samples_build_as_before(official_samples_dir, official_dataset_dir):
    """The rows with audio are what they were; the record whose clip is absent is now a row."""
    split = open_split(official_dataset_dir, "realism", "test")
    assert split.n_rows == 2 and split.without_audio == ["role-eval_v1_0000"]
    row = next(split.rows(["id", "duration_s"], with_audio_only=True))
    assert row == {"id": "role-eval_v1_0001", "duration_s": pytest.approx(11.01, abs=0.01)}
    assert open_split(official_dataset_dir, "archetype", "test").without_audio == []


# --- the reader ---------------------------------------------------------------------------


def test_open_split_names_what_it_cannot_read(annotation_only, tmp_path):
    with pytest.raises(DatasetError, match=r"--dataset 'nowhere': no such folder"):
        open_split("nowhere", "realism", "test")
    with pytest.raises(DatasetError, match=r"realism/dev: no such split .*'test_real'"):
        open_split(annotation_only, "realism", "dev")
    split = open_split(annotation_only, "realism", "test")
    with pytest.raises(DatasetError, match=r"realism/test: no column nope"):
        list(split.rows(["id", "nope"]))
    assert [r["id"] for r in split.rows(["id"])] == split.without_audio
    assert list(split.rows(["id"], with_audio_only=True)) == []
    assert split.row(2, ["id"])["id"] == "role-eval_test_0002"


# --- what needs only ratings ----------------------------------------------------------------


def test_agreement_and_ceiling_on_an_annotation_only_build(hub_release, annotation_only, capsys):
    records = hub_release[1]["realism_data/test.json"]
    assert main(["agreement", "--dataset", str(annotation_only), "--config", "realism",
                 "--split", "test", "--json"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] == len(records)
    for dim in ("pitch_variation", "dynamic_range"):
        ratings = np.array([[1 if v == "N/A" else v for v in r["annotations"][dim]]
                            for r in records], float)  # fmt: skip
        expected = 1 - np.std(ratings, axis=1, ddof=1).mean() / 4
        assert report["dimensions"][dim]["agreement"] == pytest.approx(expected)
        per = [pearsonr(ratings[:, j], np.delete(ratings, j, axis=1).mean(axis=1))[0]
               for j in range(ratings.shape[1])]  # fmt: skip
        assert report["dimensions"][dim]["ceiling"] == pytest.approx(np.mean(per))


def test_drame_metric_and_table_on_an_annotation_only_build(
    hub_release, annotation_only, tmp_path, capsys
):
    import evaluate
    from conftest import REPO

    records = hub_release[1]["archetype_data/test.json"]
    ds = load_dataset(str(annotation_only), "archetype", split="test")
    dims = ["audio_quality", "human_likeness"]
    rng = np.random.default_rng(0)
    preds = rng.uniform(1, 5, size=(ds.num_rows, 2))
    refs = [[a[d] for d in dims] for a in ds["annotations"]]
    metric = evaluate.load(str(REPO / "evaluate_metric" / "drame_metric"))
    result = metric.compute(predictions=preds.tolist(), references=refs, dimensions=dims)
    for j, dim in enumerate(dims):
        truth = _mean_ratings([r["annotations"][dim] for r in records])
        assert result[f"{dim}_pearson"] == pytest.approx(pearsonr(preds[:, j], truth)[0])

    path = tmp_path / "preds.jsonl"
    path.write_text("".join(
        json.dumps({"id": r["id"], "scores": {d: float(preds[i, j]) for j, d in enumerate(dims)}}) + "\n"
        for i, r in enumerate(records)
    ))  # fmt: skip
    assert main(["table", "--predictions", str(path), "--dataset", str(annotation_only),
                 "--config", "archetype", "--json"]) == 0  # fmt: skip
    table = json.loads(capsys.readouterr().out)["rows"][0]["table"]
    truth = _mean_ratings([r["annotations"]["audio_quality"] for r in records])
    assert table["audio_quality_pearson"] == pytest.approx(pearsonr(preds[:, 0], truth)[0])


def test_rolebench_scenarios_from_an_annotation_only_build(hub_release, annotation_only):
    from speech_drame.rolebench.scenarios import load_dataset_scenarios

    records = hub_release[1]["realism_data/test_real.json"]
    scenarios = load_dataset_scenarios(annotation_only, "realism", "test_real")
    # the six records share one profile, scene and traits: one prompt, named after its first clip
    assert [s.id for s in scenarios.scenarios] == [records[0]["id"]]
    assert scenarios.scenarios[0].context == {
        "profile": records[0]["char_profile"],
        "scene": records[0]["local_scene"],
        "traits": records[0]["char_style"],
    }


def _finetune_folder(folder: Path, records: list[dict], rng: np.random.Generator) -> dict:
    """One JSON array per dimension as the official fine-tuning test writes it; returns the
    probability_score per (clip, release dimension)."""
    from speech_drame.official_formats import OFFICIAL_NAMES

    folder.mkdir(parents=True)
    scores = {}
    for dim in REALISM_DIMENSIONS[:3]:
        rows = []
        for r in records:
            scores[r["id"], dim] = float(rng.uniform(1, 5))
            truth = {d: r["annotations"].get(d, []) for d in REALISM_DIMENSIONS}
            truth["annotator_confidence_rating"] = r["annotations"]["annotator_confidence_rating"]
            rows.append({"id": r["id"], "specific_dimension": OFFICIAL_NAMES[dim],
                         "model_score": 3, "probability_score": scores[r["id"], dim],
                         "ground_truth_ratings": truth, "char_profile": r["char_profile"]})  # fmt: skip
        (folder / f"{OFFICIAL_NAMES[dim]}.json").write_text(json.dumps(rows, indent=2))
    return scores


def test_finetune_results_are_scored_against_the_ratings_they_carry(
    hub_release, annotation_only, tmp_path, capsys
):
    records = hub_release[1]["realism_data/test.json"]
    scores = _finetune_folder(tmp_path / "results", records, np.random.default_rng(1))
    out = tmp_path / "preds.jsonl"
    argv = [
        "import-predictions",
        str(tmp_path / "results"),
        "--config",
        "realism",
        "--out",
        str(out),
    ]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    table = report["table"]
    assert table["references"].startswith("ground_truth_ratings of the 3 fine-tuning result file")
    assert table["dataset"] is None and table["rows"][0]["clips_scored"] == len(records)
    for dim in REALISM_DIMENSIONS[:3]:
        pred = [scores[r["id"], dim] for r in records]
        truth = _mean_ratings([r["annotations"][dim] for r in records])
        assert table["rows"][0]["table"][f"{dim}_pearson"] == pytest.approx(
            pearsonr(pred, truth)[0]
        )
    assert "references_disagree" not in report["import"]

    # with --dataset: scored against the dataset, and the clips where the two differ are named
    changed = json.loads((tmp_path / "results" / "pitch_dynamics.json").read_text())
    changed[1]["ground_truth_ratings"]["pitch_variation"] = [1, 1, 1]
    (tmp_path / "results" / "pitch_dynamics.json").write_text(json.dumps(changed))
    assert main([*argv, "--dataset", str(annotation_only)]) == 2  # the other files disagree
    assert "differs from" in capsys.readouterr().err
    for name in ("rhythmic_naturalness.json", "stress_emphasis.json"):
        (tmp_path / "results" / name).unlink()
    assert main([*argv, "--dataset", str(annotation_only)]) == 0
    printed = capsys.readouterr().out
    assert f"references: realism/test of {annotation_only}" in printed
    assert "disagree on 1 clip-dimension(s)" in printed
    assert f"{records[1]['id']} pitch_variation: dataset" in printed


def test_zero_shot_outputs_need_a_dataset(tmp_path, capsys):
    path = tmp_path / "trial.jsonl"
    path.write_text(json.dumps({"id": "a", "model_name": "m", "response": "{}"}) + "\n")
    assert main(["import-predictions", str(path), "--config", "realism", "--out",
                 str(tmp_path / "p.jsonl")]) == 2  # fmt: skip
    assert "carry no reference ratings: give --dataset" in capsys.readouterr().err


# --- what needs audio ---------------------------------------------------------------------


def test_work_that_needs_audio_stops_before_any_of_it(annotation_only, tmp_path, capsys):
    hint = "attach it with `speech-drame build --source RELEASE --audio-dir DIR`"
    runs = {
        "train-lite": ["train-lite", "--dataset", str(annotation_only), "--out", str(tmp_path / "l")],
        "features": ["features", "--dataset", str(annotation_only), "--cache", str(tmp_path / "c")],
        "judge": ["judge", str(tmp_path / "clip.wav"), "--config", "realism", "--profile", "p",
                  "--scene", "s", "--traits", "t", "--model", "m", "--endpoint",
                  "http://127.0.0.1:9/v1", "--shots", "2", "--train-dataset", str(annotation_only)],
    }  # fmt: skip
    for what, argv in runs.items():
        assert main(argv) == 2, what
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "needs audio" in err and hint in err, (what, err)
        assert "archetype/train: 6 of 6" in err or "realism/train: 6 of 6" in err, err
    assert not (tmp_path / "l").exists() and not (tmp_path / "c").exists()


def test_train_py_stops_before_loading_a_model(annotation_only, tmp_path, capsys):
    pytest.importorskip("transformers")
    from speech_drame.training.run import main as train_main

    argv = ["--tiny", "--dataset", str(annotation_only), "--dataset_config_name", "realism",
            "--output_dir", str(tmp_path / "run"), "--max_steps", "1"]  # fmt: skip
    assert train_main(argv) == 2
    err = capsys.readouterr().err
    assert "train.py needs audio" in err and "realism/train: 6 of 6 clips without audio" in err


def test_campaign_from_a_dataset_leaves_out_clips_without_audio(hub_release, tmp_path, capsys):
    pytest.importorskip("sqlalchemy")
    release, records = hub_release
    audio = tmp_path / "audio"
    realism = records["realism_data/test.json"]
    for i in (0, 3):
        _wav(audio / f"{realism[i]['id']}.wav", i)
    out = tmp_path / "evalbench"
    build_dataset(release, out, audio_dirs=[audio], progress=False)
    db = tmp_path / "c.db"
    assert main(["campaign", "create", "--clips", str(out), "--config", "realism",
                 "--raters-per-clip", "2", "--out", str(db)]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "2 clips" in captured.out and "4 clip(s) without audio left out" in captured.out
    assert f"clip {realism[1]['id']!r}: no audio in the dataset" in captured.err
    written = sorted((tmp_path / "c.db.audio").iterdir())
    assert [p.name for p in written] == ["000000.wav", "000001.wav"]
    from speech_drame.campaign.store import open_campaign

    clips = open_campaign(str(db)).clips()
    assert [c.id for c in clips] == [realism[0]["id"], realism[3]["id"]]

    # a release record file (a JSON array) is read as it is; its absent clips are counted
    record_file = release / "realism_data" / "test.json"
    assert main(["campaign", "create", "--clips", str(record_file), "--config", "realism",
                 "--raters-per-clip", "2", "--out", str(tmp_path / "d.db")]) == 2  # fmt: skip
    assert "no clip has its audio file (6 lines)" in capsys.readouterr().err


def test_no_audio_error_is_a_dataset_error():
    assert issubclass(NoAudioError, DatasetError) and issubclass(DatasetError, ValueError)


def test_other_shapes_get_an_error_naming_the_file_and_what_was_expected(tmp_path):
    flat = tmp_path / "flat"
    (flat / "data").mkdir(parents=True)
    (flat / "data" / "train-00000.parquet").write_bytes(b"PAR1")
    (flat / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n")
    with pytest.raises(
        FileNotFoundError,
        match=r"not an EvalBench release in the expected shape.*it holds data/train-00000.parquet, README.md",
    ):
        build_dataset(flat, tmp_path / "out", progress=False)

    wrapped = {"records": [realism_record("r1")], "version": 1}
    nested = tmp_path / "nested"
    (nested / "realism_data").mkdir(parents=True)
    (nested / "realism_data" / "test.json").write_text(json.dumps(wrapped, indent=2))
    with pytest.raises(
        RecordError,
        match=r"test\.json:1.*expected a JSON array of records or one record per line.*'records', 'version'",
    ):
        build_dataset(nested, tmp_path / "out", license_id="cc-by-4.0", progress=False)
