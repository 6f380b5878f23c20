"""`speech-drame agreement` on built datasets, checked against the raw release and the paper."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import pearsonr
from test_metrics import paper_compute_agreement

from speech_drame.cli import main
from speech_drame.labels import LABEL_POLICIES
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS, RUBRIC_NAMES


def with_policy(values, policy):
    """Annotator lists with the label policy applied by hand: null and "N/A" count as 1 or
    are left out (None)."""
    fill = 1 if policy == "paper" else None
    return [[fill if v in (None, "N/A") else v for v in row] for row in values]


def loo_ceiling(values) -> float | None:
    """Each annotator position's Pearson (scipy) with the mean of the others over the samples
    where it rated and another did too, averaged with the sample counts as weights; None when
    no position's correlation is defined (a constant vector, fewer than 2 samples)."""
    ratings = np.array([[np.nan if v is None else v for v in row] for row in values], float)
    per, weights = [], []
    for j in range(ratings.shape[1]):
        others = np.delete(ratings, j, axis=1)
        use = ~np.isnan(ratings[:, j]) & (np.sum(~np.isnan(others), axis=1) >= 1)
        x, y = ratings[use, j], np.nanmean(others[use], axis=1)
        if len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
            per.append(pearsonr(x, y)[0])
            weights.append(len(x))
    return float(np.average(per, weights=weights)) if per else None


def raw_records(official_samples_dir, config):
    folder = "archetype_data" if config == "archetype" else "realism_data"
    lines = (official_samples_dir / folder / "test.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize("policy", ["paper", "skip"])
@pytest.mark.parametrize(
    "config,dims", [("archetype", ARCHETYPE_DIMENSIONS), ("realism", REALISM_DIMENSIONS)]
)
def test_official_samples_agree_with_the_papers_formula_on_the_raw_jsonl(
    config, dims, policy, official_dataset_dir, official_samples_dir, tmp_path, capsys
):
    out = tmp_path / "agreement.json"
    argv = ["agreement", "--dataset", str(official_dataset_dir), "--config", config]
    argv += [] if policy == "paper" else ["--label-policy", policy]  # paper: the default
    assert main([*argv, "--split", "test", "--json-out", str(out), "--per-sample"]) == 0
    printed = capsys.readouterr().out
    assert f"label policy {policy}: {LABEL_POLICIES[policy]}" in printed
    report = json.loads(out.read_text(encoding="utf-8"))  # strict JSON: undefined is null
    assert main([*argv, "--split", "test", "--json", "--per-sample"]) == 0
    assert json.loads(capsys.readouterr().out) == report  # --json prints the same report
    from datasets import load_dataset

    ids = load_dataset(str(official_dataset_dir), config, split="test")["id"]
    raw = raw_records(official_samples_dir, config)
    kept = [raw[i] for i in ids]
    assert report["samples"] == len(kept) > 0
    assert report["label_policy"] == policy
    assert report["label_policy_rule"] == LABEL_POLICIES[policy]
    for dim in dims:
        values = [r["annotations"][dim] for r in kept]
        paper = paper_compute_agreement(with_policy(values, policy), 4)
        entry = report["dimensions"][dim]
        assert entry["agreement"] == pytest.approx(paper["overall_agreement"])
        nulls = sum(v in (None, "N/A") for row in values for v in row)
        assert entry["null_ratings"] == nulls  # the same under both policies
        assert entry["null_ratings_counted_as_1"] == (nulls if policy == "paper" else 0)
        assert entry["null_ratings_left_out"] == (0 if policy == "paper" else nulls)
        expected = loo_ceiling(with_policy(values, policy))
        if expected is None:  # no annotator position with a defined correlation
            assert entry["ceiling"] is None and entry["ceiling_note"]
        else:
            assert entry["ceiling"] == pytest.approx(expected)
        assert RUBRIC_NAMES[dim] in printed
        assert f"{paper['overall_agreement']:.3f}" in printed


@pytest.mark.slow
def test_demo_realism_label_policies_and_human_ceiling(demo_dataset_dir, tmp_path, capsys):
    from datasets import load_dataset

    ds = load_dataset(str(demo_dataset_dir), "realism", split="test").remove_columns("audio")
    out_paper, out_skip = tmp_path / "paper.json", tmp_path / "skip.json"
    base = [
        "agreement",
        "--dataset",
        str(demo_dataset_dir),
        "--config",
        "realism",
        "--split",
        "test",
    ]
    assert main([*base, "--json-out", str(out_paper)]) == 0
    assert main([*base, "--label-policy", "skip", "--json-out", str(out_skip)]) == 0
    printed = capsys.readouterr().out
    assert "label policy paper" in printed and "nulls as 1" in printed
    assert "label policy skip" in printed and "nulls out" in printed
    reports = {
        p: json.loads(out.read_text()) for p, out in (("paper", out_paper), ("skip", out_skip))
    }
    for policy, report in reports.items():
        assert report["label_policy"] == policy
        for dim in REALISM_DIMENSIONS:
            entry = report["dimensions"][dim]
            values = [list(a[dim]) for a in ds["annotations"]]
            assert entry["agreement"] == pytest.approx(
                paper_compute_agreement(with_policy(values, policy), 4)["overall_agreement"]
            )
            assert entry["null_ratings"] == sum(v is None for row in values for v in row)
            filled = entry["null_ratings_counted_as_1"]
            assert filled == (entry["null_ratings"] if policy == "paper" else 0)
            assert filled + entry["null_ratings_left_out"] == entry["null_ratings"]
            # the ceiling: each annotator position against the mean of the others
            assert -1 <= entry["ceiling"] <= 1
            counts = np.array(entry["ceiling_counts"])
            per = np.array(entry["ceiling_per_position"], dtype=float)
            ok = ~np.isnan(per)
            assert entry["ceiling"] == pytest.approx(np.average(per[ok], weights=counts[ok]))
    paper, skip = (reports[p]["dimensions"] for p in ("paper", "skip"))
    gated = [d for d in REALISM_DIMENSIONS if paper[d]["null_ratings_counted_as_1"]]
    assert gated  # the demo corpus has gated N/A ratings, which the paper's policy counts as 1
    assert all(paper[d]["null_ratings"] == skip[d]["null_ratings"] for d in REALISM_DIMENSIONS)
    assert any(paper[d]["agreement"] != skip[d]["agreement"] for d in gated)


def test_errors_are_reported_not_raised(official_dataset_dir, capsys):
    argv = ["agreement", "--dataset", str(official_dataset_dir), "--config", "realism"]
    assert main([*argv, "--split", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # argparse refuses an unknown policy
        main([*argv, "--label-policy", "na-as-1"])
    assert exit_.value.code == 2
    assert "--label-policy: invalid choice: 'na-as-1'" in capsys.readouterr().err
