"""AnimeScore-style ranker: pair CSVs, majority vote, training on a synthetic preference,
tiny SSL encoders forward/backward, save/load, the handcrafted baseline and the CLI."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from conftest import LIBRIVOX

from speech_drame.protocols.animescore.pairs import (  # noqa: E402
    COLUMN_ALIASES,
    Pair,
    PairFileError,
    PairSet,
    load_pairs,
    majority_vote,
    write_pairs,
)

SEGMENT_S = 1.5


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def clean_vs_noisy(tmp_path_factory) -> dict:
    """1.5-s LibriVox segments, clean and with seeded white noise (0-10 dB SNR).

    Pairs set a clean segment against a noisy *different* segment, sides shuffled; the
    first three recordings make the training pairs, the other two the held-out pairs.
    """
    out = tmp_path_factory.mktemp("animescore")
    rng = np.random.default_rng(0)
    groups: dict[str, list[tuple[str, str]]] = {"train": [], "test": []}
    for n, wav in enumerate(sorted(LIBRIVOX.glob("*.wav"))):
        x, sr = sf.read(wav, dtype="float32")
        step = int(SEGMENT_S * sr)
        for k in range(len(x) // step):
            seg = x[k * step : (k + 1) * step]
            snr = rng.uniform(0, 10)
            noise = rng.standard_normal(seg.size).astype("float32")
            noise *= np.sqrt(np.mean(seg**2) / 10 ** (snr / 10) / np.mean(noise**2))
            clean, noisy = out / f"c{n}_{k}.wav", out / f"n{n}_{k}.wav"
            sf.write(clean, seg, sr)
            sf.write(noisy, np.clip(seg + noise, -1, 1), sr)
            groups["train" if n < 3 else "test"].append((str(clean), str(noisy)))
    sets = {}
    for split, segs in groups.items():
        pairs = []
        for i, (clean, _) in enumerate(segs):
            for j, (_, noisy) in enumerate(segs):
                if i != j and (split == "test" or (i + j) % 2 == 0):
                    flip = rng.random() < 0.5
                    a, b = (noisy, clean) if flip else (clean, noisy)
                    pairs.append(Pair(a, b, not flip))
        sets[split] = PairSet(pairs, origin=f"synthetic {split}")
    sets["cache"] = out / "cache"
    return sets


@pytest.fixture(scope="module")
def trained(clean_vs_noisy, tmp_path_factory):
    """The compact configuration, smaller still: it learns in a few CPU seconds."""
    from dataclasses import replace

    from speech_drame.protocols.animescore.config import PRESETS
    from speech_drame.protocols.animescore.ranker import train_ranker

    config = replace(PRESETS["compact"], lstm_hidden=16, mlp_hidden=16, max_epochs=12, patience=4)
    return train_ranker(clean_vs_noisy["train"], config=config, cache=clean_vs_noisy["cache"])


def test_ranker_learns_clean_over_noisy_on_held_out_pairs(trained, clean_vs_noisy):
    result = trained.evaluate(clean_vs_noisy["test"], cache=clean_vs_noisy["cache"])
    assert result["count"] == len(clean_vs_noisy["test"].pairs) >= 12
    assert result["roc_auc"] > 0.9
    assert result["accuracy"] > 0.8
    summary = trained.summary
    assert summary["train_pairs"] + summary["val_pairs"] == len(clean_vs_noisy["train"].pairs)
    assert 1 <= summary["best_epoch"] <= summary["epochs_run"] <= 12


def test_save_load_round_trip_and_batch_score_api(trained, clean_vs_noisy, tmp_path):
    from speech_drame.protocols.animescore.ranker import Ranker, score

    files = clean_vs_noisy["test"].files
    before = trained.score(files, cache=clean_vs_noisy["cache"])
    folder = trained.save(tmp_path / "ranker")
    assert {p.name for p in folder.iterdir()} == {"model.safetensors", "config.json"}
    after = Ranker.load(folder).score(files, cache=clean_vs_noisy["cache"])
    np.testing.assert_array_equal(before, after)
    # without the cache the frames are recomputed: same scores
    np.testing.assert_allclose(score(files[:3], folder, cache=None), before[:3], atol=1e-5)
    with pytest.raises(FileNotFoundError, match="config.json"):
        Ranker.load(tmp_path / "nowhere")


def test_pairwise_logistic_loss_matches_the_formula():
    import torch

    from speech_drame.protocols.animescore.ranker import pairwise_logistic_loss

    d = np.array([2.0, -1.0, 0.5, -3.0])
    y = np.array([True, False, False, True])
    sign = np.where(y, 1.0, -1.0)
    expected = np.mean(-np.log(1 / (1 + np.exp(-sign * d))))
    got = pairwise_logistic_loss(torch.tensor(d), torch.tensor(y))
    assert float(got) == pytest.approx(expected, rel=1e-9)


def _tiny(kind: str):
    import transformers as tf

    common = dict(
        hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2, vocab_size=8,
    )  # fmt: skip
    config = {
        "wav2vec2": tf.Wav2Vec2Config,
        "hubert": tf.HubertConfig,
        "wavlm": tf.WavLMConfig,
        "data2vec": tf.Data2VecAudioConfig,
    }[kind](**common)
    if kind == "data2vec":
        config.conv_pos_kernel_size = 8
        config.num_conv_pos_embeddings = 8
    import torch

    torch.manual_seed(0)
    return tf.AutoModel.from_config(config)


@pytest.mark.parametrize("kind", ["wav2vec2", "hubert", "wavlm", "data2vec"])
def test_tiny_ssl_encoder_forward_and_backward_through_the_ranker(kind):
    import torch

    from speech_drame.audio import load_audio
    from speech_drame.protocols.animescore.encoders import HFEncoder
    from speech_drame.protocols.animescore.ranker import (
        RankerConfig,
        _head,
        pairwise_logistic_loss,
    )

    encoder = HFEncoder(_tiny(kind), f"tiny-{kind}", layer=1)
    rng = np.random.default_rng(1)
    waves = torch.from_numpy(rng.standard_normal((2, 8000)).astype("float32") * 0.1)
    lengths = torch.tensor([8000, 5000])
    waves[1, 5000:] = 0
    hidden, frames = encoder.forward(waves, lengths)
    assert hidden.shape[:2] == (2, int(frames[0])) and hidden.shape[2] == 16
    assert int(frames[1]) < int(frames[0])
    assert not hidden.requires_grad  # frozen encoder

    head = _head(encoder.dim, RankerConfig(lstm_hidden=8, mlp_hidden=8))
    scores = head(hidden, frames)
    loss = pairwise_logistic_loss(scores[:1] - scores[1:], torch.tensor([True]))
    loss.backward()
    grads = [p.grad for p in head.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(float(g.abs().sum()) > 0 for g in grads)
    assert all(p.grad is None for p in encoder.model.parameters())

    one = encoder.frames(load_audio((waves[0].numpy(), 16_000)))
    np.testing.assert_allclose(one, hidden[0].numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="layer 7 out of range"):
        HFEncoder(encoder.model, "tiny", layer=7)


def test_train_with_a_tiny_ssl_encoder(clean_vs_noisy):
    from speech_drame.protocols.animescore.encoders import HFEncoder
    from speech_drame.protocols.animescore.ranker import RankerConfig, train_ranker

    pairs = PairSet(clean_vs_noisy["test"].pairs[:8])
    config = RankerConfig(lstm_hidden=8, mlp_hidden=8, max_epochs=2, patience=1)
    ranker = train_ranker(pairs, HFEncoder(_tiny("wavlm"), "tiny-wavlm"), config, cache=None)
    assert ranker.summary["epochs_run"] >= 1
    assert np.isfinite(ranker.score(pairs.files[:2], cache=None)).all()


# --- pair CSVs --------------------------------------------------------------------------


@pytest.fixture
def clips(tmp_path) -> list[str]:
    names = []
    for i in range(3):
        sf.write(tmp_path / f"u{i}.wav", np.full(8000, 0.1, "float32"), 16_000)
        names.append(f"u{i}.wav")
    return names


@pytest.mark.parametrize(
    ("a", "b", "choice"),
    [("file_a", "file_b", "choice"), ("audio_a", "audio_b", "label"),
     ("wav_a", "wav_b", "preference")],
)  # fmt: skip
def test_pair_csv_accepts_documented_aliases(tmp_path, clips, a, b, choice):
    assert a in COLUMN_ALIASES["file_a"] and choice in COLUMN_ALIASES["choice"]
    path = _write_csv(
        tmp_path / "pairs.csv",
        [a, b, choice, "source_a", "source_b"],
        [[clips[0], clips[1], "+1", "x", "y"], [clips[1], clips[2], "-1", "y", "z"]],
    )
    got = load_pairs(path)
    assert [(Path(p.file_a).name, Path(p.file_b).name, p.a_preferred) for p in got.pairs] == [
        ("u0.wav", "u1.wav", True),
        ("u1.wav", "u2.wav", False),
    ]
    assert got.pairs[0].source_a == "x" and got.n_judgements == 2 and not got.ties


def test_pair_csv_errors_name_file_row_and_column(tmp_path, clips):
    header = ["audio_a", "audio_b", "label"]
    bad = _write_csv(
        tmp_path / "bad.csv", header, [[clips[0], clips[1], "1"], [clips[0], clips[2], "yes"]]
    )
    with pytest.raises(PairFileError, match=r"bad\.csv: row 3, column 'label': choice 'yes'"):
        load_pairs(bad)
    gone = _write_csv(tmp_path / "gone.csv", header, [[clips[0], "missing.wav", "1"]])
    with pytest.raises(PairFileError, match=r"row 2, column 'audio_b': audio file not found"):
        load_pairs(gone)
    short = tmp_path / "short.csv"
    short.write_text(f"audio_a,audio_b,label\n{clips[0]},{clips[1]}\n")
    with pytest.raises(PairFileError, match=r"row 2, column 'label': missing"):
        load_pairs(short)
    nocol = _write_csv(tmp_path / "nocol.csv", ["file_a", "file_b", "winner"], [])
    with pytest.raises(PairFileError, match=r"nocol\.csv: no 'choice' column \(accepted names"):
        load_pairs(nocol)
    both = _write_csv(tmp_path / "both.csv", ["file_a", "audio_a", "file_b", "choice"], [])
    with pytest.raises(PairFileError, match=r"aliases of 'file_a'"):
        load_pairs(both)
    with pytest.raises(PairFileError, match="pair file not found"):
        load_pairs(tmp_path / "absent.csv")
    # paths resolve against audio_root when given
    sub = tmp_path / "lists"
    sub.mkdir()
    rel = _write_csv(sub / "rel.csv", header, [[clips[0], clips[1], "-1"]])
    with pytest.raises(PairFileError, match="audio file not found"):
        load_pairs(rel)
    assert load_pairs(rel, audio_root=tmp_path).pairs[0].a_preferred is False


def test_majority_vote_merges_either_order_and_reports_ties():
    x, y, z = "x.wav", "y.wav", "z.wav"
    judgements = [
        Pair(x, y, True), Pair(y, x, False), Pair(x, y, False),  # x wins 2-1
        Pair(y, z, True), Pair(z, y, True),  # tie 1-1
        Pair(z, x, True),
    ]  # fmt: skip
    voted = majority_vote(judgements)
    assert voted.n_judgements == 6
    assert [(p.file_a, p.file_b, p.a_preferred, p.votes_a, p.votes_b) for p in voted.pairs] == [
        (x, y, True, 2, 1),
        (z, x, True, 1, 0),
    ]
    assert voted.ties == [(y, z, 2)]


def test_written_pairs_read_back(tmp_path, clips):
    pairs = [Pair(str(tmp_path / clips[0]), str(tmp_path / clips[2]), False, 0, 1, "s", "t")]
    got = load_pairs(write_pairs(pairs, tmp_path / "out.csv"))
    assert got.pairs == pairs


def test_whisper_encoder_frames_cover_the_clip_and_match_the_asr_embedding():
    from speech_drame.audio import load_audio
    from speech_drame.features.asr import encoder_frames, transcribe

    audio = load_audio(LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0880.wav")
    frames = encoder_frames(audio)
    assert frames.shape == ((len(audio.samples) // 160 + 1) // 2, 512)  # 20 ms per state
    np.testing.assert_allclose(frames.mean(0), transcribe(audio).embedding, rtol=1e-4, atol=1e-5)


# --- handcrafted baseline -----------------------------------------------------------------


def _vowel(formant_hz: tuple[float, ...], f0: float = 120.0, seconds: float = 1.0) -> np.ndarray:
    """A tilted impulse train at ``f0`` through second-order resonators at ``formant_hz``."""
    from scipy.signal import lfilter

    sr = 16_000
    x = np.zeros(int(seconds * sr))
    x[:: int(sr / f0)] = 1.0
    x = lfilter([1.0], [1.0, -0.97], x)  # source tilt (what the analysis pre-emphasis undoes)
    for f in formant_hz:
        r = np.exp(-np.pi * 80.0 / sr)  # 80 Hz bandwidth
        x = lfilter([1.0 - r], [1.0, -2 * r * np.cos(2 * np.pi * f / sr), r * r], x)
    return (0.3 * x / np.abs(x).max()).astype("float32")


def test_lpc_formants_recover_synthetic_resonances():
    from speech_drame.audio import load_audio
    from speech_drame.features.formants import formants

    for target in ((500.0, 1500.0, 2500.0), (400.0, 1900.0, 2700.0)):
        got = formants(load_audio((_vowel(target), 16_000)))
        np.testing.assert_allclose([got.f1_hz, got.f2_hz, got.f3_hz], target, rtol=0.08)
        assert got.frames > 50


def test_baseline_cross_validation_matches_sklearn(clean_vs_noisy):
    from sklearn.model_selection import KFold, cross_val_predict

    from speech_drame.metrics import pairwise_preference
    from speech_drame.protocols.animescore.baseline import (
        FEATURES,
        baseline_model,
        pair_differences,
        run_baseline,
    )

    pairs = clean_vs_noisy["test"]
    result = run_baseline(pairs, cache=clean_vs_noisy["cache"], folds=5, seed=3)
    x, y = pair_differences(pairs, cache=clean_vs_noisy["cache"])
    assert x.shape == (len(pairs.pairs), len(FEATURES))
    direct = cross_val_predict(
        baseline_model(), x, y, cv=KFold(5, shuffle=True, random_state=3),
        method="decision_function",
    )  # fmt: skip
    np.testing.assert_allclose(result["score_diff"], direct, rtol=1e-6, atol=1e-9)
    expected = pairwise_preference(direct, y)
    assert result["roc_auc"] == pytest.approx(expected["roc_auc"])
    assert result["nll"] == pytest.approx(expected["nll"])
    assert len(result["per_fold"]) == 5 and set(result["coefficients"]) == set(FEATURES)
    # swapping A and B flips every out-of-fold difference (no intercept)
    flipped = PairSet([Pair(p.file_b, p.file_a, not p.a_preferred) for p in pairs.pairs])
    swapped = run_baseline(flipped, cache=clean_vs_noisy["cache"], folds=5, seed=3)
    np.testing.assert_allclose(swapped["score_diff"], -np.asarray(result["score_diff"]), atol=1e-6)


# --- demo pairs and the command line ------------------------------------------------------


def _demo_release(root: Path) -> Path:
    """A minimal demo release: two renderings, three severities each, plus a test clip."""
    import json

    clips = []
    for base in ("tts:piper:a", "tts:flite:b"):
        for severity in (0, 1, 2):
            wav = f"archetype_data/{base[-1]}{severity}.wav"
            clips.append({"split": "train", "base_key": base, "wav": wav,
                          "degradation": {"kind": "noise" if severity else "none",
                                          "severity": severity}})  # fmt: skip
    clips.append({"split": "test", "base_key": "tts:piper:a", "wav": "archetype_data/t0.wav",
                  "degradation": {"kind": "none", "severity": 0}})  # fmt: skip
    clips.append({"split": "test", "base_key": "tts:piper:a", "wav": "archetype_data/t1.wav",
                  "degradation": {"kind": "reverb", "severity": 0}})  # fmt: skip
    (root / "archetype_data").mkdir(parents=True)
    for c in clips:
        sf.write(root / c["wav"], np.full(8000, 0.1, "float32"), 16_000)
    (root / "DEMO_MANIFEST.json").write_text(json.dumps({"clips": clips}))
    return root


def test_demo_pairs_prefer_the_less_degraded_rendering(tmp_path):
    from speech_drame.protocols.animescore.pairs import SYNTHETIC_NOTE, demo_pairs

    sets = demo_pairs(_demo_release(tmp_path / "release"), seed=0)
    assert set(sets) == {"train"}  # the test clips share a severity: no pair
    pairs = sets["train"]
    assert len(pairs.pairs) == 6 and pairs.note == SYNTHETIC_NOTE
    for p in pairs.pairs:
        a, b = Path(p.file_a).stem, Path(p.file_b).stem
        assert a[0] == b[0]  # same rendering
        assert p.a_preferred == (int(a[1]) < int(b[1]))
    assert {p.a_preferred for p in pairs.pairs} == {True, False}
    with pytest.raises(PairFileError, match="DEMO_MANIFEST.json: not found"):
        demo_pairs(tmp_path)


def _cli(argv: list[str]) -> int:
    from speech_drame.cli import main

    return main(["animescore", *argv])


def test_cli_train_score_baseline_and_demo_pairs(clean_vs_noisy, tmp_path, capsys):
    cache = str(clean_vs_noisy["cache"])
    train_csv = write_pairs(clean_vs_noisy["train"].pairs, tmp_path / "train.csv")
    test_csv = write_pairs(clean_vs_noisy["test"].pairs, tmp_path / "test.csv")
    model = tmp_path / "model"
    argv = ["train", "--pairs", str(train_csv), "--test-pairs", str(test_csv), "--out",
            str(model), "--epochs", "2", "--lstm-hidden", "8", "--mlp-hidden", "8",
            "--feature-cache", cache, "--quiet"]  # fmt: skip
    assert _cli(argv) == 0
    out = capsys.readouterr().out
    assert "test: 30 pairs, accuracy" in out and f"saved {model}" in out
    assert (model / "metrics.json").is_file()

    files = clean_vs_noisy["test"].files[:2]
    assert _cli(["score", "--model", str(model), "--feature-cache", cache, "--json", *files]) == 0
    printed = json.loads(capsys.readouterr().out)
    from speech_drame.protocols.animescore.ranker import score

    np.testing.assert_allclose([r["score"] for r in printed], score(files, model, cache))

    saved = tmp_path / "baseline.json"
    argv = ["baseline", "--pairs", str(test_csv), "--feature-cache", cache, "--json-out", str(saved)]  # fmt: skip
    assert _cli(argv) == 0
    assert "baseline (5-fold CV): 30 pairs" in capsys.readouterr().out
    assert json.loads(saved.read_text())["count"] == 30

    assert _cli(["score", "--model", str(tmp_path / "none"), files[0]]) == 2
    assert "config.json: missing" in capsys.readouterr().err
    bad = _write_csv(tmp_path / "bad.csv", ["file_a", "file_b", "choice"], [["x", "y", "1"]])
    assert _cli(["baseline", "--pairs", str(bad)]) == 2
    assert "bad.csv: row 2, column 'file_a': audio file not found" in capsys.readouterr().err

    release = _demo_release(tmp_path / "release")
    assert _cli(["demo-pairs", "--release", str(release), "--out", str(tmp_path / "demo")]) == 0
    assert len(load_pairs(tmp_path / "demo" / "pairs_train.csv").pairs) == 6
    assert "synthetic" in (tmp_path / "demo" / "README.md").read_text()


def test_utterance_metadata_csv(tmp_path):
    from speech_drame.protocols.animescore.pairs import read_utterances

    ok = _write_csv(tmp_path / "utt.csv", ["wav", "source", "split"], [["u0.wav", "anim", "train"]])
    assert read_utterances(ok) == {"u0.wav": {"wav": "u0.wav", "source": "anim", "split": "train"}}
    dup = _write_csv(tmp_path / "dup.csv", ["file"], [["u0.wav"], ["u0.wav"]])
    with pytest.raises(PairFileError, match=r"dup\.csv: row 3: 'u0.wav' listed twice"):
        read_utterances(dup)
    empty = _write_csv(tmp_path / "empty.csv", ["file", "source"], [["", "x"]])
    with pytest.raises(PairFileError, match=r"row 2, column 'file': empty"):
        read_utterances(empty)
    with pytest.raises(PairFileError, match="expected one of the columns file/audio/wav/path"):
        read_utterances(_write_csv(tmp_path / "none.csv", ["name"], []))


# --- the README walkthrough, pair-path rule, unreadable files ------------------------------


def _speech_release(root: Path) -> Path:
    """A demo release of real speech: per split, renderings at three noise severities."""
    clips = []
    wavs = sorted(LIBRIVOX.glob("*.wav"))
    rng = np.random.default_rng(7)
    for split, sources in (("train", wavs[:3]), ("test", wavs[3:4])):
        for n, wav in enumerate(sources):
            x, sr = sf.read(wav, dtype="float32")
            x = x[: int(SEGMENT_S * sr)]
            for severity in (0, 1, 2):
                noise = rng.standard_normal(x.size).astype("float32") * 0.05 * severity
                rel = f"archetype_data/{split}{n}_{severity}.wav"
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                sf.write(root / rel, np.clip(x + noise, -1, 1), sr)
                clips.append({"split": split, "base_key": f"{split}{n}", "wav": rel,
                              "degradation": {"kind": "noise" if severity else "none",
                                              "severity": severity}})  # fmt: skip
    (root / "DEMO_MANIFEST.json").write_text(json.dumps({"clips": clips}))
    return root


def test_readme_walkthrough_runs_as_written_and_from_another_folder(
    tmp_path, monkeypatch, capsys, clean_vs_noisy
):
    """demo-pairs, train, score and baseline with the README's relative paths (no --audio-root),
    run from the project folder, then again from another folder with other relative paths."""
    from speech_drame.cli import main

    project = tmp_path / "project"
    _speech_release(project / "build" / "demo_release")
    cache = str(clean_vs_noisy["cache"])
    small = ["--epochs", "2", "--lstm-hidden", "8", "--mlp-hidden", "8", "--quiet"]
    monkeypatch.chdir(project)
    assert main(["animescore", "demo-pairs", "--release", "build/demo_release",
                 "--out", "build/animescore_pairs"]) == 0  # fmt: skip
    written = (project / "build/animescore_pairs/pairs_train.csv").read_text().splitlines()[1]
    assert written.startswith("../demo_release/archetype_data/")  # relative to the CSV's folder
    assert main(["animescore", "train", "--pairs", "build/animescore_pairs/pairs_train.csv",
                 "--test-pairs", "build/animescore_pairs/pairs_test.csv",
                 "--out", "build/animescore_ranker", "--feature-cache", cache, *small]) == 0  # fmt: skip
    assert "test: 3 pairs, accuracy" in capsys.readouterr().out
    clip = "build/demo_release/archetype_data/test0_0.wav"
    assert main(["animescore", "score", "--model", "build/animescore_ranker", "--feature-cache", cache,
                 clip]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip().endswith(clip)
    assert main(["animescore", "baseline", "--pairs", "build/animescore_pairs/pairs_train.csv",
                 "--folds", "3", "--feature-cache", cache]) == 0  # fmt: skip
    assert "baseline (3-fold CV): 9 pairs" in capsys.readouterr().out

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["animescore", "train", "--pairs", "../project/build/animescore_pairs/pairs_train.csv",
                 "--out", "ranker", "--feature-cache", cache, *small]) == 0  # fmt: skip
    assert main(["animescore", "baseline", "--pairs",
                 str(project / "build/animescore_pairs/pairs_train.csv"), "--folds", "3",
                 "--feature-cache", cache]) == 0  # fmt: skip
    # the pairs folder and the release move together: the CSV still resolves
    monkeypatch.chdir(tmp_path)
    (project / "build").rename(tmp_path / "moved")
    assert len(load_pairs("moved/animescore_pairs/pairs_test.csv").pairs) == 3


def test_pair_paths_resolve_against_the_csv_folder_and_are_normalised(tmp_path, clips):
    sub = tmp_path / "lists"
    sub.mkdir()
    rel = _write_csv(sub / "rel.csv", ["file_a", "file_b", "choice"],
                     [[f"../{clips[0]}", f"./../{clips[1]}", "+1"]])  # fmt: skip
    (pair,) = load_pairs(rel).pairs
    assert pair.file_a == str(tmp_path / clips[0]) and pair.file_b == str(tmp_path / clips[1])
    # write_pairs stores paths relative to the CSV it writes: the two files read back equal
    out = write_pairs([pair], tmp_path / "other" / "out.csv")
    assert "../u0.wav" in out.read_text()
    assert load_pairs(out).pairs == [pair]


def test_score_reports_an_unreadable_file_and_scores_the_others(
    trained, clean_vs_noisy, tmp_path, capsys
):
    model = trained.save(tmp_path / "model")
    cache = str(clean_vs_noisy["cache"])
    good = clean_vs_noisy["test"].files[:2]
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF not audio")
    argv = ["score", "--model", str(model), "--feature-cache", cache]
    assert _cli([*argv, good[0], str(bad), good[1]]) == 1
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    assert [line.split("\t")[1] for line in lines] == good
    assert f"not scored: {bad}" in err and "1 of 3 file(s) could not be scored" in err
    assert _cli([*argv, "--json", good[0], str(bad)]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["file"] == good[0] and isinstance(rows[0]["score"], float)
    assert rows[1]["file"] == str(bad) and "unreadable" in rows[1]["error"]
    assert "score" not in rows[1]
    from speech_drame.protocols.animescore.ranker import score

    np.testing.assert_allclose(rows[0]["score"], score(good[:1], model, cache)[0])


def test_train_and_baseline_leave_out_pairs_of_an_unreadable_clip(clean_vs_noisy, tmp_path, capsys):
    cache = str(clean_vs_noisy["cache"])
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF not audio")
    pairs = clean_vs_noisy["test"].pairs
    extra = [Pair(pairs[0].file_a, str(bad), True), Pair(str(bad), pairs[1].file_b, False)]
    csv_path = write_pairs(pairs + extra, tmp_path / "pairs.csv")
    model = tmp_path / "model"
    assert _cli(["train", "--pairs", str(csv_path), "--test-pairs", str(csv_path), "--out",
                 str(model), "--epochs", "1", "--lstm-hidden", "8", "--mlp-hidden", "8",
                 "--feature-cache", cache, "--quiet"]) == 1  # fmt: skip
    out, err = capsys.readouterr()
    assert f"test: {len(pairs)} pairs, accuracy" in out
    assert f"not readable: {bad}" in err
    assert "train: 2 pair(s) left out: 1 clip(s) could not be read" in err
    config = json.loads((model / "config.json").read_text())["training"]
    assert config["pairs"] == len(pairs) and config["pairs_left_out"] == 2
    assert list(config["unreadable"]) == [str(bad)]
    metrics = json.loads((model / "metrics.json").read_text())["test"]
    assert metrics["count"] == len(pairs) and metrics["pairs_left_out"] == 2

    assert _cli(["baseline", "--pairs", str(csv_path), "--feature-cache", cache]) == 1
    out, err = capsys.readouterr()
    assert f"baseline (5-fold CV): {len(pairs)} pairs" in out
    assert "baseline: 2 pair(s) left out" in err
