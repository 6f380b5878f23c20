"""IPD/ILD MAE as ISDrama's released evaluator computes it (``spatial_metric="official"``).

The recipe (facts from the released ``evaluate/gen_ipd_ild.py`` and ``evaluate/evaluate.py``;
the code here is our own):

1. both channels at 32 kHz (we resample with scipy's polyphase filter, the release with
   torchaudio's sinc resampler; they differ only near the Nyquist frequency);
2. an STFT per channel: 1024-point periodic Hann window, hop 320, centred frames with
   reflect padding (``librosa.stft`` defaults, as torchlibrosa reproduces them; we compute in
   float64, the release in float32);
3. per frequency bin: ``IPD = angle(R) - angle(L)`` (right minus left, NOT wrapped, so within
   ``(-2 pi, 2 pi)``) and ``ILD = 20 log10((|R| + 1e-10) / (|L| + 1e-10))`` dB;
4. mel weights afterwards: ``IPD_mel = IPD @ W.T``, ``ILD_mel = ILD @ W.T`` with ``W`` the 128
   Slaney-normalised mel filters over 50-14,000 Hz (librosa's ``filters.mel`` defaults), giving
   ``(frames, 128)`` matrices: weighted sums of per-bin values, not angles or levels;
5. per item, the two files' matrices are cut to their common ``T`` frames (the longer file's
   tail is dropped), and the value is ``mean |gen - ref|`` over ``(T, 128)``, divided by ``T``
   and multiplied by 100.

The first frame (centred on sample 0, reflect-padded) is symmetric, so its spectrum is real: where
its real part is negative the phase is +pi or -pi depending on the sign of a rounding error, and
that frame's IPD is partly noise. The release keeps the frame and so do we; a file that starts
with 16 ms of digital silence has an all-zero first frame (IPD 0).

Step 5 divides an average by the frame count once more, so the figure shrinks in proportion to
the drama's length (100 frames per second): it is neither radians nor dB, and on dramas of tens
of seconds it is two to three orders of magnitude below the wrapped-band measure of
:mod:`.spatial` on the same audio.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from speech_drame.features.spectral import mel_filterbank
from speech_drame.protocols.isdrama.spatial import binaural_channels

SAMPLE_RATE = 32_000
N_FFT = 1024
HOP = 320
N_MELS = 128
FMIN, FMAX = 50.0, 14_000.0
EPSILON = 1e-10  # added to both magnitudes of the ILD ratio
SCALE = 100.0  # the reported figure is the per-frame MAE times 100
BLOCK = 2048  # STFT frames analysed at once (bounds memory on whole dramas)

DEFINITION = (
    "the released evaluator's recipe: 32 kHz, STFT n_fft 1024 / hop 320 (periodic Hann, centred, "
    "reflect padding); per bin IPD = angle(R) - angle(L) unwrapped and ILD = 20 log10((|R|+1e-10) / "
    "(|L|+1e-10)); then 128 Slaney mel weights over 50-14000 Hz; MAE over the common T frames x 128 "
    "bands, divided by T, times 100"
)


@lru_cache(maxsize=4)
def mel_weights() -> np.ndarray:
    """The 128 Slaney mel filters over 50-14,000 Hz of the 32 kHz analysis (float64)."""
    return mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS, FMIN, FMAX, dtype=np.float64)


def frame_count(samples: int) -> int:
    """STFT frames of a centred analysis of ``samples`` samples."""
    return 1 + samples // HOP


def _cue_blocks(samples: np.ndarray, frames: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Mel-weighted IPD and ILD of the first ``frames`` frames, ``BLOCK`` frames at a time."""
    x = binaural_channels(samples, "IPD/ILD input")
    if len(x) <= N_FFT // 2:
        raise ValueError(
            f"IPD/ILD needs more than {N_FFT // 2} samples at {SAMPLE_RATE} Hz, got {len(x)}"
        )
    padded = np.pad(x, ((N_FFT // 2, N_FFT // 2), (0, 0)), mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(padded, N_FFT, axis=0)  # (n+1, 2, N_FFT)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    to_mel = mel_weights().T
    for start in range(0, frames, BLOCK):
        stop = min(start + BLOCK, frames)
        spec = np.fft.rfft(windows[start * HOP : (stop - 1) * HOP + 1 : HOP] * hann, axis=-1)
        left, right = spec[:, 0], spec[:, 1]
        ipd = np.angle(right) - np.angle(left)
        ild = 20.0 * np.log10((np.abs(right) + EPSILON) / (np.abs(left) + EPSILON))
        yield ipd @ to_mel, ild @ to_mel


@dataclass(frozen=True)
class OfficialCues:
    """Mel-weighted per-bin IPD (rad) and ILD (dB) sums, each ``(frames, 128)``."""

    ipd: np.ndarray
    ild: np.ndarray


def official_cues(samples: np.ndarray) -> OfficialCues:
    """The released evaluator's IPD/ILD matrices of ``(frames, 2)`` audio at 32 kHz."""
    blocks = list(_cue_blocks(samples, frame_count(len(samples))))
    return OfficialCues(*(np.concatenate(parts) for parts in zip(*blocks, strict=True)))


@dataclass(frozen=True)
class OfficialError:
    """IPD and ILD figures (per-frame MAE x 100) over ``frames`` common frames."""

    ipd_mae: float
    ild_mae: float
    frames: int


def official_error(generated: np.ndarray, reference: np.ndarray) -> OfficialError:
    """IPD/ILD figures of two ``(frames, 2)`` signals at 32 kHz, each analysed whole and
    compared on their common frames (see the module docstring, step 5)."""
    frames = min(frame_count(len(generated)), frame_count(len(reference)))
    ipd_sum = ild_sum = 0.0
    pairs = zip(_cue_blocks(generated, frames), _cue_blocks(reference, frames), strict=True)
    for (ipd_g, ild_g), (ipd_r, ild_r) in pairs:
        ipd_sum += float(np.abs(ipd_g - ipd_r).sum())
        ild_sum += float(np.abs(ild_g - ild_r).sum())
    per_frame = SCALE / (frames * N_MELS * frames)  # mean over (T, 128), / T, x 100
    return OfficialError(ipd_sum * per_frame, ild_sum * per_frame, frames)
