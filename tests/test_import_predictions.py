"""`speech-drame import-predictions`: the official pipelines' outputs, written here from the
official sample records, round-trip into our predictions file and the paper table."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from speech_drame.cli import main
from speech_drame.official_formats import OFFICIAL_DIMENSIONS, OFFICIAL_NAMES
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS

ARCHETYPE = ("content_pass", *ARCHETYPE_DIMENSIONS)


def samples(official_samples_dir, official_dataset_dir, config) -> list[dict]:
    """The official sample records of ``config`` that the built dataset holds (every one: the
    record whose clip is absent is a row without audio)."""
    from datasets import load_dataset

    ids = set(load_dataset(str(official_dataset_dir), config, split="test")["id"])
    path = official_samples_dir / f"{config}_data" / "test.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if r["id"] in ids]


def fewshot_line(record: dict, answer, **extra) -> dict:
    """A line as the official eval.py writes it (audio_path from the record's wav_path)."""
    response = answer if isinstance(answer, str) else json.dumps(answer)
    line = {"id": record["id"], "model_name": "gemini25", "response": response}
    return {**line, "audio_path": "/mnt/data/" + record["wav_path"].split("/")[-1], **extra}


def write_jsonl(path, lines) -> str:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return str(path)


def run_import(args, capsys, code=0) -> dict:
    assert main(["import-predictions", *args, "--json"]) == code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def read_rows(path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text("utf-8").splitlines())}


def test_fewshot_trials_are_averaged_and_matched(
    official_samples_dir, official_dataset_dir, tmp_path, capsys
):
    records = samples(official_samples_dir, official_dataset_dir, "archetype")
    assert len(records) == 2 and all(r["id"].endswith(".wav") for r in records)
    rng = np.random.default_rng(0)
    answers = {  # trial -> clip -> answer
        t: {r["id"]: {"content_pass": bool(rng.random() > 0.4),
                      **{d: int(rng.integers(1, 6)) for d in ARCHETYPE_DIMENSIONS}}
            for r in records}
        for t in range(3)
    }  # fmt: skip
    trials = []
    for t, by_clip in answers.items():
        lines = [fewshot_line(r, by_clip[r["id"]]) for r in records]
        lines[0]["response"] = f"```json\n{lines[0]['response']}\n```"  # a fenced answer
        if t == 2:  # no audio_path: the record id names the clip
            lines[1]["audio_path"] = ""
        if t == 0:
            lines.append(
                fewshot_line({"id": "x", "wav_path": "a/extra_clip.wav"}, by_clip[records[0]["id"]])
            )
        trials.append(write_jsonl(tmp_path / f"trial{t}.jsonl", lines))
    out = tmp_path / "gemini.jsonl"
    report = run_import([*trials, "--config", "archetype", "--dataset",
                         str(official_dataset_dir), "--out", str(out)], capsys)  # fmt: skip
    rows = read_rows(out)
    assert set(rows) == {r["id"][: -len(".wav")] for r in records} | {"extra_clip"}
    for r in records:
        row = rows[r["id"][: -len(".wav")]]
        assert row["trials"] == 3
        for dim in ARCHETYPE:
            mean = np.mean([float(answers[t][r["id"]][dim]) for t in range(3)])
            got = row["content_pass"] if dim == "content_pass" else row["scores"][dim]
            assert got == pytest.approx(mean)
    summary = report["import"]
    assert summary["format"] == "fewshot" and summary["clips"] == 3 and summary["unusable"] == 0
    assert "left out and counted" in summary["failed_rule"]
    row = report["table"]["rows"][0]
    assert row["name"] == "gemini" and row["clips_scored"] == 2
    assert row["not_in_dataset"] == {"count": 1, "ids": ["extra_clip"]}
    assert report["table"]["label_policy"] == "paper"

    only_one = write_jsonl(
        tmp_path / "one.jsonl", [fewshot_line(records[0], answers[0][records[0]["id"]])]
    )
    assert main(["import-predictions", only_one, "--config", "archetype", "--dataset",
                 str(official_dataset_dir), "--out", str(tmp_path / "one_out.jsonl")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert f"1 clips of the references without a prediction: {records[1]['id']}" in printed
    assert "label policy paper" in printed and "scores: the judge's answers" in printed


def test_realism_official_names_map_to_release_fields(
    official_samples_dir, official_dataset_dir, tmp_path, capsys
):
    record = samples(official_samples_dir, official_dataset_dir, "realism")[0]
    answer = {OFFICIAL_NAMES[d]: 1 + i % 5 for i, d in enumerate(REALISM_DIMENSIONS)}
    assert "pitch_dynamics" in answer and "global_story_fit" in answer
    trial = write_jsonl(tmp_path / "t.jsonl", [fewshot_line(record, answer)])
    out = tmp_path / "p.jsonl"
    report = run_import([trial, "--config", "realism", "--dataset", str(official_dataset_dir),
                         "--out", str(out), "--label-policy", "skip"], capsys)  # fmt: skip
    (row,) = read_rows(out).values()
    assert row["id"] == record["id"]
    assert row["scores"] == {OFFICIAL_DIMENSIONS[k]: float(v) for k, v in answer.items()}
    assert report["table"]["label_policy"] == "skip"
    assert report["table"]["rows"][0]["clips_scored"] == 1  # one clip: Pearson undefined
    assert report["table"]["rows"][0]["table"]["notes"]["pitch_variation_pearson"]


def test_unusable_answers_are_counted_or_scored_as_the_official_code(
    official_samples_dir, official_dataset_dir, tmp_path, capsys
):
    omni, cosy = samples(official_samples_dir, official_dataset_dir, "archetype")
    good = {"content_pass": False, "audio_quality": 2, "human_likeness": 3, "appropriateness": 2}
    partial = {"content_pass": True, "audio_quality": "9", "appropriateness": 5}
    t1 = write_jsonl(tmp_path / "t1.jsonl", [
        fewshot_line(omni, good),
        fewshot_line(cosy, "Error: 429 quota", error=True),
    ])  # fmt: skip
    t2 = write_jsonl(tmp_path / "t2.jsonl", [
        fewshot_line(omni, "I would rate it a 4."),
        fewshot_line(cosy, partial),
    ])  # fmt: skip
    out = tmp_path / "p.jsonl"
    argv = [t1, t2, "--config", "archetype", "--dataset", str(official_dataset_dir),
            "--out", str(out)]  # fmt: skip
    report = run_import(argv, capsys)["import"]
    assert report["unusable"] == 4 + 4 + 2  # failed call, unparseable answer, two dimensions
    assert report["unusable_by_dimension"] == {"content_pass": 2, "audio_quality": 3,
                                               "human_likeness": 3, "appropriateness": 2}  # fmt: skip
    reasons = {(u["where"], u["dimension"]): u["reason"] for u in report["unusable_answers"]}
    assert "recorded an error" in reasons[(f"{t1}:2", "audio_quality")]
    assert "not JSON" in reasons[(f"{t2}:1", "content_pass")]
    assert reasons[(f"{t2}:2", "human_likeness")] == "no 'human_likeness' in the answer"
    assert "outside 1..5" in reasons[(f"{t2}:2", "audio_quality")]
    rows = read_rows(out)
    assert rows[omni["id"][:-4]]["scores"] == {
        k: float(v) for k, v in good.items() if k != "content_pass"
    }
    assert rows[cosy["id"][:-4]] == {"id": cosy["id"][:-4], "content_pass": 1.0,
                                     "scores": {"appropriateness": 5.0}, "trials": 2}  # fmt: skip

    report = run_import([*argv, "--failed-as", "1"], capsys)["import"]
    assert report["failed_as"] == "1" and "official" in report["failed_rule"]
    rows = read_rows(out)
    assert rows[omni["id"][:-4]]["content_pass"] == 0.5  # False and a failed answer (pass)
    assert rows[omni["id"][:-4]]["scores"] == {"audio_quality": 1.5, "human_likeness": 2.0,
                                               "appropriateness": 1.5}  # fmt: skip
    assert rows[cosy["id"][:-4]]["scores"] == {"audio_quality": 1.0, "human_likeness": 1.0,
                                               "appropriateness": 3.0}  # fmt: skip
    assert main(["import-predictions", *argv, "--failed-as", "1"]) == 0
    assert "count as 1 (Content Pass: as a pass)" in capsys.readouterr().out


def finetune_folder(folder, records, dims, scores, null=None) -> None:
    """One JSON array per dimension as test_role.py / test_arche.py write them."""
    folder.mkdir()
    for dim in dims:
        name = OFFICIAL_NAMES[dim]
        out = []
        for r in records:
            model, prob = scores[r["id"], dim]
            out.append({
                "id": r["id"], "original_id": "", "evaluation_type": "specific_dimension",
                "specific_dimension": name, "raw_model_output": f"<answer>{model}</answer>",
                "model_score": None if null == (r["id"], dim) else model,
                "probability_score": prob, "evaluation_text": str(model),
                "ground_truth_ratings": r["annotations"],
            })  # fmt: skip
        (folder / f"{name}.json").write_text(json.dumps(out, indent=2, ensure_ascii=False), "utf-8")


@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_finetune_folder_probability_or_model_score(
    config, official_samples_dir, official_dataset_dir, tmp_path, capsys
):
    records = samples(official_samples_dir, official_dataset_dir, config)
    dims = ARCHETYPE if config == "archetype" else REALISM_DIMENSIONS
    rng = np.random.default_rng(1)
    scores = {}
    for r in records:
        for dim in dims:
            model = int(rng.integers(0, 2)) if dim == "content_pass" else int(rng.integers(1, 6))
            prob = float(rng.random()) if dim == "content_pass" else float(rng.uniform(1, 5))
            scores[r["id"], dim] = (model, prob)
    null = (records[0]["id"], dims[1])
    finetune_folder(tmp_path / "results", records, dims, scores, null=null)
    out = tmp_path / "drame_eval.jsonl"
    argv = [str(tmp_path / "results"), "--config", config, "--dataset",
            str(official_dataset_dir), "--out", str(out)]  # fmt: skip
    for kind, index in (("probability", 1), ("model", 0)):
        extra = [] if kind == "probability" else ["--score", "model"]
        report = run_import([*argv, *extra], capsys)["import"]
        assert report["format"] == "finetune" and report["score"].startswith(f"{kind}_score")
        rows = read_rows(out)
        assert set(rows) == {r["id"] for r in records}
        for r in records:
            row = rows[r["id"]]
            for dim in dims:
                got = row.get("content_pass") if dim == "content_pass" else row["scores"].get(dim)
                if kind == "model" and (r["id"], dim) == null:
                    assert got is None  # left out, counted below
                else:
                    assert got == pytest.approx(scores[r["id"], dim][index])
        assert report["unusable"] == (1 if kind == "model" else 0)
    assert report["unusable_answers"][0]["reason"] == "model_score: no score (null)"


def test_malformed_input_names_file_and_line(official_dataset_dir, tmp_path, capsys):
    def error(*inputs, config="archetype", extra=()) -> str:
        argv = ["import-predictions", *map(str, inputs), "--config", config, "--dataset",
                str(official_dataset_dir), "--out", str(tmp_path / "o.jsonl"), *extra]  # fmt: skip
        assert main(argv) == 2
        return capsys.readouterr().err

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "response": "{}"}\n{"id": "b", "response": \n', "utf-8")
    assert re.search(re.escape(f"{bad}:2: invalid JSON"), error(bad))
    bad.write_text('{"model_name": "m", "response": "{}", "audio_path": ""}\n', "utf-8")
    assert f"{bad}:1: no clip id" in error(bad)
    assert "--score) applies to fine-tuning results" in error(bad, extra=["--score", "model"])

    records = [{"id": f"c{i}", "annotations": {}} for i in range(3)]
    dims = ("audio_quality",)
    folder = tmp_path / "ft"
    finetune_folder(folder, records, dims, {(r["id"], "audio_quality"): (3, 3.2) for r in records})
    path = folder / "audio_quality.json"
    text = path.read_text("utf-8")
    data = json.loads(text)
    del data[2]["id"]
    text = json.dumps(data, indent=2)
    path.write_text(text, "utf-8")
    line = [i for i, s in enumerate(text.splitlines(), 1) if s == "  {"][2]
    assert f"{path}:{line}: record without a string id" in error(folder)
    data[2]["id"], data[2]["specific_dimension"] = "c2", "pitch"
    path.write_text(json.dumps(data, indent=2), "utf-8")
    assert f"{path}:{line}: unknown dimension 'pitch'; official names:" in error(folder)
    data[2]["specific_dimension"] = "pitch_dynamics"
    path.write_text(json.dumps(data, indent=2), "utf-8")
    assert f"{path}:{line}: 'pitch_dynamics' is not a archetype dimension" in error(folder)
    data[2]["id"], data[2]["specific_dimension"] = "c1", "audio_quality"
    path.write_text(json.dumps(data, indent=2), "utf-8")
    assert re.search(
        rf"{re.escape(str(path))}:{line}: c1 audio_quality already read at .*:", error(folder)
    )
    path.write_text(json.dumps(data, indent=2)[:-40], "utf-8")  # a truncated result file
    assert re.search(re.escape(str(path)) + r":\d+: invalid JSON", error(folder))
    assert "mixed inputs" in error(folder, bad)
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": "a", "response": "{}"}])
    assert error(good, extra=["--dataset", str(tmp_path / "missing")])
    assert not (tmp_path / "o.jsonl").exists()  # nothing written when the table cannot stand
