"""evaluate_scorer and the train-lite table report every statistic per spoken language."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import archetype_record, tone, write_release
from scipy.stats import pearsonr

from speech_drame.commands.lite_report import format_table
from speech_drame.data.build import build_dataset
from speech_drame.metrics import alignment_table
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS
from speech_drame.scorers.base import ClipInput, ClipScores
from speech_drame.scorers.evaluation import evaluate_scorer

ZH_QUESTION = "你是一名消防员。走廊里全是烟，你发现一个被困的孩子。你说："
N_PER_LANGUAGE = 5


def _records() -> list[dict]:
    rng = np.random.default_rng(0)
    records = []
    for lang in ("zh", "en"):
        for i in range(N_PER_LANGUAGE):
            ann = {d: [int(v) for v in rng.integers(1, 6, 3)] for d in ARCHETYPE_DIMENSIONS}
            overrides = {"question": ZH_QUESTION} if lang == "zh" else {}
            record = archetype_record(f"250814_{lang}_Role_{i:04d}_sys.wav", **overrides)
            record["annotations"].update(ann, content_pass=[True, True, bool(i % 2)])
            record["annotations"]["confidence"] = [3, 3, 3]
            records.append(record)
    return records


@dataclass
class HeardScorer:
    """Scores each clip from its id; 'hears' the id's language, except the last zh clip,
    which it identifies as English (a mismatch) and one en clip it cannot identify."""

    config: str = "archetype"
    dimensions: tuple[str, ...] = ARCHETYPE_DIMENSIONS
    content_pass: bool = True
    id: str = "heard"
    description: str = "test scorer"
    training_data: None = None
    batch_size: int = 4

    def score(self, clips, *, progress=False):
        out = []
        for clip in clips:
            lang = "zh" if "_zh_" in clip.id else "en"
            number = int(clip.id.split("_")[3])
            heard = {("zh", N_PER_LANGUAGE - 1): "en", ("en", 0): "unknown"}.get(
                (lang, number), lang
            )
            scores = {
                d: 1.0 + (number * 7 + k * 3 + len(lang)) % 5 for k, d in enumerate(self.dimensions)
            }
            out.append(
                ClipScores(clip.id, scores=scores, content_pass=0.3 + 0.1 * number, language=heard)
            )
        return out


def _build(records: list[dict], tmp_path) -> None:
    """The records as an archetype test release (seeded tones), built into ``tmp_path/ds``."""
    release = write_release(
        tmp_path / "release",
        {"archetype_data/test.jsonl": records},
        {r["id"]: tone(1.0, seed=i) for i, r in enumerate(records)},
    )
    build_dataset(release, tmp_path / "ds", progress=False)


def test_split_report_breaks_down_by_the_release_language(tmp_path):
    records = _records()
    _build(records, tmp_path)
    scorer = HeardScorer()
    report = evaluate_scorer(scorer, tmp_path / "ds", "test", label_policy="skip")

    results = {r.id: r for r in scorer.score([ClipInput(r["id"], b"", {}) for r in records])}
    names = [*ARCHETYPE_DIMENSIONS, CONTENT_PASS]
    by_id = {r["id"]: r for r in records}
    groups: dict[str, list[str]] = {}
    for rid in results:
        groups.setdefault(rid.split("_")[1], []).append(rid)  # the id's language tag
    # grouped by what the release says, not by what the scorer heard (4 zh, 5 en, 1 unknown)
    assert {g: report.by_language[g]["count"] for g in report.by_language} == {"en": 5, "zh": 5}

    for lang in ("en", "zh"):
        ids = groups[lang]
        preds = [
            [results[i].scores[d] for d in ARCHETYPE_DIMENSIONS] + [results[i].content_pass]
            for i in ids
        ]
        refs = [[by_id[i]["annotations"][d] for d in names] for i in ids]
        expected = alignment_table(preds, refs, names, label_policy="skip")
        table = report.by_language[lang]["table"]
        assert table["audio_quality_pearson"] == expected["audio_quality_pearson"]
        means = [np.mean(by_id[i]["annotations"]["audio_quality"]) for i in ids]
        ours = [results[i].scores["audio_quality"] for i in ids]
        assert abs(table["audio_quality_pearson"] - pearsonr(ours, means).statistic) < 1e-9

    # the release says zh (id tag) where the scorer heard en; "unknown" is never a mismatch
    last_zh = f"250814_zh_Role_{N_PER_LANGUAGE - 1:04d}_sys.wav"
    assert report.language_mismatches == {last_zh: {"release": "zh", "identified": "en"}}

    text = format_table("archetype", [report])
    assert "average Pearson, zh" in text and "clips scored, unknown" not in text
    assert text.index("clips scored, zh") < text.index("clips scored, en")  # zh, en, other, unknown
    assert "language differs from the release" in text.splitlines()[-2]


@dataclass
class DistributionScorer(HeardScorer):
    """HeardScorer that also returns a distribution over 1..5 per dimension."""

    id: str = "spread"

    def score(self, clips, *, progress=False):
        out = super().score(clips, progress=progress)
        for r in out:
            r.distributions = {}
            for d, score in r.scores.items():
                p = np.exp(-((np.arange(1, 6) - score) ** 2))
                r.distributions[d] = (p / p.sum()).tolist()
        return out


def test_split_report_adds_the_distribution_fit_and_the_table_and_json_carry_it(tmp_path):
    from speech_drame.atomic_io import write_json
    from speech_drame.distribution_fit import distribution_fit
    from speech_drame.scorers.lite import TrainingOptions
    from speech_drame.scorers.lite.training import TrainingReport, config_metrics, read_reports

    records = _records()
    _build(records, tmp_path)
    scorer = DistributionScorer()
    report = evaluate_scorer(scorer, tmp_path / "ds", "test", label_policy="skip")

    results = scorer.score([ClipInput(r["id"], b"", {}) for r in records])
    by_id = {r["id"]: r for r in records}
    dims = list(ARCHETYPE_DIMENSIONS)
    expected = distribution_fit(
        [[r.distributions[d] for d in dims] for r in results],
        [[by_id[r.id]["annotations"][d] for d in dims] for r in results],
        dims,
        label_policy="skip",
    )
    fit = report.distribution_fit
    assert list(fit["dimensions"]) == dims  # no Content Pass
    for d in dims:
        for stat in ("nll", "jsd", "nll_baseline", "jsd_baseline", "ece"):
            assert fit["dimensions"][d][stat] == pytest.approx(expected["dimensions"][d][stat])
    assert fit["label_policy"] == "skip"

    text = format_table("archetype", [report])
    assert "average NLL of the ratings" in text and "average JSD, pooled-rating baseline" in text
    assert "n/a" not in text.split("average NLL")[1].split("\n")[0]
    plain = evaluate_scorer(HeardScorer(), tmp_path / "ds", "test", label_policy="skip")
    assert plain.distribution_fit is None
    assert "average NLL" not in format_table("archetype", [plain])

    training = TrainingReport("ds", "train", False, None, 0)
    entry = config_metrics(tmp_path / "out", training, TrainingOptions(), [report])
    assert entry["splits"]["test"]["distribution_fit"] == fit
    document = {"format_version": 1, "dataset": "ds", "configs": {"archetype": entry}}
    (tmp_path / "out").mkdir()
    write_json(tmp_path / "out" / "metrics.json", document)
    (back,) = read_reports(tmp_path / "out")["archetype"]
    assert back.distribution_fit["avg_nll"] == pytest.approx(fit["avg_nll"])
    assert format_table("archetype", [back]) == text
