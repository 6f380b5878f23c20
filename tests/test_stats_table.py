"""The typed alignment table: its rows hold what the flat dict holds, and the flat dict is
exactly what alignment_table (and so drame_metric) reports."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import speech_drame.metrics as metrics
import speech_drame.stats as stats
from speech_drame.atomic_io import strict_json
from speech_drame.stats import AlignmentTable, alignment, alignment_table

DIMS = ["audio_quality", "human_likeness", "content_pass"]


def _inputs(seed: int = 0, n: int = 12):
    rng = np.random.default_rng(seed)
    preds = [
        [float(rng.uniform(1, 5)), float(rng.uniform(1, 5)), float(rng.random())] for _ in range(n)
    ]
    refs = [
        [
            [int(rng.integers(1, 6)), None if i % 4 == 0 else int(rng.integers(1, 6))],
            [int(rng.integers(1, 6)) for _ in range(3)],
            [bool(rng.integers(0, 2)) for _ in range(3)],
        ]
        for i in range(n)
    ]
    return preds, refs


def test_metrics_re_exports_every_name_of_stats() -> None:
    assert metrics.__all__ == stats.__all__
    for name in stats.__all__:
        assert getattr(metrics, name) is getattr(stats, name)


@pytest.mark.parametrize("options", [{}, {"bootstrap": 50, "seed": 3}, {"label_policy": "skip"}])
def test_rows_hold_the_flat_statistics(options) -> None:
    preds, refs = _inputs()
    table = alignment(preds, refs, DIMS, **options)
    flat = alignment_table(preds, refs, DIMS, **options)
    assert list(table.to_flat()) == list(flat)  # same keys, same order
    assert json.dumps(table.to_flat()) == json.dumps(flat)
    assert table.dimensions == ("audio_quality", "human_likeness")
    for dim in table.dimensions:
        row = table.row(dim)
        for stat in ("pearson", "spearman", "kendall", "mae", "rmse", "count", "missing"):
            assert getattr(row, stat) == flat[f"{dim}_{stat}"]
        assert row.null_ratings == flat[f"{dim}_null_ratings"]
        assert row.gated is None
    assert table.avg_pearson == flat["avg_pearson"] == table.mean("pearson")
    assert table.content_pass.accuracy == flat["content_pass_accuracy"]
    assert table.content_pass.roc_auc == flat["content_pass_roc_auc"]
    if options.get("bootstrap"):
        assert table.row("audio_quality").ci["pearson"] == flat["audio_quality_pearson_ci"]
        assert table.avg_pearson_ci == flat["avg_pearson_ci"]
        assert table.content_pass.ci["accuracy"] == flat["content_pass_accuracy_ci"]
        assert (table.bootstrap, table.confidence) == (50, 0.95)
    else:
        assert not any(k.endswith("_ci") for k in flat)
        assert table.bootstrap is None


def test_headline_is_the_pearson_and_accuracy_keys_in_order() -> None:
    preds, refs = _inputs()
    flat = alignment_table(preds, refs, DIMS)
    headline = {k: v for k, v in flat.items() if k.endswith(("_pearson", "_accuracy"))}
    assert list(AlignmentTable.from_flat(flat).headline().items()) == list(headline.items())


def test_from_flat_reads_a_table_back_from_json() -> None:
    preds, refs = _inputs(1)
    flat = alignment_table(preds, refs, DIMS, bootstrap=20, seed=0)
    loaded = json.loads(json.dumps(strict_json(flat)))
    assert strict_json(AlignmentTable.from_flat(loaded).to_flat()) == loaded
    assert AlignmentTable.from_flat(flat) == alignment(preds, refs, DIMS, bootstrap=20, seed=0)


def test_undefined_statistics_and_missing_rows() -> None:
    table = alignment([[3.0], [3.0]], [[4], [2]], ["audio_quality"])
    assert math.isnan(table.row("audio_quality").pearson)
    assert "audio_quality_pearson" in table.notes and table.content_pass is None
    with pytest.raises(KeyError, match="no row 'human_likeness'; rows: audio_quality"):
        table.row("human_likeness")
    only_cp = alignment([[0.9], [0.1]], [[[1, 1]], [[0, 0]]], ["content_pass"])
    assert only_cp.rows == () and only_cp.avg_pearson is None and math.isnan(only_cp.mean())
    assert "avg_pearson" not in only_cp.to_flat()


def test_from_flat_reads_part_of_a_table_and_nulls_as_nan() -> None:
    part = {"audio_quality_pearson": 0.5, "human_likeness_pearson": None, "avg_pearson": None,
            "content_pass_accuracy": 0.75, "clips_scored": 4}  # fmt: skip
    table = AlignmentTable.from_flat(part)
    assert table.dimensions == ("audio_quality", "human_likeness")
    assert math.isnan(table.row("human_likeness").pearson) and math.isnan(table.avg_pearson)
    assert table.row("audio_quality").count is None and table.label_policy is None
    assert table.value("content_pass", "accuracy") == 0.75 and table.content_pass.count is None
    assert table.value("semantic_match", "pearson") is None
    assert table.value("avg", "pearson") is table.avg_pearson
    assert list(table.headline()) == [k for k in part if k != "clips_scored"]
    empty = AlignmentTable.from_flat({"clips_scored": 0})
    assert empty.rows == () and empty.content_pass is None and empty.headline() == {}
