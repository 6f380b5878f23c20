"""Prosody: F0 statistics (pyworld DIO + StoneMask), energy dynamics, voicing and syllable rate.

pyworld (modified BSD) replaces Praat/openSMILE, whose licences the package avoids. DIO with
StoneMask refinement is used rather than Harvest, which is about ten times slower (Harvest
only takes over where DIO finds no voicing, e.g. speech in strong noise). Pitch
spreads are in semitones so they compare across voices; the acoustic syllable rate counts
peaks of the voiced intensity contour (de Jong & Wempe's idea, simplified).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.extras import require
from speech_drame.features.common import samples_16k
from speech_drame.features.peaks import find_peaks

NAME = "prosody"
VERSION = "pyworld-dio-3"  # 3: an F0 slope without voiced neighbours is NaN, not 0.0
SR = 16_000
FRAME_MS = 10.0
F0_FLOOR, F0_CEIL = 60.0, 800.0
MIN_VOICED_FRAMES = 5
WIN = 400  # 25 ms energy window
HOP = int(SR * FRAME_MS / 1000)


@dataclass
class Prosody:
    """Pitch, energy and rhythm descriptors of one clip.

    Pitch values come from voiced frames; ``f0_std_st`` and ``f0_range_st`` (5th to 95th
    percentile) are in semitones, ``f0_slope_st`` is the mean absolute frame-to-frame change
    in semitones over the ``f0_slope_pairs`` pairs of consecutive voiced frames. When no two
    voiced frames are neighbours (``f0_slope_pairs == 0``) the slope is undefined: NaN, and
    every user of it must say how it treats that (see :data:`UNDEFINED`). Energy is frame RMS
    in dBFS over frames within 50 dB of the loudest one.
    """

    f0_median_hz: float
    f0_mean_hz: float
    f0_std_st: float
    f0_range_st: float
    f0_slope_st: float
    voiced_ratio: float
    energy_mean_db: float
    energy_std_db: float
    energy_range_db: float
    energy_slope_db: float
    syllable_rate: float
    f0_slope_pairs: int


# field -> why it can be NaN (the reason users report)
UNDEFINED: dict[str, str] = {
    "f0_slope_st": "no two consecutive voiced frames (f0_slope_pairs = 0)",
}


def f0_contour(samples: np.ndarray) -> np.ndarray:
    """F0 in Hz per 10 ms frame (0 where unvoiced): DIO refined by StoneMask.

    DIO's voicing decision gives up on speech in strong noise; when it finds fewer than
    ``MIN_VOICED_FRAMES`` voiced frames, the more robust (and ~10x slower) Harvest is used.
    """
    with warnings.catch_warnings():  # pyworld 0.3.5 imports the deprecated pkg_resources
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
        pyworld = require("pyworld", "F0 extraction")
    x = samples.astype(np.float64)
    f0, times = pyworld.dio(x, SR, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS)
    f0 = pyworld.stonemask(x, f0, times, SR)
    if (f0 > 0).sum() < MIN_VOICED_FRAMES:
        f0, _ = pyworld.harvest(x, SR, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS)
    return f0


def frame_energy_db(samples: np.ndarray) -> np.ndarray:
    """RMS in dBFS of 25 ms frames every 10 ms (centred, zero-padded)."""
    x = np.pad(samples.astype(np.float64), WIN // 2)
    frames = np.lib.stride_tricks.sliding_window_view(x, WIN)[::HOP]
    return 10.0 * np.log10(np.mean(frames**2, axis=1) + 1e-12)


def prosody(audio: Audio) -> Prosody:
    """Prosodic descriptors of a 16 kHz clip.

    Raises:
        AudioError: audio not 16 kHz mono, or fewer than 5 voiced frames (no pitch to describe).
    """
    x = samples_16k(audio, "prosody")
    f0 = f0_contour(x)
    voiced = f0 > 0
    if voiced.sum() < MIN_VOICED_FRAMES:
        raise AudioError(
            audio.source, f"prosody: only {int(voiced.sum())} voiced frame(s), no pitch"
        )
    semitones = 12.0 * np.log2(f0[voiced] / np.median(f0[voiced]))
    both = voiced[1:] & voiced[:-1]
    steps = np.abs(12.0 * np.log2(f0[1:][both] / f0[:-1][both]))

    energy = frame_energy_db(x)[: len(f0)]
    active = energy[energy > energy.max() - 50.0]
    smooth = np.convolve(energy, np.ones(5) / 5, mode="same")
    peaks = find_peaks(smooth, prominence=2.0, distance=int(100 / FRAME_MS))
    peaks = peaks[peaks < len(voiced)]
    nuclei = int(voiced[peaks].sum())
    return Prosody(
        f0_median_hz=float(np.median(f0[voiced])),
        f0_mean_hz=float(np.mean(f0[voiced])),
        f0_std_st=float(np.std(semitones)),
        f0_range_st=float(np.percentile(semitones, 95) - np.percentile(semitones, 5)),
        f0_slope_st=float(np.mean(steps)) if steps.size else math.nan,
        f0_slope_pairs=int(steps.size),
        voiced_ratio=float(voiced.mean()),
        energy_mean_db=float(np.mean(active)),
        energy_std_db=float(np.std(active)),
        energy_range_db=float(np.percentile(active, 95) - np.percentile(active, 10)),
        energy_slope_db=float(np.mean(np.abs(np.diff(active)))),
        syllable_rate=nuclei / audio.seconds,
    )
