"""AnimeScore ranker configurations (released default, compact), checkpoint selection on
validation pairs, and the two pair conventions, on small synthetic inputs.

A stand-in frame encoder (four per-20-ms statistics of the waveform) replaces the Whisper
encoder, so these tests train in well under a second each.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml
from conftest import REPO

from speech_drame.protocols.animescore import encoders
from speech_drame.protocols.animescore.config import (
    PAIR_CONVENTIONS,
    PRESETS,
    RankerConfig,
    load_config,
)
from speech_drame.protocols.animescore.pairs import Pair, PairSet, load_pairs, pair_metrics

SR = 16_000


class StatsEncoder:
    """Frames of 320 samples -> log energy, zero-crossing rate, mean, peak (4 values)."""

    cache_name, version, dim = "test-stats", "1", 4

    def frames(self, audio) -> np.ndarray:
        x = audio.samples[: len(audio.samples) // 320 * 320].reshape(-1, 320)
        energy = np.log(np.mean(x**2, axis=1) + 1e-8)
        zcr = np.mean(np.abs(np.diff(np.sign(x), axis=1)) > 0, axis=1)
        return np.stack([energy, zcr, x.mean(1), np.abs(x).max(1)], 1).astype(np.float32)

    def spec(self) -> dict:
        return {"kind": "test-stats"}


@pytest.fixture(scope="module")
def tones(tmp_path_factory) -> dict:
    """Eight 0.4-s tones, clean and noisy; pairs prefer the clean one, sides alternating."""
    out = tmp_path_factory.mktemp("tones")
    rng = np.random.default_rng(0)
    t = np.arange(int(0.4 * SR)) / SR
    clean, noisy = [], []
    for k in range(8):
        tone = 0.3 * np.sin(2 * np.pi * (150 + 40 * k) * t)
        for kind, x, bucket in (
            ("c", tone, clean),
            ("n", tone + 0.2 * rng.standard_normal(t.size), noisy),
        ):
            path = out / f"{kind}{k}.wav"
            sf.write(path, np.clip(x, -1, 1).astype("float32"), SR)
            bucket.append(str(path))
    pairs = []
    for i in range(8):
        for j in (i + 1, i + 3):
            a, b = clean[i], noisy[j % 8]
            pairs.append(Pair(a, b, True) if (i + j) % 2 else Pair(b, a, False))
    return {"train": PairSet(pairs[:12]), "val": PairSet(pairs[12:]), "dir": out}


def _small(config: RankerConfig, **changes) -> RankerConfig:
    return replace(config, lstm_hidden=6, mlp_hidden=5, **changes)


# --- configurations -----------------------------------------------------------------------


def test_config_files_are_the_presets_and_released_is_the_default():
    for name in ("released", "compact"):
        assert load_config(REPO / "configs" / f"animescore_{name}.yaml") == PRESETS[name]
        assert load_config(name) == PRESETS[name] and load_config(name) is not PRESETS[name]
    assert load_config() == RankerConfig() == PRESETS["released"]
    released = asdict(PRESETS["released"])
    # the release: model/train_ranknet.sh, train_ranknet_v2.py, RankNetMos
    assert released == {
        "name": "released", "lstm_hidden": 256, "mlp_hidden": 256, "layer_norm": True,
        "frame_standardise": False, "dropout": 0.1, "learning_rate": 3e-5,
        "weight_decay": 1e-4, "batch_pairs": 8, "max_epochs": 20, "patience": 0,
        "val_fraction": 0.15, "seed": 0,
    }  # fmt: skip
    compact = asdict(PRESETS["compact"])  # the settings before the released head was added
    assert {k: compact[k] for k in ("lstm_hidden", "mlp_hidden", "learning_rate")} == {
        "lstm_hidden": 64, "mlp_hidden": 64, "learning_rate": 1e-3,
    }  # fmt: skip
    assert (compact["layer_norm"], compact["frame_standardise"]) == (False, True)
    assert (compact["batch_pairs"], compact["max_epochs"], compact["patience"]) == (16, 30, 5)


def test_config_file_errors_name_the_file_and_the_setting(tmp_path):
    def written(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    with pytest.raises(ValueError, match=r"bad\.yaml: unknown setting\(s\) hidden"):
        load_config(written("bad.yaml", "hidden: 3\n"))
    with pytest.raises(ValueError, match=r"lr\.yaml: learning_rate must be a number.*3\.0e-5"):
        load_config(written("lr.yaml", "learning_rate: 3e-5\n"))  # YAML 1.1 reads text
    with pytest.raises(ValueError, match=r"w\.yaml: lstm_hidden must be >= 1, got 0"):
        load_config(written("w.yaml", "lstm_hidden: 0\n"))
    with pytest.raises(ValueError, match=r"b\.yaml: layer_norm must be true or false"):
        load_config(written("b.yaml", "layer_norm: 1\n"))
    with pytest.raises(ValueError, match=r"list\.yaml: expected a mapping"):
        load_config(written("list.yaml", "- 1\n"))
    with pytest.raises(FileNotFoundError, match="ranker config not found.*released, compact"):
        load_config(tmp_path / "absent.yaml")
    # a file without a name is named after the file; missing settings are the released ones
    got = load_config(written("animescore_wide.yaml", "lstm_hidden: 512\n"))
    assert got == replace(PRESETS["released"], name="wide", lstm_hidden=512)


def test_released_head_normalises_the_pooled_bilstm_output_before_the_mlp():
    """Head output against a step-by-step reference: LSTM states of each clip alone (no
    padding), mean over its frames, LayerNorm, Linear, exact GELU, Linear."""
    import torch
    from scipy.special import erf
    from torch import nn

    from speech_drame.protocols.animescore.ranker import _head, pad_frames

    torch.manual_seed(0)
    head = _head(4, _small(PRESETS["released"])).eval()
    kinds = [type(m) for m in head.mlp]
    assert kinds == [nn.LayerNorm, nn.Dropout, nn.Linear, nn.GELU, nn.Dropout, nn.Linear]
    assert head.mlp[0].normalized_shape == (12,) and "frame_mean" not in head.state_dict()
    with torch.no_grad():  # non-trivial LayerNorm parameters
        head.mlp[0].weight.uniform_(0.5, 1.5)
        head.mlp[0].bias.uniform_(-0.5, 0.5)
    rng = np.random.default_rng(3)
    clips = [rng.standard_normal((n, 4)).astype(np.float32) for n in (9, 4)]
    got = head(*pad_frames(clips)).detach().numpy()

    def p(t) -> np.ndarray:
        return t.detach().numpy().astype(np.float64)

    ln, first, last = head.mlp[0], head.mlp[2], head.mlp[5]
    for clip, score in zip(clips, got, strict=True):
        states, _ = head.lstm(torch.from_numpy(clip)[None])
        v = p(states[0]).mean(0)
        v = (v - v.mean()) / np.sqrt(v.var() + ln.eps) * p(ln.weight) + p(ln.bias)
        h = p(first.weight) @ v + p(first.bias)
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        assert score == pytest.approx((p(last.weight) @ h + p(last.bias))[0], abs=1e-5)

    compact = _head(4, _small(PRESETS["compact"]))
    assert nn.LayerNorm not in [type(m) for m in compact.mlp]
    assert {"frame_mean", "frame_std"} <= set(compact.state_dict())


def test_config_round_trips_through_the_model_folder(tones, tmp_path):
    """YAML -> RankerConfig -> trained folder -> reload: the same config and the same scores,
    and the folder's config written back as YAML loads to the same config again."""
    from speech_drame.protocols.animescore.ranker import Ranker, train_ranker

    source = tmp_path / "animescore_tiny.yaml"
    source.write_text(yaml.safe_dump({**asdict(_small(PRESETS["released"])), "name": "tiny"}))
    config = replace(load_config(source), max_epochs=3)
    ranker = train_ranker(tones["train"], StatsEncoder(), config, cache=None)
    folder = ranker.save(tmp_path / "model")
    saved = json.loads((folder / "config.json").read_text())
    assert saved["format_version"] == 2 and saved["ranker"] == asdict(config)
    assert saved["ranker"]["name"] == "tiny" and saved["training"]["config_name"] == "tiny"
    again = Ranker.load(folder, encoder=StatsEncoder())
    assert again.config == config
    files = tones["train"].files
    np.testing.assert_array_equal(again.score(files, cache=None), ranker.score(files, cache=None))
    (tmp_path / "back.yaml").write_text(yaml.safe_dump(saved["ranker"]))
    assert load_config(tmp_path / "back.yaml") == config


def test_a_format_1_folder_loads_as_the_compact_head(tones, tmp_path):
    from speech_drame.protocols.animescore.ranker import Ranker, train_ranker

    config = _small(PRESETS["compact"], max_epochs=2)
    ranker = train_ranker(tones["train"], StatsEncoder(), config, cache=None)
    folder = ranker.save(tmp_path / "old")
    saved = json.loads((folder / "config.json").read_text())
    for key in ("name", "layer_norm", "frame_standardise"):  # what format 1 did not write
        del saved["ranker"][key]
    (folder / "config.json").write_text(json.dumps({**saved, "format_version": 1}))
    old = Ranker.load(folder, encoder=StatsEncoder())
    assert old.config == config
    files = tones["train"].files
    np.testing.assert_array_equal(old.score(files, cache=None), ranker.score(files, cache=None))


# --- checkpoint selection -----------------------------------------------------------------


def test_the_epoch_is_chosen_on_validation_pairs_never_on_test(tones, tmp_path, monkeypatch):
    from speech_drame.protocols.animescore.ranker import _split, train_ranker

    config = _small(PRESETS["released"], max_epochs=4, learning_rate=1e-2)
    ranker = train_ranker(tones["train"], StatsEncoder(), config, None, val_pairs=tones["val"])
    s = ranker.summary
    assert (s["train_pairs"], s["val_pairs"], s["epochs_run"]) == (12, 4, 4)  # patience 0
    nll = [h["val_nll"] for h in s["history"]]
    assert s["best_epoch"] == 1 + int(np.argmin(nll)) and s["best_val_nll"] == min(nll)
    assert "validation = 4 pairs" in s["selection"]
    # the kept head gives the recorded validation NLL
    scores = dict(
        zip(tones["val"].files, ranker.score(tones["val"].files, cache=None), strict=True)
    )
    diff = [scores[p.file_a] - scores[p.file_b] for p in tones["val"].pairs]
    assert tones["val"].metrics(diff)["nll"] == pytest.approx(min(nll), rel=1e-6)

    # without validation pairs: a share of train, the rows of two clips on the same side
    doubled = PairSet(tones["train"].pairs + [Pair(p.file_b, p.file_a, not p.a_preferred)
                                              for p in tones["train"].pairs])  # fmt: skip
    train, val = _split(doubled, 0.25, seed=1)
    assert sorted([*train, *val]) == list(range(24)) and len(val) == 6
    keys = [frozenset((p.file_a, p.file_b)) for p in doubled.pairs]
    assert not {keys[i] for i in train} & {keys[i] for i in val}

    from speech_drame.cli import main

    csv = REPO / "nowhere.csv"
    argv = ["animescore", "train", "--pairs", str(csv), "--val-pairs", str(csv),
            "--test-pairs", str(csv), "--out", str(tmp_path / "m"), "--quiet"]  # fmt: skip
    assert main(argv) == 2  # refused before any file is read


def test_cli_records_the_config_its_overrides_and_the_convention(
    tones, tmp_path, monkeypatch, capsys
):
    from speech_drame.cli import main
    from speech_drame.protocols.animescore import ranker as ranker_module
    from speech_drame.protocols.animescore.pairs import write_pairs

    monkeypatch.setattr(encoders, "build_encoder", lambda spec: StatsEncoder())
    monkeypatch.setattr(ranker_module, "build_encoder", lambda spec: StatsEncoder())
    train = write_pairs(tones["train"].pairs, tmp_path / "train.csv")
    val = write_pairs(tones["val"].pairs, tmp_path / "val.csv")
    test = write_pairs(tones["val"].pairs, tmp_path / "test.csv")
    out = tmp_path / "model"
    config = REPO / "configs" / "animescore_compact.yaml"
    argv = ["animescore", "train", "--pairs", str(train), "--val-pairs", str(val),
            "--test-pairs", str(test), "--out", str(out), "--no-feature-cache", "--quiet"]  # fmt: skip
    assert main([*argv[:-4], "--preset", str(config), "--epochs", "2", "--lstm-hidden", "6",
                 "--no-frame-standardise", "--pair-convention", "majority", *argv[-4:]]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    expected = replace(PRESETS["compact"], max_epochs=2, lstm_hidden=6, frame_standardise=False)
    saved = json.loads((out / "config.json").read_text())
    assert saved["ranker"] == asdict(expected)
    assert saved["training"]["config_source"] == str(config)
    assert saved["training"]["config_overrides"] == {
        "lstm_hidden": 6, "frame_standardise": False, "max_epochs": 2,
    }  # fmt: skip
    assert saved["training"]["pair_convention"] == "majority"
    assert "val.csv" in saved["training"]["selection"]
    metrics = json.loads((out / "metrics.json").read_text())["test"]
    assert metrics["pair_convention"] == "majority"
    assert metrics["convention_definition"] == PAIR_CONVENTIONS["majority"]
    assert "(pair convention majority)" in printed
    assert f"pair convention majority: {PAIR_CONVENTIONS['majority']}" in printed
    assert "config compact (" in printed and "overridden: lstm_hidden=6" in printed

    # no --config: the released configuration and the released pair convention
    assert main([*argv[:-4], "--epochs", "1", *argv[-4:]]) == 0
    saved = json.loads((out / "config.json").read_text())
    assert saved["ranker"] == asdict(replace(PRESETS["released"], max_epochs=1))
    assert saved["training"]["pair_convention"] == "released"
    assert "(pair convention released)" in capsys.readouterr().out


# --- pair conventions -----------------------------------------------------------------------


def test_pair_conventions_by_hand(tmp_path):
    """Nine rows over five clips with hand-set scores: a 1-1 split in one orientation and in
    both, a 2-1 majority, a single row and a zero difference, counted per convention."""
    for name in "uwxyz":
        sf.write(tmp_path / f"{name}.wav", np.full(800, 0.1, "float32"), SR)
    rows = [("x", "y", "+1"), ("x", "y", "-1"),  # 1-1, same orientation
            ("y", "z", "+1"), ("z", "y", "+1"),  # 1-1, both orientations
            ("x", "z", "+1"), ("z", "x", "-1"), ("x", "z", "-1"),  # x over z, 2-1
            ("w", "x", "-1"), ("u", "x", "+1")]  # fmt: skip
    csv = tmp_path / "pairs.csv"
    csv.write_text("file_a,file_b,choice\n" + "".join(f"{a}.wav,{b}.wav,{c}\n" for a, b, c in rows))
    s = {"u": 1.0, "w": 0.5, "x": 1.0, "y": 1.0, "z": 0.0}

    def diff(pairs: PairSet) -> list[float]:
        return [s[Path(p.file_a).stem] - s[Path(p.file_b).stem] for p in pairs.pairs]

    def nll(d: list[float], a_preferred: list[bool]) -> float:
        return float(np.mean([math.log1p(math.exp(-(1 if y else -1) * v))
                              for v, y in zip(d, a_preferred, strict=True)]))  # fmt: skip

    released = load_pairs(csv)  # the default
    assert released.convention == "released" and len(released.pairs) == 9 and not released.ties
    d = diff(released)
    assert d == [0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -0.5, 0.0]
    # s(a) > s(b) predicts A, anything else B: right on rows 2, 3, 5, 6, 8
    m = released.metrics(d)
    assert m["accuracy"] == pytest.approx(5 / 9) and m["count"] == 9
    y = [p.a_preferred for p in released.pairs]
    assert m["nll"] == pytest.approx(nll(d, y))
    from sklearn.metrics import roc_auc_score

    assert m["roc_auc"] == pytest.approx(roc_auc_score(y, d))
    assert m["pair_convention"] == "released"

    majority = load_pairs(csv, convention="majority")
    assert majority.convention == "majority" and len(majority.ties) == 2
    assert [(Path(p.file_a).stem, Path(p.file_b).stem, p.a_preferred, p.votes_a, p.votes_b)
            for p in majority.pairs] == [("x", "z", True, 2, 1), ("w", "x", False, 0, 1),
                                         ("u", "x", True, 1, 0)]  # fmt: skip
    d = diff(majority)
    m = majority.metrics(d)
    assert d == [1.0, -0.5, 0.0] and m["accuracy"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert m["nll"] == pytest.approx(nll(d, [True, False, True]))
    assert m["pair_convention"] == "majority"

    with pytest.raises(ValueError, match="unknown pair convention 'mean'"):
        load_pairs(csv, convention="mean")
    with pytest.raises(ValueError, match="unknown pair convention"):
        pair_metrics([1.0], [1], "rows")
