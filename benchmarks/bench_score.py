"""End-to-end LiteScorer speed: all features + every archetype and realism head.

    python benchmarks/bench_score.py [--minutes 10] [--scorer artifacts/lite_scorer]

Builds ``--minutes`` of real speech from the LibriVox clips of Debian's pocketsphinx-testdata
(random concatenations of 1-4 clips with random gains: distinct audio, 3-25 s per clip), then

1. loads the models (timed apart),
2. scores every clip with an empty feature cache ("cold") and prints the real-time factor and
   each extractor's share of the time,
3. scores them again with the now warm cache and prints the speedup over the cold run,
4. prints the peak resident memory.

Without a trained scorer folder (``speech-drame train-lite``), heads are trained on the spot
on random labels (outside the timings): the heads' cost does not depend on their weights.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
CONTEXTS = {
    "question": "You are a novelist's narrator describing the Dashwood family's inheritance.",
    "profile": "John Dashwood, a cautious and rather selfish gentleman of means",
    "scene": "John considers how much money to give his stepmother and half-sisters",
    "traits": "Reserved, Calculating",
}
SR = 16_000


def make_clips(minutes: float, seed: int) -> list[tuple[np.ndarray, int]]:
    from speech_drame.audio import load_audio

    base = [load_audio(p).samples for p in sorted(LIBRIVOX.glob("*.wav"))]
    if not base:
        sys.exit(f"no LibriVox clips in {LIBRIVOX}: apt-get install pocketsphinx-testdata")
    rng = np.random.default_rng(seed)
    clips, total = [], 0.0
    while total < minutes * 60:
        parts = [base[i] for i in rng.choice(len(base), size=int(rng.integers(1, 5)))]
        x = np.concatenate(parts)[: 25 * SR] * rng.uniform(0.3, 0.9)
        clips.append((x.astype(np.float32), SR))
        total += len(x) / SR
    return clips


def scorers(path: str | None, clips, cache):
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.schema import CONTENT_PASS, dimensions
    from speech_drame.scorers.lite import (
        ScorerError,
        TrainingOptions,
        load_lite_scorer,
        train_lite_scorer,
    )

    out = {}
    for mode in ("archetype", "realism"):
        try:
            out[mode] = load_lite_scorer(mode, path)
            continue
        except ScorerError as exc:
            print(f"({exc}; training {mode} heads on random labels for timing)")
        few = extract_blueprints(clips[:12], [CONTEXTS] * 12, cache, progress=False).blueprints
        rng = np.random.default_rng(0)
        labels = {d: rng.integers(1, 6, size=(12, 3)).tolist() for d in dimensions(mode)}
        if mode == "archetype":
            labels[CONTENT_PASS] = (rng.random((12, 3)) < 0.5).tolist()
        out[mode] = train_lite_scorer(few, labels, mode, TrainingOptions(epochs=2))
    return out


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(clips, heads, cache) -> tuple[float, float, dict[str, float]]:
    """Wall time, CPU time (all threads) and per-stage times of one scoring pass."""
    from speech_drame.features.blueprint import extract_blueprints

    cpu = cpu_seconds()
    start = time.perf_counter()
    batch = extract_blueprints(clips, [CONTEXTS] * len(clips), cache, progress=False)
    if batch.errors:
        sys.exit(f"feature extraction failed: {batch.errors}")
    t = time.perf_counter()
    for scorer in heads.values():
        scorer.score_blueprints(batch.blueprints)
    timings = dict(batch.timings)
    timings["heads"] = time.perf_counter() - t
    return time.perf_counter() - start, cpu_seconds() - cpu, timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="speech to score")
    parser.add_argument("--scorer", help="trained scorer folder (default: artifacts/lite_scorer)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from speech_drame.features.blueprint import extract_blueprint
    from speech_drame.features.cache import FeatureCache

    clips = make_clips(args.minutes, args.seed)
    seconds = sum(len(x) / sr for x, sr in clips)
    print(f"{len(clips)} clips, {seconds / 60:.1f} min of LibriVox speech, {os.cpu_count()} CPU(s)")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        extract_blueprint(make_clips(0.01, seed=99)[0], CONTEXTS, cache=None)  # loads every model
        load = time.perf_counter() - t
        heads = scorers(args.scorer, clips, FeatureCache(Path(tmp) / "heads"))
        cache = FeatureCache(Path(tmp) / "bench")
        cold, cold_cpu, timings = run(clips, heads, cache)
        warm, _, _ = run(clips, heads, cache)
    total = sum(timings.values())
    print(f"model loading (once per process): {load:.1f} s")
    print(f"cold cache: {cold:.1f} s  ->  {seconds / cold:.1f}x faster than real time")
    print(
        f"  CPU time {cold_cpu:.1f} s = {seconds / cold_cpu:.1f} s of speech per CPU-second "
        f"(load average now {os.getloadavg()[0]:.1f}: other processes share the CPUs)"
    )
    print(f"warm cache: {warm:.2f} s  ->  {seconds / warm:.0f}x faster than real time")
    print(f"warm-cache speedup over cold: {cold / warm:.0f}x")
    print("time shares (cold; extractor time summed over the parallel threads):")
    for name, t in sorted(timings.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<10}{t:8.2f} s  {100 * t / total:5.1f} %")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
