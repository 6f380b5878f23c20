"""`speech-drame score`: score role-play clips with any scorer (LiteScorer, DRAME-Eval, a chat judge)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from ..audio import AUDIO_SUFFIXES
from ..scorers.base import (
    MIN_LABEL_MASS,
    ClipInput,
    ClipScores,
    Scorer,
    check_min_label_mass,
    iter_scores,
    synthetic_labels_warning,
)
from .options import (
    add_config_option,
    add_context_options,
    add_scorer_options,
    context_from_args,
    scorer_from_args,
)


def expand_clips(paths: list[str]) -> tuple[list[str], list[str]]:
    """``(clips, skipped)``: files as given; folders expanded (recursively, sorted) to their
    audio files (:data:`~speech_drame.audio.AUDIO_SUFFIXES`), and their other files with why
    they were passed over."""
    out: list[str] = []
    skipped: list[str] = []
    for p in paths:
        path = Path(p)
        if not path.is_dir():
            out.append(p)
            continue
        for f in sorted(f for f in path.rglob("*") if f.is_file()):
            if f.suffix.lower() in AUDIO_SUFFIXES:
                out.append(str(f))
            else:
                skipped.append(f"{f} (not an audio file type: {f.suffix or 'no suffix'})")
    return out, skipped


_LISTED = 5  # skipped files the terminal names (the count covers them all)


def format_clip(result, min_label_mass: float = MIN_LABEL_MASS) -> str:
    """One clip as a small table: score and 1..5 distribution per dimension, after what reading
    the audio did (the 30 s cut, the peak and any scaling into [-1, 1]); for a scorer with label
    mass, its column, ``!`` marking a mass below ``min_label_mass`` (unreliable)."""
    from speech_drame.languages import describe_language
    from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES

    unreliable = result.unreliable(min_label_mass)

    def mass(dim: str) -> str:
        if dim not in result.label_mass:
            return ""
        return f"  {result.label_mass[dim]:6.3f}" + (" !" if dim in unreliable else "")

    lines = [f"{result.id}"]
    if result.audio is not None:
        lines.append(f"  audio: {result.audio.summary()}")
    if result.language is not None:
        lines.append(
            f"  language: {describe_language(result.language, result.language_probability)}"
        )
    if result.transcript:
        lines.append(f"  transcript: {result.transcript!r}")
    if result.decoding is not None:
        lines.append(f"  decoding: {result.decoding}")
    if result.content_pass is not None:
        lines.append(f"  {'Content Pass probability':<36}{result.content_pass:6.3f}"
                     f"{' ' * 32 if CONTENT_PASS in result.label_mass else ''}"
                     f"{mass(CONTENT_PASS)}")  # fmt: skip
    lines.append(
        f"  {'dimension':<36}{'score':>6}   " + " ".join(f"{'p' + str(k):>5}" for k in range(1, 6))
        + ("    mass" if result.label_mass else "")
    )  # fmt: skip
    for dim, score in result.scores.items():
        dist = " ".join(f"{p:5.2f}" for p in result.distributions.get(dim, []))
        lines.append(f"  {RUBRIC_NAMES[dim]:<36}{score:6.2f}   {dist}{mass(dim)}")
    if unreliable:
        lines.append(f"  ! label mass below {min_label_mass}: unreliable")
    return "\n".join(lines)


def score_clips(
    args: argparse.Namespace, announce: bool = True, on_retry=None, single_bar: bool = False
) -> tuple[Scorer, Iterator[ClipScores]]:
    """The score path of every command that scores clips (``score``, ``judge``): the clips
    (folders expanded, what was passed over said on stderr), the scorer ``--scorer`` names with
    its settings (``announce``: its description on stderr unless ``--quiet``) and its
    ``(scorer, results)`` for them: an iterator, in order, each result as soon as the scorer
    gives it (:func:`~speech_drame.scorers.base.iter_scores`); a progress bar unless
    ``--quiet``, over more than one clip (``single_bar``: over one too). A LiteScorer's feature
    models start loading in the background at the first clip whose features are not cached."""

    context = context_from_args(args, args.config)
    clips, skipped = expand_clips(args.clips)
    if skipped:
        shown = "; ".join(skipped[:_LISTED]) + (" ..." if len(skipped) > _LISTED else "")
        print(f"skipped {len(skipped)} file(s) of the folder(s): {shown}", file=sys.stderr)
    if not clips:
        raise ValueError(f"no audio files ({', '.join(AUDIO_SUFFIXES)}) in {args.clips}")
    scorer = scorer_from_args(args, args.config, on_retry=on_retry)
    if announce and not args.quiet:
        print(f"scorer: {scorer.description} [{scorer.id}]", file=sys.stderr)
    inputs = [ClipInput(clip, clip, context) for clip in clips]
    progress = (single_bar or len(clips) > 1) and not args.quiet
    return scorer, iter_scores(scorer, inputs, progress=progress)


def run(args: argparse.Namespace) -> int:
    check_min_label_mass(args.min_label_mass)
    scorer, stream = score_clips(args)
    warning = synthetic_labels_warning(scorer)
    results: list[ClipScores] = []
    if args.json:
        results = list(stream)
        rows = [{**r.to_dict(args.min_label_mass), "scorer": scorer.id,
                 "scorer_description": scorer.description} for r in results]  # fmt: skip
        for row in rows if warning else ():
            row["warning"] = warning
        print(json.dumps(rows, indent=1))
    else:
        if warning:
            print(f"NOTE: {warning}")
        for r in stream:  # each clip printed as soon as it is scored
            results.append(r)
            if r.ok:
                print(format_clip(r, args.min_label_mass), flush=True)
    flagged = sum(len(r.unreliable(args.min_label_mass)) for r in results)
    if flagged:
        print(f"{flagged} (clip, dimension) score(s) with label mass below {args.min_label_mass}: "
              "unreliable (the model put little probability on the labels)", file=sys.stderr)  # fmt: skip
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"not scored ({r.error_kind} error): {r.error}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(results)} clip(s) could not be scored", file=sys.stderr)
        return 1
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "score",
        help=__doc__.split(": ", 1)[1],
        description="Score clips (their first 30 s) on every dimension: expected score, its "
        "1..5 distribution and, for archetype, the Content Pass probability.",
    )
    parser.add_argument("clips", nargs="+", metavar="CLIP", help="audio files or folders")
    add_config_option(parser, old="--mode")
    add_context_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--min-label-mass",
        type=float,
        default=MIN_LABEL_MASS,
        help="flag a score as unreliable when the model put less than this probability on the "
        "labels (scorers with label mass: DRAME-Eval)",
    )
    add_scorer_options(parser)
    parser.set_defaults(func=run)
