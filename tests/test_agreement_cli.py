"""`speech-drame agreement` on built datasets, checked against the raw release and the paper."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_metrics import paper_compute_agreement

from speech_drame.cli import main
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS, RUBRIC_NAMES


def raw_records(official_samples_dir, config):
    folder = "archetype_data" if config == "archetype" else "realism_data"
    lines = (official_samples_dir / folder / "test.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize(
    "config,dims", [("archetype", ARCHETYPE_DIMENSIONS), ("realism", REALISM_DIMENSIONS)]
)
def test_official_samples_agree_with_the_papers_formula_on_the_raw_jsonl(
    config, dims, official_dataset_dir, official_samples_dir, tmp_path, capsys
):
    out = tmp_path / "agreement.json"
    argv = ["agreement", "--dataset", str(official_dataset_dir), "--config", config]
    assert main([*argv, "--split", "test", "--json-out", str(out), "--per-sample"]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))  # strict JSON: undefined is null
    assert main([*argv, "--split", "test", "--json", "--per-sample"]) == 0
    assert json.loads(capsys.readouterr().out) == report  # --json prints the same report
    from datasets import load_dataset

    ids = load_dataset(str(official_dataset_dir), config, split="test")["id"]
    raw = raw_records(official_samples_dir, config)
    kept = [raw[i] for i in ids]
    assert report["samples"] == len(kept) > 0
    for dim in dims:
        values = [r["annotations"][dim] for r in kept]
        values = [[None if v == "N/A" else v for v in row] for row in values]
        paper = paper_compute_agreement(values, 4)
        entry = report["dimensions"][dim]
        assert entry["agreement"] == pytest.approx(paper["overall_agreement"])
        assert entry["null_ratings"] == sum(v is None for row in values for v in row)
        assert entry["ceiling"] is None and entry["ceiling_note"]  # one varying sample: undefined
        assert RUBRIC_NAMES[dim] in printed
        assert f"{paper['overall_agreement']:.3f}" in printed


@pytest.mark.slow
def test_demo_realism_na_as_one_and_human_ceiling(demo_dataset_dir, tmp_path, capsys):
    from datasets import load_dataset

    ds = load_dataset(str(demo_dataset_dir), "realism", split="test").remove_columns("audio")
    out_skip, out_one = tmp_path / "skip.json", tmp_path / "one.json"
    base = [
        "agreement",
        "--dataset",
        str(demo_dataset_dir),
        "--config",
        "realism",
        "--split",
        "test",
    ]
    assert main([*base, "--json-out", str(out_skip)]) == 0
    assert main([*base, "--na-as", "1", "--json-out", str(out_one)]) == 0
    assert "gated N/A counted as 1" in capsys.readouterr().out
    skip = json.loads(out_skip.read_text())["dimensions"]
    one = json.loads(out_one.read_text())["dimensions"]
    for dim in REALISM_DIMENSIONS:
        filled = [
            [1 if (v is None and na) else v for v, na in zip(a[dim], m[dim], strict=True)]
            for a, m in zip(ds["annotations"], ds["not_applicable"], strict=True)
        ]
        assert one[dim]["agreement"] == pytest.approx(
            paper_compute_agreement(filled, 4)["overall_agreement"]
        )
        raw = [list(a[dim]) for a in ds["annotations"]]
        assert skip[dim]["agreement"] == pytest.approx(
            paper_compute_agreement(raw, 4)["overall_agreement"]
        )
        # the ceiling: each annotator position against the mean of the others
        assert -1 <= skip[dim]["ceiling"] <= 1
        counts = np.array(skip[dim]["ceiling_counts"])
        per = np.array(skip[dim]["ceiling_per_position"], dtype=float)
        ok = ~np.isnan(per)
        assert skip[dim]["ceiling"] == pytest.approx(np.average(per[ok], weights=counts[ok]))
    gated = [d for d in REALISM_DIMENSIONS if one[d]["null_ratings"] < skip[d]["null_ratings"]]
    assert gated  # the demo corpus has gated N/A ratings, which --na-as 1 fills


def test_errors_are_reported_not_raised(official_dataset_dir, capsys):
    argv = ["agreement", "--dataset", str(official_dataset_dir), "--config", "realism"]
    assert main([*argv, "--split", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    argv = ["agreement", "--dataset", str(official_dataset_dir), "--config", "archetype"]
    assert main([*argv, "--na-as", "1"]) == 2
    assert "not_applicable" in capsys.readouterr().err
