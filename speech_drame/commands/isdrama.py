"""`speech-drame isdrama`: ISDrama objective metrics (single-sentence or full-drama protocol)."""

from __future__ import annotations

import argparse
import sys


def _recogniser(engine: str):
    """Multilingual Whisper (default, Mandarin and English) or the English-only PocketSphinx."""
    from ..languages import LANGUAGES
    from ..protocols.isdrama.protocol import Recogniser

    if engine == "pocketsphinx":
        from ..features import asr_pocketsphinx

        return Recogniser(
            asr_pocketsphinx.VERSION,
            ("en",),
            lambda audio: (asr_pocketsphinx.transcribe_pocketsphinx(audio), "en"),
        )
    from ..features import asr

    def transcribe(audio):
        transcript = asr.transcribe(audio)
        return transcript.text, transcript.language

    return Recogniser(asr.VERSION, LANGUAGES, transcribe)


def _sentence_models(asr: str) -> dict:
    """Offline defaults: Whisper transcripts, resemblyzer d-vectors, pyworld DIO F0."""
    import numpy as np

    from ..features.common import samples_16k
    from ..features.prosody import FRAME_MS, f0_contour
    from ..features.speaker import speaker_embedding

    return {
        "asr": _recogniser(asr),
        "embed_speaker": lambda audio: np.asarray(speaker_embedding(audio).embedding),
        "track_f0": lambda audio: f0_contour(samples_16k(audio, "FFE")),
        "frame_period": FRAME_MS / 1000,
    }


def run(args: argparse.Namespace) -> int:
    from ..protocols.isdrama.manifest import read_manifest
    from ..protocols.isdrama.protocol import score_dramas, score_sentences, write_results
    from ..protocols.isdrama.spatial_embedder import load_spatial_embedder

    entries = read_manifest(args.manifest)
    if args.protocol == "single":
        result = score_sentences(
            entries,
            length_tolerance=args.length_tolerance,
            align=args.align,
            **_sentence_models(args.asr),
        )
    else:
        embedder = None
        if args.spatial_embedder:
            embedder = load_spatial_embedder(
                args.spatial_embedder,
                args.spatial_checkpoint,
                args.spatial_rate,
                args.spatial_window,
            )
        else:
            print(
                "note: ANG/DIS cos not computed: no --spatial-embedder given "
                "(SPATIAL-AST weights are not bundled)",
                file=sys.stderr,
            )
        result = score_dramas(
            entries,
            embedder=embedder,
            spatial_metric=args.spatial_metric,
            length_policy=args.length_policy,
            length_tolerance=args.length_tolerance,
            floor_db=args.floor_db,
            embedding_cosine=args.embedding_cosine,
        )
    for path in write_results(result, args.out):
        print(f"wrote {path}")
    _print_conventions(result.settings)
    for name, value in result.means.items():
        print(f"{name:>18s}  {value:.6g}")
    return 0


def _print_conventions(settings: dict) -> None:
    """The conventions behind the numbers, as recorded in the report's settings."""
    if "asr_model" in settings:
        languages = ", ".join(settings["asr_languages"])
        print(f"CER recogniser: {settings['asr_model']} (transcribes {languages})")
    for key in ("spatial_metric", "length_policy", "embedding_cosine"):
        if key in settings:
            print(f"{key} = {settings[key]}: {settings[key + '_definition']}")
    if settings.get("length_policy") == "truncate":
        print(f"cut from the longer files: {settings['length_cut_total_s']:.3f} s in total")


def register(subparsers) -> None:
    parser = subparsers.add_parser("isdrama", help=__doc__.split(": ", 1)[1])
    protocols = parser.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    helps = {
        "single": "sentence items: CER (multilingual Whisper), SIM (resemblyzer), FFE (pyworld)",
        "drama": "concatenated binaural dramas: IPD/ILD, GCC-PHAT direction, ANG/DIS cos",
    }
    for name, text in helps.items():
        sub = protocols.add_parser(name, help=text, description=text)
        sub.add_argument(
            "manifest", help="JSONL or CSV manifest (see protocols/isdrama/manifest.py)"
        )
        sub.add_argument("--out", required=True, help="folder for isdrama_<protocol>.json/.csv")
        sub.add_argument(
            "--length-tolerance",
            type=float,
            default=0.1,
            help="allowed generated/reference duration difference in seconds (default 0.1)",
        )
        sub.set_defaults(func=run)
        if name == "single":
            sub.add_argument(
                "--align",
                choices=("length", "dtw"),
                default="length",
                help="FFE frames: 'length' needs equal durations (within --length-tolerance); "
                "'dtw' aligns any durations on log-mel frames",
            )
            sub.add_argument(
                "--asr",
                choices=("whisper", "pocketsphinx"),
                default="whisper",
                help="transcripts for CER: multilingual Whisper (default; Mandarin and English) or "
                "the lighter, English-only PocketSphinx",
            )
        if name == "drama":
            sub.add_argument(
                "--spatial-metric",
                choices=("official", "wrapped-band"),
                default="official",
                help="IPD/ILD: 'official' = the released evaluator's figure (32 kHz, hop 320, "
                "per-bin R-L phase and level, 128 mel weights, MAE / frames x 100); "
                "'wrapped-band' = wrapped mel-band phase (rad) and level (dB) MAE at 48 kHz",
            )
            sub.add_argument(
                "--length-policy",
                choices=("error", "truncate"),
                default="error",
                help="durations differing by more than --length-tolerance: 'error', or "
                "'truncate' the longer file as the released evaluator does (the report lists "
                "the seconds cut)",
            )
            sub.add_argument(
                "--floor-db",
                type=float,
                help="wrapped-band only: IPD/ILD on mel bands within this many dB of the "
                "reference peak (default: all bands)",
            )
            sub.add_argument(
                "--spatial-embedder", help="'package.module:function' building the torch module"
            )
            sub.add_argument("--spatial-checkpoint", help="state dict for that module")
            sub.add_argument(
                "--spatial-rate",
                type=int,
                default=32_000,
                help="sample rate the embedder expects (SPATIAL-AST: 32000)",
            )
            sub.add_argument(
                "--spatial-window",
                type=float,
                help="embed fixed-length windows of this many seconds, one matrix row each "
                "(default: the whole drama at once)",
            )
            sub.add_argument(
                "--embedding-cosine",
                choices=("wrap-above-pi", "plain"),
                default="wrap-above-pi",
                help="ANG/DIS cosine of the flattened per-window outputs: 'wrap-above-pi' "
                "wraps both to (-pi, pi] when a reference value exceeds pi, as released; "
                "'plain' never wraps",
            )
