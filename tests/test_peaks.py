"""speech_drame.features.peaks against scipy.signal.find_peaks: the same peak indices."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import LIBRIVOX
from scipy.signal import find_peaks as scipy_find_peaks

from speech_drame.audio import load_audio
from speech_drame.features import prosody
from speech_drame.features.peaks import find_peaks


def _signals(rng: np.random.Generator):
    for trial in range(600):
        n = int(rng.integers(0, 300))
        if trial % 3 == 0:
            yield 3.0 * rng.standard_normal(n)
        elif trial % 3 == 1:  # integer steps: plateaus and equal heights
            yield np.round(2.0 * rng.standard_normal(n))
        else:
            yield np.convolve(10.0 * rng.standard_normal(n + 4), np.ones(5) / 5, mode="valid")


@pytest.mark.parametrize(("prominence", "distance"), [(2.0, 10), (0.5, 1), (1.0, 3.5), (0.0, 2)])
def test_equals_scipy(prominence: float, distance: float) -> None:
    for x in _signals(np.random.default_rng(int(10 * distance))):
        expected = scipy_find_peaks(x, prominence=prominence, distance=distance)[0]
        assert np.array_equal(find_peaks(x, prominence, distance), expected), x


@pytest.mark.skipif(not LIBRIVOX.is_dir(), reason="pocketsphinx-testdata is not installed")
def test_equals_scipy_on_the_syllable_curve_of_real_speech() -> None:
    """prosody's smoothed frame energy of LibriVox clips: the syllable nuclei it counts."""
    for path in sorted(LIBRIVOX.glob("*.wav")):
        energy = prosody.frame_energy_db(load_audio(path).samples)
        smooth = np.convolve(energy, np.ones(5) / 5, mode="same")
        expected = scipy_find_peaks(smooth, prominence=2.0, distance=10)[0]
        assert len(expected) > 5 and np.array_equal(find_peaks(smooth, 2.0, 10), expected)


def test_distance_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="distance must be >= 1"):
        find_peaks(np.arange(5.0), 1.0, 0.5)
