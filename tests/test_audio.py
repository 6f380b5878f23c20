import re

import numpy as np
import pytest
import soundfile as sf
from conftest import tone
from scipy.signal import resample_poly

from speech_drame.audio import SCORED_SECONDS, AudioError, load_audio


@pytest.mark.parametrize(
    ("suffix", "fmt", "subtype", "tol"),
    [
        (".wav", "WAV", "PCM_16", 1e-3),
        (".flac", "FLAC", "PCM_16", 1e-3),
        (".ogg", "OGG", "VORBIS", 0.05),
        (".mp3", "MP3", "MPEG_LAYER_III", 0.05),
    ],
)
def test_reads_common_formats_as_16k_mono(tmp_path, suffix, fmt, subtype, tol):
    x = tone(2.0, sr=16_000, freq=300)
    path = tmp_path / f"clip{suffix}"
    sf.write(path, x, 16_000, format=fmt, subtype=subtype)
    audio = load_audio(path)
    assert audio.sample_rate == 16_000 and audio.samples.ndim == 1
    assert audio.samples.dtype == np.float32
    n = min(len(x), len(audio.samples))
    # lossy codecs add delay/padding: compare levels, lossless compare samples
    if tol < 0.01:
        np.testing.assert_allclose(audio.samples[:n], x[:n], atol=tol)
    else:
        assert abs(np.std(audio.samples) - np.std(x)) < tol
        assert abs(audio.seconds - 2.0) < 0.1


def test_stereo_is_averaged_and_resampled_like_scipy(tmp_path):
    left, right = tone(1.5, sr=48_000, freq=440, seed=1), tone(1.5, sr=48_000, freq=660, seed=2)
    path = tmp_path / "stereo.wav"
    sf.write(path, np.stack([left, right], axis=1), 48_000, subtype="FLOAT")
    audio = load_audio(path)
    expected = resample_poly((left + right) / 2, 1, 3)
    assert audio.original_channels == 2 and audio.original_sample_rate == 48_000
    np.testing.assert_allclose(audio.samples, expected, atol=1e-5)
    # the 440 Hz component survives resampling at the right frequency
    spectrum = np.abs(np.fft.rfft(audio.samples))
    freqs = np.fft.rfftfreq(audio.samples.size, 1 / 16_000)
    assert abs(freqs[np.argmax(spectrum)] - 440) < 2 or abs(freqs[np.argmax(spectrum)] - 660) < 2


def test_keep_native_rate():
    audio = load_audio((tone(1.0, sr=22_050), 22_050), sample_rate=None)
    assert audio.sample_rate == 22_050 and len(audio.samples) == 22_050


def test_first_30_seconds_rule_is_explicit_and_reported():
    long = tone(40.0, sr=8_000)
    cut = load_audio((long, 8_000), max_seconds=SCORED_SECONDS)
    full = load_audio((long, 8_000))
    assert cut.truncated and cut.seconds == pytest.approx(30.0, abs=1e-3)
    assert cut.original_seconds == pytest.approx(40.0)
    assert not full.truncated and full.seconds == pytest.approx(40.0, abs=1e-3)
    short = load_audio((tone(5.0), 16_000), max_seconds=SCORED_SECONDS)
    assert not short.truncated


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nope.wav"
    with pytest.raises(AudioError, match=r"nope\.wav: file not found"):
        load_audio(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.wav"
    path.write_bytes(b"")
    with pytest.raises(AudioError, match=r"empty\.wav: empty file"):
        load_audio(path)


def test_unreadable_file(tmp_path):
    path = tmp_path / "garbage.wav"
    path.write_bytes(b"RIFF....this is not audio" * 20)
    with pytest.raises(AudioError, match=r"garbage\.wav: unreadable audio"):
        load_audio(path)
    with pytest.raises(AudioError, match=r"<bytes>: unreadable audio"):
        load_audio(b"not audio at all" * 10)


def test_non_finite_samples(tmp_path):
    x = tone(1.0)
    x[100:103] = [np.nan, np.inf, -np.inf]
    path = tmp_path / "nan.wav"
    sf.write(path, x, 16_000, subtype="FLOAT")
    with pytest.raises(AudioError, match=r"nan\.wav: 3 non-finite sample"):
        load_audio(path)


def test_too_short_and_zero_length(tmp_path):
    path = tmp_path / "blip.wav"
    sf.write(path, tone(0.1), 16_000)
    with pytest.raises(AudioError, match=r"blip\.wav: too short: 0\.100 s"):
        load_audio(path)
    header_only = tmp_path / "zero.wav"
    sf.write(header_only, np.zeros(0, dtype="float32"), 16_000)
    with pytest.raises(AudioError, match=r"zero\.wav: no audio samples"):
        load_audio(header_only)
    assert load_audio(path, min_seconds=0.05).seconds == pytest.approx(0.1)


def test_digital_silence_is_an_error():
    with pytest.raises(AudioError, match="digital silence"):
        load_audio((np.zeros(16_000, dtype="float32"), 16_000))


@pytest.mark.parametrize("shape", [(), (4, 16_000, 2)], ids=["scalar", "3-d"])
def test_arrays_of_another_shape_are_refused_with_the_shape(shape):
    with pytest.raises(AudioError, match=rf"<array>: expected .* got {re.escape(str(shape))}"):
        load_audio((np.full(shape, 0.5, dtype="float32"), 16_000))


def test_official_sample_48k_float(official_samples_dir):
    audio = load_audio(official_samples_dir / "realism_data" / "role-eval_v1_0001.wav")
    assert audio.original_sample_rate == 48_000 and audio.sample_rate == 16_000
    assert audio.seconds == pytest.approx(audio.original_seconds, abs=1e-3)


def test_keep_channels_in_file_order_and_resample_each(tmp_path):
    left, right = tone(1.0, sr=48_000, freq=440, seed=3), tone(1.0, sr=48_000, freq=660, seed=4)
    path = tmp_path / "binaural.wav"
    sf.write(path, np.stack([left, right], axis=1), 48_000, subtype="FLOAT")
    kept = load_audio(path, sample_rate=None, mono=False)
    assert kept.samples.shape == (48_000, 2) and kept.original_channels == 2
    np.testing.assert_allclose(kept.samples[:, 0], left, atol=1e-6)
    np.testing.assert_allclose(kept.samples[:, 1], right, atol=1e-6)
    down = load_audio(path, mono=False)
    np.testing.assert_allclose(down.samples[:, 1], resample_poly(right, 1, 3), atol=1e-5)
    assert load_audio((tone(1.0), 16_000), mono=False).samples.shape == (16_000, 1)


# --- the full-scale rule: measure the peak, scale into [-1, 1], report both ----------------


def _near_full_scale(seconds: float, sr: int, seed: int = 0) -> np.ndarray:
    """A loud stereo signal that touches full scale (sharp edges make resampling overshoot)."""
    t = np.arange(int(seconds * sr)) / sr
    rng = np.random.default_rng(seed)
    left = np.clip(1.4 * np.sin(2 * np.pi * 220 * t), -0.99997, 0.99997)
    right = np.clip(left + 0.05 * rng.standard_normal(t.size), -0.99997, 0.99997)
    return np.stack([left, right], axis=1).astype(np.float32)


def test_loud_stereo_flac_whose_resample_overshoots_is_scaled_and_reported(tmp_path):
    path = tmp_path / "loud.flac"
    sf.write(path, _near_full_scale(2.0, 44_100), 44_100, subtype="PCM_16")
    decoded, _ = sf.read(path, dtype="float32")
    reference = resample_poly(decoded.mean(axis=1), 160, 441)  # scipy, float64
    assert np.abs(reference).max() > 1.0  # the case of the issue: 16 kHz overshoots
    audio = load_audio(path)
    assert np.abs(audio.samples).max() <= 1.0
    assert audio.peak == pytest.approx(np.abs(decoded).max())  # measured before any scaling
    assert audio.gain == pytest.approx(1 / np.abs(reference).max(), rel=1e-6)
    np.testing.assert_allclose(audio.samples, reference * audio.gain, atol=1e-5)
    facts = audio.facts
    assert facts.peak == audio.peak and facts.gain == audio.gain and not facts.truncated
    (note,) = facts.notes()
    assert "resampling" in note and f"{audio.gain:.3f}" in note


def test_float_wav_beyond_full_scale_is_scaled_not_refused(tmp_path):
    x = tone(1.0, seed=5) / 0.31 * 2.0  # peaks near 2.0: legal in a float WAV (TTS output)
    path = tmp_path / "hot.wav"
    sf.write(path, x, 16_000, subtype="FLOAT")
    audio = load_audio(path)
    peak = float(np.abs(x).max())
    assert peak > 1.9 and audio.peak == pytest.approx(peak)
    assert audio.gain == pytest.approx(1 / peak)
    np.testing.assert_allclose(audio.samples, x / peak, atol=1e-6)
    assert np.abs(audio.samples).max() <= 1.0
    assert f"samples reach {peak:.3f}" in audio.facts.notes()[0]
    assert audio.facts.to_dict()["gain"] == pytest.approx(1 / peak)


@pytest.mark.skipif("MP3" not in sf.available_formats(), reason="libsndfile without MP3")
def test_mp3_decoder_overshoot_is_scaled(tmp_path):
    path = tmp_path / "loud.mp3"
    sf.write(path, _near_full_scale(2.0, 44_100), 44_100, format="MP3")
    decoded, _ = sf.read(path, dtype="float32")
    assert np.abs(decoded).max() > 1.0  # the MP3 decoder overshoots a full-scale input
    audio = load_audio(path)
    assert audio.peak == pytest.approx(np.abs(decoded).max())
    assert audio.gain < 1.0 and np.abs(audio.samples).max() <= 1.0


def test_audio_within_full_scale_is_left_alone():
    x = tone(1.0, seed=6)
    audio = load_audio((x, 16_000))
    assert audio.gain == 1.0 and audio.peak == pytest.approx(np.abs(x).max())
    np.testing.assert_array_equal(audio.samples, x)
    assert audio.facts.notes() == []


def test_cut_is_reported_in_the_facts():
    audio = load_audio((tone(40.0, sr=8_000), 8_000), max_seconds=SCORED_SECONDS)
    facts = audio.facts
    assert facts.truncated and facts.original_seconds == pytest.approx(40.0)
    assert facts.notes() == ["the clip lasts 40.0 s: only its first 30.0 s are used"]
    assert "of 40.00 s" in facts.summary()


# --- bounded decoding ----------------------------------------------------------------------


def test_only_the_scored_part_is_decoded(tmp_path):
    """A 10-minute file read with max_seconds=30: samples after 30 s are never decoded (they
    are NaN here, which would be refused), and the duration comes from the header."""
    sr = 4_000
    x = np.tile(tone(1.0, sr=sr, seed=7), 600)
    x[31 * sr :] = np.nan
    path = tmp_path / "ten_minutes.wav"
    sf.write(path, x, sr, subtype="FLOAT")
    audio = load_audio(path, max_seconds=SCORED_SECONDS)
    assert audio.truncated and audio.original_seconds == pytest.approx(600.0)
    assert audio.seconds == pytest.approx(30.0)
    assert audio.facts.original_seconds == pytest.approx(600.0)
    with pytest.raises(AudioError, match="non-finite"):
        load_audio(path)  # the whole file: the NaN tail is read and refused


def test_a_tiny_file_that_would_decode_to_gigabytes_is_refused(tmp_path):
    """A few kB of FLAC (constant signal, 8 channels at 655 kHz) that decodes to ~300 MB."""
    from speech_drame.audio import MAX_DECODED_SAMPLES

    rate, channels = 655_350, 8
    path = tmp_path / "bomb.flac"
    block = np.full((rate, channels), 0.001, np.float32)
    with sf.SoundFile(path, "w", rate, channels, subtype="PCM_16", format="FLAC") as f:
        for _ in range(14):
            f.write(block)
    assert path.stat().st_size < 200_000
    want = 14 * rate * channels
    assert want > MAX_DECODED_SAMPLES
    for max_seconds in (None, SCORED_SECONDS):
        with pytest.raises(AudioError) as err:
            load_audio(path, max_seconds=max_seconds)
        msg = str(err.value)
        assert msg.startswith(f"{path}: ")
        assert f"{want:,} samples" in msg and f"{MAX_DECODED_SAMPLES:,}" in msg
        assert "655350 Hz" in msg and "8 channel" in msg
    with pytest.raises(AudioError, match="<bytes>: .*limit"):
        load_audio(path.read_bytes())  # encoded bytes get the same header check


def test_the_decoding_bound_is_a_parameter_for_audio_analysed_whole(tmp_path):
    """ISDrama reads whole binaural dramas: its bound is larger than the scoring default."""
    from speech_drame.audio import MAX_DECODED_SAMPLES
    from speech_drame.protocols.isdrama.protocol import DRAMA_MAX_SAMPLES

    path = tmp_path / "stereo.wav"
    sf.write(path, np.stack([tone(1.0), tone(1.0, seed=1)], axis=1), 16_000)
    with pytest.raises(AudioError, match=r"32,000 samples, over the limit of 31,999"):
        load_audio(path, mono=False, max_samples=31_999)
    assert load_audio(path, mono=False, max_samples=32_000).samples.shape == (16_000, 2)
    assert DRAMA_MAX_SAMPLES >= 4 * MAX_DECODED_SAMPLES  # 46 min of 48 kHz binaural


def test_an_absurd_sample_rate_is_refused(tmp_path):
    path = tmp_path / "fast.wav"
    sf.write(path, tone(1.0), 4_000_000, subtype="PCM_16")
    with pytest.raises(AudioError, match=r"fast\.wav: sample rate 4000000 Hz is above"):
        load_audio(path)


def test_unreadable_message_names_the_file_once(tmp_path):
    path = tmp_path / "garbage.flac"
    path.write_bytes(b"fLaC but not really" * 10)
    with pytest.raises(AudioError) as err:
        load_audio(path)
    assert str(err.value).count("garbage.flac") == 1 and err.value.reason.startswith("unreadable")
    assert str(tmp_path) not in err.value.reason
