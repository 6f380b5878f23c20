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
