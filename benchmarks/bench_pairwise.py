"""Pairwise protocols: pairs/s of blueprint extraction (cold and cached) and of the offline judges.

Generates ``--clips`` distinct piper responses (the demo renderings: texts x deliveries x
noise), draws ``--pairs`` random pairs of them with requests, and measures:

- TRACE blueprint extraction for all pairs, cold (empty feature cache) and cached;
- the TRACE rule judge + fusion, and the SpeechParaling offline comparator, over the pairs;
- two full TRACE runs over the same audio: the second must cost < 10 % of the first, because
  the blueprints are read back from the feature cache (the exit status is 1 otherwise).

    python benchmarks/bench_pairwise.py [--clips 40] [--pairs 500] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from speech_drame.features.blueprint import extract_blueprints
from speech_drame.features.cache import FeatureCache
from speech_drame.protocols.demo_audio import Rendering, render_clips
from speech_drame.protocols.paraling.demo import demo_queries
from speech_drame.protocols.paraling.judges import OfflineComparator, Response
from speech_drame.protocols.paraling.rule_scorer import rule_aspect_scores
from speech_drame.protocols.trace.demo import REQUESTS
from speech_drame.protocols.trace.judges import RuleJudge
from speech_drame.protocols.trace.labels import fuse_labels
from speech_drame.protocols.trace.protocol import Pair, pair_blueprints, run_trace

PRESETS = ("neutral", "lively", "flat", "subdued", "rushed")


def make_clips(folder: Path, n: int) -> list[str]:
    texts = [t for _, right, wrong in REQUESTS for t in (right, wrong)]
    combos = [(t, p, snr) for snr in (None, 5.0) for p in PRESETS for t in texts]
    if n > len(combos):
        raise SystemExit(f"--clips at most {len(combos)}")
    paths = [folder / f"clip{i:03d}.wav" for i in range(n)]
    render_clips([Rendering.plain(*combos[i]) for i in range(n)], paths)
    return [str(p) for p in paths]


def make_pairs(clips: list[str], n: int, seed: int) -> list[Pair]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a, b = rng.choice(len(clips), size=2, replace=False)
        request = REQUESTS[int(rng.integers(len(REQUESTS)))][0]
        out.append(Pair(f"p{i}", request, clips[a], clips[b]))
    return out


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results: dict[str, float | int] = {"clips": args.clips, "pairs": args.pairs}
    with tempfile.TemporaryDirectory(prefix="bench-pairwise-") as tmp:
        root = Path(tmp)
        clips, results["tts_seconds"] = timed(lambda: make_clips(root / "audio", args.clips))
        pairs = make_pairs(clips, args.pairs, args.seed)
        # warm the models so "cold" measures extraction, not model loading
        extract_blueprints(clips[:1], cache=None, progress=False)

        cache = root / "cache"
        (records, errors), cold = timed(lambda: pair_blueprints(pairs, cache))
        if errors:
            print(json.dumps(errors, indent=1), file=sys.stderr)
            return 2
        _, warm = timed(lambda: pair_blueprints(pairs, cache))
        results.update(
            extraction_cold_pairs_per_s=args.pairs / cold,
            extraction_cached_pairs_per_s=args.pairs / warm,
        )

        judge = RuleJudge()

        def rule_judge() -> None:
            for p in pairs:
                first = records[(p.audio_1, p.instruction)]
                second = records[(p.audio_2, p.instruction)]
                decisions, _ = judge.decide(p.instruction, first, second)
                fuse_labels({d: x.label for d, x in decisions.items()}, "content_first")

        _, t = timed(rule_judge)
        results["trace_rule_judge_pairs_per_s"] = args.pairs / t

        queries = [q for q in demo_queries() if q.task != "situational_adaptation"]
        batch = extract_blueprints(clips, cache=FeatureCache(cache), progress=False)
        bps = dict(zip(clips, batch.blueprints, strict=True))
        comparator = OfflineComparator(rule_aspect_scores)

        def paraling_judge() -> None:
            for i, p in enumerate(pairs):
                first, second = (
                    Response(p.audio_1, bps[p.audio_1]),
                    Response(p.audio_2, bps[p.audio_2]),
                )
                comparator.compare(queries[i % len(queries)], first, second)

        _, t = timed(paraling_judge)
        results["paraling_offline_comparator_pairs_per_s"] = args.pairs / t

        fresh = root / "cache2"
        _, first_run = timed(lambda: run_trace(pairs, judge, cache=fresh))
        second_cache = FeatureCache(fresh)
        _, second_run = timed(lambda: run_trace(pairs, judge, cache=second_cache))
        results.update(
            trace_run_cold_seconds=first_run,
            trace_run_cached_seconds=second_run,
            cached_over_cold=second_run / first_run,
            cache_misses_second_run=second_cache.misses,
        )
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in results.items()},
                     indent=1))  # fmt: skip
    ok = results["cached_over_cold"] < 0.10 and results["cache_misses_second_run"] == 0
    print(f"second run over the same audio: {100 * results['cached_over_cold']:.1f} % of the "
          f"first ({'OK' if ok else 'FAILS'} the < 10 % target)")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
