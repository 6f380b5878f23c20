"""Delivery variants of a rendering: speaking rate, pitch level, pitch range and loudness.

Rate is set through the TTS engine where it can be (flite, espeak-ng: one process per
rendering anyway); piper renders each text once at its default rate, and its rate variants are
time-scaled by WORLD (frames resampled, F0 and envelopes interpolated). Pitch level and range
are changed by WORLD analysis/resynthesis (pyworld): voiced F0 is scaled in the log domain
around its mean, ``log f0' = mu + k (log f0 - mu) + s ln2/12`` for a range factor ``k`` and a
shift of ``s`` semitones, leaving the spectral envelope alone. Loudness is a gain relative to a
fixed speech level.

Each preset also carries the arousal it conveys (-1 subdued .. +1 excited), which the latent
score model compares with the arousal a scene calls for.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np

SPEECH_LEVEL_DBFS = -26.0  # RMS level of every synthetic rendering before its delivery gain
PEAK_CEILING = 0.99
WORLD_FRAME_MS = 10.0


@dataclass(frozen=True)
class Delivery:
    preset: str
    rate: float  # speaking-rate factor (engine parameter or WORLD time scaling)
    semitones: float  # mean pitch shift
    pitch_range: float  # factor on log-F0 deviations (1 = unchanged, <1 flatter)
    gain_db: float  # loudness relative to SPEECH_LEVEL_DBFS
    arousal: float  # arousal this delivery conveys, -1..1

    @property
    def changes_pitch(self) -> bool:
        return self.semitones != 0.0 or self.pitch_range != 1.0

    def as_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, Delivery] = {
    d.preset: d
    for d in (
        Delivery("neutral", 1.0, 0.0, 1.0, 0.0, 0.0),
        Delivery("lively", 1.1, 2.0, 1.45, 4.0, 1.0),
        Delivery("subdued", 0.88, -2.0, 0.7, -6.0, -1.0),
        Delivery("flat", 1.0, 0.0, 0.3, 0.0, -0.3),
        Delivery("rushed", 1.3, 0.0, 1.0, 2.0, 0.6),
        Delivery("exaggerated", 1.0, 3.0, 2.1, 5.0, 1.0),
        Delivery("dragging", 0.75, 0.0, 1.0, -3.0, -0.7),
    )
}


def as_recorded(arousal: float) -> Delivery:
    """The delivery of a real recording, left unchanged; ``arousal`` is what it conveys."""
    return Delivery("as_recorded", 1.0, 0.0, 1.0, 0.0, arousal)


def rms_dbfs(samples: np.ndarray) -> float:
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    if rms == 0.0:
        raise ValueError("cannot measure the level of digital silence")
    return 20.0 * math.log10(rms)


def apply_gain(samples: np.ndarray, gain_db: float) -> np.ndarray:
    return (samples * np.float32(10.0 ** (gain_db / 20.0))).astype(np.float32)


def set_level(samples: np.ndarray, target_dbfs: float = SPEECH_LEVEL_DBFS) -> np.ndarray:
    """Scale ``samples`` to an RMS level of ``target_dbfs``."""
    return apply_gain(samples, target_dbfs - rms_dbfs(samples))


def limit_peak(samples: np.ndarray, ceiling: float = PEAK_CEILING) -> tuple[np.ndarray, bool]:
    """Scale down to ``ceiling`` if the peak exceeds it; report whether it did."""
    peak = float(np.max(np.abs(samples)))
    if peak <= ceiling:
        return samples, False
    return (samples * np.float32(ceiling / peak)).astype(np.float32), True


def _pyworld():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pyworld imports the deprecated pkg_resources
            import pyworld
    except ImportError:
        raise ImportError("pitch changes need pyworld: pip install pyworld==0.3.5") from None
    return pyworld


class WorldAnalysis:
    """WORLD parameters of one signal, analysed once and resynthesised per pitch variant."""

    def __init__(self, samples: np.ndarray, sample_rate: int):
        pw = _pyworld()
        x = np.ascontiguousarray(samples, dtype=np.float64)
        f0, times = pw.dio(x, sample_rate, frame_period=WORLD_FRAME_MS)
        self.f0 = pw.stonemask(x, f0, times, sample_rate)
        if not np.any(self.f0 > 0):
            raise ValueError("no voiced frames: pitch cannot be changed")
        self.envelope = pw.cheaptrick(x, self.f0, times, sample_rate)
        self.aperiodicity = pw.d4c(x, self.f0, times, sample_rate)
        self.sample_rate = sample_rate
        self.length = len(x)

    def synthesize(
        self, semitones: float, pitch_range: float, time_scale: float = 1.0
    ) -> np.ndarray:
        """Resynthesise with voiced log-F0 scaled by ``pitch_range`` and shifted by ``semitones``,
        ``time_scale`` times faster (frames resampled; envelopes interpolated in the log domain).
        """
        if pitch_range <= 0 or time_scale <= 0:
            raise ValueError(f"pitch range {pitch_range} and time scale {time_scale} must be > 0")
        f0, envelope, aperiodicity = self.f0, self.envelope, self.aperiodicity
        if time_scale != 1.0:
            n = len(f0)
            pos = np.minimum(np.arange(int(round(n / time_scale))) * time_scale, n - 1)
            i0 = np.floor(pos).astype(int)
            i1 = np.minimum(i0 + 1, n - 1)
            w = (pos - i0)[:, None]
            envelope = np.exp((1 - w) * np.log(envelope[i0]) + w * np.log(envelope[i1]))
            aperiodicity = (1 - w) * aperiodicity[i0] + w * aperiodicity[i1]
            f0 = f0[np.rint(pos).astype(int)]
        voiced = f0 > 0
        log_f0 = np.log(f0[voiced])
        mean = np.log(self.f0[self.f0 > 0]).mean()
        shaped = np.zeros_like(f0)
        shaped[voiced] = np.exp(mean + pitch_range * (log_f0 - mean) + semitones * math.log(2) / 12)
        y = _pyworld().synthesize(
            shaped, np.ascontiguousarray(envelope), np.ascontiguousarray(aperiodicity),
            self.sample_rate, WORLD_FRAME_MS,
        )  # fmt: skip
        return y[: int(round(self.length / time_scale))].astype(np.float32)


def needs_world(delivery: Delivery, rendered_rate: float) -> bool:
    """True when a rendering made at ``rendered_rate`` needs WORLD resynthesis for ``delivery``."""
    return delivery.changes_pitch or delivery.rate != rendered_rate


def apply_delivery(
    samples: np.ndarray,
    delivery: Delivery,
    rendered_rate: float = 1.0,
    analysis: WorldAnalysis | None = None,
) -> np.ndarray:
    """Pitch and the rest of the rate (via ``analysis`` of ``samples``, level kept), then gain.

    ``rendered_rate`` is the rate the engine already applied; WORLD time-scales the remainder.
    """
    if needs_world(delivery, rendered_rate):
        if analysis is None:
            raise ValueError(f"delivery {delivery.preset!r} needs WORLD: pass a WorldAnalysis")
        level = rms_dbfs(samples)
        y = analysis.synthesize(
            delivery.semitones, delivery.pitch_range, delivery.rate / rendered_rate
        )
        samples = set_level(y, level)
    return apply_gain(samples, delivery.gain_db)
