"""`speech-drame score`: tables, JSON, folders, failures and exit status."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX

from speech_drame.cli import main
from speech_drame.features.blueprint import extract_blueprints
from speech_drame.scorers.lite import TrainingOptions, train_lite_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"
REALISM = {
    "profile": "John Dashwood, a cautious, rather selfish gentleman",
    "scene": "John weighs how much to give his stepmother and sisters",
    "traits": "Calm, Reserved",
}
SR = 16_000


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict[str, Path]:
    """Clips (clean and noisy LibriVox) and a tiny scorer per mode trained on them."""
    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    root = tmp_path_factory.mktemp("score_cli")
    clips = root / "clips"
    clips.mkdir()
    rng = np.random.default_rng(0)
    paths, noisy = [], []
    for wav in sorted(LIBRIVOX.glob("*.wav")):
        x, _ = sf.read(wav, dtype="float32")
        for is_noisy in (False, True):
            y = x + (0.1 * rng.standard_normal(len(x))).astype(np.float32) if is_noisy else x
            path = clips / f"{wav.stem[-4:]}{'_noisy' if is_noisy else ''}.wav"
            sf.write(path, 0.9 * y / np.abs(y).max(), SR)
            paths.append(str(path))
            noisy.append(is_noisy)
    cache = root / "cache"
    scorers = root / "scorers"
    for mode, ctx in (("archetype", {"question": QUESTION}), ("realism", REALISM)):
        batch = extract_blueprints(paths, [ctx] * len(paths), cache, progress=False)
        assert not batch.errors
        quality = [[2, 1, 2] if n else [5, 4, 5] for n in noisy]
        labels = (
            {"audio_quality": quality, "content_pass": [[True, True, not n] for n in noisy]}
            if mode == "archetype"
            else {"pitch_variation": quality, "local_story_fit": [[3, 4, None] for _ in noisy]}
        )
        train_lite_model(batch.blueprints, labels, mode, TrainingOptions(epochs=30)).save(
            scorers / mode
        )
    return {"clips": clips, "cache": cache, "scorers": scorers}


def _score(setup, capsys, *args: str) -> tuple[int, str, str]:
    common = ["--scorer", str(setup["scorers"]), "--feature-cache", str(setup["cache"]), "--quiet"]
    status = main(["score", *args, *common])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_archetype_json_has_every_dimension_distribution_and_pass(setup, capsys) -> None:
    clip = str(setup["clips"] / "0870.wav")
    status, out, err = _score(
        setup, capsys, clip, "--config", "archetype", "--question", QUESTION, "--json"
    )
    assert status == 0, err
    (row,) = json.loads(out)
    assert row["id"] == clip and "dashwood" in row["transcript"].lower()
    assert 0.0 <= row["content_pass"] <= 1.0
    assert set(row["scores"]) == {"audio_quality"} == set(row["distributions"])
    dist = row["distributions"]["audio_quality"]
    assert len(dist) == 5 and sum(dist) == pytest.approx(1.0)
    assert row["scores"]["audio_quality"] == pytest.approx(float(np.dot(dist, [1, 2, 3, 4, 5])))
    # a LiteScorer has no label mass, so no decoding and no unreliable flags
    assert not {"label_mass", "unreliable", "decoding"} & set(row)


def test_realism_table_for_a_folder(setup, capsys) -> None:
    ctx = [f"--{k}={v}" for k, v in REALISM.items()]
    status, out, err = _score(setup, capsys, str(setup["clips"]), "--config", "realism", *ctx)
    assert status == 0, err
    assert out.count("transcript:") == 10
    assert "Pitch Variation" in out and "Local Scene Fit" in out and "Content Pass" not in out
    assert "mass" not in out and "label mass" not in err


def test_a_bad_clip_is_reported_and_the_others_are_scored(setup, capsys, tmp_path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(setup["clips"] / "0930.wav", folder / "good.wav")
    (folder / "broken.wav").write_bytes(b"RIFF not really a wav file")
    sf.write(folder / "silent.wav", np.zeros(SR, dtype=np.float32), SR)
    status, out, err = _score(
        setup, capsys, str(folder), "--config", "archetype", "--question", QUESTION, "--json"
    )
    assert status == 1
    rows = {Path(r["id"]).name: r for r in json.loads(out)}
    assert list(rows) == ["broken.wav", "good.wav", "silent.wav"]  # every clip, in order
    assert "scores" in rows["good.wav"] and "error" not in rows["good.wav"]
    assert "unreadable audio" in rows["broken.wav"]["error"]
    assert "digital silence" in rows["silent.wav"]["error"]
    assert rows["broken.wav"]["error_kind"] == rows["silent.wav"]["error_kind"] == "input"
    assert "2 of 3 clip(s) could not be scored" in err and "broken.wav" in err


def test_a_cut_clip_is_reported_in_the_table_and_json(setup, capsys, tmp_path) -> None:
    """A 31 s clip is scored on its first 30 s, and both outputs say so."""
    speech = np.concatenate(
        [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))]
    )
    long = np.tile(speech, 2)[: 31 * SR]
    path = tmp_path / "long.wav"
    sf.write(path, 0.9 * long / np.abs(long).max(), SR)
    args = (str(path), "--config", "archetype", "--question", QUESTION)
    status, out, err = _score(setup, capsys, *args, "--json")
    assert status == 0, err
    (row,) = json.loads(out)
    assert row["audio"]["truncated"] is True
    assert row["audio"]["original_seconds"] == pytest.approx(31.0)
    assert row["audio"]["seconds"] == pytest.approx(30.0)
    assert row["audio"]["gain"] == 1.0
    status, out, err = _score(setup, capsys, *args)
    assert status == 0, err
    assert "audio: 30.00 s of 31.00 s (cut to the first 30 s), peak 0.900" in out


def test_missing_context_or_scorer_is_a_usage_error(setup, capsys, tmp_path) -> None:
    clip = str(setup["clips"] / "0870.wav")
    status, _, err = _score(setup, capsys, clip, "--config", "realism", "--profile", "x")
    assert status == 2 and "--scene --traits" in err
    status = main(
        ["score", clip, "--config", "archetype", "--question", "q", "--scorer", str(tmp_path)]
    )
    assert status == 2 and "no trained archetype LiteScorer" in capsys.readouterr().err
    status = main(["score", clip, "--config", "archetype", "--question", "q", "--scorer",
                   f"drame-eval:{tmp_path / 'nowhere'}"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and err.strip() == f"error: {tmp_path / 'nowhere'}: no such folder"


def test_the_lite_scorer_gives_each_result_before_reading_the_next_clip(setup) -> None:
    """What lets `score` print a clip's table as soon as it is scored."""
    from speech_drame.scorers.base import ClipInput, iter_scores
    from speech_drame.scorers.lite import LiteScorer

    scorer = LiteScorer.load(setup["scorers"], "archetype", cache=setup["cache"])
    clips = [str(c) for c in sorted(setup["clips"].glob("*.wav"))[:3]]
    read: list[str] = []

    def inputs():
        for clip in clips:
            read.append(clip)
            yield ClipInput(clip, clip, {"question": QUESTION})

    stream = iter_scores(scorer, inputs())
    first = next(stream)
    assert first.ok and first.id == clips[0] and read == clips[:1]
    results = [first, *stream]
    assert read == clips
    assert results == scorer.score([ClipInput(c, c, {"question": QUESTION}) for c in clips])


def test_scoring_a_clip_from_start_to_table_does_not_import_torch(setup, tmp_path) -> None:
    """torch's import alone holds the interpreter for seconds: every model on the way from the
    audio file to the printed scores runs without it (Whisper, DNSMOS, Silero, the voice
    encoder, the text encoder, the heads)."""
    import subprocess
    import sys

    clip = sorted(setup["clips"].glob("*.wav"))[0]
    code = (
        "import sys; from speech_drame.cli import main; "
        f"status = main(['score', {str(clip)!r}, '--config', 'archetype', '--question', {QUESTION!r}, '--json', "
        f"'--scorer', {str(setup['scorers'])!r}, '--feature-cache', {str(tmp_path / 'c')!r}]); "
        "print('torch' in sys.modules, status, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.stderr.split()[-2:] == ["False", "0"], done.stderr[-2000:]
    assert json.loads(done.stdout)[0]["scores"]["audio_quality"] > 0


def test_clips_scored_from_the_cache_load_no_feature_model(setup) -> None:
    """With every feature cached, nothing starts loading the extractors' models (a process
    ending while one is half-built in native code would abort)."""
    import subprocess
    import sys

    clip = sorted(setup["clips"].glob("*.wav"))[0]
    code = (
        "import sys; from speech_drame.cli import main; from speech_drame.features import loading; "
        f"status = main(['score', {str(clip)!r}, '--config', 'archetype', '--question', "
        f"{QUESTION!r}, '--scorer', {str(setup['scorers'])!r}, '--feature-cache', "
        f"{str(setup['cache'])!r}]); print(status, bool(loading._started), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.stderr.split()[-2:] == ["0", "False"], done.stderr[-2000:]
    assert "Audio Quality" in done.stdout
