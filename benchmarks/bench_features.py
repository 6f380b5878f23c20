"""Sharded feature extraction speed: clips/s of `speech-drame features` with 1 and 2 processes.

    python benchmarks/bench_features.py [--clips 32] [--dataset speech-drame] [--config realism]
                                        [--split test] [--processes 1 2]

Takes the first ``--clips`` rows of one split of a built dataset (the demo dataset at the
repository root, else the official samples built into a temporary folder), then fills a fresh
temporary feature cache once per process count: 1 process is ``python -m speech_drame.cli
features``, N > 1 is ``accelerate launch --multi_gpu --num_processes N`` (CPU ranks joined by a
gloo group). Prints, per run, the distinct clips computed, the wall time (process start, model
loading and all) and the command's own time (its slowest rank, reading the rows included), with
clips/s and the speedup over the first run for each. Each run checks that every distinct clip was computed exactly once.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("SPEECH_DRAME_MODELS", str(REPO / ".cache" / "models"))
TOTAL = re.compile(r"features (?:all \d+|0/1): (\d+) clip\(s\) of (\d+) row\(s\): (\d+) computed.*"
                   r"\(([\d.]+) s\)")  # fmt: skip


def subset(dataset: Path, config: str, split: str, n: int, out: Path) -> Path:
    """A copy of ``dataset`` whose ``config/split`` holds only its first ``n`` rows."""
    import pyarrow.parquet as pq

    from speech_drame.data.reader import open_split

    shutil.copytree(dataset, out, ignore=shutil.ignore_patterns("*.parquet"))
    files = set(open_split(dataset, config, split).files)
    for path in dataset.rglob("*.parquet"):
        target = out / path.relative_to(dataset)
        if path.resolve() in files:
            rows = pq.read_table(path).slice(0, n) if n > 0 else pq.read_table(path)
            n -= rows.num_rows
            pq.write_table(rows, target)
        else:
            target.symlink_to(path)
    return out


def official_dataset(tmp: Path) -> Path:
    from speech_drame.data.build import build_dataset

    build_dataset(
        REPO / "official_samples", tmp / "official", progress=False, license_id="apache-2.0"
    )
    return tmp / "official"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(processes: int, dataset: Path, config: str, split: str, cache: Path) -> dict[str, float]:
    """One `speech-drame features` run into the empty ``cache``: its counts and times."""
    command = ["-m", "speech_drame.cli", "features", "--dataset", str(dataset), "--config",
               config, "--splits", split, "--cache", str(cache), "--quiet"]  # fmt: skip
    if processes == 1:
        command = [sys.executable, *command]
    else:
        accelerate = Path(sys.executable).with_name("accelerate")
        command = [str(accelerate), "launch", "--multi_gpu", "--num_processes", str(processes),
                   "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                   "--main_process_port", str(_free_port()), *command]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    match = TOTAL.search(done.stdout)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"{processes} process(es) failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    clips, rows, computed, seconds = int(match[1]), int(match[2]), int(match[3]), float(match[4])
    if computed != clips:
        raise SystemExit(f"{processes} process(es): {computed} computed of {clips} clips")
    return {"clips": clips, "rows": rows, "wall": wall, "seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=32, help="rows of the split (0: all)")
    parser.add_argument("--dataset", type=Path, default=REPO / "speech-drame")
    parser.add_argument("--config", default="realism")
    parser.add_argument("--split", default="test")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        source = args.dataset
        if not (source / "README.md").is_file():
            print(f"{source} not built: using the official samples", file=sys.stderr)
            source, args.config, args.split = official_dataset(tmp), "archetype", "test"
        data = subset(source, args.config, args.split, args.clips, tmp / "subset")
        print(f"{source} {args.config}/{args.split}, first {args.clips or 'all'} rows; "
              f"{os.cpu_count()} CPUs")  # fmt: skip
        print(f"{'processes':>9} {'clips':>6} {'wall s':>8} {'clips/s':>8} {'speedup':>8} "
              f"{'command s':>10} {'clips/s':>8} {'speedup':>8}")  # fmt: skip
        first: tuple[float, float] | None = None
        for n in args.processes:
            got = run(n, data, args.config, args.split, tmp / f"cache{n}")
            rates = (got["clips"] / got["wall"], got["clips"] / got["seconds"])
            first = first or rates
            print(f"{n:>9} {got['clips']:>6} {got['wall']:>8.1f} {rates[0]:>8.2f} "
                  f"{rates[0] / first[0]:>7.2f}x {got['seconds']:>10.1f} {rates[1]:>8.2f} "
                  f"{rates[1] / first[1]:>7.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
