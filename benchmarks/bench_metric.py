"""Speed of the alignment table: 100,000 samples x 11 dimensions, with and without bootstrap.

Baseline, same run: what a user would write with scipy, `pearsonr` and `spearmanr` called
once per dimension, and a bootstrap loop that resamples and calls them again (the Hub's stock
`pearsonr` metric cannot be downloaded here). The baseline bootstrap is timed on a subset of
the resamples and extrapolated. Also printed: the time of going through
`evaluate.load("evaluate_metric/drame_metric").compute` beside the pure function.

References are means of 3-6 integer ratings with ~5% nulls (as in the release), predictions a
continuous score clipped to 1..5 (as an evaluator's expected score).

    python benchmarks/bench_metric.py [--samples 100000] [--resamples 1000] [--baseline-resamples 20]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

from speech_drame.metrics import alignment_table
from speech_drame.schema import REALISM_DIMENSIONS, SEMANTIC_MATCH

DIMS = [*REALISM_DIMENSIONS, SEMANTIC_MATCH]
REPO = Path(__file__).resolve().parents[1]


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = len(DIMS)
    ratings = rng.integers(1, 6, (n, d, 6)).astype(float)
    k = rng.integers(3, 7, (n, 1, 1))
    ratings[np.broadcast_to(np.arange(6) >= k, ratings.shape)] = np.nan  # 3-6 annotators
    ratings[rng.random(ratings.shape) < 0.05] = np.nan  # nulls
    count = np.count_nonzero(~np.isnan(ratings), axis=2)
    with np.errstate(invalid="ignore"):
        refs = np.nansum(ratings, axis=2) / count  # a sample without any rating stays NaN
    preds = np.clip(np.nan_to_num(refs, nan=3.0) + rng.normal(0, 0.8, refs.shape), 1, 5)
    return preds, refs


def best_of(repeats: int, *fns) -> list[float]:
    """Fastest time of each function, run alternately so that the machine's load hits all,
    after one untimed round (compiled-code loading, thread start, allocator warm-up)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [min(ts) for ts in times]


def scipy_table(preds: np.ndarray, refs: np.ndarray, rows: np.ndarray | None = None) -> None:
    for j in range(len(DIMS)):
        x, y = preds[:, j], refs[:, j]
        if rows is not None:
            x, y = x[rows], y[rows]
        keep = ~np.isnan(y)
        stats.pearsonr(x[keep], y[keep])
        stats.spearmanr(x[keep], y[keep])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-resamples", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from threadpoolctl import threadpool_info

    blas = ", ".join(f"{i['internal_api']} {i['num_threads']} threads" for i in threadpool_info())
    print(
        f"{args.samples:,} samples x {len(DIMS)} dimensions; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; BLAS: {blas}"
    )
    preds, refs = make_data(args.samples)

    table, base = best_of(
        args.repeats, lambda: alignment_table(preds, refs, DIMS), lambda: scipy_table(preds, refs)
    )
    print("\nfull table (Pearson, Spearman, Kendall tau-b, MAE, RMSE, counts; all dimensions)")
    print(f"  speech_drame.metrics.alignment_table   {table:8.3f} s")
    print(f"  scipy pearsonr + spearmanr per dim     {base:8.3f} s   -> {base / table:.1f}x faster")
    (serial,) = best_of(args.repeats, lambda: alignment_table(preds, refs, DIMS, workers=1))
    print(
        f"  alignment_table on one thread          {serial:8.3f} s   -> {base / serial:.1f}x faster"
    )

    import evaluate

    metric = evaluate.load(str(REPO / "evaluate_metric" / "drame_metric"))
    pred_list, ref_list = preds.tolist(), np.where(np.isnan(refs), None, refs).tolist()
    t0 = time.perf_counter()
    metric.compute(predictions=pred_list, references=ref_list, dimensions=DIMS)
    through = time.perf_counter() - t0
    t0 = time.perf_counter()
    alignment_table(pred_list, ref_list, DIMS)
    lists = time.perf_counter() - t0
    print(
        f"  evaluate.load(...).compute            {through:8.3f} s   (pure function on the same "
        f"Python lists {lists:.3f} s, on arrays {table:.3f} s: overhead {through - table:.2f} s)"
    )

    t0 = time.perf_counter()
    alignment_table(preds, refs, DIMS, bootstrap=args.resamples, seed=0)
    boot = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(args.baseline_resamples):
        scipy_table(preds, refs, rng.integers(0, args.samples, args.samples))
    per = (time.perf_counter() - t0) / args.baseline_resamples
    base_boot = per * args.resamples
    print(f"\nbootstrap, {args.resamples:,} resamples (table + 95% intervals of all but Kendall)")
    print(f"  speech_drame.metrics.alignment_table   {boot:8.1f} s")
    print(
        f"  scipy loop (timed on {args.baseline_resamples} resamples, extrapolated) "
        f"{base_boot:8.1f} s   -> {base_boot / boot:.1f}x faster"
    )


if __name__ == "__main__":
    main()
