"""Dataset build speed and memory: clips/s and peak RSS for generated releases of 2,000 and 8,000 clips.

Each build runs in its own process so that its peak RSS is its own. Baseline, same run: the
in-memory way a user might write it (all rows in a list -> `datasets.Dataset.from_list` ->
`to_parquet`), whose memory grows with the corpus.

    python benchmarks/bench_build.py [--sizes 2000 8000] [--seconds 2.0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

PREFIX = "speech_drame/finetuning/data"
DIMS = [
    "pitch_variation", "rhythmic_naturalness", "stress_and_emphasis", "emotion_accuracy",
    "emotion_intensity_control", "dynamic_range", "voice_identity_matching", "trait_embodiment",
    "local_story_fit", "global_story_coherence",
]  # fmt: skip


def make_release(root: Path, n: int, seconds: float, seed: int = 0) -> None:
    """A realism release of n distinct 16 kHz clips (3-6 annotators each), split 80/20."""
    rng = np.random.default_rng(seed)
    folder = root / "realism_data"
    folder.mkdir(parents=True)
    t = np.arange(int(seconds * 16_000)) / 16_000
    lines = {"train": [], "test": []}
    for i in range(n):
        rid = f"bench_{i:06d}"
        x = 0.2 * np.sin(2 * np.pi * rng.uniform(90, 300) * t) + 0.01 * rng.standard_normal(t.size)
        sf.write(folder / f"{rid}.wav", x.astype("float32"), 16_000, subtype="PCM_16")
        k = int(rng.integers(3, 7))
        ann = {d: rng.integers(1, 6, k).tolist() for d in DIMS}
        ann |= {
            "annotator_confidence_rating": rng.integers(1, 6, k).tolist(),
            "comments": [""] * k,
            "multi-speaker_influence": [False] * k,
            "observed_character_style_dimensions": ["Calm"] * k,
            "sufficient": [True] * k,
            "contradictory": [False] * k,
            "prmopt_quality": ["valid"] * k,
        }
        record = {
            "id": rid, "local_scene": "A quiet scene.", "char_age": "Adult", "char_style": "Calm",
            "char_profile": "A calm narrator.", "transcript": "Hello there.", "annotations": ann,
            "wav_path": f"{PREFIX}/realism_data/{rid}.wav", "data_source": "benchmark",
        }  # fmt: skip
        lines["train" if i % 5 else "test"].append(json.dumps(record))
    for split, rows in lines.items():
        (folder / f"{split}.jsonl").write_text("\n".join(rows) + "\n")


def baseline_build(source: Path, out: Path) -> None:
    """All rows in memory, then one `Dataset.from_list(...).to_parquet` per split."""
    from datasets import Dataset

    from speech_drame.data.features import config_features, record_row
    from speech_drame.data.release import find_jsonl_files, iter_lines, resolve_wav_path
    from speech_drame.schema import validate_record

    features = config_features("realism")
    out.mkdir(parents=True)
    for file in find_jsonl_files(source):
        rows = []
        for line in iter_lines(file):
            rec = validate_record(line.record, file.config, line.where)
            wav = resolve_wav_path(source, file.path.parent, rec.fields["wav_path"], line.where)
            data = wav.read_bytes()
            seconds = sf.info(wav).duration
            rows.append(record_row(rec, data, wav.name, seconds))
        Dataset.from_list(rows, features=features).to_parquet(str(out / f"{file.split}.parquet"))


def child(mode: str, source: str, out: str) -> None:
    if mode == "ours":
        from speech_drame.data.build import build_dataset

        build_dataset(source, out, progress=False, license_id="cc0-1.0")
    else:
        baseline_build(Path(source), Path(out))


def measure(mode: str, source: Path, out: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one build in a fresh process."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", mode, str(source), str(out)])
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{mode} build failed with status {status}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument("--seconds", type=float, default=2.0, help="clip length")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    print(f"cpus: {os.cpu_count()}, clip length {args.seconds} s (16 kHz PCM_16)")
    print(f"{'clips':>6s} {'builder':>9s} {'seconds':>8s} {'clips/s':>8s} {'peak RSS MB':>12s}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            source = Path(tmp) / f"release_{n}"
            make_release(source, n, args.seconds)
            results = {}
            for mode in ("ours", "baseline"):
                seconds, rss = measure(mode, source, Path(tmp) / f"out_{mode}_{n}")
                results[mode] = (seconds, rss)
                print(f"{n:6d} {mode:>9s} {seconds:8.1f} {n / seconds:8.0f} {rss:12.0f}")
            ours, base = results["ours"], results["baseline"]
            print(
                f"{'':6s} {'ratio':>9s} speed x{base[0] / ours[0]:.2f} vs baseline, RSS x{ours[1] / base[1]:.2f}"
            )
            shutil.rmtree(source)


if __name__ == "__main__":
    main()
