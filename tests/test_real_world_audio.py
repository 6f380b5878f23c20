"""Audio people actually have: loud FLAC, float WAV beyond full scale, MP3 decoder overshoot.

Each is scored through every consumer (the `score` CLI, the Space's `score_clip`, a RoleBench
run) and each reports the peak it measured and the gain that fitted it into [-1, 1]
(the rule in :mod:`speech_drame.audio`).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX
from scipy.signal import resample_poly

from speech_drame.cli import main
from speech_drame.features.blueprint import extract_blueprints
from speech_drame.rolebench.results_log import read_rows
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS
from speech_drame.scorers.lite import TrainingOptions, train_lite_model
from speech_drame.space_app import score_clip

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SR = 16_000
QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"
HAS_MP3 = "MP3" in sf.available_formats()


def _limited(x: np.ndarray) -> np.ndarray:
    """Speech pushed into a limiter just below full scale, as a mastered recording is."""
    return np.clip(1.3 * x / np.abs(x).max(), -0.99997, 0.99997).astype(np.float32)


@pytest.fixture(scope="module")
def loud(tmp_path_factory) -> dict:
    """Three loud renderings of one LibriVox clip, and a tiny archetype scorer."""
    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    root = tmp_path_factory.mktemp("loud")
    wavs = sorted(LIBRIVOX.glob("*.wav"))
    x = sf.read(wavs[0], dtype="float32")[0]
    at_44k = _limited(resample_poly(x, 441, 160))
    clips = root / "clips"
    clips.mkdir()
    files = {"s1": clips / "s1.flac", "s2": clips / "s2.wav"}
    sf.write(files["s1"], np.stack([at_44k, at_44k], axis=1), 44_100, subtype="PCM_16")
    sf.write(files["s2"], 2.0 * x / np.abs(x).max(), SR, subtype="FLOAT")  # TTS-style float
    if HAS_MP3:
        files["s3"] = clips / "s3.mp3"
        sf.write(files["s3"], np.stack([at_44k, at_44k], axis=1), 44_100, format="MP3")
    # the peak each file holds, as decoded by libsndfile
    peaks = {k: float(np.abs(sf.read(p, dtype="float32")[0]).max()) for k, p in files.items()}
    # a tiny scorer on the clean/noisy pair other tests use (their features are cached)
    noise = 0.15 * np.random.default_rng(0).standard_normal(len(x)).astype(np.float32)
    train = [root / "clean.wav", root / "noisy.wav"]
    sf.write(train[0], 0.9 * x / np.abs(x).max(), SR)
    sf.write(train[1], 0.9 * (x + noise) / np.abs(x + noise).max(), SR)
    cache = tmp_path_factory.getbasetemp() / "librivox-features"
    batch = extract_blueprints([str(p) for p in train], [{"question": QUESTION}] * 2, cache,
                               progress=False)  # fmt: skip
    labels = {d: [[5, 5, 4], [1, 2, 1]] for d in ARCHETYPE_DIMENSIONS}
    labels[CONTENT_PASS] = [[True] * 3, [False] * 3]
    scorers = root / "scorers"
    opts = TrainingOptions(epochs=30)
    train_lite_model(batch.blueprints, labels, "archetype", opts).save(scorers / "archetype")
    return {"root": root, "files": files, "peaks": peaks, "scorers": scorers,
            "cache": root / "cache"}  # fmt: skip


def test_the_files_are_the_cases_of_the_issue(loud) -> None:
    peaks = loud["peaks"]
    assert peaks["s1"] < 1.0  # the FLAC itself is in range ...
    flac, sr = sf.read(loud["files"]["s1"], dtype="float32")
    assert np.abs(resample_poly(flac.mean(axis=1), 160, 441)).max() > 1.0  # ... its 16 kHz not
    assert peaks["s2"] == pytest.approx(2.0, abs=1e-6)
    if HAS_MP3:
        assert peaks["s3"] > 1.0  # the MP3 decoder overshoots


def test_score_cli_scores_them_and_reports_peak_and_gain(loud, capsys) -> None:
    files = [str(p) for p in loud["files"].values()]
    common = ["--config", "archetype", "--question", QUESTION, "--scorer", str(loud["scorers"]),
              "--feature-cache", str(loud["cache"]), "--quiet"]  # fmt: skip
    status = main(["score", *files, *common, "--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    rows = json.loads(out.out)
    assert [r["id"] for r in rows] == files
    for key, row in zip(loud["files"], rows, strict=True):
        assert set(row["scores"]) == set(ARCHETYPE_DIMENSIONS)
        assert row["audio"]["peak"] == pytest.approx(loud["peaks"][key], rel=1e-6)
        assert row["audio"]["gain"] < 1.0 and not row["audio"]["truncated"]
    assert rows[1]["audio"]["gain"] == pytest.approx(0.5, rel=1e-6)  # the float WAV: 1 / 2.0
    status = main(["score", *files, *common])
    table = capsys.readouterr().out
    assert status == 0
    assert table.count(", scaled by ") == len(files)
    assert f"peak {loud['peaks']['s2']:.3f}, scaled by 0.500 to fit [-1, 1]" in table


def test_space_scores_them_and_notes_the_scaling(loud) -> None:
    for key, path in loud["files"].items():
        result = score_clip(path, "archetype", QUESTION, scorer=str(loud["scorers"]))
        assert set(result.scores) == set(ARCHETYPE_DIMENSIONS), key
        assert result.audio.peak == pytest.approx(loud["peaks"][key], rel=1e-6)
        assert result.audio.gain < 1.0
        (note,) = result.audio.notes()
        assert f"scaled by {result.audio.gain:.3f}" in note
        assert result.to_dict()["audio"]["gain"] == result.audio.gain


def test_rolebench_scores_them_and_keeps_the_facts_per_row(loud, tmp_path, capsys) -> None:
    ids = list(loud["files"])
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(json.dumps({"id": i, "question": QUESTION}) + "\n" for i in ids))
    systems = tmp_path / "systems"
    system = systems / "loud_tts"
    system.mkdir(parents=True)
    for key, path in loud["files"].items():
        (system / f"{key}{path.suffix}").write_bytes(path.read_bytes())
    out = tmp_path / "run"
    status = main(["bench", "--scenarios", str(scenarios), "--systems-dir", str(systems),
                   "--out", str(out), "--scorer", str(loud["scorers"]),
                   "--feature-cache", str(loud["cache"]), "--resamples", "50"])  # fmt: skip
    capsys.readouterr()
    assert status == 0
    rows = {r["scenario"]: r for r in read_rows(out / "results.jsonl")}
    assert sorted(rows) == sorted(ids)
    for key, row in rows.items():
        assert "error" not in row and set(row["scores"]) == set(ARCHETYPE_DIMENSIONS)
        assert row["audio"]["peak"] == pytest.approx(loud["peaks"][key], rel=1e-6)
        assert row["audio"]["gain"] < 1.0
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["systems"]["loud_tts"]["n_scored"] == len(ids)
