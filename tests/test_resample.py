"""speech_drame.resample against scipy.signal.resample_poly: the same samples, to the bit."""

from __future__ import annotations

from math import gcd

import numpy as np
import pytest
import soundfile as sf
from conftest import REPO
from scipy.signal import resample_poly as scipy_resample_poly

from speech_drame.audio import load_audio, resample
from speech_drame.resample import resample_poly

RATES = [8_000, 11_025, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000, 16_001]


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_scipy_bit_for_bit(rate: int, dtype: type) -> None:
    up, down = 16_000 // gcd(rate, 16_000), rate // gcd(rate, 16_000)
    rng = np.random.default_rng(rate)
    for n in (1, 2, 7, 999, 2 * rate + 17):
        x = (0.3 * rng.standard_normal(n)).astype(dtype)
        ours, theirs = resample_poly(x, up, down), scipy_resample_poly(x, up, down, axis=0)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert np.array_equal(ours, theirs), (rate, n, np.max(np.abs(ours - theirs)))


def test_channels_and_unreduced_ratios_equal_scipy() -> None:
    x = (0.3 * np.random.default_rng(0).standard_normal((48_000, 2))).astype(np.float32)
    ours = resample_poly(x, 16_000, 48_000)  # reduced to 1/3 as scipy does
    assert np.array_equal(ours, scipy_resample_poly(x, 1, 3, axis=0))
    assert np.array_equal(resample_poly(x, 5, 5), x)


def test_a_real_clip_reads_as_scipy_resamples_it() -> None:
    """The 48 kHz official sample, read by load_audio, is scipy's resampling of its samples."""
    path = next((REPO / "official_samples" / "archetype_data").glob("*.wav"))
    raw, rate = sf.read(path, dtype="float32")
    audio = load_audio(path)
    expected = scipy_resample_poly(raw, 1, rate // 16_000, axis=0).astype(np.float32)
    assert rate == 48_000 and np.array_equal(resample(raw, rate, 16_000), expected)
    assert audio.samples.shape == expected.shape


@pytest.mark.parametrize("taps", [3, 21, 61, 321, 8_821])
def test_the_kaiser_window_is_scipys_to_the_bit(taps: int) -> None:
    from scipy.signal.windows import kaiser

    from speech_drame.resample import KAISER_BETA, _kaiser

    assert np.array_equal(_kaiser(taps, KAISER_BETA), kaiser(taps, KAISER_BETA))
