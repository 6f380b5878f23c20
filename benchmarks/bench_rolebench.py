"""RoleBench throughput: clips/s with --workers 1 and 2, and the cost of a resumed run.

Generates SYSTEMS x CLIPS unique response clips (LibriVox speech, 3 s, each with its own noise
and gain so nothing is shared through the feature cache), trains a tiny LiteScorer on a few
separate clips (the scorer is not what is measured), then times, each with a cold feature cache:

- a full run with ``workers=1`` and one with ``workers=2`` (planning, hashing, feature
  extraction, scoring, appending rows);
- a resumed run over the finished ``workers=1`` folder: what a rerun spends on work that is
  already done (hashing the responses, reading the results, finding nothing pending).

Models are loaded before timing; each run shows a progress bar (stderr). Usage::

    python benchmarks/bench_rolebench.py                 # 4 systems x 25 clips: a few minutes
    python benchmarks/bench_rolebench.py --full          # 8 systems x 250 clips (45+ minutes)
    python benchmarks/bench_rolebench.py --clips 6       # any other size
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from speech_drame.demo.real_speech import POCKETSPHINX_DIR  # noqa: E402

LIBRIVOX = POCKETSPHINX_DIR / "librivox"
SR = 16_000
QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"


def _clip(bases: list[np.ndarray], k: int, i: int, level: float) -> np.ndarray:
    rng = np.random.default_rng([k, i])
    x = bases[i % len(bases)][: 3 * SR]
    y = x + level * rng.standard_normal(len(x)).astype(np.float32)
    return (rng.uniform(0.3, 0.9) * y / np.abs(y).max()).astype(np.float32)


def generate(root: Path, systems: int, clips: int) -> tuple[Path, dict[str, str]]:
    bases = [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))]
    scenario_file = root / "scenarios.jsonl"
    scenario_file.write_text(
        "".join(json.dumps({"id": f"q{i:04d}", "question": QUESTION}) + "\n" for i in range(clips))
    )
    folders = {}
    for k in range(systems):
        folder = root / "systems" / f"sys{k}"
        folder.mkdir(parents=True)
        for i in range(clips):
            sf.write(folder / f"q{i:04d}.wav", _clip(bases, k, i, 0.01 + 0.02 * k), SR)
        folders[f"sys{k}"] = str(folder)
    return scenario_file, folders


def tiny_scorer(root: Path):
    """A LiteScorer trained on 4 clips that are not part of the benchmark (loads every model)."""
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.scorers.lite import TrainingOptions, train_lite_scorer

    bases = [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))]
    clips = [(_clip(bases, 99, i, 0.02 + 0.1 * (i % 2)), SR) for i in range(4)]
    batch = extract_blueprints(clips, [{"question": QUESTION}] * 4, root / "warm", progress=False)
    labels = {"audio_quality": [[5, 4], [2, 1], [5, 5], [1, 2]]}
    return train_lite_scorer(batch.blueprints, labels, "archetype", TrainingOptions(epochs=20))


def timed_run(
    scenarios, systems, out: Path, cache: Path, scorer, workers: int
) -> tuple[float, int]:
    from speech_drame import rolebench

    start = time.perf_counter()
    plan = rolebench.plan_work(scenarios, systems)
    summary = rolebench.run_shard(
        plan, out, scorer, rolebench.lite_scorer_id(scorer), workers=workers, cache=cache,
        progress=True,
    )  # fmt: skip
    return time.perf_counter() - start, summary.rows_written


DEFAULT_SIZE = (4, 25)  # systems, clips per system: about 2 minutes on 2 cores
FULL_SIZE = (8, 250)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--systems", type=int, default=DEFAULT_SIZE[0])
    parser.add_argument("--clips", type=int, default=DEFAULT_SIZE[1], help="clips per system")
    parser.add_argument(
        "--full", action="store_true", help=f"the full size: {FULL_SIZE[0]} systems x "
        f"{FULL_SIZE[1]} clips (overrides --systems/--clips)"
    )  # fmt: skip
    args = parser.parse_args()
    if args.full:
        args.systems, args.clips = FULL_SIZE
    from speech_drame import rolebench

    with tempfile.TemporaryDirectory(prefix="bench-rolebench-") as tmp:
        root = Path(tmp)
        print(f"generating {args.systems} x {args.clips} clips, training a tiny scorer ...",
              flush=True)  # fmt: skip
        scenario_file, systems = generate(root, args.systems, args.clips)
        scenarios = rolebench.load_scenario_file(scenario_file)
        scorer = tiny_scorer(root)
        n = args.systems * args.clips
        print(f"RoleBench benchmark: {args.systems} systems x {args.clips} clips = {n} clips "
              f"(3 s each), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
              flush=True)  # fmt: skip
        first = {}
        for workers in (1, 2):
            seconds, rows = timed_run(
                scenarios,
                systems,
                root / f"run{workers}",
                root / f"cache{workers}",
                scorer,
                workers,
            )
            assert rows == n, f"expected {n} rows, wrote {rows}"
            first[workers] = seconds
            print(f"workers={workers}: {seconds:8.1f} s  {n / seconds:6.2f} clips/s", flush=True)
        print(f"speed-up workers=2 vs 1: {first[1] / first[2]:.2f}x")
        seconds, rows = timed_run(scenarios, systems, root / "run1", root / "cache1", scorer, 1)
        assert rows == 0, f"the resumed run scored {rows} clips again"
        print(f"resumed run (all done): {seconds:.3f} s = "
              f"{100 * seconds / first[1]:.2f} % of the first workers=1 run (target < 5 %)")  # fmt: skip


if __name__ == "__main__":
    main()
