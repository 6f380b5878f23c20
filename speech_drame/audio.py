"""The one place audio is read, checked, mixed to mono and resampled.

Every consumer (dataset builder, features, scorers, protocols) goes through :func:`load_audio`.
Problems raise :class:`AudioError`, whose message names the file and the reason; there is no
fallback to silence and no silent truncation: the paper's first-30-seconds rule is applied only
when asked for (``max_seconds``) and reported in :attr:`Audio.truncated`.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import soundfile as sf

TARGET_SR = 16_000
SCORED_SECONDS = 30.0  # annotators judge only the first 30 s (Speech-DRAME, Appendix E/G)
MIN_SECONDS = 0.3  # shorter clips carry too little speech for any rubric or feature

AudioSource = str | os.PathLike | bytes | tuple[np.ndarray, int]


class AudioError(ValueError):
    """Audio that cannot be used: unreadable, empty, non-finite, silent or too short.

    ``source`` names the file (or ``"<bytes>"``/``"<array>"``), ``reason`` says why.
    """

    def __init__(self, source: str, reason: str):
        self.source, self.reason = source, reason
        super().__init__(f"{source}: {reason}")


@dataclass(frozen=True)
class Audio:
    """Float32 samples at ``sample_rate`` plus what happened on the way.

    ``samples`` is mono ``(frames,)`` unless loaded with ``mono=False``, which keeps the
    channels as ``(frames, channels)`` in file order (channel 0 is left in a stereo file).
    """

    samples: np.ndarray
    sample_rate: int
    source: str
    original_sample_rate: int
    original_channels: int
    original_seconds: float
    truncated: bool = False

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate


def _name(source: AudioSource) -> str:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return "<bytes>" if isinstance(source, bytes) else "<array>"


def _read(source: AudioSource, name: str) -> tuple[np.ndarray, int]:
    if isinstance(source, tuple):
        data, sr = source
        return np.asarray(data, dtype=np.float32), int(sr)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise AudioError(name, "file not found")
        if path.stat().st_size == 0:
            raise AudioError(name, "empty file (0 bytes)")
        handle: object = path
    else:
        if not source:
            raise AudioError(name, "empty file (0 bytes)")
        handle = io.BytesIO(source)
    try:
        data, sr = sf.read(handle, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        raise AudioError(name, f"unreadable audio ({exc})") from None
    return data, int(sr)


def resample(samples: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Polyphase resampling (scipy ``resample_poly``) of a 1-D or (frames, channels) array."""
    if orig_sr == target_sr:
        return samples
    from scipy.signal import resample_poly

    g = gcd(orig_sr, target_sr)
    return resample_poly(samples, target_sr // g, orig_sr // g, axis=0).astype(np.float32)


def check_samples(samples: np.ndarray, sample_rate: int, name: str, min_seconds: float) -> None:
    """Raise :class:`AudioError` for empty, non-finite, silent or too-short audio."""
    if samples.size == 0:
        raise AudioError(name, "no audio samples")
    if not np.isfinite(samples).all():
        bad = int((~np.isfinite(samples)).sum())
        raise AudioError(name, f"{bad} non-finite sample(s) (NaN or inf)")
    seconds = samples.shape[0] / sample_rate
    if seconds < min_seconds:
        raise AudioError(name, f"too short: {seconds:.3f} s < minimum {min_seconds} s")
    if not np.any(samples):
        raise AudioError(name, "digital silence (every sample is zero)")


def load_audio(
    source: AudioSource,
    *,
    sample_rate: int | None = TARGET_SR,
    max_seconds: float | None = None,
    min_seconds: float = MIN_SECONDS,
    mono: bool = True,
) -> Audio:
    """Read ``source`` (path, encoded bytes, or ``(array, sr)``) as checked audio, mono by default.

    Args:
        source: a wav/flac/ogg/mp3 path, the encoded bytes of such a file, or a
            ``(samples, sample_rate)`` tuple with samples shaped ``(frames,)`` or
            ``(frames, channels)``.
        sample_rate: resample to this rate (16 kHz by default); ``None`` keeps the file's rate.
        max_seconds: keep only the first ``max_seconds`` (use :data:`SCORED_SECONDS` for the
            paper's 30 s rule); the cut is reported in ``Audio.truncated``.
        min_seconds: shorter audio is rejected.
        mono: average the channels (default); ``False`` keeps them as ``(frames, channels)``
            in file order, e.g. for binaural metrics.

    Raises:
        AudioError: naming the source and the reason.

    Example:
        >>> import numpy as np
        >>> tone = np.sin(2 * np.pi * 220 * np.arange(48_000) / 48_000).astype("float32")
        >>> a = load_audio((np.stack([tone, tone], axis=1), 48_000))
        >>> a.sample_rate, a.samples.shape, a.original_channels
        (16000, (16000,), 2)
    """
    name = _name(source)
    data, sr = _read(source, name)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2:
        raise AudioError(
            name, f"expected (frames,) or (frames, channels) samples, got {data.shape}"
        )
    if sr <= 0:
        raise AudioError(name, f"invalid sample rate {sr}")
    channels = data.shape[1]
    check_samples(data, sr, name, min_seconds)
    original_seconds = data.shape[0] / sr
    truncated = False
    if max_seconds is not None and original_seconds > max_seconds:
        data = data[: int(round(max_seconds * sr))]
        truncated = True
    if mono:
        data = data.mean(axis=1, dtype=np.float32) if channels > 1 else data[:, 0]
    target = sr if sample_rate is None else sample_rate
    samples = np.ascontiguousarray(resample(data, sr, target), dtype=np.float32)
    return Audio(samples, target, name, sr, channels, original_seconds, truncated)


def probe_seconds(path: str | os.PathLike) -> float:
    """Duration from the file header (no decode); raises :class:`AudioError` if unreadable."""
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise AudioError(str(path), f"unreadable audio ({exc})") from None
    return info.frames / info.samplerate
