"""The `evaluate` module: same numbers as the library, both load paths, official and demo data."""

from __future__ import annotations

import doctest
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from speech_drame import metrics as M
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS, REALISM_DIMENSIONS

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "evaluate_metric" / "drame_metric"
ARCHETYPE = [CONTENT_PASS, *ARCHETYPE_DIMENSIONS]
REALISM = list(REALISM_DIMENSIONS)


@pytest.fixture(scope="module")
def drame():
    import evaluate

    return evaluate.load(str(METRIC_DIR))


def same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, float):
            assert (math.isnan(value) and math.isnan(b[key])) or value == pytest.approx(
                b[key], abs=1e-12
            ), key
        else:
            assert value == b[key], key


def sample_inputs(seed: int = 0, n: int = 60):
    rng = np.random.default_rng(seed)
    refs, preds = [], []
    for _ in range(n):
        k = int(rng.integers(3, 6))
        aq = [None if rng.random() < 0.1 else int(rng.integers(1, 6)) for _ in range(k)]
        hl = [int(rng.integers(1, 6)) for _ in range(k)]
        refs.append([aq, hl])
        preds.append(
            [float(rng.uniform(1, 5)), float(np.clip(np.mean(hl) + rng.normal(0, 0.5), 1, 5))]
        )
    return preds, refs, ["audio_quality", "human_likeness"]


def mean_rating(ratings, policy="paper"):
    """The mean of one annotator list with the label policy applied by hand (NaN: none)."""
    kept = [1 if v is None else v for v in ratings] if policy == "paper" else ratings
    kept = [v for v in kept if v is not None]
    return float(np.mean(kept)) if kept else math.nan


def test_loads_by_path_from_the_root_and_by_name_inside_evaluate_metric(monkeypatch):
    import evaluate

    preds, refs, dims = sample_inputs()
    expected = M.alignment_table(preds, refs, dims)
    monkeypatch.chdir(REPO)
    by_path = evaluate.load("evaluate_metric/drame_metric").compute(
        predictions=preds, references=refs, dimensions=dims
    )
    monkeypatch.chdir(REPO / "evaluate_metric")
    by_name = evaluate.load("drame_metric").compute(
        predictions=preds, references=refs, dimensions=dims
    )
    same(by_path, expected)
    same(by_name, expected)


# Runs in a fresh interpreter: the bare name from an empty folder and from the root, the path form.
LOAD_BY_NAME = """
import json, os, sys
import evaluate

preds, refs, dims = json.loads(sys.argv[1])
out = {}
for label, folder, name in [("empty", sys.argv[2], "drame_metric"),
                            ("root", sys.argv[3], "drame_metric"),
                            ("path", sys.argv[3], "evaluate_metric/drame_metric")]:
    os.chdir(folder)
    out[label] = evaluate.load(name).compute(predictions=preds, references=refs, dimensions=dims)
print(json.dumps(out))
"""


def test_install_metric_makes_the_bare_name_load_offline_from_any_folder(tmp_path):
    """`speech-drame install-metric` registers the module in evaluate's own module cache (a
    home of this test's: never the user's); evaluate.load("drame_metric") then resolves offline
    from an empty folder and from the root, with the numbers of the path form."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "HF_EVALUATE_OFFLINE": "1"}  # fmt: skip
    env.pop("HF_MODULES_CACHE", None)
    empty = tmp_path / "empty"
    empty.mkdir()
    installed = subprocess.run([sys.executable, "-m", "speech_drame", "install-metric"],
                               cwd=empty, env=env, capture_output=True, text=True)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    registered = Path(installed.stdout.split("registered: ", 1)[1].splitlines()[0])
    assert registered.is_relative_to(tmp_path / "hf" / "modules")
    assert registered.read_bytes() == (METRIC_DIR / "drame_metric.py").read_bytes()
    again = subprocess.run([sys.executable, "-m", "speech_drame", "install-metric"],
                           cwd=empty, env=env, capture_output=True, text=True)  # fmt: skip
    assert again.returncode == 0 and str(registered) in again.stdout  # the same copy
    preds, refs, dims = sample_inputs()
    loaded = subprocess.run(
        [sys.executable, "-c", LOAD_BY_NAME, json.dumps([preds, refs, dims]), str(empty),
         str(REPO)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr
    result = json.loads(loaded.stdout.splitlines()[-1])
    expected = json.loads(json.dumps(M.alignment_table(preds, refs, dims)))  # NaN as JSON does
    same(result["path"], expected)
    same(result["empty"], result["path"])
    same(result["root"], result["path"])
    assert list(empty.iterdir()) == []  # nothing written into the folder it ran in


def test_add_batch_accumulates(drame):
    preds, refs, dims = sample_inputs(1)
    for start in range(0, len(preds), 7):
        drame.add_batch(predictions=preds[start : start + 7], references=refs[start : start + 7])
    same(drame.compute(dimensions=dims), M.alignment_table(preds, refs, dims))


def test_groups_add_by_group_beside_the_unchanged_totals(drame):
    preds, refs, dims = sample_inputs(4)
    groups = ["zh" if i % 3 else "en" for i in range(len(preds))]
    groups[5] = None
    for start in range(0, len(preds), 9):
        drame.add_batch(predictions=preds[start : start + 9], references=refs[start : start + 9])
    got = drame.compute(dimensions=dims, groups=groups, label_policy="skip")
    by_group = got.pop("by_group")
    same(got, M.alignment_table(preds, refs, dims, label_policy="skip"))
    assert list(by_group) == ["en", "unknown", "zh"]
    assert by_group["unknown"]["table"] is None and by_group["unknown"]["count"] == 1
    for label in ("en", "zh"):
        rows = [i for i, g in enumerate(groups) if g == label]
        assert by_group[label]["count"] == len(rows)
        table = by_group[label]["table"]
        same(
            table,
            M.alignment_table(
                [preds[i] for i in rows], [refs[i] for i in rows], dims, label_policy="skip"
            ),
        )
        x = [preds[i][1] for i in rows]
        y = [mean_rating(refs[i][1], "skip") for i in rows]
        assert table["human_likeness_pearson"] == pytest.approx(
            stats.pearsonr(x, y).statistic, abs=1e-12
        )
    assert "by_group" not in drame.compute(predictions=preds, references=refs, dimensions=dims)
    with pytest.raises(ValueError, match="groups has 2"):
        drame.compute(predictions=preds, references=refs, dimensions=dims, groups=["zh", "en"])


def test_flat_references_and_options_pass_through(drame):
    rng = np.random.default_rng(2)
    n = 80
    means = rng.integers(1, 6, (n, 3)).astype(float)
    preds = np.clip(means + rng.normal(0, 1, means.shape), 1, 5)
    refs = means.tolist()
    refs[0][1] = None
    dims = ["emotion_accuracy", "emotion_intensity_control", "dynamic_range"]
    got = drame.compute(
        predictions=preds.tolist(),
        references=refs,
        dimensions=dims,
        emotion_gating=True,
        bootstrap=40,
        seed=3,
    )
    same(got, M.alignment_table(preds, refs, dims, emotion_gating=True, bootstrap=40, seed=3))
    assert got["emotion_intensity_control_gated"] > 0
    assert got["emotion_intensity_control_missing"] == 1


@pytest.mark.parametrize("policy", ["paper", "skip"])
def test_label_policy_passes_through_and_is_stated(drame, policy):
    preds, refs, dims = sample_inputs(5)  # ragged lists of 3 to 5 annotators, nulls
    got = drame.compute(predictions=preds, references=refs, dimensions=dims, label_policy=policy)
    same(got, M.alignment_table(preds, refs, dims, label_policy=policy))
    assert got["label_policy"] == policy
    # by hand, over each list as given: the ragged lists' padding is never filled
    y = np.array([mean_rating(r[0], policy) for r in refs])
    keep = ~np.isnan(y)
    x = np.array(preds)[keep, 0]
    assert got["audio_quality_pearson"] == pytest.approx(
        stats.pearsonr(x, y[keep]).statistic, abs=1e-12
    )
    assert got["audio_quality_null_ratings"] == sum(v is None for r in refs for v in r[0]) > 0
    if policy == "paper":  # the default
        same(drame.compute(predictions=preds, references=refs, dimensions=dims), got)
    with pytest.raises(ValueError, match="unknown label policy 'none'"):
        drame.compute(predictions=preds, references=refs, dimensions=dims, label_policy="none")


def test_bad_input_raises_value_error_naming_it(drame):
    with pytest.raises(
        ValueError, match=r"references\[1\] \(dimension 'audio_quality'\): nan is not a score"
    ):
        drame.compute(
            predictions=[[3.0], [2.0]],
            references=[[4.0], [float("nan")]],
            dimensions=["audio_quality"],
        )
    with pytest.raises(ValueError, match="score 7 outside the scale 1..5"):
        drame.compute(
            predictions=[[7.0], [2.0]], references=[[4.0], [3.0]], dimensions=["audio_quality"]
        )
    with pytest.raises(ValueError, match="unknown dimension 'loudness'"):
        drame.compute(predictions=[[3.0]], references=[[4.0]], dimensions=["loudness"])
    with pytest.raises(ValueError, match="dimensions is required"):
        drame.compute(predictions=[[3.0]], references=[[4.0]])


def test_configs_name_the_default_dimensions():
    import evaluate

    realism = evaluate.load(str(METRIC_DIR), "realism")
    rng = np.random.default_rng(4)
    preds = rng.uniform(1, 5, (30, 10)).tolist()
    refs = rng.integers(1, 6, (30, 10)).astype(float).tolist()
    same(
        realism.compute(predictions=preds, references=refs), M.alignment_table(preds, refs, REALISM)
    )
    archetype = evaluate.load(str(METRIC_DIR), "archetype")
    got = archetype.compute(
        predictions=[[0.9, 4, 4, 4], [0.1, 2, 3, 2]], references=[[1, 4, 4, 5], [0, 2, 2, 2]]
    )
    assert got["content_pass_accuracy"] == 1.0 and "audio_quality_pearson" in got


def test_distributions_add_the_fit_beside_the_unchanged_table(drame):
    from speech_drame.distribution_fit import distribution_fit, fit_table

    preds, refs, dims = sample_inputs(6)
    rng = np.random.default_rng(6)
    dists = [[rng.dirichlet(np.ones(5)).tolist() for _ in dims] for _ in preds]
    dists[3][0] = None  # a sample without a distribution for one dimension
    for policy in ("paper", "skip"):
        got = drame.compute(
            predictions=preds,
            references=refs,
            dimensions=dims,
            label_policy=policy,
            distributions=dists,
        )
        table = M.alignment_table(preds, refs, dims, label_policy=policy)
        fit = fit_table(distribution_fit(dists, refs, dims, label_policy=policy))
        same(got, {**table, **fit})
        for stat in ("nll", "jsd", "nll_baseline", "jsd_baseline", "ece"):
            assert f"audio_quality_{stat}" in got and f"human_likeness_{stat}" in got
        assert got["avg_nll"] == pytest.approx(
            (got["audio_quality_nll"] + got["human_likeness_nll"]) / 2, abs=1e-15
        )
    plain = drame.compute(predictions=preds, references=refs, dimensions=dims)
    assert not any(k.endswith(("_nll", "_jsd", "_ece")) for k in plain)
    with pytest.raises(ValueError, match="distributions has 2"):
        drame.compute(predictions=preds, references=refs, dimensions=dims, distributions=dists[:2])
    bad = [row[:] for row in dists]
    bad[7][1] = [0.5, 0.5, 0.5, 0, 0]
    with pytest.raises(ValueError, match=r"distributions\[7\]\[1\] \(human_likeness\)"):
        drame.compute(predictions=preds, references=refs, dimensions=dims, distributions=bad)
    flat = [[float(np.mean([v or 1 for v in r[0]])), float(np.mean(r[1]))] for r in refs]
    with pytest.raises(ValueError, match="needs the annotator ratings"):
        drame.compute(predictions=preds, references=flat, dimensions=dims, distributions=dists)


def test_metric_card_examples_run(monkeypatch):
    monkeypatch.chdir(REPO)
    spec = importlib.util.spec_from_file_location(
        "drame_metric_doc", METRIC_DIR / "drame_metric.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test = doctest.DocTestParser().get_doctest(
        module._KWARGS_DESCRIPTION, {}, "drame_metric", None, 0
    )
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.summarize().failed == 0 and runner.summarize().attempted >= 3
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and 'evaluate.load("evaluate_metric/drame_metric")' in card
    assert 'evaluate.load("drame_metric")' in card


# --- end to end on built datasets -----------------------------------------------------------------


def rows_of(folder: Path, config: str, split: str):
    from datasets import load_dataset

    return load_dataset(str(folder), config, split=split).remove_columns("audio")


def nested_references(annotations, dims):
    return [
        [[float(v) if v is not None else None for v in a[d]] for d in dims] for a in annotations
    ]


def a_fake_evaluator(annotations, dims, seed):
    """Scores near the human mean (Content Pass: vote share), as a real evaluator would give."""
    rng = np.random.default_rng(seed)
    out = []
    for a in annotations:
        row = []
        for d in dims:
            votes = [v for v in a[d] if v is not None]
            if d == CONTENT_PASS:
                row.append(float(np.clip(np.mean(votes) + rng.normal(0, 0.2), 0, 1)))
            else:
                row.append(
                    float(np.clip((np.mean(votes) if votes else 3.0) + rng.normal(0, 0.7), 1, 5))
                )
        out.append(row)
    return out


def test_official_samples_end_to_end(drame, official_dataset_dir):
    ds = rows_of(official_dataset_dir, "archetype", "test")
    ann = ds["annotations"]
    preds = a_fake_evaluator(ann, ARCHETYPE, 0)
    got = drame.compute(
        predictions=preds, references=nested_references(ann, ARCHETYPE), dimensions=ARCHETYPE
    )
    same(got, M.alignment_table(preds, M.annotator_matrices(ann, ARCHETYPE), ARCHETYPE))
    # one clip failed Content Pass unanimously: its scores are null, which the paper counts as 1
    assert got["content_pass_count"] == 2 and got["content_pass_accuracy"] == 1.0
    assert got["audio_quality_count"] == 2 and got["audio_quality_null_ratings"] == 6
    y = [mean_rating(a["audio_quality"]) for a in ann]
    assert sorted(y) == [1.0, np.mean([4, 5, 4, 4, 4, 4])]  # the failed clip's six nulls: 1
    x = [p[1] for p in preds]
    assert got["audio_quality_pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
    # skipped, they leave one sample per score: no correlation
    refs = nested_references(ann, ARCHETYPE)
    skip = drame.compute(
        predictions=preds, references=refs, dimensions=ARCHETYPE, label_policy="skip"
    )
    assert skip["audio_quality_count"] == 1 and skip["audio_quality_null_ratings"] == 6
    assert "1 sample(s)" in skip["notes"]["audio_quality_pearson"]

    ds = rows_of(official_dataset_dir, "realism", "test")
    ann = ds["annotations"]
    preds = a_fake_evaluator(ann, REALISM, 1)
    got = drame.compute(
        predictions=preds, references=nested_references(ann, REALISM), dimensions=REALISM
    )
    same(got, M.alignment_table(preds, M.annotator_matrices(ann, REALISM), REALISM))
    # both records are rows (one has no audio: the ratings need none); no nulls among them
    means = np.array([[np.mean(a[d]) for d in REALISM] for a in ann])
    x = np.array(preds, float)
    assert got["pitch_variation_mae"] == pytest.approx(np.abs(x[:, 0] - means[:, 0]).mean())
    for j, dim in enumerate(REALISM):  # two clips: +-1 where the mean ratings differ
        if np.ptp(means[:, j]) > 0:
            expected = stats.pearsonr(x[:, j], means[:, j]).statistic
            assert got[f"{dim}_pearson"] == pytest.approx(expected)
        else:
            assert math.isnan(got[f"{dim}_pearson"])


@pytest.mark.slow
@pytest.mark.parametrize("config,dims", [("archetype", ARCHETYPE), ("realism", REALISM)])
def test_demo_dataset_end_to_end(drame, demo_dataset_dir, config, dims):
    ds = rows_of(demo_dataset_dir, config, "test")
    ann = ds["annotations"]
    preds = a_fake_evaluator(ann, dims, 2)
    got = drame.compute(
        predictions=preds,
        references=nested_references(ann, dims),
        dimensions=dims,
        bootstrap=100,
        seed=0,
    )
    same(
        got, M.alignment_table(preds, M.annotator_matrices(ann, dims), dims, bootstrap=100, seed=0)
    )
    pearsons = []
    for j, d in enumerate(dims):
        if d == CONTENT_PASS:
            continue
        # the default label policy (paper), by hand: each null rating counts as 1
        x, y = np.array([(p[j], mean_rating(a[d])) for p, a in zip(preds, ann, strict=True)]).T
        x, y = x[~np.isnan(y)], y[~np.isnan(y)]
        r = stats.pearsonr(x, y).statistic
        assert got[f"{d}_pearson"] == pytest.approx(r, abs=1e-12)
        lo, hi = got[f"{d}_pearson_ci"]
        assert lo <= r <= hi
        pearsons.append(r)
    assert got["avg_pearson"] == pytest.approx(np.mean(pearsons), abs=1e-12)


# --- booleans (the datasets' Content Pass votes) ------------------------------------------------


def test_dataset_booleans_pass_through_evaluate_load_unchanged(demo_dataset_dir):
    """The README example: the archetype split's raw annotation lists (Content Pass votes are
    booleans) as references, a boolean Content Pass decision in the predictions."""
    import evaluate

    ann = rows_of(demo_dataset_dir, "archetype", "test")["annotations"]
    refs = [[a[d] for d in ARCHETYPE] for a in ann]  # exactly as the README builds them
    assert any(isinstance(v, bool) for row in refs for v in row[0])
    scores = a_fake_evaluator(ann, ARCHETYPE, 3)
    preds = [[row[0] >= 0.5, *row[1:]] for row in scores]  # a pass/fail decision
    drame = evaluate.load(str(METRIC_DIR))
    got = drame.compute(predictions=preds, references=refs, dimensions=ARCHETYPE, bootstrap=50,
                        seed=0)  # fmt: skip
    same(got, M.alignment_table(preds, refs, ARCHETYPE, bootstrap=50, seed=0))
    majority = [np.mean(a[CONTENT_PASS]) for a in ann]
    decided = [(p[0], m > 0.5) for p, m in zip(preds, majority, strict=True) if m != 0.5]
    assert got["content_pass_accuracy"] == pytest.approx(np.mean([p == m for p, m in decided]))
    # a probability instead of a decision, and add_batch, give the library's numbers too
    drame.add_batch(predictions=scores[:10], references=refs[:10])
    drame.add_batch(predictions=scores[10:], references=refs[10:])
    same(drame.compute(dimensions=ARCHETYPE), M.alignment_table(scores, refs, ARCHETYPE))


def test_booleans_outside_content_pass_are_still_rejected(drame):
    with pytest.raises(ValueError, match=r"predictions: booleans in dimension 'audio_quality'"):
        drame.compute(
            predictions=[[True, True], [False, 2.0]],
            references=[[[True, False, True], [4, 5]], [[False, False], [2, 3]]],
            dimensions=[CONTENT_PASS, "audio_quality"],
        )
    with pytest.raises(ValueError, match=r"references: booleans in dimension 'audio_quality'"):
        drame.compute(
            predictions=[[0.9, 4.0], [0.2, 2.0]],
            references=[[[True], [True, 5]], [[False], [2, 3]]],
            dimensions=[CONTENT_PASS, "audio_quality"],
        )
    # the failed call left nothing behind: the next one is computed alone
    got = drame.compute(predictions=[[0.9, 4.0], [0.2, 2.0], [0.6, 3.0]],
                        references=[[[True], [4]], [[False], [2]], [[True], [3]]],
                        dimensions=[CONTENT_PASS, "audio_quality"])  # fmt: skip
    assert got["content_pass_count"] == 3 and got["audio_quality_pearson"] == pytest.approx(1.0)
