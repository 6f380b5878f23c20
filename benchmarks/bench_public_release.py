"""The public EvalBench's size, annotation records only: build, then read the ratings.

A release shaped like the Hub's (JSON arrays, the authors' wav_path prefix, no audio) of about the
public size (default 15,000 realism and 8,000 archetype records) is built, and one split's ratings
are read the way `agreement` and `table` read them (``open_split(...).rows(["id", "annotations"])``)
against the baseline of ``datasets.load_dataset(folder, config, split=...)`` with a cold cache,
each in a fresh process (its own peak RSS). Every step is timed in the same run.

    python benchmarks/bench_public_release.py [--realism 15000] [--archetype 8000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
PREFIX = "speech_drame/finetuning/data"
REALISM = [
    "pitch_variation", "rhythmic_naturalness", "stress_and_emphasis", "emotion_accuracy",
    "emotion_intensity_control", "dynamic_range", "voice_identity_matching", "trait_embodiment",
    "local_story_fit", "global_story_coherence",
]  # fmt: skip
ARCHETYPE = ["audio_quality", "human_likeness", "appropriateness", "confidence"]


def _record(config: str, rid: str, rng: random.Random) -> dict:
    k = rng.randint(3, 6)
    if config == "realism":
        ann = {d: [rng.randint(1, 5) for _ in range(k)] for d in REALISM}
        ann["dynamic_range"] = [v if v > 2 else "N/A" for v in ann["dynamic_range"]]
        ann |= {"annotator_confidence_rating": [4] * k, "comments": [""] * k,
                "multi-speaker_influence": [False] * k, "sufficient": [True] * k,
                "observed_character_style_dimensions": ["Calm"] * k, "contradictory": [False] * k,
                "prmopt_quality": ["valid"] * k}  # fmt: skip
        return {"id": rid, "local_scene": "A quiet scene.", "char_age": "Adult",
                "char_style": "Calm", "char_profile": "A calm narrator.",
                "transcript": "Hello there.", "annotations": ann, "data_source": "benchmark",
                "wav_path": f"{PREFIX}/realism_data/{rid}.wav"}  # fmt: skip
    passed = [rng.random() > 0.2 for _ in range(k)]
    ann = {"content_pass": passed}
    ann |= {d: [rng.randint(1, 5) if p else None for p in passed] for d in ARCHETYPE}
    ann |= {f"{d}_comment": [""] * k for d in ARCHETYPE[:3]}
    return {"id": f"{rid}.wav", "question": "You are a guide. You say:", "annotations": ann,
            "wav_path": f"{PREFIX}/archetype_data/{rid}.wav"}  # fmt: skip


def make_release(root: Path, n_realism: int, n_archetype: int, seed: int = 0) -> None:
    """JSON-array record files of both configs and a card with the licence; no audio."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n", encoding="utf-8")
    for config, n in (("realism", n_realism), ("archetype", n_archetype)):
        (root / f"{config}_data").mkdir()
        for split, share in (("train", 0.7), ("test", 0.2), ("test_real", 0.1)):
            if config == "archetype" and split == "test_real":
                continue
            rows = [
                _record(config, f"{config}_{split}_{i:06d}", rng) for i in range(int(n * share))
            ]
            (root / f"{config}_data" / f"{split}.json").write_text(json.dumps(rows, indent=1))


def child(mode: str, *args: str) -> None:
    """One step; prints the seconds of its work after the imports."""
    if mode == "build":
        from speech_drame.data.build import build_dataset

        start = time.perf_counter()
        build_dataset(args[0], args[1], progress=False)
    elif mode == "reader":
        from speech_drame.data.reader import open_split

        start = time.perf_counter()
        rows = [
            r["annotations"]
            for r in open_split(args[0], "realism", "train").rows(["id", "annotations"])
        ]
        assert rows
    else:
        from datasets import load_dataset

        start = time.perf_counter()
        ds = load_dataset(args[0], "realism", split="train", cache_dir=args[1])
        rows = ds.select_columns(["id", "annotations"])["annotations"]
        assert rows
    print(time.perf_counter() - start)


def measure(*args: str) -> tuple[float, float, float]:
    """(seconds, seconds of the work after the imports, peak RSS in MB) of one step in a fresh
    process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{args[0]} failed with status {status}")
    return time.perf_counter() - start, float(out.split()[-1]), usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--realism", type=int, default=15_000)
    parser.add_argument("--archetype", type=int, default=8_000)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    with tempfile.TemporaryDirectory() as tmp:
        release, built = Path(tmp) / "evalbench_raw", Path(tmp) / "evalbench"
        make_release(release, args.realism, args.archetype)
        n = args.realism + args.archetype
        print(
            f"cpus: {os.cpu_count()}; {n} records ({args.realism} realism, {args.archetype} archetype)"
        )
        seconds, work, rss = measure("build", str(release), str(built))
        print(f"build (annotation-only): {seconds:.1f} s ({work:.1f} s after imports), "
              f"{n / work:.0f} records/s, peak RSS {rss:.0f} MB")  # fmt: skip
        report = json.loads((built / "build_report.json").read_text())
        print(f"  rows: {report['rows']}; without audio: {len(report['missing_audio'])}")
        train = int(args.realism * 0.7)
        ours = measure("reader", str(built))
        base = measure("datasets", str(built), str(Path(tmp) / "datasets-cache"))
        print(f"read realism/train ratings ({train} rows): whole process / after its imports / "
              "peak RSS (the reader imports pyarrow inside its step)")  # fmt: skip
        print(f"  open_split(...).rows:   {ours[0]:.2f} s / {ours[1]:.2f} s / {ours[2]:.0f} MB")
        print(f"  datasets.load_dataset:  {base[0]:.2f} s / {base[1]:.2f} s / {base[2]:.0f} MB "
              "(cold cache: an arrow copy written first)")  # fmt: skip
        print(f"  whole process: x{base[0] / ours[0]:.2f} faster; RSS x{ours[2] / base[2]:.2f}")


if __name__ == "__main__":
    main()
