"""Power mel spectrograms in plain numpy, numerically matching ``librosa.feature.melspectrogram``.

DNSMOS (P.808 head) and resemblyzer compute their inputs with librosa, whose numba kernels take
~15 s to compile on a fresh machine. These functions reproduce librosa's defaults (periodic Hann
window, centred frames with zero padding, Slaney mel scale and area normalisation) without numba;
``tests/test_features.py`` compares them with librosa itself.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

_F_SP = 200.0 / 3  # Slaney mel scale: linear below 1 kHz ...
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = np.log(6.4) / 27.0  # ... logarithmic above


def hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney mel scale (librosa's default, ``htk=False``)."""
    hz = np.asarray(hz, dtype=np.float64)
    mel = hz / _F_SP
    high = hz >= _MIN_LOG_HZ
    mel[high] = _MIN_LOG_MEL + np.log(hz[high] / _MIN_LOG_HZ) / _LOGSTEP
    return mel


def mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    hz = _F_SP * mel
    high = mel >= _MIN_LOG_MEL
    hz[high] = _MIN_LOG_HZ * np.exp(_LOGSTEP * (mel[high] - _MIN_LOG_MEL))
    return hz


@lru_cache(maxsize=8)
def mel_filterbank(
    sample_rate: int,
    n_fft: int,
    n_mels: int,
    fmin: float = 0.0,
    fmax: float | None = None,
    dtype: type = np.float32,
) -> np.ndarray:
    """Triangular Slaney-normalised filters between ``fmin`` and ``fmax`` Hz (default: Nyquist),
    shape ``(n_mels, n_fft // 2 + 1)``, as ``librosa.filters.mel`` builds them."""
    fmax = sample_rate / 2 if fmax is None else fmax
    fft_freqs = np.fft.rfftfreq(n_fft, d=1.0 / sample_rate)
    mel_f = mel_to_hz(
        np.linspace(hz_to_mel(np.array([fmin]))[0], hz_to_mel(np.array([fmax]))[0], n_mels + 2)
    )
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_freqs)
    weights = np.zeros((n_mels, len(fft_freqs)))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(dtype)


@lru_cache(maxsize=8)
def _hann(n_fft: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)).astype(np.float32)


def power_spectrogram(samples: np.ndarray, n_fft: int, hop_length: int) -> np.ndarray:
    """|STFT|^2 of centred, zero-padded frames; shape ``(n_fft // 2 + 1, frames)``."""
    x = np.pad(np.asarray(samples, dtype=np.float32), n_fft // 2)
    if len(x) < n_fft:
        raise ValueError(f"signal of {len(samples)} samples is shorter than one frame ({n_fft})")
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop_length]
    spec = np.fft.rfft(frames * _hann(n_fft), axis=1)
    return (spec.real**2 + spec.imag**2).astype(np.float32).T


def mel_spectrogram(
    samples: np.ndarray, sample_rate: int, n_fft: int, hop_length: int, n_mels: int
) -> np.ndarray:
    """Power mel spectrogram, shape ``(n_mels, frames)`` (as librosa returns it)."""
    return mel_filterbank(sample_rate, n_fft, n_mels) @ power_spectrogram(
        samples, n_fft, hop_length
    )


def power_to_db(spec: np.ndarray, top_db: float = 80.0, amin: float = 1e-10) -> np.ndarray:
    """``librosa.power_to_db(spec, ref=np.max)``: dB re the maximum, floored at ``-top_db``."""
    log_spec = 10.0 * np.log10(np.maximum(amin, spec))
    log_spec -= 10.0 * np.log10(max(amin, float(spec.max())))
    return np.maximum(log_spec, log_spec.max() - top_db)
