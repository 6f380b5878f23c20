"""The fit of predicted 5-way distributions to the raters' ones, against scipy and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from speech_drame.distribution_fit import (
    EPSILON,
    distribution_fit,
    fit_table,
    reliability_plot,
)

AQ = "audio_quality"
HL = "human_likeness"


def random_case(seed: int, n: int = 40, zeros: bool = True):
    """Random predicted distributions (some with zero entries) and ragged rating lists."""
    rng = np.random.default_rng(seed)
    dists, refs = [], []
    for _ in range(n):
        row_d, row_r = [], []
        for _dim in (AQ, HL):
            p = rng.dirichlet(np.full(5, 0.7))
            if zeros and rng.random() < 0.3:
                p[rng.integers(0, 5)] = 0.0
                p = p / p.sum()
            row_d.append(p.tolist())
            k = int(rng.integers(1, 6))
            row_r.append([int(v) for v in rng.integers(1, 6, k)])
        dists.append(row_d)
        refs.append(row_r)
    return dists, refs


def empirical(ratings) -> np.ndarray:
    counts = np.bincount(np.asarray(ratings, int) - 1, minlength=5)
    return counts / counts.sum()


def clipped(p, eps=EPSILON) -> np.ndarray:
    q = np.maximum(np.asarray(p, float), eps)
    return q / q.sum()


def nll_by_scipy(dists, ratings_lists, eps=EPSILON) -> float:
    """Mean -log pmf of every rating under each sample's clipped distribution (scipy)."""
    logs = []
    for p, ratings in zip(dists, ratings_lists, strict=True):
        law = stats.rv_discrete(values=(np.arange(1, 6), clipped(p, eps)))
        logs.extend(law.logpmf(ratings))
    return float(-np.mean(logs))


def ece_by_hand(pairs, bins=10) -> float:
    """The textbook ECE: bin predicted probabilities, weight |mean p - mean observed|."""
    groups: dict[int, list[tuple[float, float]]] = {}
    for p, o in pairs:
        b = min(int(math.floor(p * bins + 1e-9)), bins - 1)
        groups.setdefault(b, []).append((p, o))
    total = len(pairs)
    return sum(
        len(g) / total * abs(np.mean([p for p, _ in g]) - np.mean([o for _, o in g]))
        for g in groups.values()
    )


def test_jsd_is_scipy_jensenshannon_base_2_squared():
    dists, refs = random_case(0)
    fit = distribution_fit(dists, refs, [AQ, HL])
    for j, dim in enumerate((AQ, HL)):
        expected = [
            jensenshannon(d[j], empirical(r[j]), base=2) ** 2
            for d, r in zip(dists, refs, strict=True)
        ]
        assert fit["dimensions"][dim]["jsd"] == pytest.approx(np.mean(expected), abs=1e-12)
        assert 0 <= fit["dimensions"][dim]["jsd"] <= 1
    assert fit["avg_jsd"] == pytest.approx(
        np.mean([fit["dimensions"][d]["jsd"] for d in (AQ, HL)]), abs=1e-15
    )


def test_jsd_extremes():
    fit = distribution_fit(
        [[[0, 0, 1, 0, 0]], [[1, 0, 0, 0, 0]]], [[[3, 3]], [[5]]], [AQ], label_policy="skip"
    )
    # identical: 0; disjoint supports: 1 (base 2); mean 0.5
    assert fit["dimensions"][AQ]["jsd"] == pytest.approx(0.5, abs=1e-12)


def test_nll_matches_scipy_logpmf_with_clipping():
    dists, refs = random_case(1)
    fit = distribution_fit(dists, refs, [AQ, HL])
    for j, dim in enumerate((AQ, HL)):
        got = fit["dimensions"][dim]["nll"]
        assert got == pytest.approx(
            nll_by_scipy([d[j] for d in dists], [r[j] for r in refs]), rel=1e-12
        )
    assert fit["epsilon"] == EPSILON


def test_nll_by_hand_and_the_epsilon_floor():
    # one sample, ratings 2, 2, 4 where p(4) = 0: floored at eps, then renormalised
    p = [0.25, 0.5, 0.25, 0.0, 0.0]
    fit = distribution_fit([[p]], [[[2, 2, 4]]], [AQ])
    q = np.maximum(p, EPSILON) / np.maximum(p, EPSILON).sum()
    assert fit["dimensions"][AQ]["nll"] == pytest.approx(
        -(2 * np.log(q[1]) + np.log(q[3])) / 3, rel=1e-12
    )
    assert fit["dimensions"][AQ]["nll"] > 4  # the zero was floored, not infinite
    coarse = distribution_fit([[p]], [[[2, 2, 4]]], [AQ], epsilon=0.01)
    assert coarse["epsilon"] == 0.01
    assert coarse["dimensions"][AQ]["nll"] < fit["dimensions"][AQ]["nll"]


def test_label_policy_paper_counts_nulls_as_one_and_skip_leaves_them_out():
    p = [0.2, 0.2, 0.2, 0.2, 0.2]
    q = [0.1, 0.1, 0.2, 0.3, 0.3]
    dists = [[p], [q], [p]]
    refs = [[[4, None, 5]], [["N/A", None]], [[2, 3]]]
    paper = distribution_fit(dists, refs, [AQ], label_policy="paper")["dimensions"][AQ]
    skip = distribution_fit(dists, refs, [AQ], label_policy="skip")["dimensions"][AQ]
    assert (paper["samples"], paper["ratings"], paper["no_ratings"]) == (3, 7, 0)
    assert (skip["samples"], skip["ratings"], skip["no_ratings"]) == (2, 4, 1)
    assert paper["nll"] == pytest.approx(
        nll_by_scipy([p, q, p], [[4, 1, 5], [1, 1], [2, 3]]), rel=1e-12
    )
    assert skip["nll"] == pytest.approx(nll_by_scipy([p, p], [[4, 5], [2, 3]]), rel=1e-12)
    expected = [jensenshannon(p, empirical(r), base=2) ** 2 for r in ([4, 5], [2, 3])]
    assert skip["jsd"] == pytest.approx(np.mean(expected), abs=1e-12)
    assert paper["baseline"] == pytest.approx([3 / 7, 1 / 7, 1 / 7, 1 / 7, 1 / 7])
    assert skip["baseline"] == pytest.approx([0, 0.25, 0.25, 0.25, 0.25])
    fit = distribution_fit(dists, refs, [AQ], label_policy="skip")
    assert (fit["label_policy"], fit["notes"]) == ("skip", {})


def test_baseline_is_the_pooled_marginal_and_a_scorer_saying_it_ties():
    dists, refs = random_case(2, zeros=False)
    fit = distribution_fit(dists, refs, [AQ, HL])
    for j, dim in enumerate((AQ, HL)):
        entry = fit["dimensions"][dim]
        pooled = [v for r in refs for v in r[j]]
        marginal = empirical(pooled)
        assert entry["baseline"] == pytest.approx(marginal.tolist(), abs=1e-15)
        # the constant marginal's NLL over the pooled ratings is its entropy
        assert entry["nll_baseline"] == pytest.approx(stats.entropy(clipped(marginal)), rel=1e-9)
        jsd = [jensenshannon(marginal, empirical(r[j]), base=2) ** 2 for r in refs]
        assert entry["jsd_baseline"] == pytest.approx(np.mean(jsd), abs=1e-12)
        # random Dirichlet guesses do worse than the marginal
        assert entry["nll"] > entry["nll_baseline"]
    # a scorer that always says the marginal gets exactly the baseline
    marg = [fit["dimensions"][d]["baseline"] for d in (AQ, HL)]
    same = distribution_fit([marg for _ in refs], refs, [AQ, HL])
    for dim in (AQ, HL):
        entry = same["dimensions"][dim]
        assert entry["nll"] == pytest.approx(entry["nll_baseline"], rel=1e-12)
        assert entry["jsd"] == pytest.approx(entry["jsd_baseline"], abs=1e-12)
    # a scorer that says each sample's own rater distribution beats it
    own = [[empirical(r[0]).tolist(), empirical(r[1]).tolist()] for r in refs]
    best = distribution_fit(own, refs, [AQ, HL])
    for dim in (AQ, HL):
        entry = best["dimensions"][dim]
        assert entry["jsd"] == pytest.approx(0, abs=1e-12)
        assert entry["nll"] < entry["nll_baseline"]
        assert entry["ece"] == pytest.approx(0, abs=1e-12)


def test_ece_and_reliability_bins_match_a_straightforward_reimplementation():
    dists, refs = random_case(3, n=80)
    fit = distribution_fit(dists, refs, [AQ, HL])
    for j, dim in enumerate((AQ, HL)):
        pairs = [
            (float(pk), float(ok))
            for d, r in zip(dists, refs, strict=True)
            for pk, ok in zip(np.asarray(d[j]) / np.sum(d[j]), empirical(r[j]), strict=True)
        ]
        entry = fit["dimensions"][dim]
        assert entry["ece"] == pytest.approx(ece_by_hand(pairs), abs=1e-12)
        bins = entry["reliability"]
        assert len(bins) == 10 and sum(b["count"] for b in bins) == len(pairs) == 5 * len(refs)
        for b in bins:
            inside = [(p, o) for p, o in pairs if b["low"] - 1e-9 <= p < b["high"] - 1e-9] + [
                (p, o) for p, o in pairs if b["high"] == 1.0 and p >= 1.0 - 1e-9
            ]
            assert b["count"] == len(inside)
            if inside:
                assert b["mean_predicted"] == pytest.approx(np.mean([p for p, _ in inside]))
                assert b["observed"] == pytest.approx(np.mean([o for _, o in inside]))
            else:
                assert b["mean_predicted"] is None and b["observed"] is None
    assert fit["avg_ece"] == pytest.approx(
        np.mean([fit["dimensions"][d]["ece"] for d in (AQ, HL)]), abs=1e-15
    )
    five = distribution_fit(dists, refs, [AQ, HL], bins=5)
    assert len(five["dimensions"][AQ]["reliability"]) == 5


def test_positions_without_distribution_and_content_pass_are_left_out():
    p = [0.1, 0.2, 0.4, 0.2, 0.1]
    dims = ["content_pass", AQ, HL, "appropriateness"]
    dists = [[None, p, None, None], [None, p, p, None], [None, None, p, None]]
    refs = [[[True, False], [3, 4], [2], [5]], [[True], [3], [3, 3], [4]], [[False], [2], [4], [1]]]
    fit = distribution_fit(dists, refs, dims)
    assert list(fit["dimensions"]) == [AQ, HL]  # no content_pass, no appropriateness
    assert fit["dimensions"][AQ]["samples"] == 2 and fit["dimensions"][AQ]["no_distribution"] == 1
    assert fit["dimensions"][HL]["samples"] == 2
    table = fit_table(fit)
    assert set(table) == {
        *(f"{d}_{s}" for d in (AQ, HL) for s in ("nll", "jsd", "nll_baseline", "jsd_baseline")),
        *(f"{d}_ece" for d in (AQ, HL)),
        *(f"avg_{s}" for s in ("nll", "jsd", "nll_baseline", "jsd_baseline", "ece")),
        "nll_epsilon",
    }


def test_a_dimension_without_any_rating_is_nan_with_a_note():
    p = [0.2] * 5
    fit = distribution_fit(
        [[p, p], [p, p]], [[[3], [None]], [[4], []]], [AQ, HL], label_policy="skip"
    )
    entry = fit["dimensions"][HL]
    assert entry["samples"] == 0 and entry["no_ratings"] == 2
    assert math.isnan(entry["nll"]) and math.isnan(entry["ece"])
    assert "no sample has both" in fit["notes"][f"{HL}_nll"]
    assert math.isnan(fit["avg_nll"]) and "human_likeness" in fit["notes"]["avg_nll"]
    assert not math.isnan(fit["dimensions"][AQ]["nll"])


@pytest.mark.parametrize(
    ("dists", "refs", "message"),
    [
        ([[[0.5, 0.5]]], [[[3]]], r"distributions\[0\]\[0\] \(audio_quality\): expected 5"),
        (
            [[[0.2] * 5], [[0.5, 0.5, 0.5, -0.5, 0]]],
            [[[3]], [[3]]],
            r"distributions\[1\]\[0\].*non-negative",
        ),
        (
            [[[0.2] * 5], [[0.3] * 5]],
            [[[3]], [[3]]],
            r"distributions\[1\]\[0\] \(audio_quality\): probabilities sum to 1.5",
        ),
        ([[[0.2, 0.2, 0.2, 0.2, math.nan]]], [[[3]]], "finite"),
        (
            [[[0.2] * 5]],
            [[[6]]],
            r"references\[0\]\[0\] \(audio_quality\)\[0\]: expected a rating 1..5",
        ),
        ([[[0.2] * 5]], [[[2.5]]], "expected a rating"),
        ([[[0.2] * 5]], [[[True]]], "expected a rating"),
        ([[[0.2] * 5]], [[3.0]], "needs the annotator ratings"),
        ([[[0.2] * 5]], [[[3]], [[3]]], "distributions has 1 samples but references has 2"),
        ([[[0.2] * 5, None]], [[[3]]], r"references\[0\] has 1 entries but there are 2"),
    ],
)
def test_invalid_inputs_name_the_sample_and_dimension(dists, refs, message):
    dims = [AQ] if len(dists[0]) == 1 else [AQ, HL]
    with pytest.raises(ValueError, match=message):
        distribution_fit(dists, refs, dims)


def test_tolerance_of_the_sum_and_other_argument_checks():
    # within 1e-3 of 1 is accepted (and renormalised); content_pass takes None only
    fit = distribution_fit([[[0.2, 0.2, 0.2, 0.2, 0.2009]]], [[[3]]], [AQ])
    assert fit["dimensions"][AQ]["samples"] == 1
    with pytest.raises(ValueError, match=r"distributions\[0\]\[0\] \(content_pass\)"):
        distribution_fit([[[0.2] * 5]], [[[True]]], ["content_pass"])
    with pytest.raises(ValueError, match="unknown label policy"):
        distribution_fit([[[0.2] * 5]], [[[3]]], [AQ], label_policy="drop")
    with pytest.raises(ValueError, match="epsilon"):
        distribution_fit([[[0.2] * 5]], [[[3]]], [AQ], epsilon=0)
    with pytest.raises(ValueError, match="bins"):
        distribution_fit([[[0.2] * 5]], [[[3]]], [AQ], bins=0)


def test_reliability_plot_writes_a_png(tmp_path):
    dists, refs = random_case(4, n=60)
    fit = distribution_fit(dists, refs, [AQ, HL])
    path = reliability_plot(fit, tmp_path / "plots" / "reliability.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no dimension"):
        reliability_plot(distribution_fit([[None]], [[[3]]], [AQ]), tmp_path / "none.png")
