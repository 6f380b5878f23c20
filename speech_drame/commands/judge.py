"""`speech-drame judge`: score clips with a zero/few-shot audio LLM over an OpenAI-style API.

``judge CLIP... --endpoint URL --model NAME`` is ``score CLIP... --scorer judge:NAME@URL`` with
the judge's own report: every request behind the scores, its failures and what counted as 1.
The endpoint is checked once before the first request: when nothing listens there the command
stops at once with one line naming the URL. A progress bar runs over the clips, and retries
(429/5xx/timeouts) are printed to stderr as they happen.
"""

from __future__ import annotations

import argparse
import json
import sys

from .options import (
    add_chat_options,
    add_config_option,
    add_context_options,
    add_judge_options,
)
from .score import score_clips


def judge_spec(model: str | None, endpoint: str | None) -> str:
    """The scorer spec of ``--model`` and ``--endpoint``: ``judge:MODEL@URL``, either part
    left out when not given (its environment variable names it).

    Example:
        >>> judge_spec("qwen2-audio", "http://127.0.0.1:8000/v1"), judge_spec(None, None)
        ('judge:qwen2-audio@http://127.0.0.1:8000/v1', 'judge')
    """
    target = (model or "") + (f"@{endpoint}" if endpoint else "")
    return f"judge:{target}" if target else "judge"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("clips", nargs="+", metavar="CLIP", help="audio files or folders")
    add_config_option(parser, old="--mode")
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

    from ..labels import describe_label_policy

    def say(line: str) -> None:  # a line on stderr that does not break the progress bar
        tqdm.write(line, file=sys.stderr)

    if args.shots and not args.train_dataset:
        raise ValueError("--shots needs --train-dataset")
    args.scorer = judge_spec(args.model, args.endpoint)
    scorer, stream = score_clips(args, announce=False, on_retry=say, single_bar=True)
    scored = list(stream)
    results = [s.judgement for s in scored if s.judgement is not None]
    errors = [(s.id, s.error) for s in scored if s.judgement is None and not s.ok]
    stats = scorer.stats
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
    parser = subparsers.add_parser(
        "judge",
        help=__doc__.split("\n", 1)[0].split(": ", 1)[1],
        description=__doc__.split("\n\n")[1].replace("\n", " ").replace("``", ""),
    )
    add_arguments(parser)
    # the score path's settings of the other scorer kinds: none
    parser.set_defaults(func=run, workers=None, batch_size=None, device=None, decoding=None,
                        feature_cache=None, no_feature_cache=True)  # fmt: skip
