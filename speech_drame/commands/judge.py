"""`speech-drame judge`: score clips with a zero/few-shot audio LLM over an OpenAI-style API.

The endpoint is checked once before the first request: when nothing listens there the command
stops at once with one line naming the URL. A progress bar runs over the clips, and retries
(429/5xx/timeouts) are printed to stderr as they happen.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..schema import CONFIGS
from .options import (
    add_chat_options,
    add_context_options,
    add_judge_options,
    context_from_args,
    judge_options,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("clips", nargs="+", metavar="CLIP", help="audio files to judge")
    parser.add_argument("--mode", required=True, choices=CONFIGS)
    add_context_options(parser)
    add_chat_options(parser, temperature=1.0)
    add_judge_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _table(results: list, errors: list[tuple[str, str]], scorer, corrupt: int = 0) -> str:
    pass_row = (
        "content_pass (P of pass)" if scorer.options.logprobs else "content_pass (share of runs)"
    )
    lines = [f"judge: {scorer.description}", f"{'clip':28s} {'dimension':32s} {'score':>6s}"]
    for result in results:
        rows = []
        if result.content_pass is not None:
            rows.append((pass_row, result.content_pass))
        rows += list(result.scores.items())
        for i, (name, value) in enumerate(rows or [("(no score)", None)]):
            clip = result.clip if i == 0 else ""
            shown = "-" if value is None else f"{value:.2f}"
            lines.append(f"{clip[-28:]:28s} {name:32s} {shown:>6s}")
    n_runs = sum(len(r.runs) for r in results)
    n_failed = sum(r.n_failures for r in results)
    failed_clips = sum(not r.ok for r in results) + len(errors)
    lines.append(
        f"failures: {n_failed} of {n_runs} requests; {failed_clips} of "
        f"{len(results) + len(errors)} clips without a full score"
    )
    lines += [f"  {r.clip}: {reason}" for r in results for reason in r.reasons]
    lines += [f"  {clip}: {reason}" for clip, reason in errors]
    if scorer.options.failed_as == "1":
        filled = [(r.clip, line) for r in results for line in r.filled]
        lines.append(f"counted as 1 (--failed-as 1): {len(filled)} of {n_runs} requests")
        lines += [f"  {clip}: {line}" for clip, line in filled]
    if corrupt:
        lines.append(f"{corrupt} corrupt cache entries ignored (their requests were sent again)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..audio import AudioError
    from ..judges import make_item
    from ..labels import describe_label_policy
    from ..scorers.judge import JudgeScorer

    def say(line: str) -> None:  # a line on stderr that does not break the progress bar
        tqdm.write(line, file=sys.stderr)

    context = context_from_args(args, args.mode)
    if args.shots and not args.train_dataset:
        raise ValueError("--shots needs --train-dataset")
    scorer = JudgeScorer(args.model, args.endpoint, args.mode, judge_options(args), on_retry=say)
    results, errors = [], []
    with tqdm(args.clips, unit="clip", file=sys.stderr, disable=args.quiet) as bar:
        for clip in bar:
            try:
                item = make_item(clip, clip_id=clip, **context)
            except AudioError as exc:
                errors.append((clip, str(exc)))
                continue
            results.append(scorer.judge.judge_item(item))  # EndpointUnreachable stops the run
    stats = scorer.client.stats
    if args.json:
        options = scorer.options
        out = {
            "judge": scorer.description,
            "judge_id": scorer.id,
            "failed_as": options.failed_as,
            "exemplars": options.exemplars if options.shots else None,
            **(describe_label_policy(options.label_policy) if options.shots else {}),
            "results": [r.to_dict() for r in results],
            "errors": [{"clip": c, "reason": m} for c, m in errors],
            "n_failures": sum(r.n_failures for r in results) + len(errors),
            "n_filled_requests": sum(len(r.filled) for r in results),
            "corrupt_cache_entries": stats.corrupt_cache_entries,
        }
        print(json.dumps(out, indent=2))
    else:
        print(_table(results, errors, scorer, stats.corrupt_cache_entries))
    return 1 if errors or any(not r.ok for r in results) else 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("judge", help=__doc__.split("\n", 1)[0].split(": ", 1)[1])
    add_arguments(parser)
    parser.set_defaults(func=run)
