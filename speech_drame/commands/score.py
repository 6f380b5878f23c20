"""`speech-drame score`: score role-play clips offline with the LiteScorer or DRAME-Eval."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")  # formats load_audio reads (libsndfile)

CONTEXT_OPTIONS = {"archetype": ("question",), "realism": ("profile", "scene", "traits")}
DRAME_EVAL = "drame-eval:"  # --scorer drame-eval:PATH_OR_HUB_ID selects the audio-LLM evaluator
DRAME_EVAL_FIELDS = {  # context option -> the dataset column the DRAME-Eval prompt reads
    "question": "question",
    "profile": "char_profile",
    "scene": "local_scene",
    "traits": "char_style",
}


def expand_clips(paths: list[str]) -> list[str]:
    """Files as given; folders expanded (recursively, sorted) to their audio files."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += sorted(str(f) for f in path.rglob("*") if f.suffix.lower() in AUDIO_SUFFIXES)
        else:
            out.append(p)
    return out


def format_clip(result) -> str:
    """One clip as a small table: score and 1..5 distribution per dimension, after what reading
    the audio did (the 30 s cut, the peak and any scaling into [-1, 1])."""
    from speech_drame.schema import RUBRIC_NAMES

    lines = [f"{result.source}"]
    if result.audio is not None:
        lines.append(f"  audio: {result.audio.summary()}")
    if result.transcript:
        lines.append(f"  transcript: {result.transcript!r}")
    if result.content_pass is not None:
        lines.append(f"  {'Content Pass probability':<36}{result.content_pass:6.3f}")
    lines.append(
        f"  {'dimension':<36}{'score':>6}   " + " ".join(f"{'p' + str(k):>5}" for k in range(1, 6))
    )
    for dim, score in result.scores.items():
        dist = " ".join(f"{p:5.2f}" for p in result.distributions[dim])
        lines.append(f"  {RUBRIC_NAMES[dim]:<36}{score:6.2f}   {dist}")
    return "\n".join(lines)


def score_with_drame_eval(
    spec: str, mode: str, clips: list[str], context: dict[str, str], progress: bool = False
):
    """``(scored, errors)`` by clip index, with a DRAME-Eval folder or Hub id ``spec``.

    Clips are read and decoded one batch at a time inside the scoring loop, so memory does not
    grow with their number. Results take the LiteScorer's output form (``transcript`` stays
    empty: no ASR here).
    """
    from speech_drame.schema import CONTENT_PASS
    from speech_drame.scorers.drame_eval import DrameEvalScorer
    from speech_drame.scorers.lite import ClipScores, ScorerError

    scorer = DrameEvalScorer.from_pretrained(spec)
    if scorer.config != mode:
        raise ScorerError(f"{spec}: a DRAME-Eval evaluator for {scorer.config}, not {mode}")
    fields = {DRAME_EVAL_FIELDS[option]: value for option, value in context.items()}
    scored, errors = {}, {}
    for i, result in enumerate(scorer.score_files(clips, fields, progress=progress)):
        if not result.ok:
            errors[i] = result.error
            continue
        dims = [d for d in result.scores if d != CONTENT_PASS]
        cp = result.scores.get(CONTENT_PASS)
        scored[i] = ClipScores(
            clips[i],
            {d: result.scores[d].expected for d in dims},
            {d: list(result.scores[d].probabilities) for d in dims},
            content_pass=cp.expected if cp else None,
            audio=result.audio,
        )
    return scored, errors


def run(args: argparse.Namespace) -> int:
    from speech_drame.scorers.lite import ScorerError, check_blueprint, load_scorer

    missing = [f"--{c}" for c in CONTEXT_OPTIONS[args.mode] if not getattr(args, c)]
    if missing:
        print(f"error: --mode {args.mode} needs {' '.join(missing)}", file=sys.stderr)
        return 2
    clips = expand_clips(args.clips)
    if not clips:
        print(
            f"error: no audio files ({', '.join(AUDIO_SUFFIXES)}) in {args.clips}",
            file=sys.stderr,
        )
        return 2
    context = {c: getattr(args, c) for c in CONTEXT_OPTIONS[args.mode]}
    if args.scorer and args.scorer.startswith(DRAME_EVAL):
        try:
            scored, errors = score_with_drame_eval(
                args.scorer[len(DRAME_EVAL) :],
                args.mode,
                clips,
                context,
                progress=len(clips) > 1 and not args.quiet,
            )
        except (ScorerError, OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        from speech_drame.features.blueprint import extract_blueprints

        try:
            scorer = load_scorer(args.mode, args.scorer)
        except ScorerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        batch = extract_blueprints(
            clips,
            [context] * len(clips),
            cache=None if args.no_cache else (args.cache_dir or "default"),
            progress=len(clips) > 1 and not args.quiet,
        )
        errors = dict(batch.errors)
        ok = []
        for i, b in enumerate(batch.blueprints):
            if b is None:
                continue
            try:
                check_blueprint(b, args.mode)  # e.g. an undefined feature: not scored
            except ValueError as exc:
                errors[i] = str(exc)
                continue
            ok.append(i)
        blueprints = [batch.blueprints[i] for i in ok]
        scored = dict(zip(ok, scorer.score_blueprints(blueprints), strict=True))
        errors = dict(sorted(errors.items()))
    if args.json:
        rows = [
            scored[i].to_dict() if i in scored else {"source": clip, "error": errors[i]}
            for i, clip in enumerate(clips)
        ]
        print(json.dumps(rows, indent=1))
    else:
        for i in sorted(scored):
            print(format_clip(scored[i]))
    for reason in errors.values():
        print(f"not scored: {reason}", file=sys.stderr)
    if errors:
        print(f"{len(errors)} of {len(clips)} clip(s) could not be scored", file=sys.stderr)
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
    parser.add_argument("--mode", choices=tuple(CONTEXT_OPTIONS), required=True)
    parser.add_argument("--question", help="archetype: the role-play prompt (role and scene)")
    parser.add_argument("--profile", help="realism: the character's global profile")
    parser.add_argument("--scene", help="realism: the local scene")
    parser.add_argument("--traits", help="realism: the character's style traits")
    parser.add_argument(
        "--scorer",
        help="trained LiteScorer folder (default: artifacts/lite_scorer), or "
        "drame-eval:PATH_OR_HUB_ID for a DRAME-Eval audio-LLM evaluator",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--cache-dir", help="feature cache folder (default: $SPEECH_DRAME_CACHE)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)
