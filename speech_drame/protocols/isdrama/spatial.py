"""Binaural cues: wrapped mel-band IPD/ILD and their MAE, GCC-PHAT interaural delay and azimuth.

The IPD/ILD here is this package's band measure (``spatial_metric="wrapped-band"``), not the
released evaluator's figure (``"official"``, :mod:`.official_cues`); the two differ by two to
three orders of magnitude on the same audio.

Conventions (all functions):

- binaural samples are shaped ``(frames, 2)``; column 0 is the LEFT ear, column 1 the RIGHT
  (the order of a stereo WAV file). Mono or other channel counts raise ``ValueError``;
- the analysis uses the paper's acoustic front end: 48 kHz, 1024-point periodic Hann frames,
  hop 256, centred with zero padding, 80 Slaney mel bands over 0-24 kHz;
- IPD of a mel band is the phase of the band's left-right cross power
  ``sum_k w_k L_k conj(R_k)``, wrapped to ``(-pi, pi]``; positive when the left ear leads in
  phase. ILD is ``10 log10(P_left / P_right)`` of the band powers, in dB (positive: louder left);
- the interaural delay ``tau`` is how much the LEFT channel lags the RIGHT one, in seconds:
  ``left(t) = right(t - tau)``. A source on the right reaches the right ear first, so ``tau > 0``
  means right and maps to a positive azimuth (-90 deg = hard left, +90 deg = hard right).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from speech_drame.features.spectral import mel_filterbank

ANALYSIS_SR = 48_000
N_FFT = 1024
HOP = 256
N_MELS = 80
SPEED_OF_SOUND = 343.0  # m/s
HEAD_WIDTH = 0.18  # m, ear-to-ear distance of the sine-law head model
MAX_ITD = 1e-3  # s, lags searched by GCC-PHAT (a head gives at most ~0.7 ms)
AMIN = 1e-10  # power floor of the ILD ratio (silent bands give 0 dB, not inf)

WRAPPED_BAND_DEFINITION = (
    "this package's band measure: 48 kHz, n_fft 1024 / hop 256, 80 Slaney mel bands; per band IPD "
    "= phase of the band's cross power sum w L conj(R) and ILD = 10 log10(P_left / P_right); MAE "
    "of the wrapped IPD difference (rad) and of the ILD (dB) over all band-frames"
)


def binaural_channels(samples: np.ndarray, name: str = "audio") -> np.ndarray:
    """``samples`` as a float32 ``(frames, 2)`` array, or ``ValueError`` naming ``name``."""
    x = np.asarray(samples)
    if x.ndim == 1 or (x.ndim == 2 and x.shape[1] == 1):
        raise ValueError(
            f"{name}: binaural metrics need 2 channels (left, right), got mono audio {x.shape}"
        )
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(
            f"{name}: binaural metrics need samples shaped (frames, 2) = (left, right), got {x.shape}"
        )
    if x.shape[0] == 0:
        raise ValueError(f"{name}: no audio samples")
    return x.astype(np.float32, copy=False)


def wrap_phase(phase: np.ndarray) -> np.ndarray:
    """Angles wrapped to ``(-pi, pi]``."""
    return np.pi - np.mod(np.pi - np.asarray(phase), 2 * np.pi)


@dataclass(frozen=True)
class InterauralCues:
    """Mel-band cues, each shaped ``(n_mels, frames)``: IPD (rad), ILD (dB), mean-ear power."""

    ipd: np.ndarray
    ild: np.ndarray
    power: np.ndarray


def binaural_stft(
    samples: np.ndarray, n_fft: int = N_FFT, hop_length: int = HOP
) -> tuple[np.ndarray, np.ndarray]:
    """Left and right STFTs, each complex64 ``(frames, n_fft // 2 + 1)`` (centred Hann frames)."""
    from scipy.fft import rfft  # single precision (numpy's FFT is much slower on float32 here)

    x = binaural_channels(samples)
    padded = np.pad(x.T, ((0, 0), (n_fft // 2, n_fft // 2)))
    frames = np.lib.stride_tricks.sliding_window_view(padded, n_fft, axis=1)[:, ::hop_length]
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)).astype(np.float32)
    spec = rfft(frames * window, axis=-1)
    return spec[0], spec[1]


def interaural_cues(
    samples: np.ndarray,
    sample_rate: int = ANALYSIS_SR,
    n_fft: int = N_FFT,
    hop_length: int = HOP,
    n_mels: int = N_MELS,
) -> InterauralCues:
    """IPD, ILD and power per mel band and frame of a ``(frames, 2)`` binaural signal."""
    left, right = binaural_stft(samples, n_fft, hop_length)
    cross = left * np.conj(right)
    stacked = np.stack(
        [cross.real, cross.imag, left.real**2 + left.imag**2, right.real**2 + right.imag**2]
    )  # (4, frames, bins): one matmul applies the filterbank to all four
    bands = stacked @ mel_filterbank(sample_rate, n_fft, n_mels).T
    re, im, p_left, p_right = (b.T for b in bands)
    ipd = wrap_phase(np.arctan2(im, re))
    ild = 10.0 * np.log10((p_left + AMIN) / (p_right + AMIN))
    return InterauralCues(ipd=ipd, ild=ild, power=0.5 * (p_left + p_right))


@dataclass(frozen=True)
class InterauralError:
    """IPD MAE (rad, over wrapped differences) and ILD MAE (dB) on ``bins`` mel-band frames."""

    ipd_mae: float
    ild_mae: float
    bins: int


def interaural_error(
    generated: InterauralCues, reference: InterauralCues, floor_db: float | None = None
) -> InterauralError:
    """MAE of IPD (wrapped difference) and ILD between two cue sets of the same shape.

    ``floor_db=None`` averages over every band and frame (the paper's recipe). A number keeps
    only bands whose reference power is within ``floor_db`` dB of the reference's maximum,
    so silent gaps (random phase) do not dominate.
    """
    if generated.ipd.shape != reference.ipd.shape:
        raise ValueError(
            f"generated cues {generated.ipd.shape} and reference cues {reference.ipd.shape} differ "
            "in shape (n_mels, frames): align the signals first"
        )
    if floor_db is None:
        keep = np.ones(reference.power.shape, dtype=bool)
    else:
        if floor_db <= 0:
            raise ValueError(f"floor_db must be positive, got {floor_db}")
        level = 10.0 * np.log10(reference.power + AMIN)
        keep = level >= level.max() - floor_db
    ipd = np.abs(wrap_phase(generated.ipd[keep] - reference.ipd[keep]))
    ild = np.abs(generated.ild[keep] - reference.ild[keep])
    return InterauralError(float(ipd.mean()), float(ild.mean()), int(keep.sum()))


@dataclass(frozen=True)
class DelayTrack:
    """GCC-PHAT interaural delay (s) per analysis window centred at ``times`` (s), and the
    window's level in dB (mean spectral power of both ears; meaningful relative to the track)."""

    times: np.ndarray
    delays: np.ndarray
    level_db: np.ndarray


def _phat_peak_lags(cross: np.ndarray, n_fft: int, max_lag: int) -> np.ndarray:
    """Sub-sample lag of the GCC-PHAT peak for each row of ``(rows, n_fft // 2 + 1)`` cross
    spectra ``L conj(R)``, searched over ``-max_lag..max_lag`` (parabolic interpolation)."""
    from scipy.fft import irfft

    cc = irfft(cross / np.maximum(np.abs(cross), 1e-20), n_fft, axis=-1)
    cc = np.concatenate([cc[:, n_fft - max_lag :], cc[:, : max_lag + 1]], axis=1)  # lags -max..max
    peak = np.argmax(cc, axis=1)
    rows = np.arange(len(cc))
    idx = np.clip(peak, 1, 2 * max_lag - 1)
    y0, y1, y2 = cc[rows, idx - 1], cc[rows, idx], cc[rows, idx + 1]
    curvature = y0 - 2 * y1 + y2
    safe = (peak > 0) & (peak < 2 * max_lag) & (curvature < 0)
    offset = np.where(safe, 0.5 * (y0 - y2) / np.where(safe, curvature, -1.0), 0.0)
    return peak - max_lag + offset


def _max_lag(max_delay: float, sample_rate: int, limit: int) -> int:
    max_lag = int(np.ceil(max_delay * sample_rate))
    if not 1 <= max_lag < limit:
        raise ValueError(
            f"max_delay {max_delay} s is {max_lag} samples at {sample_rate} Hz: need 1..{limit - 1}"
        )
    return max_lag


def gcc_phat_delay(samples: np.ndarray, sample_rate: int, max_delay: float = MAX_ITD) -> float:
    """Interaural delay (s) of a whole ``(frames, 2)`` signal: left lags right when positive.

    One FFT over the whole signal, zero-padded so that searched lags do not wrap around.
    """
    from scipy.fft import next_fast_len, rfft

    x = binaural_channels(samples).astype(np.float64)
    max_lag = _max_lag(max_delay, sample_rate, len(x))
    n_fft = next_fast_len(len(x) + max_lag, real=True)
    spec = rfft(x, n_fft, axis=0)
    cross = (spec[:, 0] * np.conj(spec[:, 1]))[None]
    return float(_phat_peak_lags(cross, n_fft, max_lag)[0] / sample_rate)


def delay_track(
    samples: np.ndarray,
    sample_rate: int,
    window: float = 0.2,
    hop: float = 0.1,
    max_delay: float = MAX_ITD,
    n_fft: int = N_FFT,
    hop_length: int = HOP,
) -> DelayTrack:
    """GCC-PHAT delay of every ``window``-second slice, ``hop`` seconds apart.

    The cross spectra of the STFT frames (``n_fft``/``hop_length``, as for the cues) are summed
    over each slice, PHAT-weighted and inverted, so one STFT serves the whole track. ``window``
    and ``hop`` are rounded to whole STFT hops.
    """
    left, right = binaural_stft(samples, n_fft, hop_length)
    per_window = int(round(window * sample_rate / hop_length))
    step = int(round(hop * sample_rate / hop_length))
    frames = len(left)
    if not 1 <= per_window <= frames or step < 1:
        raise ValueError(
            f"window {window} s / hop {hop} s do not fit {frames} STFT frames of "
            f"{hop_length / sample_rate * 1000:.1f} ms"
        )
    max_lag = _max_lag(max_delay, sample_rate, n_fft // 2)
    starts = np.arange(0, frames - per_window + 1, step)
    cross = np.cumsum(left * np.conj(right), axis=0, dtype=np.complex128)
    cross = np.concatenate([np.zeros((1, cross.shape[1]), cross.dtype), cross])
    frame_power = np.sum(np.abs(left) ** 2 + np.abs(right) ** 2, axis=1, dtype=np.float64)
    power = np.concatenate([[0.0], np.cumsum(frame_power)])
    summed = cross[starts + per_window] - cross[starts]
    level = 10.0 * np.log10((power[starts + per_window] - power[starts]) / per_window + AMIN)
    times = (starts + (per_window - 1) / 2) * hop_length / sample_rate
    lags = _phat_peak_lags(summed, n_fft, max_lag)
    return DelayTrack(times=times, delays=lags / sample_rate, level_db=level)


def delay_to_azimuth(
    delay: np.ndarray | float, head_width: float = HEAD_WIDTH, speed: float = SPEED_OF_SOUND
) -> np.ndarray:
    """Azimuth in degrees (+ right, - left) from the sine law ``tau = (d / c) sin(azimuth)``."""
    return np.degrees(np.arcsin(np.clip(np.asarray(delay) * speed / head_width, -1.0, 1.0)))


@dataclass(frozen=True)
class DirectionCheck:
    """Agreement of GCC-PHAT directions on the windows active in both signals.

    ``azimuth_mae`` is in degrees; ``side_agreement`` is the fraction of windows placed on the
    same side (left, centre within ``centre`` degrees, right).
    """

    azimuth_mae: float
    side_agreement: float
    windows: int


def direction_check(
    generated: DelayTrack,
    reference: DelayTrack,
    active_db: float = 30.0,
    centre: float = 10.0,
) -> DirectionCheck:
    """Compare two delay tracks of the same length on windows within ``active_db`` of each peak."""
    if generated.delays.shape != reference.delays.shape:
        raise ValueError(
            f"delay tracks differ in length ({generated.delays.size} vs "
            f"{reference.delays.size} windows): align the signals first"
        )
    active = (generated.level_db >= generated.level_db.max() - active_db) & (
        reference.level_db >= reference.level_db.max() - active_db
    )
    if not active.any():
        raise ValueError("direction check: no window is active in both signals")
    az_gen = delay_to_azimuth(generated.delays[active])
    az_ref = delay_to_azimuth(reference.delays[active])

    def side(az: np.ndarray) -> np.ndarray:
        return np.where(np.abs(az) <= centre, 0, np.sign(az))

    return DirectionCheck(
        azimuth_mae=float(np.mean(np.abs(az_gen - az_ref))),
        side_agreement=float(np.mean(side(az_gen) == side(az_ref))),
        windows=int(active.sum()),
    )
