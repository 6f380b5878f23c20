"""Audio degradations at known severity: additive noise, hard clipping, band-limiting.

Severity 1/2/3 (mild/moderate/severe) maps to fixed parameters:

* noise: white or pink noise at an SNR of 20 / 10 / 3 dB (relative to the whole clip);
* clipping: hard clipping at 50 / 25 / 10 % of the peak, level restored to the input RMS;
* bandlimit: zero-phase 6th-order Butterworth band-pass 80-4000 / 300-2400 / 500-1200 Hz.

Noise is drawn from a generator seeded by the caller, so a clip is reproducible on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS: tuple[str, ...] = ("none", "noise", "clipping", "bandlimit")
SEVERITY_LABELS: tuple[str, ...] = ("clean", "mild", "moderate", "severe")
NOISE_SNR_DB = {1: 20.0, 2: 10.0, 3: 3.0}
CLIP_FRACTION = {1: 0.5, 2: 0.25, 3: 0.1}
BAND_HZ = {1: (80.0, 4000.0), 2: (300.0, 2400.0), 3: (500.0, 1200.0)}
NOISE_COLORS: tuple[str, ...] = ("white", "pink")


@dataclass(frozen=True)
class Degradation:
    kind: str = "none"
    severity: int = 0
    noise_color: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown degradation {self.kind!r}; expected one of {KINDS}")
        if (self.kind == "none") != (self.severity == 0) or not 0 <= self.severity <= 3:
            raise ValueError(f"degradation {self.kind!r} cannot have severity {self.severity}")
        if (self.kind == "noise") != bool(self.noise_color) or (
            self.noise_color and self.noise_color not in NOISE_COLORS
        ):
            raise ValueError(f"degradation {self.kind!r}: bad noise colour {self.noise_color!r}")

    def as_dict(self) -> dict:
        out: dict = {
            "kind": self.kind,
            "severity": self.severity,
            "severity_label": SEVERITY_LABELS[self.severity],
        }
        if self.kind == "noise":
            out.update(snr_db=NOISE_SNR_DB[self.severity], noise_color=self.noise_color)
        elif self.kind == "clipping":
            out["clip_fraction_of_peak"] = CLIP_FRACTION[self.severity]
        elif self.kind == "bandlimit":
            out["band_hz"] = list(BAND_HZ[self.severity])
        return out


def noise(n: int, color: str, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS white or pink (1/f power) noise of ``n`` samples."""
    white = rng.standard_normal(n)
    if color == "white":
        out = white
    elif color == "pink":
        spectrum = np.fft.rfft(white)
        freqs = np.arange(spectrum.size, dtype=np.float64)
        freqs[0] = 1.0
        out = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    else:
        raise ValueError(f"unknown noise colour {color!r}")
    return (out / np.sqrt(np.mean(out**2))).astype(np.float32)


def add_noise(
    samples: np.ndarray, snr_db: float, color: str, rng: np.random.Generator
) -> np.ndarray:
    """Add ``color`` noise so that signal power / noise power = ``snr_db``."""
    signal_rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    if signal_rms == 0.0:
        raise ValueError("cannot set an SNR against digital silence")
    scale = signal_rms / 10.0 ** (snr_db / 20.0)
    return (samples + np.float32(scale) * noise(samples.size, color, rng)).astype(np.float32)


def hard_clip(samples: np.ndarray, fraction: float) -> np.ndarray:
    """Clip at ``fraction`` of the peak, then restore the input RMS."""
    if not 0 < fraction < 1:
        raise ValueError(f"clip fraction must be in (0, 1), got {fraction}")
    limit = fraction * float(np.max(np.abs(samples)))
    clipped = np.clip(samples, -limit, limit)
    gain = np.sqrt(np.mean(np.square(samples, dtype=np.float64))) / np.sqrt(
        np.mean(np.square(clipped, dtype=np.float64))
    )
    return (clipped * gain).astype(np.float32)


def band_limit(samples: np.ndarray, sample_rate: int, low_hz: float, high_hz: float) -> np.ndarray:
    """Zero-phase Butterworth band-pass ``low_hz``..``high_hz``."""
    from scipy.signal import butter, sosfiltfilt

    if not 0 < low_hz < high_hz < sample_rate / 2:
        raise ValueError(f"band {low_hz}-{high_hz} Hz invalid at {sample_rate} Hz")
    sos = butter(6, [low_hz, high_hz], btype="bandpass", fs=sample_rate, output="sos")
    return sosfiltfilt(sos, samples).astype(np.float32)


def degrade(
    samples: np.ndarray, sample_rate: int, degradation: Degradation, rng: np.random.Generator
) -> np.ndarray:
    """Apply ``degradation`` (``rng`` feeds the noise)."""
    if degradation.kind == "none":
        return samples
    if degradation.kind == "noise":
        snr = NOISE_SNR_DB[degradation.severity]
        return add_noise(samples, snr, degradation.noise_color, rng)
    if degradation.kind == "clipping":
        return hard_clip(samples, CLIP_FRACTION[degradation.severity])
    return band_limit(samples, sample_rate, *BAND_HZ[degradation.severity])
