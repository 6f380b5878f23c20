"""speech_drame.features.vad against the silero-vad package's own sequence model wrapper and
segment rule (the package imports torch; the feature does not)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import LIBRIVOX

from speech_drame.audio import load_audio
from speech_drame.features import vad

silero = pytest.importorskip("silero_vad")
REPO = Path(__file__).resolve().parents[1]
CLIPS = [
    *sorted(LIBRIVOX.glob("*.wav")),
    *sorted((REPO / "official_samples").glob("*/*.wav")),
]


@pytest.fixture(scope="module")
def reference_model():
    return silero.load_silero_vad(sequence=True)


def _reference_segments(probs, n_samples: int) -> list[tuple[int, int]]:
    stamps = silero.get_speech_timestamps_from_probs(
        [float(p) for p in probs], sampling_rate=vad.SR, audio_length_samples=n_samples
    )
    return [(s["start"], s["end"]) for s in stamps]


@pytest.mark.parametrize("path", CLIPS, ids=lambda p: p.name)
def test_probabilities_and_segments_equal_silero_on_real_clips(path: Path, reference_model) -> None:
    x = load_audio(path, max_seconds=30.0).samples
    probs = vad.speech_probabilities(x)
    expected = reference_model.audio_forward(x, sampling_rate=vad.SR)
    np.testing.assert_array_equal(probs, expected)
    segments = vad.speech_segments(probs.tolist(), len(x))
    assert segments == _reference_segments(expected, len(x))
    assert segments, f"{path.name}: no speech found"


def _random_probs(rng: np.random.Generator, n: int) -> np.ndarray:
    """Runs of speech-like and silence-like frames with the thresholds' neighbourhood hit often."""
    levels = rng.choice([0.05, 0.34, 0.36, 0.49, 0.5, 0.51, 0.9], size=n)
    hold = rng.integers(1, 12, size=n)
    return np.repeat(levels, hold)[:n]


@pytest.mark.parametrize("seed", range(40))
def test_segment_rule_equals_silero_on_random_probabilities(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_frames = int(rng.integers(0, 400))
    probs = _random_probs(rng, n_frames)
    n_samples = max(0, n_frames * vad.FRAME - int(rng.integers(0, vad.FRAME)))
    assert vad.speech_segments(probs.tolist(), n_samples) == _reference_segments(probs, n_samples)


@pytest.mark.parametrize(
    "probs",
    [[], [0.9], [0.9] * 8, [0.9] * 9, [0.9] * 20 + [0.0] * 3 + [0.9] * 20, [0.0] * 10 + [0.9] * 30],
    ids=["empty", "one", "8-frames", "9-frames", "short-gap", "late-start"],
)
def test_segment_rule_edge_cases_equal_silero(probs: list[float]) -> None:
    n_samples = len(probs) * vad.FRAME
    assert vad.speech_segments(probs, n_samples) == _reference_segments(probs, n_samples)


def test_empty_and_partial_frames() -> None:
    assert vad.speech_probabilities(np.zeros(0, dtype=np.float32)).shape == (0,)
    assert vad.speech_probabilities(np.zeros(vad.FRAME + 1, dtype=np.float32)).shape == (2,)


def test_voice_activity_does_not_import_torch() -> None:
    clip = CLIPS[0]
    code = (
        "import sys; from speech_drame.audio import load_audio; from speech_drame.features import vad; "
        f"out = vad.voice_activity(load_audio({str(clip)!r})); "
        "assert out.segments; print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
