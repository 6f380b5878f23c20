"""LiteScorer: label distribution learning, persistence, and learnability on the demo set."""

from __future__ import annotations

import json
import os
import re
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX
from scipy.stats import pearsonr

from speech_drame.audio import load_audio
from speech_drame.features.blueprint import Blueprint, extract_blueprints
from speech_drame.scorers.base import ScorerError
from speech_drame.scorers.lite.features import feature_matrix, feature_names, feature_vector
from speech_drame.scorers.lite.fit import train_lite_model
from speech_drame.scorers.lite.model import (
    CONFIG_FILE,
    LEVELS,
    WEIGHTS_FILE,
    LiteModel,
    TrainingOptions,
    load_lite_model,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SNRS = (None, 20.0, 10.0, 5.0, 0.0)  # None = clean
QUESTION = "You are a narrator of a Regency novel about the Dashwood family. You say:"
SR = 16_000


def _noisy(x: np.ndarray, snr_db: float | None, seed: int) -> np.ndarray:
    if snr_db is None:
        return x
    noise = np.random.default_rng(seed).standard_normal(len(x))
    noise *= np.sqrt(np.mean(x**2) / np.mean(noise**2) / 10 ** (snr_db / 10))
    y = x + noise
    return (0.9 * y / np.abs(y).max()).astype(np.float32)


@pytest.fixture(scope="module")
def noisy() -> tuple[list[tuple[np.ndarray, int]], list[int]]:
    """LibriVox clips at five noise levels: ``(samples, rate)`` and the noise level index of each."""
    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    clips = [load_audio(p).samples for p in sorted(LIBRIVOX.glob("*.wav"))]
    sources, level = [], []
    for k, snr in enumerate(SNRS):
        for i, x in enumerate(clips):
            sources.append((_noisy(x, snr, seed=10 * k + i), SR))
            level.append(k)
    return sources, level


@pytest.fixture(scope="module")
def feature_cache(tmp_path_factory) -> Path:
    """The module's feature cache: later tests read the features ``tiny`` extracted."""
    return tmp_path_factory.mktemp("features")


@pytest.fixture(scope="module")
def tiny(noisy, feature_cache) -> tuple[list[Blueprint], list[int]]:
    """Blueprints of the ``noisy`` clips and the noise level index of each."""
    sources, level = noisy
    batch = extract_blueprints(
        sources, [{"question": QUESTION}] * len(sources), feature_cache, progress=False
    )
    assert not batch.errors, batch.errors
    return batch.blueprints, level  # type: ignore[return-value]


def _labels(level: list[int]) -> dict[str, list[list]]:
    """Synthetic annotators: quality falls with noise, content passes for the cleaner clips."""
    quality = [[5 - k, 5 - k, min(5, 6 - k)] for k in level]
    return {
        "audio_quality": quality,
        "human_likeness": [[4, 5, 4] for _ in level],
        "content_pass": [[k < 2, k < 2, k < 3] for k in level],
    }


@pytest.fixture(scope="module")
def scorer(tiny) -> LiteModel:
    blueprints, level = tiny
    return train_lite_model(
        blueprints, _labels(level), "archetype", TrainingOptions(epochs=200, seed=0)
    )


def test_scores_follow_the_training_labels(tiny, scorer: LiteModel) -> None:
    blueprints, level = tiny
    out = scorer.score_blueprints(blueprints)
    quality = [s.scores["audio_quality"] for s in out]
    target = [np.mean(q) for q in _labels(level)["audio_quality"]]
    assert pearsonr(quality, target)[0] > 0.9
    passing = np.array([s.content_pass for s in out])
    assert passing[np.array(level) < 2].min() > passing[np.array(level) > 2].max()
    assert scorer.dimensions == ("audio_quality", "human_likeness")  # only labelled dimensions


def test_outputs_are_distributions_with_their_expectation(tiny, scorer: LiteModel) -> None:
    for s in scorer.score_blueprints(tiny[0][:5]):
        for dim, dist in s.distributions.items():
            assert len(dist) == 5 and min(dist) >= 0
            assert sum(dist) == pytest.approx(1.0)
            assert s.scores[dim] == pytest.approx(float(np.dot(dist, LEVELS)))
            assert 1.0 <= s.scores[dim] <= 5.0
        assert 0.0 <= s.content_pass <= 1.0


def test_label_distribution_learning_keeps_a_split_vote_bimodal(tiny) -> None:
    blueprints, _ = tiny
    split = {"human_likeness": [[2, 4, 2, 4] for _ in blueprints]}
    model = train_lite_model(blueprints, split, "archetype", TrainingOptions(epochs=60))
    dist = np.mean(
        [s.distributions["human_likeness"] for s in model.score_blueprints(blueprints)], 0
    )
    assert dist[1] > 0.35 and dist[3] > 0.35  # scores 2 and 4 each keep their share
    assert dist[2] < 0.1  # the mean (3) was never a label
    assert model.content_pass is False


def test_save_and_reload_give_identical_scores(tiny, scorer: LiteModel, tmp_path: Path) -> None:
    scorer.save(tmp_path / "archetype")
    assert sorted(p.name for p in (tmp_path / "archetype").iterdir()) == [
        CONFIG_FILE,
        WEIGHTS_FILE,
    ]
    again = load_lite_model("archetype", tmp_path)  # finds <path>/<mode>
    a = scorer.score_blueprints(tiny[0])
    b = again.score_blueprints(tiny[0])
    assert a == b  # exact equality of every float
    config = json.loads((tmp_path / "archetype" / CONFIG_FILE).read_text())
    assert config["feature_names"] == feature_names("archetype")
    assert len(config["normalisation"]["mean"]) == len(feature_vector(tiny[0][0], "archetype"))


def test_a_scorer_saved_before_the_label_policy_reloads_as_skip(
    scorer: LiteModel, tmp_path: Path
) -> None:
    scorer.save(tmp_path / "archetype")
    assert load_lite_model("archetype", tmp_path).options.label_policy == "paper"
    path = tmp_path / "archetype" / CONFIG_FILE
    config = json.loads(path.read_text())
    del config["options"]["label_policy"]  # as older saves wrote it: they left nulls out
    path.write_text(json.dumps(config))
    assert load_lite_model("archetype", tmp_path).options.label_policy == "skip"


def _other_weights(scorer: LiteModel) -> LiteModel:
    """The same scorer with every weight moved: same architecture, different predictions."""
    import copy

    other = copy.deepcopy(scorer)
    other.weights = {k: v if k == "context_basis" else v + 0.25 for k, v in other.weights.items()}
    return other


def test_a_failed_save_leaves_the_previous_scorer_whole(
    tiny, scorer: LiteModel, tmp_path: Path
) -> None:
    vectors = feature_matrix(tiny[0], "archetype")
    folder = scorer.save(tmp_path / "s")
    before = LiteModel.load(folder).predict(vectors)[0]
    broken = _other_weights(scorer)
    broken.info = {"evaluation": {"test": np.float32(0.5)}}  # a numpy scalar is not JSON
    with pytest.raises(TypeError):
        broken.save(folder)
    after = LiteModel.load(folder).predict(vectors)[0]
    np.testing.assert_array_equal(after, before)  # the old scorer, not its config + new weights
    assert [p.name for p in tmp_path.iterdir()] == ["s"]  # no staging folder left behind


def test_weights_of_another_save_are_refused(scorer: LiteModel, tmp_path: Path) -> None:
    import shutil

    a = scorer.save(tmp_path / "a")
    b = _other_weights(scorer).save(tmp_path / "b")
    shutil.copyfile(b / WEIGHTS_FILE, a / WEIGHTS_FILE)
    with pytest.raises(ScorerError, match=f"{WEIGHTS_FILE} does not belong to its {CONFIG_FILE}"):
        LiteModel.load(a)


def test_feature_version_mismatch_is_an_error(scorer: LiteModel, tmp_path: Path) -> None:
    folder = scorer.save(tmp_path / "s")
    config = json.loads((folder / CONFIG_FILE).read_text())
    config["feature_versions"]["dnsmos"] = "0-old"
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ScorerError, match=r"differ: dnsmos.*retrain"):
        LiteModel.load(folder)
    with pytest.raises(ScorerError, match="no trained realism LiteScorer"):
        load_lite_model("realism", tmp_path / "nowhere")
    with pytest.raises(ScorerError, match="a archetype scorer, not realism"):
        config["feature_versions"]["dnsmos"] = scorer.config()["feature_versions"]["dnsmos"]
        (folder / CONFIG_FILE).write_text(json.dumps(config))
        load_lite_model("realism", folder)


def test_a_blueprint_without_the_mode_context_is_refused(tiny) -> None:
    with pytest.raises(ValueError, match="lacks the realism context similarity for profile"):
        feature_vector(tiny[0][0], "realism")
    similarities_only = replace(tiny[0][0], context={"profile": 0.1, "scene": 0.2, "traits": 0.3})
    with pytest.raises(ValueError, match="lacks the realism context text for scene, profile"):
        feature_vector(similarities_only, "realism")


def _as_realism(bp: Blueprint, k: int) -> Blueprint:
    """The clip shown with one of two scenes and profiles (a calm one and a stormy one)."""
    texts = {
        "profile": ("A gentle old librarian.", "A young sailor who shouts orders.")[k % 2],
        "scene": ("A quiet evening by the fire.", "A storm hits the ship at night.")[k % 2],
        "traits": "Calm",
    }
    return replace(bp, context={c: 0.1 * k for c in texts}, context_texts=texts)


def test_realism_scorer_projects_the_context_embeddings_and_reloads_exactly(
    tiny, tmp_path: Path
) -> None:
    blueprints, level = tiny
    clips = [_as_realism(bp, k) for k, bp in enumerate(blueprints)]
    labels = {"local_story_fit": [[1 + 3 * (k % 2)] * 3 for k in range(len(clips))]}
    model = train_lite_model(clips, labels, "realism", TrainingOptions(epochs=60))
    names = feature_names("realism")
    assert len(feature_vector(clips[0], "realism")) == len(names)
    assert "scene.anchor.excited*prosody.energy_mean_db" in names
    assert not any(n.startswith("transcript.embedding") for n in names)
    scores = [s.scores["local_story_fit"] for s in model.score_blueprints(clips)]
    assert pearsonr(scores, [k % 2 for k in range(len(clips))])[0] > 0.9  # read from the texts
    again = load_lite_model("realism", model.save(tmp_path / "realism"))
    assert again.score_blueprints(clips) == model.score_blueprints(clips)


# Average Pearson on the demo test split that the scorer must reach (the 0.5; measured
# archetype 0.76-0.79, realism 0.57-0.58 over seeds 0-2).
# Measured on the bilingual demo: archetype 0.61; realism 0.48-0.50 over training seeds 0-2
# (0.56 on the English-only demo: its espeak-ng Mandarin clips carry the construction variation
# less clearly, and Whisper identifies only about half of them as Mandarin). The features depend
# a little on the CPU (CTranslate2's and ONNX Runtime's kernels): on an AMD EPYC host the same
# build gave archetype 0.59 and realism 0.44. A scorer that learned nothing is near 0.
DEMO_MIN_AVG_PEARSON = {"archetype": 0.5, "realism": 0.4}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "share_of_1", "share_of_3"), [("paper", 0.5, 0.5), ("skip", 0.0, 1.0)]
)
def test_label_policy_decides_what_null_ratings_teach(tiny, policy, share_of_1, share_of_3) -> None:
    """Two of four annotators null: the paper's policy teaches 1 for them, skip leaves them out."""
    blueprints, _ = tiny
    labels = {"human_likeness": [[3, None, 3, None] for _ in blueprints]}
    options = TrainingOptions(epochs=60, label_policy=policy)
    model = train_lite_model(blueprints, labels, "archetype", options)
    dist = np.mean(
        [s.distributions["human_likeness"] for s in model.score_blueprints(blueprints)], 0
    )
    assert dist[0] == pytest.approx(share_of_1, abs=0.15)
    assert dist[2] == pytest.approx(share_of_3, abs=0.15)
    assert model.options.label_policy == policy


def test_demo_train_split_is_learnable(demo_dataset_dir: Path, tmp_path: Path) -> None:
    """The demo labels are simulated from construction parameters: this checks that the
    scorer learns them; it says nothing about alignment with human judgement."""
    from speech_drame.scorers.lite.training import train_and_evaluate

    results = train_and_evaluate(demo_dataset_dir, tmp_path, progress=False)
    for config, reports in results.items():
        test = next(r for r in reports if r.split == "test")
        assert test.table["avg_pearson"] >= DEMO_MIN_AVG_PEARSON[config], (config, test.table)
        assert not test.failures, test.failures  # every demo clip has usable features
        assert (tmp_path / config / WEIGHTS_FILE).is_file()


def _alive(refs: list[weakref.ref]) -> int:
    """How many of the referenced objects still exist (no gc pass: reference counting frees
    the clips, and one only reachable through a cycle would count as alive, never the other
    way round)."""
    return sum(r() is not None for r in refs)


def test_extract_blueprints_reads_a_stream_one_bounded_batch_at_a_time(
    noisy, feature_cache: Path, tiny
) -> None:
    """A generator of decoded clips is consumed lazily: at most ``batch_size`` of them are
    alive at once, and the blueprints equal those of one batch holding every clip."""
    sources, _ = noisy
    decoded: list[weakref.ref] = []
    peak = 0

    def clips():
        nonlocal peak
        for x, sr in sources:
            audio = load_audio((x, sr))
            decoded.append(weakref.ref(audio))
            peak = max(peak, _alive(decoded))
            yield audio

    contexts = ({"question": QUESTION} for _ in sources)
    batch = extract_blueprints(clips(), contexts, feature_cache, progress=False, batch_size=4)
    assert len(decoded) == len(sources) and not batch.errors
    assert peak <= 4, f"{peak} decoded clips alive at once with batch_size=4"
    assert batch.blueprints == tiny[0]  # tiny: every clip in one batch
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        extract_blueprints(sources[:1], cache=feature_cache, progress=False, batch_size=0)


NOTE = "Made in a test: simulated annotators, synthetic proxy labels, not human ratings."


def _librivox_dataset(
    root: Path, sources: list, level: list[int], without_audio: frozenset[str] = frozenset()
) -> Path:
    """A Hub-ready archetype folder: the ``noisy`` clips as float WAV (so their features are in
    the module's cache) with the labels of :func:`_labels`, one clip in five in ``test``, plus
    a tone in ``test`` (no voice: a failure); its card says the labels are synthetic. The
    records ``without_audio`` get no audio file (rows without audio)."""
    from conftest import archetype_record, tone, write_release

    from speech_drame.data.build import build_dataset

    labels = _labels(level)
    files: dict[str, list[dict]] = {
        "archetype_data/train.jsonl": [],
        "archetype_data/test.jsonl": [],
    }
    audio = {}
    for j, (x, _) in enumerate(sources):
        split = "test" if j % 5 == 2 else "train"
        rid = f"{split}-{j:02d}"
        annotations = {
            **archetype_record(rid)["annotations"],
            **{k: v[j] for k, v in labels.items()},
            "appropriateness": [4, 4, 3],
        }
        files[f"archetype_data/{split}.jsonl"].append(
            archetype_record(rid, question=QUESTION, annotations=annotations)
        )
        audio[rid] = x
    files["archetype_data/test.jsonl"].append(archetype_record("test-tone", question=QUESTION))
    audio["test-tone"] = tone(1.0)
    release = write_release(root / "release", files, {rid: None for rid in audio})
    for rid, x in audio.items():
        if rid not in without_audio:
            sf.write(release / "archetype_data" / f"{rid}.wav", x, SR, subtype="FLOAT")
    out = root / "speech-drame"
    build_dataset(release, out, source_note=NOTE, progress=False)
    return out


def _strict(path: Path) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{path}: {constant} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_train_lite_streams_in_bounded_batches_and_matches_one_batch(
    noisy, feature_cache: Path, tiny, tmp_path: Path, monkeypatch, capsys
) -> None:
    """train-lite reads rows only as it decodes them, holds at most ``--batch-size`` decoded
    clips, gives the same scorer and metrics as one batch of every clip, writes strict
    ``metrics.json`` last and records the training data in the scorer's info."""
    from speech_drame.cli import main
    from speech_drame.features import blueprint
    from speech_drame.scorers.lite import training as lite_training
    from speech_drame.scorers.lite.training import train_and_evaluate

    sources, level = noisy
    dataset = _librivox_dataset(tmp_path, sources, level)
    rows_read, ahead, peak = 0, 0, 0
    decoded: list[weakref.ref] = []
    read_rows, load = lite_training.SplitStream.__iter__, blueprint.load_audio

    def counting_rows(self):
        nonlocal rows_read
        for example in read_rows(self):
            rows_read += 1
            yield example

    def counting_load(*args, **kwargs):
        nonlocal ahead, peak
        audio = load(*args, **kwargs)
        decoded.append(weakref.ref(audio))
        ahead = max(ahead, rows_read - len(decoded))  # rows read, audio not decoded yet
        peak = max(peak, _alive(decoded))
        return audio

    monkeypatch.setattr(lite_training.SplitStream, "__iter__", counting_rows)
    monkeypatch.setattr(blueprint, "load_audio", counting_load)
    streamed = tmp_path / "streamed"
    status = main(
        ["train-lite", "--dataset", str(dataset), "--out", str(streamed), "--configs",
         "archetype", "--epochs", "30", "--feature-cache", str(feature_cache), "--batch-size", "3",
         "--quiet"]
    )  # fmt: skip
    monkeypatch.undo()
    printed = capsys.readouterr().out
    assert status == 0
    assert len(decoded) == rows_read == 26  # 20 train + 5 test + the tone, each read once
    assert ahead < 3 and peak <= 3, (ahead, peak)
    assert f"evaluation: {streamed / 'metrics.json'}" in printed
    assert "synthetic proxy labels" in printed

    whole = tmp_path / "one-batch"
    train_and_evaluate(
        dataset, whole, ["archetype"], TrainingOptions(epochs=30), feature_cache,
        progress=False, batch_size=1000,
    )  # fmt: skip
    metrics = _strict(streamed / "metrics.json")
    reference = _strict(whole / "metrics.json")
    assert metrics["configs"]["archetype"].pop("scorer") == str(streamed / "archetype")
    assert reference["configs"]["archetype"].pop("scorer") == str(whole / "archetype")
    assert metrics == reference
    again = load_lite_model("archetype", streamed)
    assert again.score_blueprints(tiny[0]) == load_lite_model("archetype", whole).score_blueprints(
        tiny[0]
    )

    assert metrics["format_version"] == 1 and metrics["dataset"] == str(dataset)
    run = metrics["configs"]["archetype"]
    assert run["training"] | {"options": None} == {
        "dataset": str(dataset),
        "split": "train",
        "labels_are_synthetic": True,
        "label_note": NOTE,
        "clips_used": 20,
        "clips_failed": 0,
        "failures": [],
        "clips_without_audio": 0,
        "without_audio": [],
        "options": None,
    }
    assert run["training"]["options"]["epochs"] == 30
    test = run["splits"]["test"]
    assert test["clips_scored"] == 5 and test["clips_failed"] == 1
    assert [f["id"] for f in test["failures"]] == ["test-tone"]
    assert "under 0.25 s of voice" in test["failures"][0]["reason"]
    table = test["table"]
    # human likeness is rated 4, 5, 4 everywhere: its correlation is undefined, null + reason
    assert table["human_likeness_pearson"] is None
    assert "constant" in table["notes"]["human_likeness_pearson"]
    held_out = [j for j in range(len(sources)) if j % 5 == 2]
    scores = again.score_blueprints([tiny[0][j] for j in held_out])
    truth = [np.mean(_labels(level)["audio_quality"][j]) for j in held_out]
    expected = pearsonr([s.scores["audio_quality"] for s in scores], truth)[0]
    # the evaluation scores clip by clip (the scorer contract), this reference in one batch:
    # float32 matrix products of another shape differ in the last bits
    assert table["audio_quality_pearson"] == pytest.approx(expected, abs=1e-7)
    assert table["audio_quality_count"] == 5

    info = json.loads((streamed / "archetype" / CONFIG_FILE).read_text())["info"]
    assert info["dataset"] == str(dataset) and info["split"] == "train"
    assert info["labels_are_synthetic"] is True and info["label_note"] == NOTE


def test_train_lite_uses_the_clips_with_audio_and_counts_the_others(
    noisy, feature_cache: Path, tiny, tmp_path: Path, capsys
) -> None:
    """A release with part of its audio: training and evaluation run on the clips that have
    it; the others are counted as without audio, never as failures of the scorer."""
    from speech_drame.cli import main

    sources, level = noisy
    silent = frozenset({"train-00", "train-01", "train-03", "test-07"})
    dataset = _librivox_dataset(tmp_path, sources, level, without_audio=silent)
    out = tmp_path / "lite"
    assert main(["train-lite", "--dataset", str(dataset), "--out", str(out), "--configs",
                 "archetype", "--epochs", "30", "--feature-cache", str(feature_cache),
                 "--quiet"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    run = _strict(out / "metrics.json")["configs"]["archetype"]
    assert run["training"]["clips_used"] == 17 and run["training"]["clips_failed"] == 0
    assert run["training"]["without_audio"] == ["train-00", "train-01", "train-03"]
    test = run["splits"]["test"]
    assert test["clips_scored"] == 4 and test["without_audio"] == ["test-07"]
    assert [f["id"] for f in test["failures"]] == ["test-tone"]  # the only failure
    assert test["table"]["audio_quality_count"] == 4
    assert re.search(r"clips without audio +1", printed)


def test_numpy_inference_equals_the_torch_network(tiny, scorer: LiteModel, tmp_path: Path) -> None:
    import torch

    vectors = feature_matrix(tiny[0], "archetype")
    loaded = LiteModel.load(scorer.save(tmp_path / "s"))
    probs, p = loaded.predict(vectors)
    with torch.no_grad():
        logits, pass_logit = loaded.torch_net()(
            torch.from_numpy((vectors - loaded.mean) / loaded.std)
        )
    np.testing.assert_allclose(probs, torch.softmax(logits.double(), -1).numpy(), atol=1e-6)
    np.testing.assert_allclose(p, torch.sigmoid(pass_logit.double()).numpy(), atol=1e-6)
    state = {k: tuple(v.shape) for k, v in loaded.torch_net().state_dict().items()}
    assert state == {k: v.shape for k, v in loaded.weights.items()}


def test_weights_that_do_not_fit_the_config_are_refused(scorer: LiteModel, tmp_path: Path) -> None:
    import hashlib

    from safetensors.numpy import save

    folder = scorer.save(tmp_path / "s")
    weights = {k: v for k, v in scorer.weights.items() if k != "heads.audio_quality.bias"}
    data = save(weights)
    (folder / WEIGHTS_FILE).write_bytes(data)
    config = json.loads((folder / CONFIG_FILE).read_text())
    config["weights_sha256"] = hashlib.sha256(data).hexdigest()
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ScorerError, match=r"model.safetensors: weights heads.audio_quality.bias"):
        LiteModel.load(folder)
