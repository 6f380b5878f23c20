"""ISDrama drama protocol against the released evaluator: official IPD/ILD, length policy, ANG/DIS."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from scipy.signal import resample_poly
from test_isdrama import TinySpatialNet, main, place, source

from speech_drame.protocols.isdrama.manifest import read_manifest
from speech_drame.protocols.isdrama.official_cues import (
    frame_count,
    mel_weights,
    official_cues,
    official_error,
)
from speech_drame.protocols.isdrama.protocol import score_dramas
from speech_drame.protocols.isdrama.spatial import interaural_cues, interaural_error
from speech_drame.protocols.isdrama.spatial_embedder import (
    TorchSpatialEmbedder,
    load_spatial_embedder,
    matrix_cosine,
)

librosa = pytest.importorskip("librosa")  # reference STFT and mel filters
SR32 = 32_000


def noise32(seconds: float, seed: int, silence: int = 0) -> np.ndarray:
    """Seeded 32 kHz noise, optionally after ``silence`` zero samples."""
    x = 0.1 * np.random.default_rng(seed).standard_normal(int(seconds * SR32))
    return np.concatenate([np.zeros(silence), x]).astype(np.float32)


def recipe(gen: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """The released recipe written out step by step with librosa's STFT and mel filters."""
    weights = librosa.filters.mel(
        sr=SR32, n_fft=1024, n_mels=128, fmin=50, fmax=14000, dtype=np.float64
    )

    def cues(x):
        left, right = (
            librosa.stft(
                x[:, c].astype(np.float64),
                n_fft=1024,
                hop_length=320,
                window="hann",
                center=True,
                pad_mode="reflect",
            )  # fmt: skip
            for c in (0, 1)
        )
        ipd = np.angle(right) - np.angle(left)  # (513, frames), not wrapped
        ild = 20 * np.log10((np.abs(right) + 1e-10) / (np.abs(left) + 1e-10))
        return (weights @ ipd).T, (weights @ ild).T  # (frames, 128)

    (ipd_g, ild_g), (ipd_r, ild_r) = cues(gen), cues(ref)
    t = min(len(ipd_g), len(ipd_r))
    return tuple(
        float(np.mean(np.abs(a[:t] - b[:t]))) / t * 100 for a, b in ((ipd_g, ipd_r), (ild_g, ild_r))
    )


def test_mel_weights_are_librosas_50_to_14000_hz_filters():
    expected = librosa.filters.mel(
        sr=SR32, n_fft=1024, n_mels=128, fmin=50, fmax=14000, dtype=np.float64
    )
    np.testing.assert_allclose(mel_weights(), expected, rtol=1e-12, atol=1e-15)


def test_pure_level_difference_gives_the_analytic_official_figures():
    """Right = 2 x left vs right = left / 2 (exact in floating point): per bin IPD is 0 and
    ILD is +-20 log10 2 dB, so ILD_mel differs by 40 log10 2 times each filter's sum."""
    x = noise32(0.5, seed=1)
    longer = noise32(0.52, seed=1)  # same start, 20 ms longer: cut to the common frames
    gen = np.stack([longer, 2 * longer], axis=1)
    ref = np.stack([x, x / 2], axis=1)
    result = official_error(gen, ref)
    frames = 1 + len(x) // 320
    assert result.frames == frames == frame_count(len(x))
    filter_sums = librosa.filters.mel(
        sr=SR32, n_fft=1024, n_mels=128, fmin=50, fmax=14000, dtype=np.float64
    ).sum(axis=1)
    expected_ild = 40 * np.log10(2) * filter_sums.mean() / frames * 100
    assert result.ipd_mae == 0.0
    assert result.ild_mae == pytest.approx(expected_ild, rel=1e-7)
    cues = official_cues(gen)
    np.testing.assert_allclose(
        cues.ild, 20 * np.log10(2) * np.tile(filter_sums, (len(cues.ild), 1))
    )


def test_delayed_pair_matches_the_recipe_written_with_librosa():
    """A source 7 samples later at the left ear and 3 dB louder on the right, against one 2
    samples later at the right ear; 16 ms of leading silence keep the symmetric first frame
    out (its phase is rounding noise, see official_cues)."""
    s = noise32(0.6, seed=2, silence=600)

    def later(d):
        return np.concatenate([np.zeros(d, np.float32), s[:-d]])

    gen = np.stack([later(7), np.float32(1.41) * s], axis=1)[: len(s) - 900]  # unequal lengths
    ref = np.stack([s, later(2)], axis=1)
    result = official_error(gen, ref)
    ipd, ild = recipe(gen, ref)
    assert result.frames == frame_count(len(gen))
    assert result.ipd_mae == pytest.approx(ipd, rel=1e-9)
    assert result.ild_mae == pytest.approx(ild, rel=1e-9)
    assert official_error(ref, ref).ipd_mae == 0.0
    with pytest.raises(ValueError, match="needs more than 512 samples"):
        official_error(gen[:500], ref)


def test_matrix_cosine_cuts_flattens_and_wraps_like_the_release():
    ref = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 1.0]])
    gen = np.array([[1.0, 1.0], [0.0, -1.0], [2.0, 2.0], [9.0, 9.0]])  # one window more
    a, b = ref.ravel(), gen[:3].ravel()
    plain = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert matrix_cosine(ref, gen) == pytest.approx(plain)  # no reference value above pi
    assert matrix_cosine(ref, gen, rule="plain") == pytest.approx(plain)
    logits = ref + np.array([[0.0, 2.5], [0.0, 0.0], [0.0, 0.0]])  # 4.5 > pi: both wrapped
    wa, wb = np.angle(np.exp(1j * logits.ravel())), np.angle(np.exp(1j * b))
    wrapped = wa @ wb / np.linalg.norm(wa) / np.linalg.norm(wb)
    assert matrix_cosine(logits, gen) == pytest.approx(wrapped)
    raw = logits.ravel() @ b / np.linalg.norm(logits) / np.linalg.norm(b)
    assert matrix_cosine(logits, gen, rule="plain") == pytest.approx(raw)
    assert abs(wrapped - raw) > 0.05
    with pytest.raises(ValueError, match="reference has 2 outputs per window, the generated"):
        matrix_cosine(ref, gen[:, :1])
    with pytest.raises(ValueError, match=r"must be a finite, non-empty \(windows, dim\)"):
        matrix_cosine(ref[0], gen)


def test_torch_embedder_returns_one_row_per_window(tmp_path):
    checkpoint = tmp_path / "tiny.pt"
    torch.save(TinySpatialNet().state_dict(), checkpoint)
    embedder = load_spatial_embedder("test_isdrama:TinySpatialNet", checkpoint, window=0.25)
    assert embedder.sample_rate == 32_000  # SPATIAL-AST's rate by default
    x = place(source(0.6), 3, 2.0)[::3][:5000]  # 5000 samples = 0.156 s at 32 kHz
    whole = TorchSpatialEmbedder(TinySpatialNet())(x)
    assert whole.angle.shape == (1, 6) and whole.distance.shape == (1, 4)
    x = np.concatenate([x, x, x, x])[:17_000]  # 3 windows of 8000 samples, the last padded
    emb = embedder(x)
    assert emb.angle.shape == (3, 6) and emb.distance.shape == (3, 4)
    padded = np.pad(x, ((0, 24_000 - len(x)), (0, 0)))
    for row, piece in enumerate(np.split(padded, 3)):
        angle, distance = TinySpatialNet()(torch.from_numpy(np.ascontiguousarray(piece.T))[None])
        np.testing.assert_allclose(emb.angle[row], angle[0].detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(emb.distance[row], distance[0].detach().numpy(), atol=1e-5)


def _drama(tmp_path, name, samples, sr=48_000):
    sf.write(tmp_path / name, samples, sr, subtype="FLOAT")
    return name


@pytest.fixture()
def pair(tmp_path):
    s = source(1.2, seed=8)
    s[: 48_000 // 50] = 0.0  # 20 ms of leading silence
    ref = place(s, -4, 3.0)
    gen = place(s, 2, -1.0)
    return {
        "ref": _drama(tmp_path, "ref.wav", ref),
        "gen": _drama(tmp_path, "gen.wav", gen),
        "long": _drama(tmp_path, "long.wav", np.concatenate([gen, gen[:24_000]])),
        "arrays": (gen, ref),
    }


def _manifest(tmp_path, rows):
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"type": "drama", **r}) + "\n" for r in rows))
    return read_manifest(path)


def test_drama_protocol_official_default_wrapped_band_option(tmp_path, pair):
    entries = _manifest(tmp_path, [{"id": "a", "generated": pair["gen"], "reference": pair["ref"]}])
    official = score_dramas(entries, embedder=None)
    band = score_dramas(entries, embedder=None, spatial_metric="wrapped-band")
    gen, ref = pair["arrays"]
    expected = official_error(*(resample_poly(x, 2, 3, axis=0) for x in (gen, ref)))
    row = official.rows[0]
    assert row["ipd_mae"] == pytest.approx(expected.ipd_mae, rel=1e-5)
    assert row["ild_mae"] == pytest.approx(expected.ild_mae, rel=1e-5)
    wrapped = interaural_error(interaural_cues(gen), interaural_cues(ref))
    assert band.rows[0]["ipd_mae"] == pytest.approx(wrapped.ipd_mae, rel=1e-5)
    assert band.rows[0]["ild_mae"] == pytest.approx(wrapped.ild_mae, rel=1e-5)
    assert band.rows[0]["ild_mae"] > 10 * row["ild_mae"]  # the ratio grows with the length
    s = official.settings
    assert s["spatial_metric"] == "official" and s["ipd_ild_sample_rate"] == 32_000
    assert "bands, divided by T, times 100" in s["spatial_metric_definition"]
    assert band.settings["spatial_metric_definition"].startswith(
        "this package's band measure: 48 kHz"
    )
    with pytest.raises(ValueError, match="floor_db applies to spatial_metric='wrapped-band'"):
        score_dramas(entries, embedder=None, floor_db=30)


def test_length_policy_error_by_default_truncate_reports_the_cut(tmp_path, pair):
    entries = _manifest(
        tmp_path, [{"id": "long", "generated": pair["long"], "reference": pair["ref"]}]
    )
    with pytest.raises(ValueError, match=r"id=long\): generated and reference durations differ"):
        score_dramas(entries, embedder=None)
    embedder = load_spatial_embedder(TinySpatialNet, None, window=0.25)
    result = score_dramas(entries, embedder=embedder, length_policy="truncate")
    row = result.rows[0]
    assert row["length_difference_s"] == pytest.approx(0.5) and row["cut_from"] == "generated"
    assert row["seconds"] == pytest.approx(1.2)
    assert result.settings["length_cut_total_s"] == pytest.approx(0.5)
    assert result.settings["length_policy"] == "truncate"
    assert result.settings["length_tolerance_s"] is None
    gen, ref = pair["arrays"]
    long32 = resample_poly(np.concatenate([gen, gen[:24_000]]), 2, 3, axis=0)
    ref32 = resample_poly(ref, 2, 3, axis=0)
    expected = official_error(long32, ref32)  # whole files, frame matrices cut
    assert row["ipd_mae"] == pytest.approx(expected.ipd_mae, rel=1e-5)
    eg, er = embedder(long32), embedder(ref32)
    assert eg.angle.shape == (7, 6) and er.angle.shape == (5, 6)  # 1.7 s and 1.2 s in 0.25 s
    assert row["ang_cos"] == pytest.approx(matrix_cosine(er.angle, eg.angle), rel=1e-5)
    assert row["dis_cos"] == pytest.approx(matrix_cosine(er.distance, eg.distance), rel=1e-5)
    assert result.settings["embedding_cosine"] == "wrap-above-pi"
    silent = load_spatial_embedder(SilentNet, None)
    with pytest.raises(ValueError, match=r"m.jsonl:1 \(id=long\): angle output: cosine of a zero"):
        score_dramas(entries, embedder=silent, length_policy="truncate")


class SilentNet(torch.nn.Module):
    """A spatial model whose outputs are all zero: the cosine is undefined."""

    def forward(self, x):
        return x.new_zeros(len(x), 6), x.new_zeros(len(x), 4)


def test_cli_states_the_conventions(tmp_path, pair, capsys):
    (tmp_path / "m.jsonl").write_text(
        json.dumps(
            {"id": "a", "type": "drama", "generated": pair["long"], "reference": pair["ref"]}
        )
    )
    argv = ["isdrama", "drama", str(tmp_path / "m.jsonl"), "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "durations differ by 0.500 s" in capsys.readouterr().err
    extra = ["--length-policy", "truncate", "--spatial-metric", "wrapped-band"]
    assert main([*argv, *extra]) == 0
    printed = capsys.readouterr().out
    assert "spatial_metric = wrapped-band: this package's band measure" in printed
    assert "length_policy = truncate: any duration difference is cut" in printed
    assert "cut from the longer files: 0.500 s in total" in printed
    report = json.loads((tmp_path / "o" / "isdrama_drama.json").read_text())
    assert report["settings"]["spatial_metric"] == "wrapped-band"
    assert report["rows"][0]["cut_from"] == "generated"
    assert main([*argv, "--length-policy", "truncate", "--floor-db", "30"]) == 2
    assert "floor_db applies to spatial_metric='wrapped-band' only" in capsys.readouterr().err
