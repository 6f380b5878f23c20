"""The one place audio is read, checked, mixed to mono and resampled.

Every consumer (dataset builder, features, scorers, protocols) goes through :func:`load_audio`.
Problems raise :class:`AudioError`, whose message names the file and the reason; there is no
fallback to silence and no silent truncation: the paper's first-30-seconds rule is applied only
when asked for (``max_seconds``) and reported in :attr:`Audio.truncated`.

The rules, decided here once for every consumer:

- **Full scale.** Samples are read as float32. Float WAV files (common for TTS output) may hold
  samples beyond 1.0, and mixing or resampling a clip recorded near full scale can overshoot
  1.0 (a 44.1 kHz FLAC peaking at 0.9999 reaches 1.005 at 16 kHz; MP3 decoders overshoot too).
  Such audio is used, not refused: if the returned samples would exceed 1.0 in magnitude,
  they are multiplied by one gain, ``1 / peak``, so that they fit ``[-1, 1]`` (the range the
  models expect, e.g. DNSMOS). :attr:`Audio.peak` is the largest magnitude read from the
  source (before mixing, resampling or scaling) and :attr:`Audio.gain` the factor applied
  (1.0: none); :attr:`Audio.facts` carries them, with the cut, to every report.
- **Bounded decoding.** For files and encoded bytes the header is read first: a sample rate
  above :data:`MAX_SAMPLE_RATE` or more than :data:`MAX_DECODED_SAMPLES` samples to decode
  (frames x channels, counting only the frames ``max_seconds`` keeps) is refused before any
  decoding, and with ``max_seconds`` only the frames kept are decoded. The duration reported
  (:attr:`Audio.original_seconds`) then comes from the header.
- **Two decoders.** libsndfile (``soundfile``) reads what it knows (wav, flac, ogg/opus, mp3,
  aiff); anything else (m4a/aac, webm, wma, ...) goes to ffmpeg through ``torchcodec``, with the
  same header check and only the kept seconds decoded. Audio neither can read is refused with
  both reasons.
- **Refused** (only truly unusable audio): missing, empty or unreadable files, no samples,
  non-finite samples (NaN/inf), digital silence, clips shorter than ``min_seconds``, and the
  absurd sizes above.
"""

from __future__ import annotations

import io
import math
import os
import re
from dataclasses import asdict, dataclass
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from .errors import InputError

TARGET_SR = 16_000
SCORED_SECONDS = 30.0  # annotators judge only the first 30 s (Speech-DRAME, Appendix E/G)
MIN_SECONDS = 0.3  # shorter clips carry too little speech for any rubric or feature
FULL_SCALE = 1.0  # returned samples lie within [-FULL_SCALE, FULL_SCALE]
MAX_DECODED_SAMPLES = 2**26  # 67,108,864 samples (256 MiB as float32): 11.6 min of 48 kHz stereo
MAX_SAMPLE_RATE = 768_000  # the highest rate audio interfaces offer; above it is not audio
# file types a folder of clips is read for: what libsndfile decodes, then what it hands to ffmpeg
SOUNDFILE_SUFFIXES = (".wav", ".flac", ".ogg", ".opus", ".mp3", ".aiff", ".aif")
FFMPEG_SUFFIXES = (".m4a", ".aac", ".mp4", ".webm", ".mka", ".wma", ".amr", ".3gp", ".caf")
AUDIO_SUFFIXES = SOUNDFILE_SUFFIXES + FFMPEG_SUFFIXES

AudioSource = str | os.PathLike | bytes | tuple[np.ndarray, int]


class AudioError(InputError):
    """Audio that cannot be used: unreadable, empty, non-finite, silent, too short or too large.

    ``source`` names the file (or ``"<bytes>"``/``"<array>"``), ``reason`` says why.
    """

    def __init__(self, source: str, reason: str):
        self.source, self.reason = source, reason
        super().__init__(f"{source}: {reason}")


@dataclass(frozen=True)
class AudioFacts:
    """What reading a clip measured and did, for reports (CLI table and JSON, Space, RoleBench).

    ``seconds`` is the duration used, ``original_seconds`` the source's (from the file header
    when only part of a file was decoded), ``truncated`` whether ``max_seconds`` cut it,
    ``peak`` the largest sample magnitude read (before mixing, resampling or scaling) and
    ``gain`` the factor the samples were scaled by to fit ``[-1, 1]`` (1.0: not scaled).
    """

    seconds: float
    original_seconds: float
    truncated: bool
    peak: float
    gain: float = 1.0

    def notes(self) -> list[str]:
        """Sentences for a person: the cut and the scaling, if any (empty when neither)."""
        out = []
        if self.truncated:
            out.append(
                f"the clip lasts {self.original_seconds:.1f} s: only its first "
                f"{self.seconds:.1f} s are used"
            )
        if self.gain < 1.0:
            db = 20 * math.log10(self.gain)
            scaled = f"scaled by {self.gain:.3f} ({db:+.2f} dB) to fit [-1, 1]"
            if self.peak > FULL_SCALE:
                out.append(f"samples reach {self.peak:.3f}, beyond full scale (1.0): {scaled}")
            else:
                out.append(
                    f"mixing/resampling took the peak ({self.peak:.3f} in the file) past full "
                    f"scale: {scaled}"
                )
        return out

    def summary(self) -> str:
        """One line: duration (and the cut), peak (and the scaling)."""
        text = f"{self.seconds:.2f} s"
        if self.truncated:
            text += f" of {self.original_seconds:.2f} s (cut to the first {self.seconds:.0f} s)"
        text += f", peak {self.peak:.3f}"
        if self.gain < 1.0:
            text += f", scaled by {self.gain:.3f} to fit [-1, 1]"
        return text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Audio:
    """Float32 samples at ``sample_rate`` plus what happened on the way.

    ``samples`` is mono ``(frames,)`` unless loaded with ``mono=False``, which keeps the
    channels as ``(frames, channels)`` in file order (channel 0 is left in a stereo file).
    ``peak`` and ``gain`` follow the full-scale rule of the module docstring; ``peak``
    defaults to the samples' own peak when an ``Audio`` is built directly.
    """

    samples: np.ndarray
    sample_rate: int
    source: str
    original_sample_rate: int
    original_channels: int
    original_seconds: float
    truncated: bool = False
    peak: float | None = None  # set in __post_init__ when not given
    gain: float = 1.0

    def __post_init__(self) -> None:
        if self.peak is None:
            peak = float(np.max(np.abs(self.samples))) if self.samples.size else 0.0
            object.__setattr__(self, "peak", peak)

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate

    @property
    def facts(self) -> AudioFacts:
        return AudioFacts(
            self.seconds, self.original_seconds, self.truncated, float(self.peak), self.gain
        )


def _name(source: AudioSource) -> str:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return "<bytes>" if isinstance(source, bytes) else "<array>"


def _libsndfile_reason(exc: Exception) -> str:
    """libsndfile's own words, without the path it repeats (the error names the source)."""
    text = getattr(exc, "error_string", None) or str(exc)
    return f"unreadable audio ({text.strip() or type(exc).__name__})"


def _check_header(
    name: str, sr: int, channels: int, frames: int, max_samples: int = MAX_DECODED_SAMPLES
) -> None:
    if sr <= 0:
        raise AudioError(name, f"invalid sample rate {sr}")
    if sr > MAX_SAMPLE_RATE:
        raise AudioError(name, f"sample rate {sr} Hz is above the {MAX_SAMPLE_RATE} Hz limit")
    n = frames * channels
    if n > max_samples:
        raise AudioError(
            name,
            f"decoding {frames:,} frames x {channels} channel(s) at {sr} Hz "
            f"({frames / sr:.1f} s) would give {n:,} samples, over the limit of "
            f"{max_samples:,} samples ({max_samples * 4 // 2**20} MiB as float32)",
        )


def _kept_frames(frames: int, sr: int, max_seconds: float | None) -> int:
    """How many of ``frames`` the first ``max_seconds`` hold (all of them for ``None``)."""
    return frames if max_seconds is None else min(frames, int(round(max_seconds * sr)))


def _read(
    source: AudioSource, name: str, max_seconds: float | None, max_samples: int
) -> tuple[np.ndarray, int, int]:
    """``(samples as (frames, channels), rate, frames in the source)``; files and bytes decode
    at most the frames ``max_seconds`` keeps, after the header check."""
    if isinstance(source, tuple):
        data, sr = source
        data = np.asarray(data, dtype=np.float32)
        _check_header(name, int(sr), 1, 0)  # in memory already: only its rate is checked
        if data.ndim == 1:
            data = data[:, None]
        if data.ndim != 2:
            raise AudioError(
                name, f"expected (frames,) or (frames, channels) samples, got {data.shape}"
            )
        return data, int(sr), len(data)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise AudioError(name, "file not found")
        if path.stat().st_size == 0:
            raise AudioError(name, "empty file (0 bytes)")
        handle: Any = path
    else:
        if not source:
            raise AudioError(name, "empty file (0 bytes)")
        handle = io.BytesIO(source)
    try:
        with sf.SoundFile(handle) as f:
            sr, channels, frames = int(f.samplerate), int(f.channels), int(f.frames)
            keep = _kept_frames(frames, sr, max_seconds)
            _check_header(name, sr, channels, keep, max_samples)
            data = f.read(keep, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        if "Format not recognised" not in str(exc):
            raise AudioError(name, _libsndfile_reason(exc)) from None
        return _read_ffmpeg(source, name, max_seconds, max_samples, _libsndfile_reason(exc))
    return data, sr, frames


def _ffmpeg_reason(exc: Exception, source: str | os.PathLike | bytes) -> str:
    """torchcodec's first line, without its source location and the path the error names."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^\w+, \S+:\d+, ", "", text)  # "SingleStreamDecoder, file.cpp:52, ..."
    if not isinstance(source, bytes):
        text = text.replace(f": {source}", "").replace(str(source), "the file")
    return text.strip().rstrip(".")


def _read_ffmpeg(
    source: str | os.PathLike | bytes,
    name: str,
    max_seconds: float | None,
    max_samples: int,
    libsndfile: str,
) -> tuple[np.ndarray, int, int]:
    """:func:`_read` for what libsndfile does not know, through ffmpeg (``torchcodec``): the
    stream's header is checked as a file's is, then only the kept seconds are decoded."""
    try:
        from torchcodec.decoders import AudioDecoder
    except ImportError:  # torchcodec (with torch and Debian's ffmpeg) is a core dependency
        raise AudioError(name, f"{libsndfile}; other formats need torchcodec and ffmpeg") from None
    try:
        decoder = AudioDecoder(source if isinstance(source, bytes) else str(source))
        meta = decoder.metadata
        sr, channels = int(meta.sample_rate or 0), int(meta.num_channels or 0)
        seconds = meta.duration_seconds_from_header
        if sr <= 0 or channels <= 0 or seconds is None:
            raise AudioError(name, f"{libsndfile}; ffmpeg finds no rate, channels or duration")
        frames = int(round(seconds * sr))
        keep = _kept_frames(frames, sr, max_seconds)
        _check_header(name, sr, channels, keep, max_samples)
        cut = keep < frames
        decoded = (
            decoder.get_samples_played_in_range(0.0, keep / sr)
            if cut
            else decoder.get_all_samples()
        )
    except (RuntimeError, ValueError) as exc:
        if isinstance(exc, AudioError):
            raise
        raise AudioError(name, f"{libsndfile}; ffmpeg: {_ffmpeg_reason(exc, source)}") from None
    data = decoded.data.numpy().T.astype(np.float32, copy=False)
    return data[:keep], sr, max(frames, len(data))


def resample(samples: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Polyphase resampling (scipy ``resample_poly``'s values, :mod:`speech_drame.resample`) of
    a 1-D or (frames, channels) array."""
    if orig_sr == target_sr:
        return samples
    from speech_drame.resample import resample_poly

    g = gcd(orig_sr, target_sr)
    return resample_poly(samples, target_sr // g, orig_sr // g).astype(np.float32)


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
    max_samples: int = MAX_DECODED_SAMPLES,
) -> Audio:
    """Read ``source`` (path, encoded bytes, or ``(array, sr)``) as checked audio, mono by default.

    Args:
        source: a wav/flac/ogg/mp3 path, the encoded bytes of such a file, or a
            ``(samples, sample_rate)`` tuple with samples shaped ``(frames,)`` or
            ``(frames, channels)``.
        sample_rate: resample to this rate (16 kHz by default); ``None`` keeps the file's rate.
        max_seconds: keep only the first ``max_seconds`` (use :data:`SCORED_SECONDS` for the
            paper's 30 s rule); only those frames are decoded, and the cut is reported in
            ``Audio.truncated``.
        min_seconds: shorter audio is rejected.
        mono: average the channels (default); ``False`` keeps them as ``(frames, channels)``
            in file order, e.g. for binaural metrics.
        max_samples: the decoding bound (frames x channels); raise it for long recordings
            that are analysed whole (ISDrama's dramas).

    The samples returned lie within ``[-1, 1]``; see the module docstring for the full-scale
    rule (``Audio.peak``, ``Audio.gain``) and the decoding bounds.

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
    data, sr, frames = _read(source, name, max_seconds, max_samples)
    channels = data.shape[1]
    keep = _kept_frames(frames, sr, max_seconds)
    truncated = frames > keep
    data = data[:keep]  # arrays arrive whole; files were decoded only up to ``keep``
    # a file cut short is known by its header; a whole one by the frames decoded
    original_seconds = (frames if truncated else data.shape[0]) / sr
    check_samples(data, sr, name, min_seconds)
    peak = float(np.max(np.abs(data)))
    if mono:
        data = data.mean(axis=1, dtype=np.float32) if channels > 1 else data[:, 0]
    target = sr if sample_rate is None else sample_rate
    samples, gain = fit_full_scale(resample(data, sr, target))
    return Audio(samples, target, name, sr, channels, original_seconds, truncated, peak, gain)


def fit_full_scale(samples: np.ndarray) -> tuple[np.ndarray, float]:
    """``(samples within [-1, 1], gain)``: samples peaking above full scale are multiplied by
    ``1 / peak`` (one gain for every channel); others are returned as they are (gain 1.0)."""
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    if peak <= FULL_SCALE:
        return np.ascontiguousarray(samples, dtype=np.float32), 1.0
    gain = FULL_SCALE / peak
    scaled = np.clip(samples.astype(np.float64) * gain, -FULL_SCALE, FULL_SCALE)  # rounding only
    return np.ascontiguousarray(scaled, dtype=np.float32), gain


def probe_seconds(path: str | os.PathLike) -> float:
    """Duration from the file header (no decode); raises :class:`AudioError` if unreadable."""
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise AudioError(str(path), _libsndfile_reason(exc)) from None
    if info.samplerate <= 0:
        raise AudioError(str(path), f"invalid sample rate {info.samplerate}")
    return info.frames / info.samplerate
