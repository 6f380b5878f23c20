"""A small demo RoleBench: offline TTS "systems" answering the demo archetype scenarios.

Each system is a voice of the demo corpus's offline engines (piper, flite, espeak-ng) with a
delivery preset (:mod:`speech_drame.demo.delivery`); every system speaks the same on-role reply
of each scenario, so the systems differ only in voice and delivery. The renderings are a
smoke test of the benchmark, not a comparison of real role-play systems. Rendering is
idempotent (existing files are kept), so a rerun only re-scores what changed.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from speech_drame.audio import TARGET_SR, resample

# system name -> (demo voice key, delivery preset)
DEMO_SYSTEMS: dict[str, tuple[str, str]] = {
    "piper-joe-neutral": ("piper:en_US-joe-medium", "neutral"),
    "flite-slt-lively": ("flite:slt", "lively"),
    "espeak-m3-flat": ("espeak:en-us+m3", "flat"),
    "flite-kal-rushed": ("flite:kal", "rushed"),
}


def _render_texts(voice_key: str, texts: list[str]) -> list[tuple[np.ndarray, int]]:
    from speech_drame.demo import tts

    if tts.voice(voice_key).engine == "piper":
        with tempfile.TemporaryDirectory(prefix="demo-rolebench-") as tmp:
            paths = tts.synthesize_piper_batch(texts, 1.0, Path(tmp) / "wavs")
            return [sf.read(p, dtype="float32") for p in paths]
    return [tts.synthesize(voice_key, text) for text in texts]


def _deliver(samples: np.ndarray, sr: int, preset: str) -> np.ndarray:
    from speech_drame.demo.delivery import (
        PRESETS,
        WorldAnalysis,
        apply_delivery,
        limit_peak,
        needs_world,
        set_level,
    )

    x = set_level(resample(samples, sr, TARGET_SR))
    delivery = PRESETS[preset]
    analysis = WorldAnalysis(x, TARGET_SR) if needs_world(delivery, 1.0) else None
    y, _ = limit_peak(apply_delivery(x, delivery, 1.0, analysis))
    return y


def render_demo_rolebench(
    out: str | os.PathLike, n_scenarios: int = 12, systems: dict[str, tuple[str, str]] | None = None
) -> tuple[Path, dict[str, str]]:
    """Write ``scenarios.jsonl`` and ``systems/<name>/<scenario id>.wav`` under ``out``.

    Returns the scenario file and the system folders by name.
    """
    from speech_drame.demo.scenarios import ARCHETYPE_SCENARIOS

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in ARCHETYPE_SCENARIOS if s.on_role][:n_scenarios]
    scenario_file = root / "scenarios.jsonl"
    scenario_file.write_text(
        "".join(json.dumps({"id": s.key, "question": s.question}) + "\n" for s in chosen),
        encoding="utf-8",
    )
    folders: dict[str, str] = {}
    for name, (voice_key, preset) in (systems or DEMO_SYSTEMS).items():
        folder = root / "systems" / name
        folder.mkdir(parents=True, exist_ok=True)
        todo = [s for s in chosen if not (folder / f"{s.key}.wav").is_file()]
        rendered = _render_texts(voice_key, [s.on_role[0] for s in todo]) if todo else []
        for s, (samples, sr) in zip(todo, rendered, strict=True):
            tmp = folder / f".{s.key}.tmp.wav"
            sf.write(tmp, _deliver(samples, sr, preset), TARGET_SR)
            os.replace(tmp, folder / f"{s.key}.wav")
        folders[name] = str(folder)
    return scenario_file, folders
