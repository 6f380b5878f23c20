"""DRAME-Eval speed: shared-prefix scoring vs one full forward per dimension, training steps/s.

Measured on the tiny random Qwen2-Audio (CPU), same clips, same run:

1. scoring clips/s of realism's 10 dimensions (and archetype's 4) on 30-second clips, in both
   prompt orders, with the shared prefix (encoded once per clip, KV cache reused by every
   dimension: audio + preamble with ``instruction_first``, audio + preamble + context with
   ``context_first``) against one full forward per dimension; the two give the same scores
   (max |diff| printed);
2. training steps/s of ``train.py``'s path (Trainer + PEFT LoRA, its default choices) and the
   process's peak RSS;
3. the forward FLOP estimate of both scoring strategies in both orders for Qwen2-Audio-7B,
   from its config, so the saving at full size is on record.

    python benchmarks/bench_drame_eval.py [--clips 8] [--batch-size 4] [--train-steps 10]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PROFILE = (
    "Mara Quinn is a veteran lighthouse keeper in her sixties who has lived alone on the "
    "island for twenty years. She is gruff and economical with words, distrustful of "
    "officials from the mainland, but fiercely protective of the sailors who depend on her "
    "light. She speaks slowly, with a low, weathered voice and a dry sense of humour, and "
    "she rarely raises her voice unless a life is at stake."
)
SCENE = (
    "A storm has knocked out the radio. A young coast-guard officer arrives to evacuate the "
    "island, and Mara refuses to leave while a fishing boat is still missing; she tells him "
    "firmly that the light stays on."
)
FIELDS = {
    "char_profile": PROFILE,
    "local_scene": SCENE,
    "char_style": "Gruff, Protective, Dry, Stubborn",
    "question": "You are a lighthouse keeper refusing to evacuate during a storm. You say:",
}

# Qwen/Qwen2-Audio-7B(-Instruct) config.json
AUDIO_7B = dict(layers=32, d=1280, ffn=5120, positions=1500, mels=128)
TEXT_7B = dict(layers=32, d=4096, ffn=11008, heads=32, kv_heads=32, vocab=156032)
CHARS_PER_TOKEN = 4.0  # typical of Qwen's BPE on English prose (assumption for text tokens)
ORDERS = ("instruction_first", "context_first")  # the prompt orders (the default first)


def clip(seconds: float, seed: int) -> np.ndarray:
    """Seeded speech-like signal: a few harmonics with a wandering pitch, plus noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16_000)) / 16_000
    f0 = 120 + 30 * np.sin(2 * np.pi * 0.3 * t + rng.uniform(0, 6))
    phase = 2 * np.pi * np.cumsum(f0) / 16_000
    x = sum(0.2 / k * np.sin(k * phase) for k in range(1, 5))
    return (x + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def bench_scoring(config: str, order: str, n_clips: int, batch_size: int, rounds: int) -> dict:
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer

    model, processor = build_tiny(seed=0)
    scorer = DrameEvalScorer(model, processor, config, batch_size=batch_size, prompt_order=order)
    clips = [Clip(f"c{i}", clip(30.0, i), FIELDS) for i in range(n_clips)]
    scorer.score_clips(clips[:1])  # warm-up
    scorer.score_clips(clips[:1], shared_prefix=False)
    times: dict[str, list[float]] = {"shared": [], "full": []}
    results = {}
    for _ in range(rounds):  # interleaved, so both see the same machine load
        for name, shared in (("shared", True), ("full", False)):
            start = time.perf_counter()
            results[name] = scorer.score_clips(clips, shared_prefix=shared)
            times[name].append(time.perf_counter() - start)
    diff = max(
        abs(a.scores[d] - b.scores[d])
        for a, b in zip(results["shared"], results["full"], strict=True)
        for d in scorer.dimensions
    )
    shared_s, full_s = statistics.median(times["shared"]), statistics.median(times["full"])
    return {
        "config": config,
        "order": order,
        "dimensions": len(scorer.scored),  # Content Pass included
        "clips": n_clips,
        "shared_clips_per_s": n_clips / shared_s,
        "full_clips_per_s": n_clips / full_s,
        "speedup": full_s / shared_s,
        "max_abs_diff": diff,
    }


def make_release(root: Path, n: int) -> None:
    """An archetype release (train split) of n clips of 2-5 s, three annotators each."""
    folder = root / "archetype_data"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    lines = []
    for i in range(n):
        rid = f"bench_{i:04d}"
        sf.write(folder / f"{rid}.wav", clip(float(rng.uniform(2, 5)), i), 16_000)
        scores = lambda: rng.integers(1, 6, 3).tolist()  # noqa: E731
        record = {
            "id": rid,
            "question": FIELDS["question"],
            "annotations": {
                "content_pass": [True, True, bool(i % 3)],
                "audio_quality": scores(),
                "human_likeness": scores(),
                "appropriateness": scores(),
                "confidence": scores(),
                "audio_quality_comment": [""] * 3,
                "human_likeness_comment": [""] * 3,
                "appropriateness_comment": [""] * 3,
            },  # fmt: skip
            "wav_path": f"speech_drame/finetuning/data/archetype_data/{rid}.wav",
        }
        lines.append(json.dumps(record))
    (folder / "train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench_training(steps: int, batch_size: int, checkpointing: bool) -> dict:
    from speech_drame.data.build import build_dataset
    from speech_drame.training.arguments import parse_args
    from speech_drame.training.run import train

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_release(root / "release", 24)
        build_dataset(root / "release", root / "speech-drame", progress=False, license_id="cc0-1.0")
        config = Path(__file__).resolve().parents[1] / "configs" / "drame_eval_archetype.yaml"
        args = parse_args(
            ["--config", str(config), "--tiny", "--dataset", str(root / "speech-drame"),
             "--output_dir", str(root / "out"), "--use_cpu", "--bf16", "false",
             "--model_dtype", "float32", "--max_steps", str(steps),
             "--per_device_train_batch_size", str(batch_size), "--gradient_accumulation_steps", "1",
             "--dataloader_num_workers", "0", "--save_steps", str(10 * steps),
             "--logging_steps", str(steps), "--disable_tqdm", "true",
             "--activation_checkpointing", str(checkpointing).lower()]
        )  # fmt: skip
        result = train(*args)
    return {
        "steps": steps,
        "batch_size": batch_size,
        "checkpointing": checkpointing,
        "steps_per_s": result.metrics["train"]["train_steps_per_second"],
    }


def _encoder_flops(a: dict) -> float:
    t = a["positions"]
    conv = 2 * (2 * t) * a["mels"] * 3 * a["d"] + 2 * t * a["d"] * 3 * a["d"]
    per_layer = 2 * t * (4 * a["d"] ** 2 + 2 * a["d"] * a["ffn"]) + 4 * t * t * a["d"]
    return conv + a["layers"] * per_layer


def _lm_flops(t: dict, new: int, cached: int) -> float:
    """Forward FLOPs of ``new`` tokens after ``cached`` ones, lm_head at one position."""
    head_dim = t["d"] // t["heads"]
    kv = t["kv_heads"] * head_dim
    proj = 2 * new * (2 * t["d"] ** 2 + 2 * t["d"] * kv + 3 * t["d"] * t["ffn"])
    attention = 4 * t["d"] * (new * cached + new * (new + 1) / 2)
    return t["layers"] * (proj + attention) + 2 * t["d"] * t["vocab"]


def flop_estimate(config: str, order: str) -> dict:
    """Forward FLOPs per 30-s clip of both strategies for Qwen2-Audio-7B."""
    from speech_drame.audio_llm.qwen2_audio import prefix_text, suffix_text
    from speech_drame.prompts import scored_dimensions

    audio_tokens = 750  # ((3000 - 1) // 2 + 1 - 2) // 2 + 1 for 30 s
    prefix_chars = len(prefix_text(config, FIELDS, order).replace("<|AUDIO|>", ""))
    prefix = audio_tokens + round(prefix_chars / CHARS_PER_TOKEN)
    suffixes = [
        round(len(suffix_text(config, d, FIELDS, order)) / CHARS_PER_TOKEN)
        for d in scored_dimensions(config)
    ]
    encoder = _encoder_flops(AUDIO_7B) + 2 * audio_tokens * AUDIO_7B["d"] * TEXT_7B["d"]
    full = sum(encoder + _lm_flops(TEXT_7B, prefix + s, 0) for s in suffixes)
    shared = encoder + _lm_flops(TEXT_7B, prefix, 0) - 2 * TEXT_7B["d"] * TEXT_7B["vocab"]
    shared += sum(_lm_flops(TEXT_7B, s, prefix) for s in suffixes)
    return {
        "config": config,
        "order": order,
        "prefix_tokens": prefix,
        "mean_suffix_tokens": sum(suffixes) / len(suffixes),
        "full_tflop": full / 1e12,
        "shared_tflop": shared / 1e12,
        "saving": full / shared,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=8, help="30-second clips scored per round")
    parser.add_argument("--batch-size", type=int, default=4, help="clips per scoring batch")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median reported)")
    parser.add_argument("--train-steps", type=int, default=10)
    parser.add_argument("--train-batch-size", type=int, default=4)
    args = parser.parse_args()

    import torch

    print(f"torch threads: {torch.get_num_threads()}, tiny random Qwen2-Audio, CPU, float32")
    print("\n== scoring, 30-second clips (baseline: one full forward per dimension) ==")
    for config in ("realism", "archetype"):
        for order in ORDERS:
            r = bench_scoring(config, order, args.clips, args.batch_size, args.rounds)
            print(
                f"{config:9s} {order:17s} {r['dimensions']:2d} dims  shared prefix "
                f"{r['shared_clips_per_s']:6.2f} clips/s   full forwards "
                f"{r['full_clips_per_s']:6.2f} clips/s   speed-up x{r['speedup']:.2f}   "
                f"max |score diff| {r['max_abs_diff']:.1e}"
            )
    print(f"peak RSS after scoring: {peak_rss_mb():.0f} MB")

    print("\n== training (train.py path: Trainer + PEFT LoRA, tiny model) ==")
    for checkpointing in (False, True):
        t = bench_training(args.train_steps, args.train_batch_size, checkpointing)
        print(
            f"{t['steps']} steps, batch {t['batch_size']}, activation checkpointing "
            f"{'on ' if checkpointing else 'off'}: {t['steps_per_s']:.2f} steps/s "
            f"({t['steps_per_s'] * t['batch_size']:.1f} examples/s)"
        )
    print(f"peak RSS of the process (scoring + training): {peak_rss_mb():.0f} MB")

    print("\n== forward FLOPs per 30-s clip at full size (Qwen2-Audio-7B, estimate) ==")
    print(
        f"(text tokens estimated at {CHARS_PER_TOKEN:.0f} characters per token; 750 audio tokens)"
    )
    for config in ("realism", "archetype"):
        for order in ORDERS:
            f = flop_estimate(config, order)
            print(
                f"{config:9s} {order:17s} prefix {f['prefix_tokens']} tokens, suffix "
                f"~{f['mean_suffix_tokens']:.0f}: full forwards {f['full_tflop']:.1f} TFLOP, "
                f"shared prefix {f['shared_tflop']:.1f} TFLOP, saving x{f['saving']:.2f}"
            )


if __name__ == "__main__":
    main()
