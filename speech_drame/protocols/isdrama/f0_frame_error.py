"""F0 Frame Error (FFE, Chu & Alwan 2009) between two frame-aligned F0 tracks.

``FFE = (voicing decision errors + gross pitch errors) / frames`` where a frame is voiced when
its F0 is above zero, a voicing decision error is a frame voiced in exactly one track, and a
gross pitch error is a frame voiced in both whose generated F0 deviates from the reference by
more than 20 %. The tracks must already be aligned frame by frame (same hop, same length).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GROSS_ERROR = 0.2  # relative F0 deviation counted as a gross pitch error


@dataclass(frozen=True)
class F0FrameError:
    """FFE and its parts, as counts over ``frames`` aligned frames."""

    ffe: float
    voicing_errors: int
    gross_pitch_errors: int
    frames: int


def _track(f0: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(f0, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} F0 track must be a non-empty 1-D array, got shape {x.shape}")
    if not np.isfinite(x).all() or (x < 0).any():
        raise ValueError(f"{name} F0 track must be finite and >= 0 Hz (0 = unvoiced)")
    return x


def f0_frame_error(
    reference: np.ndarray, generated: np.ndarray, gross_error: float = GROSS_ERROR
) -> F0FrameError:
    """FFE of ``generated`` against ``reference``, both F0 in Hz per frame (0 where unvoiced).

    Example:
        >>> ref = np.array([0, 100, 100, 100, 0.0])
        >>> gen = np.array([0, 100, 130, 0, 90.0])  # one gross error, two voicing errors
        >>> f0_frame_error(ref, gen)
        F0FrameError(ffe=0.6, voicing_errors=2, gross_pitch_errors=1, frames=5)
    """
    ref, gen = _track(reference, "reference"), _track(generated, "generated")
    if ref.shape != gen.shape:
        raise ValueError(
            f"F0 tracks are not frame-aligned: reference has {ref.size} frames, generated "
            f"{gen.size}; align them first"
        )
    if gross_error <= 0:
        raise ValueError(f"gross_error must be positive, got {gross_error}")
    v_ref, v_gen = ref > 0, gen > 0
    voicing = int(np.count_nonzero(v_ref != v_gen))
    both = v_ref & v_gen
    gross = int(np.count_nonzero(np.abs(gen[both] / ref[both] - 1.0) > gross_error))
    return F0FrameError((voicing + gross) / ref.size, voicing, gross, int(ref.size))
