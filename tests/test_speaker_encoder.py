"""Our GE2E voice encoder against the resemblyzer 0.1.4 package it reimplements.

The package stays in the dev environment (``make setup`` installs it with ``--no-deps``) only as
the reference; ``speech_drame.features.speaker`` must neither import it nor need it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import LIBRIVOX, OFFICIAL_SAMPLES, REPO

from speech_drame.audio import Audio, load_audio
from speech_drame.features import speaker

ALSA = Path("/usr/share/sounds/alsa")
CARDS = LIBRIVOX.parent / "cards"
OFFICIAL = sorted(OFFICIAL_SAMPLES.glob("*_data/*.wav"))
# real recordings: official samples (in the repository, 48 kHz), then Debian test speech
CLIPS = [
    *OFFICIAL,
    *sorted(LIBRIVOX.glob("*.wav"))[:3],
    *sorted(CARDS.glob("00[14].wav")),
    *[ALSA / f"{name}.wav" for name in ("Front_Center", "Rear_Right")],
]
TOLERANCE = 1e-5  # max abs difference per embedding value (measured: about 2e-7)


@pytest.fixture(scope="module")
def reference():
    """resemblyzer's preprocessing and encoder."""
    resemblyzer = pytest.importorskip("resemblyzer")
    return resemblyzer.preprocess_wav, resemblyzer.VoiceEncoder("cpu", verbose=False)


def _clip(path: Path) -> Audio:
    if not path.is_file():
        pytest.skip(f"{path} is not installed")
    return load_audio(path)


def _with_a_long_pause() -> Audio:
    """An official sample, 2 s of digital silence, then the same sample: the pause is trimmed."""
    clip = load_audio(OFFICIAL[-1])
    pause = np.zeros(2 * speaker.SR, dtype=clip.samples.dtype)
    return load_audio((np.concatenate([clip.samples, pause, clip.samples]), speaker.SR))


def _assert_same_as_resemblyzer(audio: Audio, reference) -> None:
    preprocess_wav, encoder = reference
    expected_wav = preprocess_wav(audio.samples)
    np.testing.assert_array_equal(speaker.preprocess(audio.samples), expected_wav)
    expected = encoder.embed_utterance(expected_wav)
    ours = np.array(speaker.speaker_embedding(audio).embedding)
    assert np.abs(ours - expected).max() < TOLERANCE


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.stem)
def test_embedding_and_trimmed_waveform_match_resemblyzer(path: Path, reference) -> None:
    _assert_same_as_resemblyzer(_clip(path), reference)


def test_a_long_pause_is_trimmed_as_resemblyzer_trims_it(reference) -> None:
    audio = _with_a_long_pause()
    trimmed = speaker.preprocess(audio.samples)
    assert len(trimmed) < len(audio.samples) - speaker.SR  # most of the 2 s pause is gone
    _assert_same_as_resemblyzer(audio, reference)


def test_partials_are_those_of_resemblyzer(reference) -> None:
    _, encoder = reference
    for n in [0, 1, 159, 160, 4000, 25_599, 25_600, 25_601, 30_000, 37_919, 48_000, 123_457]:
        _, mel_slices = encoder.compute_partial_slices(n, rate=1.3, min_coverage=0.75)
        assert speaker.partial_starts(n) == [s.start for s in mel_slices], n


def test_the_module_works_without_the_resemblyzer_package_or_torch() -> None:
    child = f"""
import sys
sys.modules["resemblyzer"] = None  # any import of it fails
from speech_drame.audio import load_audio
from speech_drame.features import speaker
vector = speaker.speaker_embedding(load_audio({str(OFFICIAL[-1])!r})).embedding
assert len(vector) == 256
print(sorted(n for n in sys.modules if n.startswith("resemblyzer")), "torch" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", child], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['resemblyzer']", "False"]  # only the blocked entry; no torch


@pytest.fixture
def fresh_encoder():
    speaker._encoder.cache_clear()
    yield
    speaker._encoder.cache_clear()


def test_damaged_weights_are_refused_naming_the_file(tmp_path, monkeypatch, fresh_encoder) -> None:
    damaged = tmp_path / "voice_encoder.safetensors"
    shutil.copyfile(speaker.WEIGHTS, damaged)
    data = bytearray(damaged.read_bytes())
    data[-1] ^= 0x01  # one bit of the last weight
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(speaker, "WEIGHTS", damaged)
    with pytest.raises(ValueError, match=rf"{tmp_path}/voice_encoder.safetensors: SHA-256"):
        speaker.speaker_embedding(load_audio(OFFICIAL[-1]))


def test_the_shipped_weights_match_their_pinned_digest(fresh_encoder) -> None:
    assert sum(v.size for v in speaker._weights().values()) == 1_423_616
