"""ISDrama objective metrics: binaural cues, GCC-PHAT, FFE, CER, spatial embedder, protocols."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from conftest import LIBRIVOX, tone
from scipy.signal import get_window, stft

from speech_drame.audio import Audio, AudioError, load_audio
from speech_drame.features.spectral import mel_filterbank
from speech_drame.protocols.isdrama.alignment import dtw_path
from speech_drame.protocols.isdrama.f0_frame_error import f0_frame_error
from speech_drame.protocols.isdrama.manifest import read_manifest
from speech_drame.protocols.isdrama.protocol import (
    Recogniser,
    compare_f0,
    score_dramas,
    score_sentences,
)
from speech_drame.protocols.isdrama.spatial import (
    binaural_channels,
    delay_to_azimuth,
    delay_track,
    direction_check,
    gcc_phat_delay,
    interaural_cues,
    interaural_error,
)
from speech_drame.protocols.isdrama.spatial_embedder import load_spatial_embedder

SR = 48_000


def source(seconds: float = 1.0, seed: int = 0) -> np.ndarray:
    """Seeded white noise with a speech-like on/off envelope."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 3 * np.arange(n) / SR)
    return (0.1 * rng.standard_normal(n) * envelope).astype(np.float32)


def place(signal: np.ndarray, delay: int, ild_db: float) -> np.ndarray:
    """Binaural (left, right) copy of ``signal``: the left ear lags by ``delay`` samples
    (negative: leads) and is ``ild_db`` louder than the right."""
    pad = abs(delay) + 1
    padded = np.pad(signal, pad)
    n = len(signal)
    left = padded[pad - max(delay, 0) : pad - max(delay, 0) + n]
    right = padded[pad - max(-delay, 0) : pad - max(-delay, 0) + n]
    gain = 10 ** (ild_db / 40)
    return np.stack([left * gain, right / gain], axis=1).astype(np.float32)


# A source moving from the left (right ear lags, louder left) to the right, pose by pose.
POSES = [(-3, 6.0), (-2, 4.0), (-1, 2.0), (0, 0.0), (1, -2.0), (2, -4.0), (3, -6.0)]
WIDE = [(6 * d, ild) for d, ild in POSES]  # up to 18 samples = 0.375 ms, about 46 degrees


def test_cues_match_a_scipy_stft_reference():
    x = place(source(0.5), 2, 3.0)
    cues = interaural_cues(x)
    scale = get_window("hann", 1024).sum()  # scipy scales the STFT by the window sum
    _, _, z = stft(x.T, nperseg=1024, noverlap=768, boundary="zeros", padded=False)
    left, right = z[0] * scale, z[1] * scale
    fb = mel_filterbank(SR, 1024, 80).astype(np.float64)
    for band in (0, 20, 79):
        cross = fb[band] @ (left * np.conj(right))
        p_left, p_right = fb[band] @ np.abs(left) ** 2, fb[band] @ np.abs(right) ** 2
        np.testing.assert_allclose(cues.ipd[band], np.angle(cross), atol=2e-3)
        np.testing.assert_allclose(cues.ild[band], 10 * np.log10(p_left / p_right), atol=1e-3)
    assert cues.ipd.shape == (80, len(x) // 256 + 1)
    assert np.all(cues.ipd > -np.pi) and np.all(cues.ipd <= np.pi)


def test_pure_level_difference_gives_that_ild_and_zero_ipd():
    cues = interaural_cues(place(source(0.5), 0, 5.0))
    np.testing.assert_allclose(cues.ild, 5.0, atol=1e-3)
    np.testing.assert_allclose(cues.ipd, 0.0, atol=1e-4)


def test_ipd_ild_mae_zero_for_identical_and_growing_with_pose_difference():
    s = source(1.0)
    cues = [interaural_cues(place(s, d, ild)) for d, ild in POSES]
    same = interaural_error(cues[3], interaural_cues(place(s, 0, 0.0)))
    assert same.ipd_mae == 0.0 and same.ild_mae == 0.0
    errors = [interaural_error(c, cues[0]) for c in cues]
    ipd, ild = [e.ipd_mae for e in errors], [e.ild_mae for e in errors]
    assert ipd[0] == 0.0 and np.all(np.diff(ipd) > 0), ipd
    assert np.all(np.diff(ild) > 0), ild
    np.testing.assert_allclose(ild, [abs(p[1] - POSES[0][1]) for p in POSES], atol=0.01)


def test_floor_db_ignores_silent_gaps():
    s = source(1.0)
    s[SR // 3 : 2 * SR // 3] = 0.0
    noise = np.random.default_rng(9).standard_normal((SR, 2)).astype(np.float32) * 1e-5
    gen, ref = interaural_cues(place(s, 1, 2.0) + noise), interaural_cues(place(s, 1, 2.0))
    everywhere, active = interaural_error(gen, ref), interaural_error(gen, ref, floor_db=40)
    assert active.bins < everywhere.bins
    assert active.ipd_mae < 0.1 < everywhere.ipd_mae
    with pytest.raises(ValueError, match="floor_db must be positive"):
        interaural_error(gen, ref, floor_db=0)


@pytest.mark.parametrize("delay", [-24, -7, 0, 5, 19])
def test_gcc_phat_recovers_the_delay_within_one_sample(delay):
    x = place(source(0.5, seed=abs(delay)), delay, -2.0)
    assert gcc_phat_delay(x, SR) * SR == pytest.approx(delay, abs=1.0)
    assert np.sign(delay_to_azimuth(delay / SR)) == np.sign(delay)


def test_gcc_phat_track_follows_a_moving_source_and_checks_direction():
    s = source(2.1, seed=4)
    segments = np.array_split(s, len(WIDE))
    moving = np.concatenate(
        [place(seg, d, ild) for seg, (d, ild) in zip(segments, WIDE, strict=True)]
    )
    track = delay_track(moving, SR, window=0.2, hop=0.1)
    pose_of_window = (track.times * len(WIDE) / 2.1).astype(int)
    inside = np.abs(track.times * len(WIDE) / 2.1 - pose_of_window - 0.5) < 0.2
    assert inside.sum() >= len(WIDE)
    expected = np.array([WIDE[i][0] for i in pose_of_window[inside]])
    np.testing.assert_allclose(track.delays[inside] * SR, expected, atol=1.0)

    same = direction_check(track, track)
    assert same.azimuth_mae == 0.0 and same.side_agreement == 1.0
    mirrored = delay_track(moving[:, ::-1], SR, window=0.2, hop=0.1)
    flipped = direction_check(mirrored, track)
    assert flipped.azimuth_mae > 20 and flipped.side_agreement < 0.5
    with pytest.raises(ValueError, match="delay tracks differ in length"):
        direction_check(delay_track(moving[:SR], SR), track)


def test_mono_input_is_refused():
    with pytest.raises(ValueError, match="clip.wav: binaural metrics need 2 channels"):
        binaural_channels(source(0.1), "clip.wav")
    with pytest.raises(ValueError, match="need 2 channels"):
        interaural_cues(source(0.1)[:, None])
    with pytest.raises(ValueError, match=r"shaped \(frames, 2\)"):
        gcc_phat_delay(np.zeros((100, 3)), SR)


def test_ffe_zero_for_identical_and_hand_computed_case():
    rng = np.random.default_rng(1)
    f0 = np.where(rng.random(200) < 0.6, rng.uniform(80, 300, 200), 0.0)
    assert f0_frame_error(f0, f0.copy()).ffe == 0.0
    ref = np.array([0, 0, 120, 120, 120, 120, 200, 200, 0, 0], dtype=float)
    gen = np.array([0, 90, 120, 150, 140, 0, 200, 159, 0, 0], dtype=float)
    # voicing errors: frame 1 (unvoiced->voiced), frame 5 (voiced->unvoiced) = 2
    # gross: 150/120 = +25 % (yes), 140/120 = +16.7 % (no), 159/200 = -20.5 % (yes) = 2
    result = f0_frame_error(ref, gen)
    assert (result.voicing_errors, result.gross_pitch_errors, result.frames) == (2, 2, 10)
    assert result.ffe == pytest.approx(0.4)
    with pytest.raises(ValueError, match="not frame-aligned: reference has 10 frames"):
        f0_frame_error(ref, gen[:9])
    with pytest.raises(ValueError, match="finite and >= 0"):
        f0_frame_error(ref, -gen)


class TinySpatialNet(torch.nn.Module):
    """A tiny random stand-in for SPATIAL-AST: waveform (batch, 2, n) -> (angle, distance)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv1d(2, 8, kernel_size=64, stride=32)
        self.angle, self.distance = torch.nn.Linear(8, 6), torch.nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.conv(x)).mean(dim=-1)
        return self.angle(h), self.distance(h)


def test_tiny_spatial_embedder_loads_runs_and_checks(tmp_path):
    checkpoint = tmp_path / "tiny.pt"
    torch.save(TinySpatialNet().state_dict(), checkpoint)
    embedder = load_spatial_embedder(
        "test_isdrama:TinySpatialNet", checkpoint, sample_rate=16_000, window=0.25
    )
    x = place(source(0.6), 3, 2.0)[::3]
    emb = embedder(x)
    assert emb.angle.shape == (3, 6) and emb.distance.shape == (3, 4)  # one row per window
    pieces = [
        TinySpatialNet()(torch.from_numpy(np.ascontiguousarray(p.T))[None])
        for p in (x[:4000], x[4000:8000], np.pad(x[8000:], ((0, 12_000 - len(x)), (0, 0))))
    ]
    expected = torch.cat([p[0] for p in pieces]).detach().numpy()
    np.testing.assert_allclose(emb.angle, expected, atol=1e-5)
    with pytest.raises(ValueError, match="need 2 channels"):
        embedder(source(0.5))
    wrong = tmp_path / "wrong.pt"
    torch.save({"conv.weight": torch.zeros(1)}, wrong)
    with pytest.raises(ValueError, match="wrong.pt: cannot load embedder weights"):
        load_spatial_embedder(TinySpatialNet, wrong, sample_rate=16_000)
    with pytest.raises(ValueError, match="must look like 'package.module:function'"):
        load_spatial_embedder("TinySpatialNet", None, sample_rate=16_000)


def _write(path, samples, sr=SR):
    sf.write(path, samples, sr, subtype="FLOAT")
    return path.name


def _manifest(tmp_path, rows, name="manifest.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def drama_files(tmp_path):
    s = source(1.5, seed=5)
    segments = np.array_split(s, 3)
    ref = np.concatenate(
        [place(seg, d, ild) for seg, (d, ild) in zip(segments, POSES[::3], strict=True)]
    )
    near = np.concatenate(
        [place(seg, d + 1, ild) for seg, (d, ild) in zip(segments, POSES[::3], strict=True)]
    )
    return {
        "ref": _write(tmp_path / "ref.wav", ref),
        "same": _write(tmp_path / "same.wav", ref.copy()),
        "near": _write(tmp_path / "near.wav", near),
        "mono": _write(tmp_path / "mono.wav", s),
        "rate": _write(tmp_path / "rate.wav", ref[::2], sr=24_000),
        "long": _write(tmp_path / "long.wav", np.concatenate([ref, ref[: SR // 2]])),
        "short": _write(tmp_path / "short.wav", ref[: -SR // 50]),
    }


def test_drama_protocol_scores_and_refuses_bad_inputs(tmp_path, drama_files):
    f = drama_files
    rows = [
        {"id": "same", "type": "drama", "generated": f["same"], "reference": f["ref"]},
        {"id": "near", "type": "drama", "generated": f["near"], "reference": f["ref"]},
        {"id": "short", "type": "drama", "generated": f["short"], "reference": f["ref"]},
    ]
    embedder = load_spatial_embedder(TinySpatialNet, None, sample_rate=16_000)
    result = score_dramas(read_manifest(_manifest(tmp_path, rows)), embedder=embedder)
    same, near, short = result.rows
    assert same["ipd_mae"] == 0 and same["ild_mae"] == 0 and same["side_agreement"] == 1
    assert same["ang_cos"] == pytest.approx(1.0) and same["dis_cos"] == pytest.approx(1.0)
    assert near["ipd_mae"] > 0 and near["azimuth_mae_deg"] > 0
    assert short["length_difference_s"] == pytest.approx(0.02) and short["cut_from"] == "reference"
    assert same["cut_from"] is None
    assert result.means["ipd_mae"] == pytest.approx(np.mean([r["ipd_mae"] for r in result.rows]))

    def refused(row, match):
        with pytest.raises((ValueError, AudioError), match=match):
            score_dramas(read_manifest(_manifest(tmp_path, [row])), embedder=None)

    base = {"id": "x", "type": "drama", "reference": f["ref"]}
    refused({**base, "generated": f["mono"]}, "mono.wav: binaural metrics need 2 channels")
    refused({**base, "generated": f["rate"]}, "sample rates differ: generated 24000 Hz")
    refused({**base, "generated": f["long"]}, r"durations differ by 0\.500 s")
    sentence = {**base, "type": "sentence", "generated": f["same"], "text": "a", "prompt": f["ref"]}
    refused(sentence, "is a sentence item; the full-drama protocol scores drama items only")


def test_single_protocol_refuses_dramas_and_long_audio(tmp_path, drama_files):
    f = drama_files
    models = {
        "asr": Recogniser("none", ("en",), lambda audio: pytest.fail("must refuse before ASR")),
        "embed_speaker": lambda audio: pytest.fail("must refuse before embedding"),
        "track_f0": lambda audio: pytest.fail("must refuse before F0 tracking"),
    }
    drama = {"id": "d", "type": "drama", "generated": f["same"], "reference": f["ref"]}
    with pytest.raises(ValueError, match="is a drama item; the single-sentence protocol"):
        score_sentences(read_manifest(_manifest(tmp_path, [drama])), **models)
    _write(tmp_path / "drama31.wav", tone(31.0, sr=8_000), sr=8_000)
    long = {
        **drama,
        "type": "sentence",
        "generated": "drama31.wav",
        "text": "a",
        "prompt": f["ref"],
    }
    with pytest.raises(ValueError, match=r"lasts 31\.0 s, over the 30 s sentence limit"):
        score_sentences(read_manifest(_manifest(tmp_path, [long])), **models)


def _sentence_models(asr):
    return {
        "asr": asr,
        "embed_speaker": lambda audio: np.array([1.0, 0.0]),
        "track_f0": lambda audio: np.full(50, 200.0),
    }


def test_single_protocol_reports_the_asr_and_its_language(tmp_path):
    _write(tmp_path / "line.wav", tone(0.5, sr=16_000), sr=16_000)
    item = {"type": "sentence", "generated": "line.wav", "reference": "line.wav",
            "prompt": "line.wav"}  # fmt: skip
    rows = [{**item, "id": "zh", "text": "你好，世界！"}, {**item, "id": "en", "text": "Hello!"}]
    heard = {"你好，世界！": ("你好世", "zh"), "Hello!": ("hello", "en")}
    texts = iter(heard.values())
    asr = Recogniser("whisper-test", ("zh", "en"), lambda audio: next(texts))
    result = score_sentences(read_manifest(_manifest(tmp_path, rows)), **_sentence_models(asr))
    assert result.settings["asr_model"] == "whisper-test"
    assert result.settings["asr_languages"] == ["zh", "en"]
    zh, en = result.rows
    assert (zh["language"], zh["asr_language"], zh["transcript"]) == ("zh", "zh", "你好世")
    assert zh["cer"] == pytest.approx(1 / 4) and en["cer"] == 0.0
    assert en["language"] == en["asr_language"] == "en"


def test_single_protocol_refuses_mandarin_for_an_english_only_asr(tmp_path, capsys):
    item = {"id": "zh-1", "type": "sentence", "generated": "g.wav", "reference": "r.wav",
            "prompt": "p.wav", "text": "我们明天见。"}  # fmt: skip
    english = Recogniser("pocketsphinx-en", ("en",), lambda audio: pytest.fail("no ASR"))
    with pytest.raises(ValueError, match=r"id=zh-1\): text '我们明天见。' is Mandarin but the "
                       r"ASR pocketsphinx-en transcribes only en"):  # fmt: skip
        score_sentences(read_manifest(_manifest(tmp_path, [item])), **_sentence_models(english))
    argv = ["isdrama", "single", str(_manifest(tmp_path, [item])), "--out", str(tmp_path)]
    assert main([*argv, "--asr", "pocketsphinx"]) == 2
    assert "is Mandarin but the ASR pocketsphinx" in capsys.readouterr().err


def test_manifest_csv_and_jsonl_agree_and_errors_name_the_line(tmp_path):
    rows = [
        {
            "id": "a",
            "type": "sentence",
            "generated": "g.wav",
            "reference": "r.wav",
            "text": "hi",
            "prompt": "p.wav",
        },
        {"id": "b", "type": "drama", "generated": "/abs/g.wav", "reference": "r.wav"},
    ]
    jsonl = read_manifest(_manifest(tmp_path, rows))
    csv_path = tmp_path / "manifest.csv"
    header = ["id", "type", "generated", "reference", "text", "prompt"]
    csv_path.write_text(
        ",".join(header)
        + "\n"
        + "".join(",".join(r.get(k, "") for k in header) + "\n" for r in rows)
    )
    as_csv = read_manifest(csv_path)
    assert [(e.id, e.type, e.generated, e.text) for e in jsonl] == [
        (e.id, e.type, e.generated, e.text) for e in as_csv
    ]
    assert jsonl[0].generated == tmp_path / "g.wav" and str(jsonl[1].generated) == "/abs/g.wav"
    with pytest.raises(ValueError, match=r"manifest.jsonl:1 \(id=a\): a sentence entry needs"):
        read_manifest(_manifest(tmp_path, [{**rows[0], "prompt": ""}]))
    with pytest.raises(ValueError, match=r"manifest.jsonl:2: duplicate id 'a'"):
        read_manifest(_manifest(tmp_path, [rows[0], rows[0]]))
    with pytest.raises(ValueError, match="field 'type' must be one of"):
        read_manifest(_manifest(tmp_path, [{**rows[1], "type": "scene"}]))


def main(argv: list[str]) -> int:
    """`speech-drame isdrama ...` through the CLI's error boundary (bad input exits 2)."""
    from speech_drame.cli import main as cli_main

    return cli_main(argv)


def test_cli_drama_writes_json_and_csv(tmp_path, drama_files, capsys):
    rows = [
        {
            "id": "same",
            "type": "drama",
            "generated": drama_files["same"],
            "reference": drama_files["ref"],
        },
        {
            "id": "near",
            "type": "drama",
            "generated": drama_files["near"],
            "reference": drama_files["ref"],
        },
    ]
    out = tmp_path / "out"
    assert main(["isdrama", "drama", str(_manifest(tmp_path, rows)), "--out", str(out)]) == 0
    report = json.loads((out / "isdrama_drama.json").read_text())
    assert report["items"] == 2 and "ang_cos" not in report["means"]
    assert report["means"]["ild_mae"] == pytest.approx(
        np.mean([r["ild_mae"] for r in report["rows"]])
    )
    lines = (out / "isdrama_drama.csv").read_text().splitlines()
    assert lines[0].startswith("id,") and len(lines) == 3
    assert "ANG/DIS cos not computed" in capsys.readouterr().err
    bad = _manifest(tmp_path, [{**rows[0], "type": "sentence"}], "bad.jsonl")
    assert main(["isdrama", "drama", str(bad), "--out", str(out)]) == 2
    assert "needs field(s) ['text', 'prompt']" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_single_on_librivox_speech(tmp_path, capsys):
    """Real speech through the wired models: multilingual Whisper, resemblyzer, pyworld."""
    if not (LIBRIVOX / "transcription").is_file():
        pytest.fail(f"{LIBRIVOX} is missing: apt-get install pocketsphinx-testdata (make setup)")
    scripts = {}
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        words, clip = line.rsplit("(", 1)
        scripts[clip.strip(" )")] = words.replace("<s>", "").replace("</s>", "").strip()
    clip, prompt = (
        "sense_and_sensibility_01_austen_64kb-0880",
        "sense_and_sensibility_01_austen_64kb-0930",
    )
    speech, sr = sf.read(LIBRIVOX / f"{clip}.wav", dtype="float32")
    binaural = np.stack([speech, 0.5 * np.roll(speech, 4)], axis=1)  # averaged for sentence metrics
    sf.write(tmp_path / "good.wav", binaural, sr)
    sf.write(tmp_path / "reversed.wav", speech[::-1], sr)
    item = {"type": "sentence", "reference": str(LIBRIVOX / f"{clip}.wav"), "text": scripts[clip],
            "prompt": str(LIBRIVOX / f"{prompt}.wav")}  # fmt: skip
    other_voice = "/usr/share/sounds/alsa/Front_Center.wav"  # a different speaker (alsa-utils)
    rows = [{**item, "id": "good", "generated": "good.wav"},
            {**item, "id": "reversed", "generated": "reversed.wav"},
            {**item, "id": "other", "generated": "good.wav", "prompt": other_voice}]  # fmt: skip
    out = tmp_path / "out"
    assert main(["isdrama", "single", str(_manifest(tmp_path, rows)), "--out", str(out)]) == 0
    report = json.loads((out / "isdrama_single.json").read_text())
    assert report["settings"]["asr_model"].startswith("whisper")
    assert report["settings"]["asr_languages"] == ["zh", "en"]
    assert "CER recogniser: whisper" in capsys.readouterr().out
    good, reversed_, other = report["rows"]
    assert good["language"] == "en" and good["asr_language"] == "en"
    assert good["cer"] < 0.1, good["transcript"]
    assert good["ffe"] < 0.1 and reversed_["ffe"] > 2 * good["ffe"] and reversed_["cer"] > 0.5
    assert good["sim"] > other["sim"] + 0.1
    assert report["means"]["cer"] == pytest.approx(np.mean([r["cer"] for r in report["rows"]]))
    means = (out / "isdrama_single_means.csv").read_text().splitlines()
    assert means[0] == "metric,mean,items" and len(means) == 4

    light = tmp_path / "light"
    argv = ["isdrama", "single", str(_manifest(tmp_path, rows)), "--out", str(light)]
    assert main([*argv, "--asr", "pocketsphinx"]) == 0
    light_report = json.loads((light / "isdrama_single.json").read_text())
    assert light_report["settings"]["asr_model"].startswith("pocketsphinx")
    assert light_report["settings"]["asr_languages"] == ["en"]
    assert "(transcribes en)" in capsys.readouterr().out
    light_rows = light_report["rows"]
    assert light_rows[0]["transcript"] != good["transcript"]  # another recogniser ran
    assert light_rows[0]["cer"] < 0.5 < light_rows[1]["cer"]


def _best_cost(cost: np.ndarray) -> float:
    """Textbook DTW recursion, the reference for the anti-diagonal version."""
    n, m = cost.shape
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            acc[i, j] = cost[i - 1, j - 1] + min(acc[i - 1, j], acc[i, j - 1], acc[i - 1, j - 1])
    return acc[n, m]


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (8, 11), (13, 5)])
def test_dtw_path_is_optimal_and_monotone(shape):
    cost = np.random.default_rng(sum(shape)).random(shape)
    rows, cols = dtw_path(cost)
    assert (rows[0], cols[0]) == (0, 0) and (rows[-1], cols[-1]) == (shape[0] - 1, shape[1] - 1)
    steps = set(zip(np.diff(rows), np.diff(cols), strict=True))
    assert steps <= {(1, 0), (0, 1), (1, 1)}
    assert cost[rows, cols].sum() == pytest.approx(_best_cost(cost))
    with pytest.raises(ValueError, match="finite, non-empty 2-D cost matrix"):
        dtw_path(np.full((2, 2), np.nan))


def _sung(segments: list[tuple[float, float]], seed: int = 0) -> Audio:
    """16 kHz 'utterance': (f0 Hz or 0 for a pause, seconds) segments of a harmonic complex."""
    rng = np.random.default_rng(seed)
    parts = []
    for f0, seconds in segments:
        t = np.arange(int(seconds * 16_000)) / 16_000
        voiced = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 6)) if f0 else 0 * t
        parts.append(0.2 * voiced + 1e-3 * rng.standard_normal(t.size))
    return load_audio((np.concatenate(parts).astype(np.float32), 16_000))


def test_ffe_with_dtw_alignment_of_a_slower_rendition():
    from speech_drame.features.common import samples_16k
    from speech_drame.features.prosody import FRAME_MS, f0_contour

    def track(audio):
        return f0_contour(samples_16k(audio, "FFE"))

    ref = _sung([(0, 0.2), (140, 0.4), (0, 0.2), (220, 0.4), (0, 0.2)])
    slower = _sung([(0, 0.26), (140, 0.52), (0, 0.26), (220, 0.52), (0, 0.26)], seed=1)
    off_key = _sung([(0, 0.26), (140, 0.52), (0, 0.26), (330, 0.52), (0, 0.26)], seed=1)
    period = FRAME_MS / 1000
    aligned = compare_f0(ref, slower, track, align="dtw", frame_period=period)
    by_index = compare_f0(ref, slower, track, align="length")
    wrong = compare_f0(ref, off_key, track, align="dtw", frame_period=period)
    assert aligned.ffe < 0.05 and by_index.ffe > 3 * aligned.ffe
    assert wrong.gross_pitch_errors > 20 and wrong.ffe > aligned.ffe + 0.15
    assert aligned.frames >= len(track(slower))  # a path covers every frame of both
    with pytest.raises(ValueError, match="frame_period must be the F0 tracker's hop"):
        compare_f0(ref, slower, track, align="dtw", frame_period=0.005)
