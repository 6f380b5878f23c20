"""AnimeScore-style ranker: training pairs/s and scoring clips/s, cold vs cached encoder features.

Cuts ``--seconds``-long segments from the LibriVox clips (Debian pocketsphinx-testdata), adds a
noisy copy of each (seeded, 0-10 dB SNR), draws ``--pairs`` clean-vs-noisy pairs, and measures
with the offline Whisper base encoder:

- scoring clips/s with an empty frame-feature cache (encoder runs) and with the cache filled;
- training pairs/s (pairs x epochs / head training time; features already cached), and the
  whole training run cold vs cached.

Figures are ratios to the cold run measured in the same process.

    python benchmarks/bench_ranker.py [--seconds 2] [--pairs 200] [--epochs 5] [--config released]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import soundfile as sf

from speech_drame.features.cache import FeatureCache
from speech_drame.protocols.animescore.config import PRESETS, load_config
from speech_drame.protocols.animescore.encoders import WhisperEncoder
from speech_drame.protocols.animescore.pairs import Pair, PairSet
from speech_drame.protocols.animescore.ranker import train_ranker

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


def make_clips(folder: Path, seconds: float, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    clean, noisy = [], []
    for n, wav in enumerate(sorted(LIBRIVOX.glob("*.wav"))):
        x, sr = sf.read(wav, dtype="float32")
        step = int(seconds * sr)
        for k in range(len(x) // step):
            seg = x[k * step : (k + 1) * step]
            noise = rng.standard_normal(seg.size).astype("float32")
            snr = rng.uniform(0, 10)
            noise *= np.sqrt(np.mean(seg**2) / 10 ** (snr / 10) / np.mean(noise**2))
            for kind, audio, out in (("c", seg, clean), ("n", seg + noise, noisy)):
                path = folder / f"{kind}{n}_{k}.wav"
                sf.write(path, np.clip(audio, -1, 1), sr)
                out.append(str(path))
    return clean, noisy


def make_pairs(clean: list[str], noisy: list[str], n: int, seed: int) -> PairSet:
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        c, d = clean[rng.integers(len(clean))], noisy[rng.integers(len(noisy))]
        flip = bool(rng.random() < 0.5)
        pairs.append(Pair(d, c, False) if flip else Pair(c, d, True))
    return PairSet(pairs)


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="segment length")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", choices=tuple(PRESETS), default="released", help="ranker head")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        clean, noisy = make_clips(tmp, args.seconds, args.seed)
        clips = clean + noisy
        pairs = make_pairs(clean, noisy, args.pairs, args.seed)
        config = replace(
            load_config(args.config), max_epochs=args.epochs, patience=args.epochs, seed=args.seed
        )
        encoder = WhisperEncoder()
        warm = make_pairs(clean[:2], noisy[:2], 4, 0)
        train_ranker(warm, encoder, config, None, val_pairs=warm)  # warm-up

        ranker, cold_train = timed(lambda: train_ranker(pairs, encoder, config, tmp / "cache"))
        _, cached_train = timed(lambda: train_ranker(pairs, encoder, config, tmp / "cache"))
        s = ranker.summary
        pairs_per_s = s["train_pairs"] * s["epochs_run"] / s["train_seconds"]

        score_cache = FeatureCache(tmp / "score-cache")
        cold_scores, cold_score = timed(lambda: ranker.score(clips, score_cache))
        cached_scores, cached_score = timed(lambda: ranker.score(clips, score_cache))
        assert np.array_equal(cold_scores, cached_scores)

    result = {
        "config": args.config,
        "clips": len(clips),
        "clip_seconds": args.seconds,
        "pairs": len(pairs.pairs),
        "epochs": s["epochs_run"],
        "head_training_pairs_per_s": round(pairs_per_s, 1),
        "train_run_cold_s": round(cold_train, 2),
        "train_run_cached_s": round(cached_train, 2),
        "train_run_speedup_cached_vs_cold": round(cold_train / cached_train, 2),
        "score_clips_per_s_cold": round(len(clips) / cold_score, 1),
        "score_clips_per_s_cached": round(len(clips) / cached_score, 1),
        "score_speedup_cached_vs_cold": round(cold_score / cached_score, 2),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
