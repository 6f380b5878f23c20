"""`speech-drame table`: the paper's Tables 2 and 3 from predictions files, checked by hand
(scipy) on a small synthetic release under both label policies."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
from conftest import archetype_record, realism_record, write_release
from scipy.stats import pearsonr

from speech_drame.cli import main
from speech_drame.paper_tables import COLUMNS, read_predictions
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS

N = 10


def _archetype_records(rng) -> list[dict]:
    records = []
    for i in range(N):
        passed = [bool(rng.random() > 0.3) for _ in range(3)]
        ann = {"content_pass": passed, "confidence": [3, 3, 3]}
        for dim in ARCHETYPE_DIMENSIONS:
            ann[dim] = [int(rng.integers(1, 6)) if p else None for p in passed]
            ann[f"{dim}_comment"] = ["", "", ""]
        records.append(archetype_record(f"a{i}", annotations=ann))
    return records


def _realism_records(rng) -> list[dict]:
    records = []
    for i in range(N):
        record = realism_record(f"r{i}")
        for dim in REALISM_DIMENSIONS:
            values = [int(rng.integers(1, 6)) for _ in range(3)]
            if i % 3 == 0:
                values[i % 2] = "N/A" if dim.startswith(("emotion_int", "dynamic")) else None
            record["annotations"][dim] = values
        records.append(record)
    return records


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A synthetic release (10 clips per config, nulls and "N/A" included) and its build."""
    from speech_drame.data.build import build_dataset

    rng = np.random.default_rng(7)
    records = {"archetype": _archetype_records(rng), "realism": _realism_records(rng)}
    root = tmp_path_factory.mktemp("tables")
    src = write_release(root / "release", {f"{c}_data/test.jsonl": r for c, r in records.items()})
    build_dataset(src, root / "speech-drame", progress=False)
    return records, root / "speech-drame"


def _predictions(records, config, seed=0, drop=None) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for r in records:
        dims = ARCHETYPE_DIMENSIONS if config == "archetype" else REALISM_DIMENSIONS
        row = {"id": r["id"], "scores": {d: float(rng.uniform(1, 5)) for d in dims}}
        if config == "archetype":
            row["content_pass"] = float(rng.random())
        if drop and r["id"] == drop[0]:
            del row["scores"][drop[1]]
        rows.append(row)
    return rows


def _write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _by_hand(records, rows, dim, policy) -> float:
    """Pearson of the predictions with the mean rating, the policy applied by hand."""
    x, y = [], []
    for record, row in zip(records, rows, strict=True):
        if dim not in row["scores"]:
            continue
        ratings = [None if v == "N/A" else v for v in record["annotations"][dim]]
        ratings = [1 if v is None else v for v in ratings] if policy == "paper" else ratings
        kept = [v for v in ratings if v is not None]
        if kept:
            x.append(row["scores"][dim])
            y.append(np.mean(kept))
    return pearsonr(x, y).statistic


def _table(argv, capsys) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_table_matches_scipy_under_both_label_policies(config, release, tmp_path, capsys):
    records, dataset = release
    records = records[config]
    rows = _predictions(records, config)
    preds = _write(tmp_path / "model.jsonl", rows)
    argv = ["table", "--predictions", preds, "--dataset", str(dataset), "--config", config]
    dims = ARCHETYPE_DIMENSIONS if config == "archetype" else REALISM_DIMENSIONS
    results = {}
    for policy in ("paper", "skip"):
        report = _table([*argv, "--label-policy", policy], capsys)
        assert report["label_policy"] == policy and report["label_policy_rule"]
        row = report["rows"][0]
        assert row["name"] == "model" and row["clips_scored"] == N
        table = row["table"]
        expected = {d: _by_hand(records, rows, d, policy) for d in dims}
        for dim in dims:
            assert table[f"{dim}_pearson"] == pytest.approx(expected[dim], abs=1e-12)
        assert table["avg_pearson"] == pytest.approx(np.mean(list(expected.values())))
        results[policy] = expected
        if config == "archetype":
            votes = [[v for v in r["annotations"]["content_pass"]] for r in records]
            truth = [sum(v) * 2 > len(v) for v in votes]
            pred = [row["content_pass"] >= 0.5 for row in rows]
            accuracy = np.mean([p == t for p, t in zip(pred, truth, strict=True)])
            assert table["content_pass_accuracy"] == pytest.approx(accuracy)
        printed = main([*argv, "--label-policy", policy]) == 0 and capsys.readouterr().out
        assert f"label policy {policy}" in printed
    differing = [d for d in dims if not math.isclose(results["paper"][d], results["skip"][d])]
    assert differing, "the nulls in the release must change some Pearson between policies"


def test_layout_and_formats_parse(release, tmp_path, capsys):
    records, dataset = release
    a = _write(tmp_path / "a.jsonl", _predictions(records["realism"], "realism", seed=1))
    b = _write(tmp_path / "b.jsonl", _predictions(records["realism"], "realism", seed=2))
    base = ["table", "--predictions", a, b, "--name", "Model A", "Model_B & co",
            "--dataset", str(dataset), "--config", "realism"]  # fmt: skip
    report = _table(base, capsys)
    labels = [label for _, label, _ in COLUMNS["realism"]]
    assert labels == ["Pitch", "Rhythm", "Stress", "Accuracy", "Intensity", "Transition",
                      "Identity", "Traits", "Local", "Global", "Avg."]  # fmt: skip
    assert [r["name"] for r in report["rows"]] == ["Model A", "Model_B & co"]

    assert main([*base, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out.splitlines()
    table_lines = [line for line in markdown if line.startswith("|")]
    assert len(table_lines) == 4  # header, rule, two rows
    for line in table_lines:
        assert len(line.strip("|").split("|")) == 1 + len(labels)
    pitch = report["rows"][0]["table"]["pitch_variation_pearson"]
    assert f"| Model A | {pitch:.3f} |" in markdown[2]

    assert main([*base, "--format", "csv"]) == 0
    parsed = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert parsed[0] == ["model", *labels, "clips", "label_policy"]
    assert [r[0] for r in parsed[1:]] == ["Model A", "Model_B & co"]
    assert float(parsed[1][1]) == pytest.approx(pitch, abs=1e-6)
    assert parsed[1][-2:] == [str(N), "paper"]

    assert main([*base, "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex).group(1)
    assert spec == "l" + "c" * len(labels)
    body = [line for line in latex.splitlines() if line.endswith(r"\\")]
    group_row, *rows = body
    assert sum(int(n) for n in re.findall(r"\\multicolumn\{(\d+)\}", group_row)) == 10
    for line in rows:
        assert len(re.findall(r"(?<!\\)&", line)) == len(spec) - 1  # column separators
    assert r"Model\_B \& co" in latex and "% " in latex and "label policy paper" in latex


def test_bootstrap_intervals_are_seeded_and_rendered(release, tmp_path, capsys):
    records, dataset = release
    preds = _write(tmp_path / "m.jsonl", _predictions(records["archetype"], "archetype"))
    argv = ["table", "--predictions", preds, "--dataset", str(dataset), "--config", "archetype",
            "--bootstrap", "200", "--seed", "3"]  # fmt: skip
    first, again = _table(argv, capsys), _table(argv, capsys)
    table = first["rows"][0]["table"]
    assert table["avg_pearson_ci"] == again["rows"][0]["table"]["avg_pearson_ci"]
    low, high = table["audio_quality_pearson_ci"]
    assert low <= table["audio_quality_pearson"] <= high
    assert main([*argv, "--format", "csv"]) == 0
    parsed = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert parsed[0][1:4] == ["Content Pass Acc.", "Content Pass Acc. CI low",
                              "Content Pass Acc. CI high"]  # fmt: skip
    assert len(parsed[1]) == len(parsed[0])
    assert main([*argv, "--format", "markdown"]) == 0
    assert f"[{low:.3f}, {high:.3f}]" in capsys.readouterr().out


def test_train_py_export_rows_and_mismatched_ids(release, tmp_path, capsys):
    """ClipScores.to_dict rows (distributions, failures) are read like imported ones; ids on
    one side only and a missing dimension are counted and listed."""
    from speech_drame.scorers.base import ClipScores

    records, dataset = release
    rows = _predictions(records["realism"], "realism", drop=("r1", "pitch_variation"))
    clips = [
        ClipScores(r["id"], scores=r["scores"], distributions={"pitch_variation": [0.2] * 5})
        for r in rows[:-2]
    ]  # rows[-2] has no line at all, rows[-1] failed
    clips.append(ClipScores.failure(rows[-1]["id"], "audio unreadable", "input"))
    clips.append(ClipScores("not-in-dataset", scores=rows[0]["scores"]))
    preds = _write(tmp_path / "test.jsonl", [c.to_dict() for c in clips])
    assert read_predictions(preds).failed == {rows[-1]["id"]: "audio unreadable"}
    report = _table(["table", "--predictions", preds, "--dataset", str(dataset),
                     "--config", "realism", "--label-policy", "skip"], capsys)  # fmt: skip
    row = report["rows"][0]
    assert row["name"] == "test" and row["clips_scored"] == N - 2
    assert row["not_in_dataset"] == {"count": 1, "ids": ["not-in-dataset"]}
    assert row["without_prediction"] == {"count": 1, "ids": [rows[-2]["id"]]}
    assert row["failed"] == {"count": 1, "ids": [rows[-1]["id"]]}
    assert row["missing_predictions"]["pitch_variation"] == 1
    assert row["table"]["pitch_variation_count"] == N - 3
    expected = _by_hand(records["realism"][:-2], rows[:-2], "pitch_variation", "skip")
    assert row["table"]["pitch_variation_pearson"] == pytest.approx(expected)
    assert main(["table", "--predictions", preds, "--dataset", str(dataset),
                 "--config", "realism"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "1 predictions whose id is not in the references: not-in-dataset" in printed
    assert "left out for lack of a usable prediction: pitch_variation 1" in printed


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"id": "r0", "scores": {"pitch_variation": 3}}\nnot json\n', r":2: invalid JSON"),
        ('{"scores": {}}\n', r":1: no clip id"),
        ('{"id": "r0"}\n{"id": "r0"}\n', r":2: clip 'r0' already given at .*:1"),
        ('{"id": "r0", "scores": {"pitch_variation": 7}}\n', r":1: pitch_variation: score 7"),
        ('{"id": "r0", "scores": [3]}\n', r":1: 'scores' must be an object"),
    ],
)
def test_malformed_predictions_name_file_and_line(line, message, release, tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(line, encoding="utf-8")
    code = main(["table", "--predictions", str(path), "--dataset", str(release[1]),
                 "--config", "realism"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and re.search(re.escape(str(path)) + message, err), err


def test_predictions_of_another_config_or_split_are_refused(release, tmp_path, capsys):
    records, dataset = release
    preds = _write(tmp_path / "m.jsonl", _predictions(records["realism"], "realism"))
    argv = ["table", "--predictions", preds, "--dataset", str(dataset)]
    assert main([*argv, "--config", "archetype"]) == 2
    assert "none of its 10 clips is in the references (archetype/test of" in capsys.readouterr().err
    archetype_ids = _predictions(records["archetype"], "archetype")
    other = _write(tmp_path / "o.jsonl", [{"id": r["id"], "scores": {}} for r in archetype_ids])
    assert main(["table", "--predictions", other, "--dataset", str(dataset),
                 "--config", "archetype"]) == 2  # fmt: skip
    assert "no scores of the archetype dimensions" in capsys.readouterr().err
