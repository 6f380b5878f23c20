"""Peak memory of train-lite and DRAME-Eval scoring for 500 vs 2,000 clips, streamed vs all in memory.

    python benchmarks/bench_memory.py [--sizes 500 2000] [--more 6000] [--epochs 5]
                                      [--batch-size 32]

Every (path, size) runs in its own subprocess, which reports its peak resident set size
(``VmHWM`` from /proc; ``ru_maxrss`` would not do: Linux carries it over from the forking
parent, which has loaded the models to prepare the data). The parent prints the figures, the
2000/500 ratio and the growth per 1,000 clips, for the streamed code and for the old
all-in-memory path rebuilt here as the baseline; ``--more N`` also runs the streamed
train-lite alone on N clips, to show where its curve goes beyond 2,000.

Data (made once, in a temporary folder): real read speech from Debian's pocketsphinx-testdata
(LibriVox). Eight base recordings (one or two LibriVox clips joined, 3-14 s) are repeated with
a different gain per clip, so every clip is distinct audio (its own bytes, samples and
feature-cache key) while only eight need the slow feature extractors. An archetype dataset
folder (parquet with the audio bytes embedded, 90 % train / 10 % test, three simulated
annotators) is built for each size.

What each path measures:

* ``train-lite``: :func:`speech_drame.scorers.lite.training.train_and_evaluate` (read the
  parquet, decode, hash, look up the features, assemble blueprints, train, evaluate, save)
  with a warm feature cache: each clip's cache entries are its base recording's features,
  written under the clip's own key. The cache key is the hash of the decoded samples, so the
  cache does not hide decoding: every clip is still read, decoded and hashed. What it hides is
  the extractors' cost: their models (Whisper, DNSMOS, resemblyzer, silero-vad; a fixed few
  hundred MB, loaded once, the same for 500 or 2,000 clips) are never loaded, and their
  per-clip working memory (freed after each clip) never arises. The baseline is the code as it
  was: every split's encoded audio read into a list (non-streaming ``load_dataset``), every
  clip decoded before extraction.
* ``drame-eval``: ``speech-drame score --scorer drame-eval:...``'s loop
  (:func:`speech_drame.commands.score.score_with_drame_eval`) with the tiny random Qwen2-Audio
  and an untrained LoRA adapter on the same WAV files. Baseline: every file decoded before
  scoring, as the command did.

What stays and grows with the clips in the streamed paths is the per-clip result (a blueprint
and its labels, about 20 KB; a score record), which the "growth per 1,000 clips" lines show.
The streamed train-lite also peaks somewhat higher the more parquet row groups it has read
until the allocators' free lists settle (Arrow's and the C heap's: a plateau, not a slope).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SR = 16_000
N_BASE = 8
QUESTION = "You are a narrator of a Regency novel about the Dashwood family. You say:"
DIMS = ("audio_quality", "human_likeness", "appropriateness")


# -- data ----------------------------------------------------------------------------------


def base_recordings(seed: int = 0) -> list[np.ndarray]:
    from speech_drame.audio import load_audio
    from speech_drame.demo.real_speech import POCKETSPHINX_DIR

    files = sorted((POCKETSPHINX_DIR / "librivox").glob("*.wav"))
    if not files:
        sys.exit("no LibriVox clips: apt-get install pocketsphinx-testdata")
    speech = [load_audio(p).samples for p in files]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_BASE):
        parts = rng.choice(len(speech), size=int(rng.integers(1, 3)), replace=False)
        out.append(np.concatenate([speech[i] for i in parts]))
    return out


def record(rid: str, rng: np.random.Generator) -> dict:
    scores = {d: rng.integers(1, 6, 3).tolist() for d in DIMS}
    comments = {f"{d}_comment": [""] * 3 for d in DIMS}
    return {
        "id": rid,
        "question": QUESTION,
        "annotations": {
            "content_pass": (rng.random(3) < 0.8).tolist(),
            **scores,
            "confidence": rng.integers(1, 4, 3).tolist(),
            **comments,
        },
        "wav_path": f"speech_drame/finetuning/data/archetype_data/{rid}.wav",
    }


def make_clips(root: Path, n: int, bases: list[np.ndarray]) -> list[Path]:
    """n distinct 16-bit WAV files: base ``i % 8`` at a gain of its own."""
    import soundfile as sf

    folder = root / "wavs"
    folder.mkdir(parents=True)
    paths = []
    for i in range(n):
        gain = 0.3 + 0.6 * i / n
        path = folder / f"clip_{i:05d}.wav"
        sf.write(path, bases[i % N_BASE] * gain / np.abs(bases[i % N_BASE]).max(), SR)
        paths.append(path)
    return paths


def make_dataset(root: Path, clips: list[Path], seed: int = 0) -> Path:
    """A Hub-ready archetype folder of ``clips`` (90 % train, 10 % test)."""
    from speech_drame.data.build import build_dataset

    rng = np.random.default_rng(seed)
    release = root / "release" / "archetype_data"
    release.mkdir(parents=True)
    lines: dict[str, list[str]] = {"train": [], "test": []}
    for i, path in enumerate(clips):
        split = "test" if i % 10 == 9 else "train"
        rid = path.stem
        os.link(path, release / f"{rid}.wav")
        lines[split].append(json.dumps(record(rid, rng)))
    for split, rows in lines.items():
        (release / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    build_dataset(root / "release", root / "speech-drame", progress=False, license_id="cc0-1.0")
    return root / "speech-drame"


def warm_cache(cache_dir: Path, clips: list[Path], bases: list[np.ndarray]) -> None:
    """Every clip's cache entries = its base recording's features, under the clip's own key."""
    from speech_drame.audio import SCORED_SECONDS, load_audio
    from speech_drame.features import text
    from speech_drame.features.blueprint import EXTRACTORS, audio_features
    from speech_drame.features.cache import FeatureCache, audio_key

    cache = FeatureCache(cache_dir)
    feats = [audio_features(load_audio((b, SR)), None) for b in bases]
    transcripts = [f["asr"].text for f in feats]
    text.context_similarities(transcripts, [{"question": QUESTION}] * N_BASE, cache)
    for i, path in enumerate(clips):
        audio = load_audio(path, max_seconds=SCORED_SECONDS)
        key = audio_key(audio.samples, audio.sample_rate)
        for name, (version, _, _) in EXTRACTORS.items():
            cache.put(name, version, key, asdict(feats[i % N_BASE][name]))


def make_evaluator(folder: Path) -> Path:
    """An (untrained) DRAME-Eval folder: tiny base, fresh LoRA adapter, processor."""
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.prompts import scored_dimensions
    from speech_drame.scorers.drame_eval import EvaluatorInfo

    model, processor = build_tiny(seed=0)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    EvaluatorInfo("archetype", list(scored_dimensions("archetype")), "tiny").save(folder)
    return folder


# -- the measured work (one subprocess each) ------------------------------------------------


def train_lite_streamed(dataset: Path, out: Path, cache: Path, epochs: int, batch: int) -> int:
    from speech_drame.scorers.lite import TrainingOptions
    from speech_drame.scorers.lite.training import train_and_evaluate

    reports = train_and_evaluate(
        dataset, out, ["archetype"], TrainingOptions(epochs=epochs), cache,
        progress=False, batch_size=batch,
    )  # fmt: skip
    return reports["archetype"][0].n_scored


def train_lite_all_in_memory(dataset: Path, out: Path, cache: Path, epochs: int, _: int) -> int:
    """The pre-streaming train-lite: each split's encoded audio in a list, all decoded first."""
    import datasets

    from speech_drame.audio import SCORED_SECONDS, load_audio
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.metrics import alignment_table
    from speech_drame.schema import context_from_row
    from speech_drame.scorers.lite import TrainingOptions, train_lite_model
    from speech_drame.scorers.lite.training import ExtractedSplit

    def split_data(split: str) -> ExtractedSplit:
        ds = datasets.load_dataset(str(dataset), "archetype", split=split)
        ds = ds.cast_column("audio", datasets.Audio(decode=False))
        keys = [*DIMS, "content_pass"]
        ids, sources, contexts, labels = [], [], [], {k: [] for k in keys}
        for row in ds:
            ids.append(row["id"])
            sources.append(row["audio"]["bytes"])
            contexts.append(context_from_row(row, "archetype", row["id"]))
            for k in keys:
                labels[k].append(list(row["annotations"][k]))
        audios = [load_audio(s, max_seconds=SCORED_SECONDS) for s in sources]
        batch = extract_blueprints(audios, contexts, cache, progress=False, batch_size=len(audios))
        ok = [i for i, b in enumerate(batch.blueprints) if b is not None]
        return ExtractedSplit(
            "archetype",
            split,
            [ids[i] for i in ok],
            [batch.blueprints[i] for i in ok],
            {k: [v[i] for i in ok] for k, v in labels.items()},
            {ids[i]: why for i, why in batch.errors.items()},
        )

    train = split_data("train")
    scorer = train_lite_model(
        train.blueprints, train.labels, "archetype", TrainingOptions(epochs=epochs)
    )
    test = split_data("test")
    scored = scorer.score_blueprints(test.blueprints)
    keys = [*DIMS, "content_pass"]
    preds = [[s.scores[d] for d in DIMS] + [s.content_pass] for s in scored]
    alignment_table(preds, [[test.labels[k][i] for k in keys] for i in range(len(scored))], keys)
    scorer.save(out / "archetype")
    return len(scored)


def drame_eval_streamed(files: list[str], evaluator: Path) -> int:
    from speech_drame.scorers.base import ClipInput
    from speech_drame.scorers.specs import load_scorer

    scorer = load_scorer(f"drame-eval:{evaluator}", "archetype")
    results = scorer.score(ClipInput(f, f, {"question": QUESTION}) for f in files)
    return sum(r.ok for r in results)


def drame_eval_all_in_memory(files: list[str], evaluator: Path) -> int:
    """The pre-streaming ``score --scorer drame-eval:``: every file decoded before scoring."""
    from speech_drame.scorers.base import ClipInput
    from speech_drame.scorers.drame_eval import DrameEvalScorer, clip_from_input

    scorer = DrameEvalScorer.from_pretrained(str(evaluator))
    loaded = [clip_from_input(ClipInput(p, p, {"question": QUESTION})) for p in files]
    return sum(r.ok for r in scorer.score_clips(loaded))


def status_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process from /proc, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def worker(args: argparse.Namespace) -> None:
    import torch  # noqa: F401  (imported before the "start" figure: the same for every run)

    from speech_drame.commands import score  # noqa: F401
    from speech_drame.scorers import drame_eval  # noqa: F401
    from speech_drame.scorers.lite import training  # noqa: F401

    data = Path(args.data)
    start_rss = status_mb("VmRSS")
    started = time.perf_counter()
    if args.worker.startswith("train-lite"):
        fn = train_lite_streamed if args.worker.endswith("streamed") else train_lite_all_in_memory
        out = Path(tempfile.mkdtemp(dir=data))
        done = fn(
            data / f"n{args.n}" / "speech-drame", out, data / "cache", args.epochs, args.batch_size
        )
    else:
        fn = drame_eval_streamed if args.worker.endswith("streamed") else drame_eval_all_in_memory
        files = sorted(str(p) for p in (data / "wavs").glob("*.wav"))[: args.n]
        done = fn(files, data / "evaluator")
    peak = status_mb("VmHWM")
    seconds = time.perf_counter() - started
    print(json.dumps({"start_mb": start_rss, "peak_mb": peak, "s": seconds, "done": done}))


# -- driver ----------------------------------------------------------------------------------


def run_worker(kind: str, n: int, data: Path, args: argparse.Namespace) -> dict:
    env = {**os.environ, "HF_DATASETS_CACHE": str(data / "hf-datasets")}
    cmd = [sys.executable, __file__, "--worker", kind, "--n", str(n), "--data", str(data),
           "--epochs", str(args.epochs), "--batch-size", str(args.batch_size)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{kind} n={n} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(title: str, kinds: tuple[str, str], sizes: list[int], data, args, more=None) -> None:
    """Run both paths at each size (and the streamed one alone at ``more``) and print them."""
    print(f"\n== {title} ==")
    print(f"{'clips':>6} {'path':<16} {'start RSS':>10} {'peak RSS':>10} {'time':>8} {'done':>6}")
    peaks: dict[str, dict[int, float]] = {k: {} for k in kinds}
    runs = [(n, kind) for n in sizes for kind in kinds] + ([(more, kinds[0])] if more else [])
    for n, kind in runs:
        r = run_worker(kind, n, data, args)
        peaks[kind][n] = r["peak_mb"]
        print(
            f"{n:>6} {kind.split(':')[1]:<16} {r['start_mb']:>7.0f} MB {r['peak_mb']:>7.0f} MB "
            f"{r['s']:>7.1f}s {r['done']:>6}"
        )
    for kind in kinds:
        done = sorted(peaks[kind])
        for lo, hi in zip(done, done[1:], strict=False):
            growth = (peaks[kind][hi] - peaks[kind][lo]) / (hi - lo) * 1000
            print(
                f"{kind.split(':')[1]:<16} peak {hi}/{lo} = "
                f"{peaks[kind][hi] / peaks[kind][lo]:.2f}x, growth {growth:+.0f} MB per 1,000 clips"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[500, 2000])
    parser.add_argument(
        "--more", type=int, help="also run streamed train-lite alone on this many clips"
    )
    parser.add_argument("--epochs", type=int, default=5, help="LiteScorer training epochs")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    sizes = sorted(args.sizes)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        data = Path(tmp)
        started = time.perf_counter()
        bases = base_recordings()
        clips = make_clips(data, max(sizes + [args.more or 0]), bases)
        for n in sizes + ([args.more] if args.more else []):
            make_dataset(data / f"n{n}", clips[:n])
        warm_cache(data / "cache", clips, bases)
        make_evaluator(data / "evaluator")
        seconds = [len(b) / SR for b in bases]
        print(
            f"setup {time.perf_counter() - started:.0f}s: {len(clips)} distinct clips of "
            f"{min(seconds):.1f}-{max(seconds):.1f} s (mean {np.mean(seconds):.1f} s), "
            f"features cached, feature batch size {args.batch_size}"
        )
        report(
            f"train-lite (archetype: train 90 % + evaluate on test 10 %, {args.epochs} epochs, "
            "warm feature cache)",
            ("train-lite:streamed", "train-lite:all-in-memory"),
            sizes, data, args, args.more,
        )  # fmt: skip
        report(
            "DRAME-Eval scoring (score --scorer drame-eval:, tiny Qwen2-Audio, archetype, "
            "batch 4)",
            ("drame-eval:streamed", "drame-eval:all-in-memory"),
            sizes, data, args,
        )  # fmt: skip


if __name__ == "__main__":
    main()
