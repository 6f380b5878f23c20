"""speech_drame.metrics against scipy / sklearn and against the paper's own formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from speech_drame import metrics as M
from speech_drame.labels import LABEL_POLICIES
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS
from speech_drame.stats.alignment import _PARALLEL_MIN_VALUES


def ratings(rng, n, annotators=(3, 6), null_rate=0.1, low=1, high=5):
    """Ragged annotator lists with nulls, as in the official release."""
    out = []
    for _ in range(n):
        k = int(rng.integers(annotators[0], annotators[1] + 1))
        out.append(
            [
                None if rng.random() < null_rate else int(rng.integers(low, high + 1))
                for _ in range(k)
            ]
        )
    return out


def mean_of(lists):
    return np.array(
        [
            np.mean([v for v in r if v is not None]) if any(v is not None for v in r) else np.nan
            for r in lists
        ]
    )


# --- correlations ---------------------------------------------------------------------------


def _pairs():
    rng = np.random.default_rng(0)
    n = 500
    ref = mean_of(ratings(rng, n, null_rate=0))
    yield "continuous", rng.normal(size=n), rng.normal(size=n)
    yield "ref means vs continuous", ref, ref + rng.normal(0, 1, n)
    yield "integer ties both sides", rng.integers(1, 6, n), rng.integers(1, 6, n)
    yield "clipped predictions", ref, np.clip(ref + rng.normal(0, 1.5, n), 1, 5)
    yield "two levels", rng.integers(0, 2, n), rng.normal(size=n)
    yield "tiny", [1.0, 2.0, 2.0], [3.0, 1.0, 2.0]
    yield "anticorrelated", np.arange(50.0), -(np.arange(50.0) ** 3)


@pytest.mark.parametrize("name,x,y", list(_pairs()), ids=[p[0] for p in _pairs()])
def test_correlations_match_scipy(name, x, y):
    assert M.pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert M.spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert M.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_on_many_levels_both_sides_matches_scipy():
    # every value distinct (a level per sample), then hundreds of levels with ties
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=2000), rng.normal(size=2000)
    assert M.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    z = np.round(rng.normal(size=3000), 2)  # ~500 levels with ties
    w = z + np.round(rng.normal(size=3000), 2)
    assert M.kendall_tau(z, w) == pytest.approx(stats.kendalltau(z, w).statistic, abs=1e-12)


def test_undefined_correlation_is_nan():
    assert math.isnan(M.pearson([3, 3, 3], [1, 2, 3]))
    assert math.isnan(M.spearman([1, 2, 3], [4, 4, 4]))
    assert math.isnan(M.kendall_tau([1.0], [2.0]))


@pytest.mark.parametrize(
    "x,y,match",
    [
        ([1, 2], [1, 2, 3], "x has 2 values but y has 3"),
        ([], [], "empty"),
        ([1, float("nan")], [1, 2], r"x\[1\]: nan is not a score"),
        ([1, "2"], [1, 2], r"x\[1\]: expected a number, got '2'"),
        ([1, None], [1, 2], r"x\[1\]: missing value"),
        ([[1, 2]], [[1, 2]], "1-D"),
    ],
)
def test_correlation_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        M.pearson(x, y)


def test_roc_auc_matches_sklearn_with_ties():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    s = np.round(y * 0.5 + rng.normal(size=300), 1)
    assert M.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
    assert math.isnan(M.roc_auc([1, 1], [0.2, 0.4]))


# --- the alignment table ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def realism_case():
    rng = np.random.default_rng(3)
    n = 400
    dims = list(REALISM_DIMENSIONS)
    refs = [ratings(rng, n) for _ in dims]
    means = np.column_stack([mean_of(r) for r in refs])
    preds = np.clip(np.nan_to_num(means, nan=3) + rng.normal(0, 0.8, means.shape), 1, 5)
    per_sample = [[refs[j][i] for j in range(len(dims))] for i in range(n)]
    return dims, preds, refs, means, per_sample


def test_table_matches_scipy_and_sklearn_per_dimension(realism_case):
    dims, preds, refs, means, per_sample = realism_case
    table = M.alignment_table(preds.tolist(), per_sample, dims, label_policy="skip")
    for j, dim in enumerate(dims):
        keep = ~np.isnan(means[:, j])
        x, y = preds[keep, j], means[keep, j]
        assert table[f"{dim}_count"] == keep.sum()
        assert table[f"{dim}_missing"] == (~keep).sum()
        assert table[f"{dim}_null_ratings"] == sum(v is None for r in refs[j] for v in r)
        assert table[f"{dim}_pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
        assert table[f"{dim}_spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert table[f"{dim}_kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        assert table[f"{dim}_mae"] == pytest.approx(skm.mean_absolute_error(y, x), abs=1e-12)
        assert table[f"{dim}_rmse"] == pytest.approx(skm.root_mean_squared_error(y, x), abs=1e-12)
    avg = np.mean([table[f"{d}_pearson"] for d in dims])
    assert table["avg_pearson"] == pytest.approx(avg, abs=1e-15)
    assert table["notes"] == {}


def same_table(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(b[key]), key
        else:
            assert value == b[key], key


def test_grouped_alignment_is_the_table_of_each_subset(realism_case):
    dims, preds, refs, means, per_sample = realism_case
    rng = np.random.default_rng(11)
    groups = rng.choice(["zh", "en", None], size=len(per_sample), p=[0.5, 0.4, 0.1]).tolist()
    groups[:2] = ["fr", "fr"]  # too few for statistics
    out = M.grouped_alignment(preds, per_sample, dims, groups, label_policy="skip")
    assert out["overall"] == M.alignment_table(preds, per_sample, dims, label_policy="skip")
    assert list(out["by_group"]) == ["en", "fr", "unknown", "zh"]
    assert out["by_group"]["fr"] == {
        "count": 2,
        "table": None,
        "reason": "2 clip(s); per-group statistics need at least 3",
    }
    for label in ("en", "unknown", "zh"):
        rows = [i for i, g in enumerate(groups) if (g or "unknown") == label]
        entry = out["by_group"][label]
        assert entry["count"] == len(rows) and entry["reason"] is None
        by_hand = M.alignment_table(
            preds[rows], [per_sample[i] for i in rows], dims, label_policy="skip"
        )
        same_table(entry["table"], by_hand)
    assert sum(e["count"] for e in out["by_group"].values()) == len(per_sample)
    zh = [i for i, g in enumerate(groups) if g == "zh"]
    keep = ~np.isnan(means[zh, 0])
    x, y = preds[zh, 0][keep], means[zh, 0][keep]
    table = out["by_group"]["zh"]["table"]
    assert table[f"{dims[0]}_pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert table[f"{dims[0]}_spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert table[f"{dims[0]}_count"] == keep.sum()


def test_grouped_alignment_same_groups_from_every_reference_form(realism_case):
    dims, preds, refs, means, per_sample = realism_case
    groups = ["zh" if i % 3 else "en" for i in range(len(per_sample))]
    from_lists = M.grouped_alignment(preds.tolist(), per_sample, dims, groups, label_policy="skip")
    from_means = M.grouped_alignment(preds, means, dims, groups)
    rows = [{d: refs[j][i] for j, d in enumerate(dims)} for i in range(len(per_sample))]
    matrices = M.annotator_matrices(rows, dims, label_policy="skip")
    from_rows = M.grouped_alignment(preds, matrices, dims, groups, label_policy="skip")
    for label in ("en", "zh"):
        expected = from_lists["by_group"][label]["table"]
        for other in (from_means, from_rows):
            for d in dims:
                assert other["by_group"][label]["table"][f"{d}_pearson"] == pytest.approx(
                    expected[f"{d}_pearson"], abs=1e-12
                )
        assert (
            from_rows["by_group"][label]["table"][f"{dims[0]}_null_ratings"]
            == expected[f"{dims[0]}_null_ratings"]
        )
    filled = M.annotator_matrices(rows, dims)  # the paper's policy already applied
    with pytest.raises(ValueError, match="cannot be counted per group"):
        M.grouped_alignment(preds, filled, dims, groups)


def test_grouped_alignment_content_pass_and_bootstrap_per_group():
    rng = np.random.default_rng(5)
    n = 90
    votes = [[int(v) for v in rng.integers(0, 2, 3)] for _ in range(n)]
    prob = rng.uniform(0, 1, n)
    groups = ["en"] * 40 + ["zh"] * 50
    out = M.grouped_alignment(
        prob[:, None], [[v] for v in votes], ["content_pass"], groups, bootstrap=50, seed=1
    )
    zh = slice(40, None)
    truth = np.array([int(sum(v) >= 2) for v in votes])[zh]
    table = out["by_group"]["zh"]["table"]
    assert table["content_pass_accuracy"] == pytest.approx(
        skm.accuracy_score(truth, prob[zh] >= 0.5)
    )
    assert table["content_pass_roc_auc"] == pytest.approx(skm.roc_auc_score(truth, prob[zh]))
    assert table["bootstrap"] == 50 and "content_pass_accuracy_ci" in table


def test_grouped_alignment_rejects_bad_groups():
    preds, refs, dims = [[3.0], [4.0], [2.0]], [[3], [4], [2]], ["audio_quality"]
    with pytest.raises(ValueError, match="3 samples but groups has 2"):
        M.grouped_alignment(preds, refs, dims, ["zh", "en"])
    with pytest.raises(ValueError, match=r"groups\[1\].*got 7"):
        M.grouped_alignment(preds, refs, dims, ["zh", 7, "en"])
    with pytest.raises(ValueError, match="min_clips=0"):
        M.grouped_alignment(preds, refs, dims, ["zh"] * 3, min_clips=0)
    one = M.grouped_alignment(preds, refs, dims, [None] * 3)
    assert list(one["by_group"]) == ["unknown"]
    assert one["by_group"]["unknown"]["table"]["audio_quality_pearson"] == pytest.approx(1.0)


def test_large_table_on_threads_matches_scipy_and_the_serial_run():
    # 30,000 x 11 values is above the threshold for running dimensions on threads
    rng = np.random.default_rng(7)
    dims = [*REALISM_DIMENSIONS, "semantic_match"]
    refs = rng.integers(1, 6, (30_000, len(dims), 4)).mean(axis=2)
    refs[rng.random(refs.shape) < 0.05] = np.nan
    preds = np.clip(np.nan_to_num(refs, nan=3) + rng.normal(0, 0.8, refs.shape), 1, 5)
    assert preds.size >= _PARALLEL_MIN_VALUES
    table = M.alignment_table(preds, refs, dims)
    for j, dim in enumerate(dims):
        keep = ~np.isnan(refs[:, j])
        x, y = preds[keep, j], refs[keep, j]
        assert table[f"{dim}_spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert table[f"{dim}_kendall"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert M.alignment_table(preds, refs, dims, workers=1) == table
    assert M.alignment_table(preds[:500], refs[:500], dims, workers=3) == M.alignment_table(
        preds[:500], refs[:500], dims
    )


def test_table_same_numbers_from_every_reference_form(realism_case):
    dims, preds, refs, means, per_sample = realism_case
    # means skip the nulls: every form with annotator lists must skip them too
    from_lists = M.alignment_table(preds, per_sample, dims, label_policy="skip")
    from_means = M.alignment_table(preds, means, dims)
    rows = [{d: refs[j][i] for j, d in enumerate(dims)} for i in range(len(per_sample))]
    matrices = M.annotator_matrices(rows, dims, label_policy="skip")
    from_rows = M.alignment_table(preds, matrices, dims, label_policy="skip")
    width = max(len(r) for ref in refs for r in ref)
    cube = np.full((len(per_sample), len(dims), width), np.nan)
    for j in range(len(dims)):
        for i, r in enumerate(refs[j]):
            cube[i, j, : len(r)] = [np.nan if v is None else v for v in r]
    from_cube = M.alignment_table(preds, cube, dims, label_policy="skip")
    for other in (from_means, from_rows, from_cube):
        for d in dims:
            assert other[f"{d}_pearson"] == pytest.approx(from_lists[f"{d}_pearson"], abs=1e-12)
            assert other[f"{d}_kendall"] == pytest.approx(from_lists[f"{d}_kendall"], abs=1e-12)
    assert from_rows[f"{dims[0]}_null_ratings"] == from_lists[f"{dims[0]}_null_ratings"]
    assert f"{dims[0]}_null_ratings" not in from_means


def test_emotion_gating_keeps_the_rubric_gates(realism_case):
    dims, preds, refs, means, per_sample = realism_case
    table = M.alignment_table(preds, per_sample, dims, emotion_gating=True, label_policy="skip")
    acc, inten, trans = (
        dims.index(d) for d in ("emotion_accuracy", "emotion_intensity_control", "dynamic_range")
    )
    for j, gate in ((inten, acc), (trans, inten)):
        keep = ~np.isnan(means[:, j]) & (means[:, gate] >= 3)
        dim = dims[j]
        assert table[f"{dim}_count"] == keep.sum() < (~np.isnan(means[:, j])).sum()
        assert table[f"{dim}_gated"] == (~np.isnan(means[:, j])).sum() - keep.sum()
        expected = stats.pearsonr(preds[keep, j], means[keep, j]).statistic
        assert table[f"{dim}_pearson"] == pytest.approx(expected, abs=1e-12)
    ungated = M.alignment_table(preds, per_sample, dims, label_policy="skip")
    assert table["pitch_variation_pearson"] == ungated["pitch_variation_pearson"]
    with pytest.raises(ValueError, match="gated by 'emotion_accuracy'"):
        M.alignment_table(
            preds[:, [inten]], means[:, [inten]], ["emotion_intensity_control"], emotion_gating=True
        )


def test_content_pass_statistics_match_sklearn():
    rng = np.random.default_rng(4)
    n = 300
    votes = [
        [bool(rng.random() < p) for _ in range(int(rng.integers(3, 7)))] for p in rng.random(n)
    ]
    prob = np.clip(np.array([np.mean(v) for v in votes]) + rng.normal(0, 0.3, n), 0, 1)
    table = M.alignment_table(prob[:, None], [[v] for v in votes], ["content_pass"])
    yes = np.array([sum(v) for v in votes])
    no = np.array([len(v) - sum(v) for v in votes])
    decided = yes != no
    truth, p = (yes > no)[decided], prob[decided]
    assert table["content_pass_ties"] == (~decided).sum() > 0
    assert table["content_pass_count"] == decided.sum()
    assert table["content_pass_accuracy"] == pytest.approx(skm.accuracy_score(truth, p >= 0.5))
    assert table["content_pass_f1"] == pytest.approx(skm.f1_score(truth, p >= 0.5))
    assert table["content_pass_roc_auc"] == pytest.approx(skm.roc_auc_score(truth, p), abs=1e-12)
    labels = M.alignment_table(
        (prob >= 0.5)[:, None].astype(float), [[v] for v in votes], ["content_pass"]
    )
    assert "content_pass_roc_auc" not in labels  # 0/1 labels: no ROC
    assert labels["content_pass_accuracy"] == table["content_pass_accuracy"]


@pytest.mark.parametrize(
    "policy,y",
    [  # the mean audio quality per clip, the policy applied by hand
        ("paper", [np.mean([4, 5, 4]), 1.0, np.mean([2, 3, 1]), np.mean([3, 3, 4])]),
        ("skip", [np.mean([4, 5, 4]), np.nan, np.mean([2, 3]), np.mean([3, 3, 4])]),
    ],
)
def test_archetype_nulls_after_content_failure_follow_the_label_policy(policy, y):
    dims = ["content_pass", *ARCHETYPE_DIMENSIONS]
    refs = [
        [[True, True, True], [4, 5, 4], [3, 4, 4], [5, 4, 4]],
        [[False, False, False], [None] * 3, [None] * 3, [None] * 3],
        [[True, True, False], [2, 3, None], [2, 2, None], [3, 2, None]],
        [[True, True, True], [3, 3, 4], [4, 3, 3], [2, 3, 3]],
    ]
    preds = [[0.9, 4.5, 3.5, 4.6], [0.2, 1.0, 1.0, 1.0], [0.6, 2.4, 2.0, 2.5], [0.8, 3.2, 3.4, 2.6]]
    table = M.alignment_table(preds, refs, dims, label_policy=policy)
    y = np.array(y)
    keep = ~np.isnan(y)
    x = np.array(preds)[keep, 1]
    assert table["audio_quality_count"] == keep.sum() == (4 if policy == "paper" else 3)
    assert table["audio_quality_missing"] == (~keep).sum()
    assert table["audio_quality_null_ratings"] == 4  # counted under both policies
    assert table["audio_quality_pearson"] == pytest.approx(stats.pearsonr(x, y[keep]).statistic)
    assert table["content_pass_accuracy"] == 1.0 and table["content_pass_count"] == 4
    assert table["label_policy"] == policy


def test_undefined_correlations_are_nan_with_a_reason():
    table = M.alignment_table(
        [[3.0, 2.0], [3.0, 4.0], [3.0, 5.0]],
        [[4, 1], [2, None], [5, None]],
        ["audio_quality", "human_likeness"],
    )
    assert math.isnan(table["audio_quality_pearson"]) and math.isnan(table["audio_quality_kendall"])
    assert "predictions are constant" in table["notes"]["audio_quality_pearson"]
    assert math.isnan(table["human_likeness_spearman"])
    assert "1 sample(s)" in table["notes"]["human_likeness_spearman"]
    assert table["audio_quality_mae"] == pytest.approx(np.mean([1, 1, 2]))  # still defined
    assert math.isnan(table["avg_pearson"]) and "audio_quality" in table["notes"]["avg_pearson"]


@pytest.mark.parametrize(
    "preds,refs,dims,match",
    [
        (
            [[3.0], [4.0]],
            [[3]],
            ["audio_quality"],
            "predictions has 2 samples but references has 1",
        ),
        ([], [], ["audio_quality"], "empty"),
        (
            [[3.0, 2.0]],
            [[3]],
            ["audio_quality"],
            r"predictions\[0\]: expected one score per dimension",
        ),
        (
            [[float("nan")]],
            [[3]],
            ["audio_quality"],
            r"predictions\[0\] \(dimension 'audio_quality'\): nan",
        ),
        ([[None]], [[3]], ["audio_quality"], "missing value"),
        ([["4"]], [[3]], ["audio_quality"], "expected a number, got '4'"),
        ([[True]], [[3]], ["audio_quality"], "boolean"),
        ([[6.0]], [[3]], ["audio_quality"], r"score 6 outside the scale 1..5"),
        (
            [[3.0]],
            [[0]],
            ["audio_quality"],
            r"references\[0\] \(dimension 'audio_quality'\): score 0 outside",
        ),
        ([[3.0]], [[[4, 9]]], ["audio_quality"], r"references\[0\]\[0\]\[1\].*score 9 outside"),
        ([[3.0]], [[[4, float("nan")]]], ["audio_quality"], "nan is not a score"),
        ([[3.0]], [[float("nan")]], ["audio_quality"], "nan is not a score"),
        ([[1.5]], [[1]], ["content_pass"], r"score 1.5 outside the scale 0..1"),
        ([[3.0]], [[3]], ["loudness"], "unknown dimension 'loudness'"),
        ([[3.0, 3.0]], [[3, 3]], ["audio_quality", "audio_quality"], "more than once"),
        ([[3.0]], [[3]], [], "dimensions is empty"),
        ([[3.0]], [[3]], "audio_quality", "list of names"),
    ],
)
def test_table_bad_input(preds, refs, dims, match):
    with pytest.raises(ValueError, match=match):
        M.alignment_table(preds, refs, dims)


def test_table_bad_options():
    with pytest.raises(ValueError, match="confidence"):
        M.alignment_table([[3.0]], [[3]], ["audio_quality"], confidence=1.5)
    with pytest.raises(ValueError, match="bootstrap"):
        M.alignment_table([[3.0]], [[3]], ["audio_quality"], bootstrap=-1)
    with pytest.raises(ValueError, match="workers"):
        M.alignment_table([[3.0]], [[3]], ["audio_quality"], workers=0)


# --- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_intervals_equal_scipy_on_the_same_resamples():
    rng = np.random.default_rng(5)
    n, b = 80, 60
    ann = [ratings(rng, n, null_rate=0.05) for _ in range(2)]
    means = np.column_stack([mean_of(a) for a in ann])
    preds = np.column_stack(
        [
            np.round(np.clip(means[:, 0] + rng.normal(0, 1, n), 1, 5), 1),
            means[:, 1] + rng.normal(0, 0.5, n),
        ]
    )
    preds[:, 1] = np.clip(preds[:, 1], 1, 5)
    votes = [[bool(rng.random() < 0.7) for _ in range(3)] for _ in range(n)]
    prob = np.clip(np.array([np.mean(v) for v in votes]) + rng.normal(0, 0.3, n), 0, 1)
    dims = ["audio_quality", "human_likeness", "content_pass"]
    x = np.column_stack([preds, prob])
    refs = [[ann[0][i], ann[1][i], votes[i]] for i in range(n)]
    table = M.alignment_table(x, refs, dims, bootstrap=b, seed=7, label_policy="skip")

    counts = np.vstack(list(M.resample_counts(n, b, seed=7)))
    truth = np.array([sum(v) >= 2 for v in votes])
    expected: dict[str, list[float]] = {}
    for w in counts:
        idx = np.repeat(np.arange(n), w)
        for j, dim in enumerate(dims[:2]):
            xs, ys = x[idx, j], means[idx, j]
            expected.setdefault(f"{dim}_pearson", []).append(stats.pearsonr(xs, ys).statistic)
            expected.setdefault(f"{dim}_spearman", []).append(stats.spearmanr(xs, ys).statistic)
            expected.setdefault(f"{dim}_mae", []).append(skm.mean_absolute_error(ys, xs))
        expected.setdefault("avg_pearson", []).append(
            (expected["audio_quality_pearson"][-1] + expected["human_likeness_pearson"][-1]) / 2
        )
        expected.setdefault("content_pass_accuracy", []).append(
            skm.accuracy_score(truth[idx], prob[idx] >= 0.5)
        )
        expected.setdefault("content_pass_roc_auc", []).append(
            skm.roc_auc_score(truth[idx], prob[idx])
        )
    for key, values in expected.items():
        lo, hi = np.percentile(values, [2.5, 97.5])
        assert table[f"{key}_ci"] == pytest.approx([lo, hi], abs=1e-10), key
        assert lo <= table[key] <= hi
    assert table["bootstrap"] == b and table["confidence"] == 0.95
    assert "audio_quality_kendall_ci" not in table


def test_resample_counts_depend_on_the_seed_only():
    a = np.vstack(list(M.resample_counts(50, 30, seed=1)))
    b = np.vstack(list(M.resample_counts(50, 30, seed=1, chunk_bytes=50 * 8 * 7)))
    assert a.shape == (30, 50) and (a.sum(axis=1) == 50).all()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, np.vstack(list(M.resample_counts(50, 30, seed=2))))


def test_bootstrap_is_reproducible_and_narrows_with_more_samples():
    rng = np.random.default_rng(6)

    def width(n):
        y = rng.integers(1, 6, n).astype(float)
        x = np.clip(y + rng.normal(0, 1, n), 1, 5)
        t = M.alignment_table(x, y, ["audio_quality"], bootstrap=200, seed=0)
        again = M.alignment_table(x, y, ["audio_quality"], bootstrap=200, seed=0)
        assert t["audio_quality_pearson_ci"] == again["audio_quality_pearson_ci"]
        return np.diff(t["audio_quality_pearson_ci"])[0]

    assert width(2000) < width(100)


# --- annotations, agreement, ceiling -----------------------------------------------------------


def paper_compute_agreement(values_by_sample, max_possible_range):
    """Listing 1 of the Speech-DRAME paper (Appendix K), transcribed."""
    stds, per_sample = [], {}
    for i, scores in enumerate(values_by_sample):
        x = [float(s) for s in scores if s is not None]
        if len(x) < 2:
            continue
        x = np.asarray(x, dtype=float)
        s = x.std(ddof=1)
        a = 1 - (s / max_possible_range) if max_possible_range > 0 else 1
        a = max(0, min(1, a))
        per_sample[f"sample_{i}"] = {
            "scores": x.tolist(),
            "mean": round(x.mean(), 3),
            "std": round(s, 3),
            "range": round(x.max() - x.min(), 3),
            "agreement_score": round(a, 3),
            "annotator_count": len(x),
        }
        stds.append(s)
    mean_std = np.mean(stds) if stds else np.nan
    A = 1 - (mean_std / max_possible_range) if stds else np.nan
    if not np.isnan(A):
        A = max(0, min(1, A))
    return {
        "mean_intra_sample_std": mean_std,
        "sample_agreements": per_sample,
        "overall_agreement": A,
    }


@pytest.mark.parametrize(
    "values,r",
    [
        ([[4, 4, 4], [3, 5], [2, None], [1, 5, 1, 5]], 4),
        ([[1, 5], [5, 1], [3, 3, 3]], 1),  # clamped at 0
        ([[2, 2], [None, 3, 3]], 4),  # perfect agreement
        ([[4, 5, None, 3, 4, 4], [None, None, 2], [5, 4, 5, 5, 5, 5]], 4),
    ],
)
def test_agreement_is_the_papers_formula(values, r):
    ours = M.agreement(values, score_range=r)
    paper = paper_compute_agreement(values, r)
    assert ours.overall == pytest.approx(paper["overall_agreement"])
    assert ours.mean_std == pytest.approx(paper["mean_intra_sample_std"])
    details = ours.per_sample()
    assert details.keys() == paper["sample_agreements"].keys()
    for key, expected in paper["sample_agreements"].items():
        got = details[key]
        assert round(got["std"], 3) == expected["std"]
        assert round(got["mean"], 3) == expected["mean"]
        assert round(got["range"], 3) == expected["range"]
        assert round(got["agreement_score"], 3) == expected["agreement_score"]
        assert got["annotator_count"] == expected["annotator_count"]
    assert ours.n_null == sum(v is None for row in values for v in row)
    assert ours.n_samples + ours.n_ignored == len(values)


def test_agreement_random_against_the_paper_and_numpy():
    rng = np.random.default_rng(8)
    values = ratings(rng, 300, annotators=(1, 6), null_rate=0.2)
    ours = M.agreement(values)
    assert ours.overall == pytest.approx(paper_compute_agreement(values, 4)["overall_agreement"])
    used = [[v for v in row if v is not None] for row in values]
    stds = [np.std(u, ddof=1) for u in used if len(u) >= 2]
    assert ours.mean_std == pytest.approx(np.mean(stds))
    assert ours.n_ignored == sum(len(u) < 2 for u in used) > 0


def test_agreement_edge_cases():
    a = M.agreement([[3], [None, 4]])
    assert math.isnan(a.overall) and a.n_samples == 0 and a.n_ignored == 2
    with pytest.raises(ValueError, match="score_range"):
        M.agreement([[1, 2]], score_range=0)
    with pytest.raises(ValueError, match=r"ratings\[1\]\[0\]: expected a number"):
        M.agreement([[1, 2], ["x"]])
    with pytest.raises(ValueError, match="3 ids for 2 samples"):
        M.agreement([[1, 2], [2, 2]]).per_sample(["a", "b", "c"])


def test_annotator_matrices_from_dataset_rows():
    rows = [
        {
            "emotion_accuracy": [4, 2, 3],
            "emotion_intensity_control": [3, None, 2],
            "content_pass": [True, None, True],
        },
        {
            "emotion_accuracy": [1, 2],
            "emotion_intensity_control": [None, None],
            "content_pass": [False, False],
        },
    ]
    dims = ["emotion_accuracy", "emotion_intensity_control", "content_pass"]
    paper = M.annotator_matrices(rows, dims)  # the default
    skip = M.annotator_matrices(rows, dims, label_policy="skip")
    for m in (paper, skip):  # no nulls, or votes: the same under both policies
        np.testing.assert_array_equal(m["emotion_accuracy"].scores, [[4, 2, 3], [1, 2, np.nan]])
        np.testing.assert_array_equal(m["content_pass"].scores, [[1, np.nan, 1], [0, 0, np.nan]])
        assert m["content_pass"].n_null == 1 and m["content_pass"].n_filled == 0
        assert m["emotion_intensity_control"].n_null == 3
    np.testing.assert_array_equal(  # nulls count as 1, the padding stays NaN
        paper["emotion_intensity_control"].scores, [[3, 1, 2], [1, 1, np.nan]]
    )
    np.testing.assert_array_equal(
        skip["emotion_intensity_control"].scores, [[3, np.nan, 2], [np.nan, np.nan, np.nan]]
    )
    assert paper["emotion_intensity_control"].n_filled == 3
    assert skip["emotion_intensity_control"].n_filled == 0
    with pytest.raises(ValueError, match="unknown label policy 'na'; expected one of paper, skip"):
        M.annotator_matrices(rows, dims, label_policy="na")
    with pytest.raises(ValueError, match=r"annotations\[0\] has no field 'pitch_variation'"):
        M.annotator_matrices(rows, ["pitch_variation"])
    with pytest.raises(ValueError, match=r"annotations.emotion_accuracy\[1\]\[0\]: score 7"):
        M.annotator_matrices([rows[0], {"emotion_accuracy": [7]}], ["emotion_accuracy"])


# --- the label policy (speech_drame.labels) ------------------------------------------------------

# emotion accuracy and the intensity it gates, per clip; the intensity lists are ragged
POLICY_DIMS = ["emotion_accuracy", "emotion_intensity_control"]
POLICY_REFS = [
    [[4, 4, 5], [4, None, 5]],
    [[2, 1, 2], [None, None, None]],
    [[3, 3, 4], [2, None, 3]],
    [[5, 4, 5], [5, 4]],
    [[1, 2, 2], [None, 1, None]],
]
POLICY_PREDS = [[4.0, 4.0], [2.0, 1.5], [3.5, 3.0], [4.5, 4.5], [1.5, 2.0]]


def test_label_policies_give_the_hand_checked_numbers_and_paper_is_the_default():
    x = np.array(POLICY_PREDS)[:, 1]
    # paper: each null counts as 1 ([4, 1, 5], [1, 1, 1], [2, 1, 3], [5, 4], [1, 1, 1]);
    # skip: nulls left out ([4, 5], none, [2, 3], [5, 4], [1])
    y_paper = np.array([10 / 3, 1, 2, 4.5, 1])
    y_skip = np.array([4.5, np.nan, 2.5, 4.5, 1])
    paper = M.alignment_table(POLICY_PREDS, POLICY_REFS, POLICY_DIMS, label_policy="paper")
    skip = M.alignment_table(POLICY_PREDS, POLICY_REFS, POLICY_DIMS, label_policy="skip")
    keep = ~np.isnan(y_skip)
    assert paper["emotion_intensity_control_pearson"] == pytest.approx(
        stats.pearsonr(x, y_paper).statistic, abs=1e-12
    )
    assert skip["emotion_intensity_control_pearson"] == pytest.approx(
        stats.pearsonr(x[keep], y_skip[keep]).statistic, abs=1e-12
    )
    assert round(paper["emotion_intensity_control_pearson"], 4) == 0.9725
    assert round(skip["emotion_intensity_control_pearson"], 4) == 0.9828
    assert paper["emotion_intensity_control_mae"] == pytest.approx(19 / 30)  # 2/3+.5+1+0+1 / 5
    assert skip["emotion_intensity_control_mae"] == pytest.approx(0.5)  # .5+.5+0+1 / 4
    assert paper["emotion_intensity_control_count"] == 5
    assert skip["emotion_intensity_control_count"] == 4
    for table in (paper, skip):  # the nulls are counted the same way under both policies
        assert table["emotion_intensity_control_null_ratings"] == 7
        assert table["emotion_accuracy_null_ratings"] == 0
    assert paper["emotion_accuracy_pearson"] == skip["emotion_accuracy_pearson"]
    assert (paper["label_policy"], skip["label_policy"]) == ("paper", "skip")
    assert paper["label_policy_rule"] == LABEL_POLICIES["paper"]
    assert skip["label_policy_rule"] == LABEL_POLICIES["skip"]
    assert M.alignment_table(POLICY_PREDS, POLICY_REFS, POLICY_DIMS) == paper
    # dataset rows through annotator_matrices give the same numbers under each policy
    rows = [dict(zip(POLICY_DIMS, r, strict=True)) for r in POLICY_REFS]
    for policy, table in (("paper", paper), ("skip", skip)):
        matrices = M.annotator_matrices(rows, POLICY_DIMS, label_policy=policy)
        assert M.alignment_table(POLICY_PREDS, matrices, POLICY_DIMS, label_policy=policy) == table
    # single reference scores are never changed: a missing one stays missing under paper
    means = M.alignment_table(
        POLICY_PREDS, [[4.0, None], [2.0, 1.0]] + [[3.0, 2.0]] * 3, POLICY_DIMS
    )
    assert means["emotion_intensity_control_missing"] == 1


def test_the_padding_of_ragged_lists_is_never_filled():
    rows = [{"audio_quality": [4, None]}, {"audio_quality": [3, 3, 5, None]}, {"audio_quality": []}]
    m = M.annotator_matrices(rows, ["audio_quality"])["audio_quality"]
    np.testing.assert_array_equal(m.scores, [[4, 1, np.nan, np.nan], [3, 3, 5, 1], [np.nan] * 4])
    assert m.n_annotators.tolist() == [2, 4, 0] and m.n_filled == m.n_null == 2
    np.testing.assert_array_equal(M.reference_scores(m), [2.5, 3, np.nan])
    table = M.alignment_table(
        [[3.0], [4.0], [2.0]], [[r["audio_quality"]] for r in rows], ["audio_quality"]
    )
    assert table["audio_quality_missing"] == 1  # an empty list has no rating to fill
    assert table["audio_quality_mae"] == pytest.approx((0.5 + 1) / 2)  # |3 - 2.5|, |4 - 3|


def test_content_pass_votes_never_change():
    dims = ["content_pass", "audio_quality"]
    refs = [
        [[True, None, False], [3, 4]],  # a tie: a null vote counted as a pass would decide it
        [[None, None, None], [2, 2]],  # no vote at all
        [[False, None], [1, 2]],
        [[True, True, None], [4, 5]],
    ]
    preds = [[0.9, 3.0], [0.1, 2.0], [0.2, 1.0], [0.8, 4.0]]
    paper = M.alignment_table(preds, refs, dims)
    skip = M.alignment_table(preds, refs, dims, label_policy="skip")
    for table in (paper, skip):
        assert table["content_pass_ties"] == 1 and table["content_pass_missing"] == 1
        assert table["content_pass_count"] == 2 and table["content_pass_accuracy"] == 1.0
        assert table["content_pass_roc_auc"] == 1.0
    rows = [{"content_pass": r[0]} for r in refs]
    m = M.annotator_matrices(rows, ["content_pass"])["content_pass"]
    assert m.n_filled == 0 and m.n_null == 6


def test_a_policy_cannot_be_undone():
    rows = [{"audio_quality": r[1]} for r in POLICY_REFS]
    filled = M.annotator_matrices(rows, ["audio_quality"])  # paper: 7 nulls already count as 1
    with pytest.raises(ValueError, match=r"'audio_quality': 7 null rating\(s\) were already"):
        M.alignment_table([[3.0]] * 5, filled, ["audio_quality"], label_policy="skip")
    with pytest.raises(ValueError, match="unknown label policy 'one'"):
        M.alignment_table([[3.0]], [[[3]]], ["audio_quality"], label_policy="one")


def test_human_ceiling_is_leave_one_out_against_scipy():
    rng = np.random.default_rng(9)
    truth = rng.uniform(1, 5, 200)
    lists = []
    for t in truth:
        k = int(rng.integers(2, 5))
        lists.append(
            [
                None if rng.random() < 0.1 else int(np.clip(round(t + rng.normal(0, 0.7)), 1, 5))
                for _ in range(k)
            ]
        )
    c = M.human_ceiling(lists)
    width = max(map(len, lists))
    s = np.full((len(lists), width), np.nan)
    for i, row in enumerate(lists):
        s[i, : len(row)] = [np.nan if v is None else v for v in row]
    rs, ns = [], []
    for j in range(width):
        others = np.delete(s, j, axis=1)
        keep = ~np.isnan(s[:, j]) & (np.sum(~np.isnan(others), axis=1) >= 1)
        rs.append(stats.pearsonr(s[keep, j], np.nanmean(others[keep], axis=1)).statistic)
        ns.append(keep.sum())
    np.testing.assert_allclose(c.per_position, rs, atol=1e-12)
    assert c.counts.tolist() == ns
    assert c.ceiling == pytest.approx(np.average(rs, weights=ns))
    spear = M.human_ceiling(lists, method="spearman")
    assert 0 < spear.ceiling < 1 and spear.method == "spearman"
    assert math.isnan(M.human_ceiling([[3, 3], [3, 3]]).ceiling)


# --- systems, judges, preferences ---------------------------------------------------------------


def test_system_ranking_agreement_matches_scipy():
    rng = np.random.default_rng(10)
    names = [f"sys{i}" for i in range(12)]
    human = dict(zip(names, rng.normal(3, 0.5, 12), strict=True))
    auto = {k: v + rng.normal(0, 0.3) for k, v in human.items()}
    r = M.system_ranking_agreement(auto, human)
    a, h = [auto[k] for k in names], [human[k] for k in names]
    assert r["spearman"] == pytest.approx(stats.spearmanr(a, h).statistic)
    assert r["kendall"] == pytest.approx(stats.kendalltau(a, h).statistic)
    assert r["n_systems"] == 12
    with pytest.raises(ValueError, match=r"only automatic \['x'\]"):
        M.system_ranking_agreement({**auto, "x": 1.0}, human)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights):
    rng = np.random.default_rng(11)
    a = rng.integers(1, 6, 400)
    b = np.clip(a + rng.integers(-1, 2, 400), 1, 5)
    assert M.cohen_kappa(a.tolist(), b.tolist(), weights) == pytest.approx(
        skm.cohen_kappa_score(a, b, weights=weights), abs=1e-12
    )
    labels = ["win", "tie", "loss"]
    x = [labels[i] for i in rng.integers(0, 3, 100)]
    y = [labels[i] for i in rng.integers(0, 3, 100)]
    assert M.cohen_kappa(x, y) == pytest.approx(skm.cohen_kappa_score(x, y), abs=1e-12)
    with pytest.raises(ValueError, match="rater a has 2 labels but rater b has 1"):
        M.cohen_kappa([1, 2], [1])


def test_mcnemar_exact_and_chi2():
    rng = np.random.default_rng(12)
    a = rng.random(300) < 0.7
    b = rng.random(300) < 0.6
    n01, n10 = int((a & ~b).sum()), int((~a & b).sum())
    exact = M.mcnemar(a, b)
    # the two-sided exact p-value, transcribed: 2 * P(X <= min(b, c)), X ~ Binomial(b + c, 1/2)
    k, m = min(n01, n10), n01 + n10
    p = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2**m)
    assert (exact["b"], exact["c"]) == (n01, n10)
    assert exact["pvalue"] == pytest.approx(p, rel=1e-9)
    assert exact["pvalue"] == pytest.approx(stats.binomtest(n01, m, 0.5).pvalue, rel=1e-9)
    chi = M.mcnemar(a, b, exact=False)
    stat = (abs(n01 - n10) - 1) ** 2 / m
    assert chi["statistic"] == pytest.approx(stat)
    assert chi["pvalue"] == pytest.approx(stats.chi2.sf(stat, 1))
    assert M.mcnemar(a, b, exact=False, correction=False)["statistic"] == pytest.approx(
        (n01 - n10) ** 2 / m
    )
    assert M.mcnemar(a, a)["pvalue"] == 1.0
    with pytest.raises(ValueError, match="expected 0/1"):
        M.mcnemar([2, 1], [1, 1])


def test_pairwise_preference_matches_sklearn():
    rng = np.random.default_rng(13)
    d = rng.normal(0, 2, 500)
    y = (rng.random(500) < 1 / (1 + np.exp(-d))).astype(int)
    r = M.pairwise_preference(d, y)
    p = 1 / (1 + np.exp(-d))
    assert r["nll"] == pytest.approx(skm.log_loss(y, p), abs=1e-12)
    assert r["accuracy"] == pytest.approx(skm.accuracy_score(y, d > 0))
    assert r["roc_auc"] == pytest.approx(skm.roc_auc_score(y, d), abs=1e-12)
    assert M.pairwise_preference([0.0, 1.0], [1, 1])["accuracy"] == 0.75
    assert "every pair has the same outcome" in M.pairwise_preference([0.3, 1.0], [1, 1])["note"]
