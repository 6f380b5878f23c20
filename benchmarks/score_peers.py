"""Peers side by side: this package's scorer, DNSMOS and ASR beside the packages they compete with.

    python benchmarks/bench_score.py --minutes 3 --zh-minutes 1.5 --peers   # after its own figures
    python benchmarks/score_peers.py [--minutes 1] [--zh-minutes 0.5]       # the peers table only

Every row scores the same clips (bench_score's English LibriVox and Mandarin espeak-ng sets) in
the same process, and prints clips/s and the real-time factor (seconds of audio per wall
second). Each peer is built and called once on a 2 s clip first ("load", not in the timings),
then runs the way its package runs it:

- the full LiteScorer (``load_scorer``, archetype then realism on one fresh feature cache: every
  extractor once, every head of both configs);
- DNSMOS: this package's (:mod:`speech_drame.features.quality`: the fewest 9.01 s windows, one
  clip per core) beside ``speechmos.dnsmos.run`` on the list of clips (a window every second,
  its own thread pool), and speechmos' PLCMOS v2;
- ASR: this package's (:mod:`speech_drame.features.asr`: clip-length encoding, greedy, one clip
  per core) beside faster-whisper's own ``WhisperModel.transcribe`` (same Whisper base int8
  weights, one clip at a time, its default threads), with its defaults (beam 5, temperature
  fallback, timestamps, 30 s windows) and greedy (beam 1, temperature 0, no timestamps);
- the offline MOS predictors whose weights ship in their wheel: distillMOS 0.9.1 (torch, one
  torch thread per core; its module-level ``import torchaudio`` serves only its file-list
  reader, so where torchaudio cannot load it gets a stand-in, :func:`torchaudio_stand_in`) and
  voicequal 0.4.0 (a numpy MLP distilled from DNSMOS). Both declare requirements this venv
  cannot take (torchaudio; numpy<2.0): install them with ``--no-deps``.

A peer that is not installed prints ``not installed (<its install command>)``; one that fails to load
prints its error; a clip that fails is counted in the ``failed`` column with the first error.

Tried and not in the table (checked 2026-12, Python 3.11, torch 2.13.0+cpu, network closed):
the PyPI torchaudio builds link CUDA (``import torchaudio`` raises ``OSError: Could not load
this library: .../_torchaudio.abi3.so``), which rules out torchaudio's SQUIM (its weights are
downloaded from PyTorch's server too), asem 1.0.0 (its DNSMOS port ships its weights but
builds ``torchaudio.transforms.Resample`` in every metric's constructor) and xls-r-sqa 0.1.0's
MFCC model (``torchaudio.transforms.MFCC`` in its forward). These download their weights at
run time, so they fail offline: NISQA 2.0.post2 (no weights in the wheel; pins torch==2.2.1,
numpy==1.26.4), UTMOS 1.1.10 (``hf://mosnets/utmos``), utmos-pytorch 0.1.0
(``LocalEntryNotFoundError`` for Blinorot/UTMOS-PyTorch), hyperion-utmosv2 1.3.1, wvmos 1.0
(zenodo + facebook/wav2vec2-base), scoreq 1.0.1 and scoreq-pytorch 0.1.0, whisqa 0.1.4 (heads
in the wheel, openai/whisper-small encoder from the Hub: ``OSError: We couldn't connect to
'https://huggingface.co'``), xls-r-sqa's XLS-R models, sheet-sqa 0.2.5, audiobox-aesthetics
0.0.4, komos 0.0.2, nomad-audio 0.0.9 and torchmetrics 1.9.0's DNSMOS and NISQA. speechmos'
AECMOS needs the far-end signal of an echo canceller; speech-quality 0.1.0 is signal measures,
"not a perceptual model" (its own words).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import itertools
import os
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SR = 16_000
WARM_UP_SECONDS = 2.0
# scores a list of 16 kHz float32 clips spoken in one context (question, profile, ...);
# returns, per clip, None or why it failed
ScoreAll = Callable[[Sequence[np.ndarray], Mapping[str, str]], list[str | None]]
ClipSet = tuple[Sequence[tuple[np.ndarray, int]], Mapping[str, str]]


@dataclass(frozen=True)
class Peer:
    """A row of the table: ``start()`` builds the model and returns its :data:`ScoreAll`;
    ``module`` is what must be importable, ``install`` the command that brings it."""

    label: str
    module: str
    install: str
    start: Callable[[], ScoreAll]


@dataclass(frozen=True)
class Row:
    """One peer on one clip set."""

    peer: str
    clip_set: str
    clips: int
    audio_seconds: float
    wall: float
    failed: int
    first_error: str | None = None

    @property
    def clips_per_second(self) -> float:
        return self.clips / self.wall

    @property
    def real_time(self) -> float:
        """Seconds of audio scored per wall second."""
        return self.audio_seconds / self.wall


def per_clip(score_one: Callable[[np.ndarray], object], workers: int = 1) -> ScoreAll:
    """A :data:`ScoreAll` calling ``score_one`` on each clip, ``workers`` clips at a time; a clip
    that raises is a failure (its error kept), the others still run."""

    def attempt(x: np.ndarray) -> str | None:
        try:
            score_one(x)
        except Exception as exc:  # noqa: BLE001 - a peer's failure on one clip is counted
            return f"{type(exc).__name__}: {exc}"
        return None

    def score_all(clips: Sequence[np.ndarray], contexts: Mapping[str, str]) -> list[str | None]:
        if workers == 1:
            return [attempt(x) for x in clips]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(attempt, clips))

    return score_all


def whole_list(score_list: Callable[[list[np.ndarray]], object]) -> ScoreAll:
    """A :data:`ScoreAll` for an API that takes the whole list (its progress bar on stderr
    hidden): if it raises, every clip failed."""

    def score_all(clips: Sequence[np.ndarray], contexts: Mapping[str, str]) -> list[str | None]:
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                score_list(list(clips))
        except Exception as exc:  # noqa: BLE001
            return [f"{type(exc).__name__}: {exc}"] * len(clips)
        return [None] * len(clips)

    return score_all


def measure(
    score_all: ScoreAll,
    clips: Sequence[np.ndarray],
    contexts: Mapping[str, str],
    peer: str,
    clip_set: str,
) -> Row:
    """Wall time of ``score_all`` on ``clips``, with the failures it reported."""
    start = time.perf_counter()
    errors = score_all(clips, contexts)
    wall = time.perf_counter() - start
    if len(errors) != len(clips):
        raise RuntimeError(f"{peer}: {len(errors)} results for {len(clips)} clips")
    failed = [e for e in errors if e is not None]
    seconds = sum(len(x) for x in clips) / SR
    return Row(
        peer, clip_set, len(clips), seconds, wall, len(failed), failed[0] if failed else None
    )


@contextlib.contextmanager
def torchaudio_stand_in() -> Iterator[str | None]:
    """Import a package whose scoring path is torch-only where torchaudio cannot load.

    If torchaudio imports, nothing changes (yields ``None``). Otherwise, for the block only,
    ``import torchaudio`` gives an empty module whose every attribute raises (so a peer that
    does use torchaudio fails with the reason, yielded), and it is removed afterwards.
    """
    try:
        import torchaudio  # noqa: F401
    except (ImportError, OSError) as exc:
        reason = f"torchaudio cannot be imported here ({type(exc).__name__}: {exc})"
    else:
        yield None
        return

    def missing(name: str):
        raise AttributeError(f"torchaudio.{name}: {reason}")

    stand_in = types.ModuleType("torchaudio")
    stand_in.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None)
    stand_in.__getattr__ = missing  # type: ignore[method-assign]
    sys.modules["torchaudio"] = stand_in
    try:
        yield reason
    finally:
        if sys.modules.get("torchaudio") is stand_in:
            del sys.modules["torchaudio"]


def _named(distribution: str) -> str:
    """``distribution`` with its installed version, if it is installed."""
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return distribution


def _workers() -> int:
    """Clips at once for this package's extractors, as ``extract_blueprints`` runs them."""
    from speech_drame.features.common import cpu_count, thread_count

    return max(1, cpu_count() // thread_count())


def _loaded(x: np.ndarray):
    from speech_drame.audio import load_audio

    return load_audio((x, SR))


def lite_scorer(scorer: str | None, cache_root: Path) -> ScoreAll:
    """The LiteScorer of both configs through ``load_scorer``, on a fresh feature cache for
    every call (cold: each extractor runs once per clip, then every head of both configs)."""
    from speech_drame.features.cache import FeatureCache
    from speech_drame.schema import CONFIGS
    from speech_drame.scorers import ClipInput, load_scorer

    spec = f"lite:{scorer}" if scorer else None
    runs = itertools.count()

    def score_all(clips: Sequence[np.ndarray], contexts: Mapping[str, str]) -> list[str | None]:
        cache = FeatureCache(cache_root / f"run{next(runs)}")
        scorers = [load_scorer(spec, config, cache=cache) for config in CONFIGS]
        inputs = [ClipInput(f"clip{i:04d}", (x, SR), contexts) for i, x in enumerate(clips)]
        errors: list[str | None] = [None] * len(clips)
        for scorer_ in scorers:
            for i, result in enumerate(scorer_.score(inputs)):
                errors[i] = errors[i] or result.error
        return errors

    return score_all


def peers(scorer: str | None, cache_root: Path) -> list[Peer]:
    """The rows, in the order they print."""

    def ours_dnsmos() -> ScoreAll:
        from speech_drame.features.quality import dnsmos

        return per_clip(lambda x: dnsmos(_loaded(x)), _workers())

    def speechmos_dnsmos() -> ScoreAll:
        from speechmos import dnsmos

        return whole_list(lambda clips: dnsmos.run(clips, SR, return_df=False))

    def speechmos_plcmos() -> ScoreAll:
        from speechmos import plcmos

        return whole_list(lambda clips: plcmos.run(clips, SR, return_df=False))

    def ours_asr() -> ScoreAll:
        from speech_drame.features.asr import transcribe

        return per_clip(lambda x: transcribe(_loaded(x)), _workers())

    def whisper(**options) -> Callable[[], ScoreAll]:
        def start() -> ScoreAll:
            from faster_whisper import WhisperModel

            from speech_drame.features.whisper_weights import whisper_base_dir

            model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8")

            def score_one(x: np.ndarray) -> str:
                segments, _ = model.transcribe(x, **options)
                return "".join(s.text for s in segments)  # the generator does the decoding

            return per_clip(score_one)

        return start

    def distillmos() -> ScoreAll:
        import torch

        from speech_drame.features.common import cpu_count, torch_threads

        with torchaudio_stand_in(), contextlib.redirect_stdout(io.StringIO()):
            import distillmos as package  # its torchaudio import serves only its file-list CLI

            model = package.ConvTransformerSQAModel().eval()

        def score_one(x: np.ndarray) -> float:
            with torch_threads(cpu_count()), torch.inference_mode():
                return float(model(torch.from_numpy(x)[None])[0, 0])

        return per_clip(score_one)

    def voicequal() -> ScoreAll:
        from voicequal.models import predict_mos

        return per_clip(lambda x: predict_mos(x, SR))

    from speech_drame.schema import CONFIGS, dimensions

    outputs = sum(len(dimensions(c)) for c in CONFIGS) + 1  # + archetype's Content Pass
    fw = _named("faster-whisper")
    sm = _named("speechmos")
    return [
        Peer(
            f"speech-drame LiteScorer, {outputs} outputs, cold",
            "speech_drame",
            "pip install -e .",
            lambda: lite_scorer(scorer, cache_root),
        ),
        Peer(
            "speech-drame DNSMOS, fewest 9 s windows",
            "speech_drame",
            "pip install -e .",
            ours_dnsmos,
        ),
        Peer(
            f"{sm} DNSMOS, window every 1 s",
            "speechmos",
            "pip install speechmos==0.0.1.1 onnxruntime librosa requests",
            speechmos_dnsmos,
        ),
        Peer(
            f"{sm} PLCMOS v2",
            "speechmos",
            "pip install speechmos==0.0.1.1 onnxruntime",
            speechmos_plcmos,
        ),
        Peer(
            "speech-drame ASR, clip-length greedy",
            "speech_drame",
            "pip install -e .",
            ours_asr,
        ),
        Peer(
            f"{fw} transcribe(), defaults",
            "faster_whisper",
            "pip install faster-whisper==1.2.1",
            whisper(),
        ),
        Peer(
            f"{fw} transcribe(), greedy",
            "faster_whisper",
            "pip install faster-whisper==1.2.1",
            whisper(beam_size=1, temperature=0.0, without_timestamps=True),
        ),
        Peer(
            f"{_named('distillmos')} (torch)",
            "distillmos",
            "make setup-peers",
            distillmos,
        ),
        Peer(
            f"{_named('voicequal')} (numpy MLP)",
            "voicequal",
            "make setup-peers",
            voicequal,
        ),
    ]


HEADER = (
    f"{'peer':<46}{'set':<10}{'clips':>6}{'failed':>7}{'wall s':>8}"
    f"{'clips/s':>9}{'x real time':>12}{'load s':>8}"
)


def format_row(row: Row, load: float | None) -> str:
    short_set = row.clip_set.split(" ")[0]
    loaded = f"{load:8.1f}" if load is not None else ""
    line = (
        f"{row.peer:<46}{short_set:<10}{row.clips:>6}{row.failed:>7}{row.wall:>8.1f}"
        f"{row.clips_per_second:>9.2f}{row.real_time:>12.1f}{loaded}"
    )
    if row.first_error:
        line += f"\n    first failure: {row.first_error[:300]}"
    return line


def report(sets: Mapping[str, ClipSet], scorer: str | None = None) -> list[Row]:
    """Run every peer on every set (each peer built once, dropped before the next) and print
    the table as rows finish; returns the rows."""
    from speech_drame.audio import load_audio

    arrays = {
        name: [load_audio(clip).samples for clip in clips] for name, (clips, _) in sets.items()
    }
    warm_up = next(iter(arrays.values()))[0][: int(WARM_UP_SECONDS * SR)]
    print(
        "\n== Peers side by side: the same clips, this process; load = building the model and "
        f"one call on {WARM_UP_SECONDS:.0f} s of audio (not in the timings)"
    )
    print(HEADER)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for peer in peers(scorer, Path(tmp)):
            if importlib.util.find_spec(peer.module) is None:
                print(f"{peer.label:<46}not installed ({peer.install})")
                continue
            start = time.perf_counter()
            try:
                score_all = peer.start()
                (error,) = score_all([warm_up], next(iter(sets.values()))[1])
            except Exception as exc:  # noqa: BLE001 - reported as the peer's row
                error = f"{type(exc).__name__}: {exc}"
            load = time.perf_counter() - start
            if error is not None:
                print(f"{peer.label:<46}could not run: {error[:500]}")
                continue
            for n, (name, clips) in enumerate(arrays.items()):
                row = measure(score_all, clips, sets[name][1], peer.label, name)
                rows.append(row)
                print(format_row(row, load if n == 0 else None), flush=True)
            del score_all
    return rows


def main() -> int:
    from bench_score import CONTEXTS, ZH_CONTEXTS, make_clips, make_mandarin_clips

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="English speech to score")
    parser.add_argument("--zh-minutes", type=float, default=0.5, help="Mandarin speech to score")
    parser.add_argument("--scorer", help="trained scorer folder (default: artifacts/lite_scorer)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sets = {
            "English (LibriVox)": (make_clips(args.minutes, args.seed), CONTEXTS),
            "Mandarin (espeak-ng)": (
                make_mandarin_clips(args.zh_minutes, args.seed, Path(tmp)),
                ZH_CONTEXTS,
            ),
        }
    report(sets, args.scorer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
