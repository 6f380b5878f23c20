"""Synthetic spoken responses for the pairwise protocols' demo sets (piper, offline).

A :class:`Rendering` is one or more text segments, each spoken with a delivery preset of
:mod:`speech_drame.demo.delivery` (rate via the engine, pitch via WORLD, loudness via gain)
and concatenated, so a clip can change delivery mid-utterance; optional white noise at a
given SNR degrades it. All segments are synthesized with one piper process per speaking rate
(deterministic: piper runs without sampling noise). The TTS and signal code is the demo
corpus's own (:mod:`speech_drame.demo`); piper is a GPL tool used at build time only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SEGMENT_GAP_S = 0.15


@dataclass(frozen=True)
class Rendering:
    segments: tuple[tuple[str, str], ...]  # (text, delivery preset) spoken in order
    noise_snr_db: float | None = None

    @classmethod
    def plain(cls, text: str, preset: str = "neutral", noise_snr_db: float | None = None):
        return cls(((text, preset),), noise_snr_db)


def render_clips(renderings: Sequence[Rendering], paths: Sequence[Path], seed: int = 0) -> None:
    """Synthesize each rendering to the wav path at the same position (22.05 kHz mono)."""
    import soundfile as sf

    from speech_drame.demo.degrade import add_noise
    from speech_drame.demo.delivery import (
        PRESETS,
        WorldAnalysis,
        apply_delivery,
        limit_peak,
        needs_world,
        set_level,
    )
    from speech_drame.demo.tts import synthesize_piper_batch

    if len(renderings) != len(paths):
        raise ValueError(f"{len(renderings)} renderings but {len(paths)} paths")
    for r in renderings:
        for _, preset in r.segments:
            if preset not in PRESETS:
                raise ValueError(f"unknown delivery preset {preset!r}; known: {', '.join(PRESETS)}")
    segments = sorted({s for r in renderings for s in r.segments})
    by_rate: dict[float, list[tuple[str, str]]] = {}
    for seg in segments:
        by_rate.setdefault(PRESETS[seg[1]].rate, []).append(seg)
    audio: dict[tuple[str, str], np.ndarray] = {}
    rate_hz = 0
    with tempfile.TemporaryDirectory(prefix="speech-drame-pairwise-") as tmp:
        for i, (rate, segs) in enumerate(sorted(by_rate.items())):
            wavs = synthesize_piper_batch([t for t, _ in segs], rate, Path(tmp) / f"r{i}")
            for seg, wav in zip(segs, wavs, strict=True):
                samples, rate_hz = sf.read(wav, dtype="float32")
                delivery = PRESETS[seg[1]]  # piper already spoke at the preset's rate
                world = needs_world(delivery, rate)
                analysis = WorldAnalysis(samples, rate_hz) if world else None
                audio[seg] = apply_delivery(set_level(samples), delivery, rate, analysis)
    rng = np.random.default_rng(seed)
    gap = np.zeros(int(SEGMENT_GAP_S * rate_hz), dtype=np.float32)
    for r, path in zip(renderings, paths, strict=True):
        parts = [p for seg in r.segments for p in (audio[seg], gap)][:-1]
        clip = np.concatenate(parts)
        if r.noise_snr_db is not None:
            clip = add_noise(clip, r.noise_snr_db, "white", rng)
        clip, _ = limit_peak(clip)
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, clip, rate_hz)
