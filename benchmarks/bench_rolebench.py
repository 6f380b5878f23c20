"""RoleBench throughput: clips/s of the LiteScorer and the tiny DRAME-Eval, batch 1 vs 8.

Generates SYSTEMS x CLIPS unique response clips (LibriVox speech, 3 s, each with its own noise
and gain so nothing is shared through the feature cache), trains a tiny LiteScorer on a few
separate clips and builds the tiny random Qwen2-Audio DRAME-Eval (neither is what is measured:
the pipeline is), then times full runs (planning, hashing, reading and scoring, appending
rows) through the scorer contract, each into a fresh folder (and, for the LiteScorer, with a
cold feature cache):

- each scorer with batch 1 (one clip per ``score`` call) and batch 8 (eight clips per call,
  DRAME-Eval's forward batch), printed as clips/s and as a ratio to that scorer's batch-1 run;
- a resumed run over a finished folder: what a rerun spends on work that is already done
  (hashing the responses, reading the results, finding nothing pending).

Models are loaded (and DRAME-Eval run once) before timing; the LiteScorer extracts features with ``--workers`` threads.
Each run shows a progress bar (stderr). Usage::

    python benchmarks/bench_rolebench.py                 # 4 systems x 10 clips: a few minutes
    python benchmarks/bench_rolebench.py --full          # 8 systems x 250 clips (hours)
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


def tiny_lite(root: Path):
    """A LiteScorer trained on 4 clips that are not part of the benchmark (loads every model)."""
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.scorers.lite import TrainingOptions, train_lite_model

    bases = [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))]
    clips = [(_clip(bases, 99, i, 0.02 + 0.1 * (i % 2)), SR) for i in range(4)]
    batch = extract_blueprints(clips, [{"question": QUESTION}] * 4, root / "warm", progress=False)
    labels = {"audio_quality": [[5, 4], [2, 1], [5, 5], [1, 2]]}
    return train_lite_model(batch.blueprints, labels, "archetype", TrainingOptions(epochs=20))


def scorer_for(kind: str, batch: int, root: Path, workers: int, models: dict):
    """A fresh :class:`~speech_drame.scorers.base.Scorer` of ``kind`` with ``batch``."""
    if kind == "lite":
        from speech_drame.scorers.lite import LiteScorer

        cache = root / f"cache-{kind}-{batch}"  # cold: every run extracts its features
        return LiteScorer(models["lite"], cache=cache, workers=workers, batch_size=batch)
    from speech_drame.scorers.drame_eval import DrameEvalScorer

    model, processor = models["drame-eval"]
    return DrameEvalScorer(model, processor, "archetype", batch_size=batch)


def timed_run(scenarios, systems, out: Path, scorer, chunk: int) -> tuple[float, int]:
    from speech_drame.rolebench import run

    start = time.perf_counter()
    plan = run.plan_work(scenarios, systems)
    summary = run.run_shard(plan, out, scorer, chunk=chunk, progress=True)
    seconds = time.perf_counter() - start
    assert summary.failed_now == 0, f"{summary.failed_now} clips failed"
    return seconds, summary.rows_written


DEFAULT_SIZE = (4, 10)  # systems, clips per system: a few minutes on 2 cores
FULL_SIZE = (8, 250)
BATCHES = (1, 8)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--systems", type=int, default=DEFAULT_SIZE[0])
    parser.add_argument("--clips", type=int, default=DEFAULT_SIZE[1], help="clips per system")
    parser.add_argument("--workers", type=int, default=2, help="LiteScorer feature threads")
    parser.add_argument(
        "--full", action="store_true", help=f"the full size: {FULL_SIZE[0]} systems x "
        f"{FULL_SIZE[1]} clips (overrides --systems/--clips)"
    )  # fmt: skip
    args = parser.parse_args()
    if args.full:
        args.systems, args.clips = FULL_SIZE
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.rolebench import scenarios as scenario_sets
    from speech_drame.scorers.base import ClipInput

    with tempfile.TemporaryDirectory(prefix="bench-rolebench-") as tmp:
        root = Path(tmp)
        print(f"generating {args.systems} x {args.clips} clips, training a tiny LiteScorer, "
              "building the tiny DRAME-Eval ...", flush=True)  # fmt: skip
        scenario_file, systems = generate(root, args.systems, args.clips)
        scenarios = scenario_sets.load_scenario_file(scenario_file)
        models = {"lite": tiny_lite(root), "drame-eval": build_tiny(seed=0)}
        warm = [ClipInput("warm", str(root / "warm.wav"), {"question": QUESTION})]
        sf.write(warm[0].audio, _clip([np.zeros(3 * SR, np.float32) + 0.1], 98, 0, 0.05), SR)
        scorer_for("drame-eval", 1, root, args.workers, models).score(warm)  # first forward
        n = args.systems * args.clips
        print(f"RoleBench benchmark: {args.systems} systems x {args.clips} clips = {n} clips "
              f"(3 s each), {os.cpu_count()} CPUs, LiteScorer workers={args.workers}, "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        rates: dict[tuple[str, int], float] = {}
        for kind in ("lite", "drame-eval"):
            for batch in BATCHES:
                scorer = scorer_for(kind, batch, root, args.workers, models)
                seconds, rows = timed_run(
                    scenarios, systems, root / f"run-{kind}-{batch}", scorer, chunk=batch
                )
                assert rows == n, f"expected {n} rows, wrote {rows}"
                rates[kind, batch] = n / seconds
                ratio = rates[kind, batch] / rates[kind, BATCHES[0]]
                print(f"{kind:10s} batch={batch}: {seconds:8.1f} s  {rates[kind, batch]:6.2f} "
                      f"clips/s  {ratio:5.2f}x batch {BATCHES[0]}", flush=True)  # fmt: skip
        first = n / rates["lite", BATCHES[0]]
        scorer = scorer_for("lite", BATCHES[0], root, args.workers, models)
        seconds, rows = timed_run(scenarios, systems, root / f"run-lite-{BATCHES[0]}", scorer, 1)
        assert rows == 0, f"the resumed run scored {rows} clips again"
        print(f"resumed run (all done): {seconds:.3f} s = "
              f"{100 * seconds / first:.2f} % of the first LiteScorer batch-1 run "
              "(target < 5 %)")  # fmt: skip


if __name__ == "__main__":
    main()
