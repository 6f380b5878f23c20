"""Speaker verification with our GE2E voice encoder and with the resemblyzer package it replaces.

Clips of the demo release (``make demo`` writes ``build/demo_release``) with a known speaker:
each TTS voice, the LibriVox reader and the ALSA test-sound voice, clean (no degradation, no
pitch shift or WORLD vocoding), one rendering per distinct source, at most ``--per-speaker``
each. Every pair of clips is a same-speaker or a different-speaker trial scored by cosine
similarity. Prints, for both implementations: EER, ROC AUC, mean same/different similarity,
time per clip (after a warm-up pass); and the largest difference between their embeddings.

    python benchmarks/bench_speaker.py [--release build/demo_release] [--per-speaker 6] [--threads 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score, roc_curve

from speech_drame.audio import Audio, load_audio
from speech_drame.features.common import THREADS_ENV
from speech_drame.features.speaker import speaker_embedding

REAL_SPEAKERS = {"librivox": "LibriVox reader", "alsa": "ALSA test voice"}  # one voice each


def speaker_clips(release: Path, per_speaker: int) -> dict[str, list[Path]]:
    """Speaker id -> clean clips of distinct sources, from the release's DEMO_MANIFEST.json."""
    manifest = release / "DEMO_MANIFEST.json"
    if not manifest.is_file():
        raise SystemExit(f"{manifest} not found: build the demo release with `make demo-data`")
    clips: dict[str, dict[str, Path]] = defaultdict(dict)
    for clip in sorted(json.loads(manifest.read_text())["clips"], key=lambda c: c["id"]):
        source, delivery = clip["source"], clip["delivery"]
        who = source.get("voice") or REAL_SPEAKERS.get(source.get("group"))
        clean = clip["degradation"]["kind"] == "none" and delivery["semitones"] == 0
        if who and clean and not delivery["world_vocoded"]:
            clips[who].setdefault(clip["base_key"], release / clip["wav"])
    picked = {who: list(by_source.values())[:per_speaker] for who, by_source in clips.items()}
    return {who: paths for who, paths in sorted(picked.items()) if len(paths) >= 2}


def timed_embeddings(
    embedders: dict[str, Callable[[Audio], np.ndarray]], audios: list[Audio]
) -> dict[str, tuple[np.ndarray, float]]:
    """Per implementation: the embeddings and the seconds per clip.

    A first untimed pass over every clip warms up both (the first call with a new input shape is
    slower); the timed pass alternates which implementation goes first on each clip.
    """
    out = {name: np.stack([embed(a) for a in audios]) for name, embed in embedders.items()}
    spent = dict.fromkeys(embedders, 0.0)
    for i, audio in enumerate(audios):
        for name in list(embedders)[:: 1 - 2 * (i % 2)]:
            start = time.perf_counter()
            embedders[name](audio)
            spent[name] += time.perf_counter() - start
    return {name: (out[name], spent[name] / len(audios)) for name in embedders}


def package() -> Callable[[Audio], np.ndarray]:
    """resemblyzer's d-vector of a 16 kHz clip."""
    import resemblyzer

    encoder = resemblyzer.VoiceEncoder("cpu", verbose=False)
    return lambda a: encoder.embed_utterance(resemblyzer.preprocess_wav(a.samples))


def ours(audio: Audio) -> np.ndarray:
    return np.array(speaker_embedding(audio).embedding)


def verification(emb: np.ndarray, labels: list[str]) -> dict[str, float]:
    pairs = list(itertools.combinations(range(len(labels)), 2))
    same = np.array([labels[i] == labels[j] for i, j in pairs])
    scores = np.array([float(emb[i] @ emb[j]) for i, j in pairs])
    fpr, tpr, _ = roc_curve(same, scores)
    k = int(np.argmin(np.abs(fpr - (1 - tpr))))
    return {
        "eer": (fpr[k] + 1 - tpr[k]) / 2,
        "auc": roc_auc_score(same, scores),
        "same": scores[same].mean(),
        "different": scores[~same].mean(),
        "n_same": int(same.sum()),
        "n_different": int((~same).sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", type=Path, default=Path("build/demo_release"))
    parser.add_argument("--per-speaker", type=int, default=6, help="clips per speaker at most")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both")
    args = parser.parse_args()
    os.environ[THREADS_ENV] = str(args.threads)
    torch.set_num_threads(args.threads)
    by_speaker = speaker_clips(args.release, args.per_speaker)
    labels = [who for who, paths in by_speaker.items() for _ in paths]
    audios = [load_audio(p) for paths in by_speaker.values() for p in paths]
    seconds = sum(a.seconds for a in audios) / len(audios)
    print(f"{len(audios)} clips of {len(by_speaker)} speakers from {args.release} "
          f"(mean {seconds:.2f} s), torch threads {args.threads}")  # fmt: skip

    timed = timed_embeddings({"ours": ours, "resemblyzer": package()}, audios)
    results = {name: (emb, t, verification(emb, labels)) for name, (emb, t) in timed.items()}
    first = next(iter(results.values()))[2]
    print(f"trials: {first['n_same']} same-speaker, {first['n_different']} different-speaker\n")
    print(f"{'':12} {'EER':>7} {'ROC AUC':>8} {'same':>7} {'diff':>7} {'per clip':>9}")
    for name, (_, per_clip, v) in results.items():
        print(f"{name:12} {v['eer']:7.2%} {v['auc']:8.4f} {v['same']:7.4f} {v['different']:7.4f} "
              f"{1000 * per_clip:7.1f}ms")  # fmt: skip
    diff = np.abs(results["ours"][0] - results["resemblyzer"][0])
    ratio = results["ours"][1] / results["resemblyzer"][1]
    print(f"\nmax abs embedding difference {diff.max():.2e} (mean {diff.mean():.1e})")
    print(f"time per clip ours/resemblyzer {ratio:.2f}")


if __name__ == "__main__":
    main()
