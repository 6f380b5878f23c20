"""``train-lite --init SCORER``: fine-tuning the demo LiteScorer on an exported rating campaign
whose raters disagree with it (tests/lite_finetune_data.py), and what fine-tuning keeps, adds
and records (speech_drame.scorers.lite.finetune)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO
from lite_finetune_data import planted_dataset
from scipy.stats import pearsonr
from sklearn.metrics import mean_squared_error

from speech_drame.cli import main
from speech_drame.data.examples import SplitStream
from speech_drame.features.blueprint import FEATURE_VERSIONS
from speech_drame.labels import apply_label_policy
from speech_drame.schema import dimensions
from speech_drame.scorers.base import ClipInput
from speech_drame.scorers.lite.finetune import (
    DEFAULT_ANCHOR,
    DEFAULT_EPOCHS,
    fine_tune_lite_model,
    load_parent,
)
from speech_drame.scorers.lite.fit import train_lite_model
from speech_drame.scorers.lite.model import LiteModel, TrainingOptions, lite_model_id
from speech_drame.scorers.lite.training import extract_split
from speech_drame.scorers.specs import load_scorer

DEMO_SCORER = REPO / "artifacts" / "lite_scorer"
CONFIG = "archetype"


def _run(*args: str) -> tuple[int, str]:
    """``speech-drame ARGS``: exit status and what it printed (stdout and stderr)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        status = main(list(args))
    return status, buf.getvalue()


@pytest.fixture(scope="module")
def parent_dir() -> Path:
    if not (DEMO_SCORER / "metrics.json").is_file():
        pytest.fail(f"{DEMO_SCORER} is missing: run `make demo-scorer` (make test does it first)")
    return DEMO_SCORER


@pytest.fixture(scope="module")
def campaign(parent_dir, demo_dataset_dir, tmp_path_factory) -> Path:
    """A built campaign export (train and test) of the demo archetype test clips, rated by
    three raters who rank them the other way round from the demo scorer."""
    work = tmp_path_factory.mktemp("campaign")
    parent = load_scorer(str(parent_dir), CONFIG)
    return planted_dataset(demo_dataset_dir, CONFIG, "test", parent, "inverted", work)


@pytest.fixture(scope="module")
def fine_tuned(campaign, parent_dir, tmp_path_factory) -> tuple[Path, str]:
    """``train-lite --dataset EXPORTED --init SCORER --out NEW`` (its defaults) and its output."""
    out = tmp_path_factory.mktemp("fine") / "new"
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", str(parent_dir),
                           "--out", str(out), "--quiet")  # fmt: skip
    assert status == 0, printed
    return out, printed


def _held_out(dataset: Path) -> tuple[list[ClipInput], dict[str, np.ndarray]]:
    """The test clips and, per dimension, their mean rating (the paper's label policy)."""
    clips, means = [], {d: [] for d in dimensions(CONFIG)}
    for ex in SplitStream(dataset, CONFIG, "test"):
        clips.append(ClipInput(ex.id, ex.source, ex.contexts))
        for d in means:
            means[d].append(np.mean(apply_label_policy(ex.labels[d], d, "paper")))
    return clips, {d: np.asarray(v) for d, v in means.items()}


def _scores(scorer, clips: list[ClipInput]) -> dict[str, np.ndarray]:
    results = scorer.score(clips)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {d: np.array([r.scores[d] for r in results]) for d in dimensions(CONFIG)}


def test_fine_tuning_moves_the_scores_toward_the_new_raters(fine_tuned, campaign, parent_dir):
    out, _ = fine_tuned
    clips, truth = _held_out(campaign)
    assert len(clips) >= 10
    before = _scores(load_scorer(str(parent_dir), CONFIG), clips)
    after = _scores(load_scorer(str(out), CONFIG), clips)
    metrics = json.loads((out / "metrics.json").read_text())["configs"][CONFIG]
    table, parent_table = (
        metrics["splits"]["test"]["table"],
        metrics["parent_splits"]["test"]["table"],
    )
    for d in dimensions(CONFIG):
        r_before, r_after = pearsonr(before[d], truth[d])[0], pearsonr(after[d], truth[d])[0]
        assert r_before < -0.5  # the raters contradict the initial scorer
        assert r_after > r_before + 0.5, d  # and the fine-tuned one has moved toward them
        assert mean_squared_error(truth[d], after[d]) < mean_squared_error(truth[d], before[d])
        # the figures train-lite reports are scipy's, for both scorers
        assert table[f"{d}_pearson"] == pytest.approx(r_after, abs=1e-9)
        assert parent_table[f"{d}_pearson"] == pytest.approx(r_before, abs=1e-9)
    fit = metrics["splits"]["test"]["distribution_fit"]
    assert fit["avg_nll"] < metrics["parent_splits"]["test"]["distribution_fit"]["avg_nll"]


def test_the_output_records_its_parent(fine_tuned, parent_dir):
    out, printed = fine_tuned
    parent = load_scorer(str(parent_dir), CONFIG)
    child = load_scorer(str(out), CONFIG)
    assert child.id != parent.id
    info = json.loads((out / CONFIG / "config.json").read_text())["info"]
    init = info["init"]
    assert init["parent"]["id"] == parent.id
    assert init["parent"]["path"] == str((parent_dir / CONFIG).resolve())
    assert init["parent"]["source"] == str(parent_dir)
    assert init["parent"]["lineage"] == [parent.id]
    assert init["parent"]["evaluation"] == parent.model.info["evaluation"]  # its own figures
    assert (init["epochs"], init["anchor"]) == (DEFAULT_EPOCHS, DEFAULT_ANCHOR)
    assert init["dimensions"] == {"updated": list(dimensions(CONFIG)), "added": [], "kept": []}
    assert init["content_pass"] == "updated" and init["kept_drift"] == {}
    metrics = json.loads((out / "metrics.json").read_text())["configs"][CONFIG]
    assert metrics["init"] == init
    assert init["parent_evaluation"]["test"] == {
        k: v for k, v in metrics["parent_splits"]["test"]["table"].items() if k in
        init["parent_evaluation"]["test"]
    }  # fmt: skip
    assert f"fine-tuned from {parent.id} ({parent_dir})" in printed
    assert "archetype: initial -> fine-tuned" in printed
    assert sorted(p.name for p in out.iterdir()) == [CONFIG, "metrics.json"]  # its config only


def test_zero_epochs_copy_the_parent_under_a_new_id_with_its_lineage(
    fine_tuned, campaign, parent_dir, tmp_path
):
    first, _ = fine_tuned
    copy = tmp_path / "copy"
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", str(first),
                           "--out", str(copy), "--epochs", "0", "--quiet")  # fmt: skip
    assert status == 0, printed
    clips, _ = _held_out(campaign)
    a, b = load_scorer(str(first), CONFIG), load_scorer(str(copy), CONFIG)
    assert [r.to_dict() for r in a.score(clips)] == [r.to_dict() for r in b.score(clips)]
    sa, sb = a.model.torch_net().state_dict(), b.model.torch_net().state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert np.array_equal(a.model.mean, b.model.mean) and np.array_equal(a.model.std, b.model.std)
    assert b.id not in (a.id, load_scorer(str(parent_dir), CONFIG).id)
    init = b.model.info["init"]
    assert init["epochs"] == 0 and init["kept_drift"] == {}
    assert init["dimensions"] == {"updated": [], "added": [], "kept": list(dimensions(CONFIG))}
    assert init["parent"]["lineage"] == [a.id, a.model.info["init"]["parent"]["id"]]
    assert init["parent_evaluation"] == b.model.info["evaluation"]  # the same scores


def test_a_parent_of_other_feature_versions_is_refused_naming_both(campaign, parent_dir, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(parent_dir / CONFIG, old / CONFIG)
    cfg = json.loads((old / CONFIG / "config.json").read_text())
    cfg["feature_versions"]["asr"] = "asr-0-retired"
    (old / CONFIG / "config.json").write_text(json.dumps(cfg))
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", str(old),
                           "--out", str(tmp_path / "new"), "--quiet")  # fmt: skip
    assert status == 2
    (line,) = printed.strip().splitlines()
    assert "trained on feature versions asr=asr-0-retired" in line
    assert f"this installation extracts asr={FEATURE_VERSIONS['asr']}" in line
    assert "train from scratch (without --init)" in line
    assert not (tmp_path / "new").exists()


def test_refusals_before_any_work(campaign, parent_dir, tmp_path):
    status, printed = _run("train-lite", "--dataset", str(campaign), "--anchor", "0.1")
    assert status == 2 and "--anchor is the pull toward the --init scorer's weights" in printed
    only = tmp_path / "only"
    shutil.copytree(parent_dir / CONFIG, only / CONFIG)
    digest = hashlib.sha256((only / CONFIG / "model.safetensors").read_bytes()).hexdigest()
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", str(only),
                           "--out", str(only))  # fmt: skip
    assert status == 2 and f"--out {only} would replace the initial scorer" in printed
    assert hashlib.sha256((only / CONFIG / "model.safetensors").read_bytes()).hexdigest() == digest
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", str(only),
                           "--configs", "realism", "--out", str(tmp_path / "n"))  # fmt: skip
    assert status == 2
    assert (
        "no realism LiteScorer there (it holds archetype only: pass --configs archetype)" in printed
    )
    with pytest.raises(ValueError, match="no archetype clip to fine-tune on"):
        fine_tune_lite_model(load_parent(only, CONFIG), [], {})


def test_a_campaign_without_train_audio_is_refused(campaign, parent_dir, tmp_path):
    from speech_drame.data.build import build_dataset

    release = tmp_path / "release"
    shutil.copytree(campaign.parent / "release", release)
    for line in (release / "archetype_data" / "train.jsonl").read_text().splitlines():
        (release / "archetype_data" / json.loads(line)["wav_path"]).unlink()
    build_dataset(release, tmp_path / "built", license_id="cc-by-4.0", progress=False)
    status, printed = _run("train-lite", "--dataset", str(tmp_path / "built"), "--init",
                           str(parent_dir), "--out", str(tmp_path / "new"))  # fmt: skip
    assert status == 2 and "train" in printed and "audio" in printed
    assert not (tmp_path / "new").exists()


def test_the_output_loads_at_every_scorer_entry_point(fine_tuned, campaign, parent_dir, tmp_path):
    from speech_drame import space_app

    out, _ = fine_tuned
    clip = next(iter(SplitStream(campaign, CONFIG, "test")))
    wav = tmp_path / "clip.wav"
    wav.write_bytes(clip.source)
    status, printed = _run("score", str(wav), "--config", CONFIG, "--question",
                           clip.contexts["question"], "--scorer", str(out), "--json", "--quiet")  # fmt: skip
    assert status == 0, printed
    (row,) = json.loads(printed)
    expected = load_scorer(f"lite:{out}", CONFIG).score([ClipInput(clip.id, wav, clip.contexts)])
    assert row["scores"] == pytest.approx(expected[0].scores, abs=1e-12)
    assert space_app._scorer(str(out), CONFIG, None).id == load_scorer(str(out), CONFIG).id
    status, printed = _run("summary", "--scorer", str(out))
    assert status == 0 and "average Pearson" in printed
    status, printed = _run("push-lite", str(out), "lab/fine-tuned", "--dry-run")
    assert status == 0, printed
    card = (out / "README.md").read_text()
    parent_id = load_scorer(str(parent_dir), CONFIG).id
    assert "## Fine-tuned from" in card and f"**`{parent_id}`**" in card
    assert "| archetype | test | Pearson r | Audio Quality |" in card
    assert str(REPO) not in card and str(out) not in card  # local paths are reduced to names
    space = tmp_path / "space"
    status, printed = _run("space", "bundle", "--out", str(space), "--scorer", f"lite:{out}",
                           "--torch-index", "")  # fmt: skip
    assert status == 0, printed
    assert "## Fine-tuned from" in (space / "scorer" / "README.md").read_text()
    cfg = (space / "scorer" / CONFIG / "config.json").read_text()
    assert str(REPO) not in cfg and "lite_scorer/archetype" in cfg
    bundled = load_scorer(str(space / "scorer"), CONFIG).score(
        [ClipInput(clip.id, wav, clip.contexts)]
    )
    assert bundled[0].scores == expected[0].scores  # the same weights, published


# --- the semantics, on a small scorer trained here ---------------------------------------------


@pytest.fixture(scope="module")
def clips(demo_dataset_dir):
    """The demo archetype test clips' blueprints (from the feature cache) and labels."""
    split = extract_split(demo_dataset_dir, CONFIG, "test", progress=False)
    assert len(split.blueprints) >= 40, split.failures
    return split


@pytest.fixture(scope="module")
def small(clips) -> LiteModel:
    """A parent rating Audio Quality and Human Likeness, with Content Pass, nothing else."""
    labels = {k: clips.labels[k] for k in ("audio_quality", "human_likeness", "content_pass")}
    return train_lite_model(clips.blueprints, labels, CONFIG, TrainingOptions(epochs=30))


def _weights(model: LiteModel, prefix: str) -> list[torch.Tensor]:
    return [v for k, v in model.torch_net().state_dict().items() if k.startswith(prefix)]


def test_rated_dimensions_are_trained_new_ones_added_the_others_kept(small, clips):
    labels = {k: clips.labels[k] for k in ("human_likeness", "appropriateness")}
    child = fine_tune_lite_model(small, clips.blueprints, labels, TrainingOptions(epochs=20))
    assert child.dimensions == ("audio_quality", "human_likeness", "appropriateness")
    init = child.info["init"]
    assert init["dimensions"] == {"updated": ["human_likeness"], "added": ["appropriateness"],
                                  "kept": ["audio_quality"]}  # fmt: skip
    assert init["content_pass"] == "kept"
    for kept in ("heads.audio_quality.", "pass_head."):
        assert all(torch.equal(a, b) for a, b in
                   zip(_weights(small, kept), _weights(child, kept), strict=True))  # fmt: skip
    assert not all(torch.equal(a, b) for a, b in
                   zip(_weights(small, "trunk."), _weights(child, "trunk."), strict=True))  # fmt: skip
    assert not torch.equal(_weights(small, "heads.human_likeness.")[0],
                           _weights(child, "heads.human_likeness.")[0])  # fmt: skip
    # the kept heads move with the shared layer: the recorded drift is the measured one
    before, after = (
        small.score_blueprints(clips.blueprints),
        child.score_blueprints(clips.blueprints),
    )
    drift = np.mean([abs(a.scores["audio_quality"] - b.scores["audio_quality"])
                     for a, b in zip(after, before, strict=True)])  # fmt: skip
    assert init["kept_drift"]["audio_quality"] == pytest.approx(drift, rel=1e-6)
    assert init["kept_drift"]["content_pass"] == pytest.approx(
        np.mean([abs(a.content_pass - b.content_pass) for a, b in zip(after, before, strict=True)]),
        rel=1e-6,
    )
    assert drift > 0
    assert lite_model_id(child) != lite_model_id(small)


def test_the_anchor_holds_the_weights_near_the_parent(small, clips):
    labels = {"audio_quality": [[None if v is None else 6 - v for v in row]
                                for row in clips.labels["audio_quality"]]}  # fmt: skip

    def distance(anchor: float) -> float:
        child = fine_tune_lite_model(small, clips.blueprints, labels, TrainingOptions(epochs=20),
                                     anchor=anchor)  # fmt: skip
        return sum(float(((a - b) ** 2).sum()) for a, b in
                   zip(_weights(small, ""), _weights(child, ""), strict=True)) ** 0.5  # fmt: skip

    free, default, strong = distance(0.0), distance(DEFAULT_ANCHOR), distance(10.0)
    assert free > default > strong > 0
    with pytest.raises(ValueError, match="anchor -1"):
        fine_tune_lite_model(small, clips.blueprints, labels, anchor=-1)


def test_zero_epochs_add_no_head_and_no_usable_rating_is_refused(small, clips):
    labels = {k: clips.labels[k] for k in ("audio_quality", "appropriateness")}
    copy = fine_tune_lite_model(small, clips.blueprints, labels, TrainingOptions(epochs=0))
    assert copy.dimensions == small.dimensions and copy.content_pass
    assert copy.score_blueprints(clips.blueprints[:5]) == small.score_blueprints(
        clips.blueprints[:5]
    )
    assert copy.info["init"]["dimensions"] == {"updated": [], "added": [],
                                               "kept": list(small.dimensions)}  # fmt: skip
    assert copy.info["init"]["content_pass"] == "kept" and copy.info["init"]["kept_drift"] == {}
    none = {"audio_quality": [[None] * len(r) for r in clips.labels["audio_quality"]]}
    with pytest.raises(ValueError, match="no usable archetype rating.*nothing to fine-tune on"):
        fine_tune_lite_model(small, clips.blueprints, none, TrainingOptions(label_policy="skip"))


def test_a_parent_from_the_hub_is_recorded_and_is_the_cards_base_model(
    campaign, parent_dir, tmp_path, monkeypatch
):
    """``--init ORG/NAME``: the parent pushed to the Hub, read from the Hub cache offline (as
    ``snapshot_download`` leaves it)."""
    from huggingface_hub import constants

    from speech_drame.scorers.lite.publish import stage_lite_scorer

    repo_id, sha = "lab/demo-scorer", "c0ffee" * 6 + "c0ff"
    pushed = tmp_path / "pushed"
    files = stage_lite_scorer(parent_dir, pushed, repo_id)
    cache = tmp_path / "hub-cache"
    snapshot = cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / sha
    for name in files:
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pushed / name, snapshot / name)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(sha)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    out = tmp_path / "new"
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init", repo_id,
                           "--out", str(out), "--epochs", "2", "--quiet")  # fmt: skip
    assert status == 0, printed
    parent = json.loads((out / CONFIG / "config.json").read_text())["info"]["init"]["parent"]
    assert parent["hub_id"] == parent["source"] == repo_id
    assert parent["path"] == str((snapshot / CONFIG).resolve())
    assert parent["id"] == load_scorer(f"lite:{repo_id}", CONFIG).id
    assert _run("push-lite", str(out), "lab/fine-tuned", "--dry-run")[0] == 0
    card = (out / "README.md").read_text()
    assert f"\nbase_model: {repo_id}\n" in card and f"(`{repo_id}`" in card
    assert str(cache) not in card
    staged = tmp_path / "staged"
    stage_lite_scorer(out, staged, "lab/fine-tuned")
    assert str(cache) not in (staged / CONFIG / "config.json").read_text()


def test_the_help_states_the_defaults_the_code_uses():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main(["train-lite", "--help"])
    text = " ".join(buf.getvalue().split())
    assert f"default {DEFAULT_ANCHOR:g})" in text
    assert f"(default {TrainingOptions.epochs}; {DEFAULT_EPOCHS} with --init" in text


def test_a_dimension_the_parent_lacks_gets_a_head_shown_as_added(small, campaign, tmp_path):
    small.save(tmp_path / "small" / CONFIG)
    out = tmp_path / "new"
    status, printed = _run("train-lite", "--dataset", str(campaign), "--init",
                           str(tmp_path / "small"), "--out", str(out), "--quiet")  # fmt: skip
    assert status == 0, printed
    assert "  added: Appropriateness" in printed and "  updated: Audio Quality, Human" in printed
    model = load_scorer(str(out), CONFIG).model
    assert model.dimensions == dimensions(CONFIG)
    assert _run("push-lite", str(out), "lab/fine-tuned", "--dry-run")[0] == 0
    card = (out / "README.md").read_text()
    assert "Added (new heads): Appropriateness." in card
    assert "| archetype | test | Pearson r | Appropriateness | not scored |" in card
    # the NLL row averages the dimensions both scorers rate, as avg_nll averages all of one's
    metrics = json.loads((out / "metrics.json").read_text())["configs"][CONFIG]
    fits = [metrics[k]["test"]["distribution_fit"] for k in ("parent_splits", "splits")]
    shared = ("audio_quality", "human_likeness")
    before, after = (np.mean([f["dimensions"][d]["nll"] for d in shared]) for f in fits)
    assert fits[1]["avg_nll"] == pytest.approx(
        np.mean([e["nll"] for e in fits[1]["dimensions"].values()]), abs=1e-12
    )
    assert f"| average of Audio Quality, Human Likeness | {before:.4f} | {after:.4f} |" in card
    assert "average NLL of the ratings (shared dims)" in printed
