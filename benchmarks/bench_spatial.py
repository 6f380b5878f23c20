"""Speed of the ISDrama drama metrics per minute of binaural audio (48 kHz, two signals).

Vectorised (the package: one batched FFT and one filterbank matmul over all frames, GCC-PHAT
windows from cumulative sums of the frame cross spectra) against a straightforward per-frame Python loop computing the same IPD/ILD
MAE and GCC-PHAT direction check, timed in the same run. Both results are compared to show the
loop computes the same numbers. The released evaluator's IPD/ILD recipe (``--spatial-metric
official``: resampling to 32 kHz, per-bin cues, 128 mel weights) is timed on the same audio.

    python benchmarks/bench_spatial.py [--minutes 1.0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from speech_drame.audio import resample
from speech_drame.features.spectral import mel_filterbank
from speech_drame.protocols.isdrama.official_cues import SAMPLE_RATE as OFFICIAL_SR
from speech_drame.protocols.isdrama.official_cues import official_error
from speech_drame.protocols.isdrama.spatial import (
    AMIN,
    ANALYSIS_SR,
    HOP,
    MAX_ITD,
    N_FFT,
    N_MELS,
    delay_to_azimuth,
    delay_track,
    direction_check,
    interaural_cues,
    interaural_error,
)

WINDOW, STEP = 0.2, 0.1  # GCC-PHAT windows (s), as in the drama protocol


def binaural(minutes: float, delay: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(minutes * 60 * ANALYSIS_SR)
    s = (0.1 * rng.standard_normal(n + 64)).astype(np.float32)
    return np.stack([s[32 - delay : 32 - delay + n], 0.8 * s[32 : 32 + n]], axis=1)


def vectorised(gen: np.ndarray, ref: np.ndarray) -> tuple[float, float, float]:
    err = interaural_error(interaural_cues(gen), interaural_cues(ref))
    tracks = (delay_track(x, ANALYSIS_SR, WINDOW, STEP) for x in (gen, ref))
    return err.ipd_mae, err.ild_mae, direction_check(*tracks).azimuth_mae


def _loop_frames(x: np.ndarray, fb: np.ndarray) -> tuple[list, ...]:
    """Per STFT frame: mel IPD, ILD, and the raw cross spectrum and power for GCC-PHAT."""
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    padded = np.pad(x, ((N_FFT // 2, N_FFT // 2), (0, 0)))
    ipd, ild, crosses, powers = [], [], [], []
    for start in range(0, len(padded) - N_FFT + 1, HOP):
        frame = padded[start : start + N_FFT]
        left, right = np.fft.rfft(frame[:, 0] * window), np.fft.rfft(frame[:, 1] * window)
        cross = left * np.conj(right)
        p_left, p_right = np.abs(left) ** 2, np.abs(right) ** 2
        band_left, band_right = fb @ p_left, fb @ p_right
        ipd.append(np.angle(fb @ cross))
        ild.append(10 * np.log10((band_left + AMIN) / (band_right + AMIN)))
        crosses.append(cross)
        powers.append(np.sum(p_left + p_right))
    return ipd, ild, crosses, powers


def _loop_delays(crosses: list, powers: list) -> tuple[list, list]:
    per_window, step = round(WINDOW * ANALYSIS_SR / HOP), round(STEP * ANALYSIS_SR / HOP)
    max_lag = int(np.ceil(MAX_ITD * ANALYSIS_SR))
    delays, levels = [], []
    for start in range(0, len(crosses) - per_window + 1, step):
        cross = np.sum(crosses[start : start + per_window], axis=0)
        cc = np.fft.irfft(cross / np.maximum(np.abs(cross), 1e-20), N_FFT)
        cc = np.concatenate([cc[N_FFT - max_lag :], cc[: max_lag + 1]])
        k = int(np.argmax(cc))
        offset = 0.0
        if 0 < k < 2 * max_lag and cc[k - 1] - 2 * cc[k] + cc[k + 1] < 0:
            offset = 0.5 * (cc[k - 1] - cc[k + 1]) / (cc[k - 1] - 2 * cc[k] + cc[k + 1])
        delays.append((k - max_lag + offset) / ANALYSIS_SR)
        levels.append(10 * np.log10(np.mean(powers[start : start + per_window]) + AMIN))
    return delays, levels


def per_frame_loop(gen: np.ndarray, ref: np.ndarray) -> tuple[float, float, float]:
    fb = mel_filterbank(ANALYSIS_SR, N_FFT, N_MELS).astype(np.float64)
    ipd_g, ild_g, cross_g, power_g = _loop_frames(gen, fb)
    ipd_r, ild_r, cross_r, power_r = _loop_frames(ref, fb)
    ipd_err = [
        np.abs(np.angle(np.exp(1j * (g - r)))).mean() for g, r in zip(ipd_g, ipd_r, strict=True)
    ]
    ild_err = [np.abs(g - r).mean() for g, r in zip(ild_g, ild_r, strict=True)]
    (d_g, l_g), (d_r, l_r) = _loop_delays(cross_g, power_g), _loop_delays(cross_r, power_r)
    errors = [
        abs(delay_to_azimuth(a) - delay_to_azimuth(b))
        for a, b, la, lb in zip(d_g, d_r, l_g, l_r, strict=True)
        if la >= max(l_g) - 30 and lb >= max(l_r) - 30
    ]
    return float(np.mean(ipd_err)), float(np.mean(ild_err)), float(np.mean(errors))


def official(gen: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    cues = official_error(*(resample(x, ANALYSIS_SR, OFFICIAL_SR) for x in (gen, ref)))
    return cues.ipd_mae, cues.ild_mae


def best_time(fn, *args, repeats: int) -> tuple[float, tuple]:
    best, out = float("inf"), ()
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="audio length per signal")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    gen, ref = binaural(args.minutes, 5, seed=0), binaural(args.minutes, 9, seed=0)
    fast, fast_out = best_time(vectorised, gen, ref, repeats=args.repeats)
    slow, slow_out = best_time(per_frame_loop, gen, ref, repeats=max(1, args.repeats // 2))
    per_min = 1.0 / args.minutes
    print(f"audio: {args.minutes:.2f} min of 48 kHz binaural, generated vs reference")
    print(f"vectorised     : {fast * per_min:7.3f} s per minute of audio")
    print(f"per-frame loop : {slow * per_min:7.3f} s per minute of audio")
    print(f"speed-up       : {slow / fast:7.1f}x")
    released, released_out = best_time(official, gen, ref, repeats=args.repeats)
    print(f"official recipe: {released * per_min:7.3f} s per minute of audio "
          f"({released / fast:.2f}x the vectorised wrapped-band time); "
          f"IPD {released_out[0]:.3g}, ILD {released_out[1]:.3g}")  # fmt: skip
    diff = np.max(np.abs(np.subtract(fast_out, slow_out)))
    print(f"IPD/ILD/azimuth MAE vectorised {np.round(fast_out, 4).tolist()}, "
          f"loop {np.round(slow_out, 4).tolist()} (max difference {diff:.2e})")  # fmt: skip


if __name__ == "__main__":
    main()
