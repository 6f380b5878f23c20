"""`speech-drame judge`: score clips with a zero/few-shot audio LLM over an OpenAI-style API.

The endpoint is checked once before the first request: when nothing listens there the command
stops at once with one line naming the URL. A progress bar runs over the clips, and retries
(429/5xx/timeouts) are printed to stderr as they happen.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("clips", nargs="+", metavar="CLIP", help="audio files to judge")
    parser.add_argument("--mode", required=True, choices=("archetype", "realism"))
    parser.add_argument("--question", default="", help="archetype: the role and scene prompt")
    parser.add_argument("--profile", default="", help="realism: the character profile")
    parser.add_argument("--scene", default="", help="realism: the local scene")
    parser.add_argument("--traits", default="", help="realism: the character style/traits")
    parser.add_argument(
        "--endpoint",
        help="base URL, e.g. http://127.0.0.1:8000/v1 (default: $SPEECH_DRAME_JUDGE_BASE_URL)",
    )
    parser.add_argument("--model", help="model name (default: $SPEECH_DRAME_JUDGE_MODEL)")
    parser.add_argument(
        "--rubric", type=Path, help="text file with the rubric put before the answer format"
    )
    parser.add_argument(
        "--runs", type=int, default=5, help="requests averaged per clip (JSON mode)"
    )
    parser.add_argument(
        "--temperature", type=float, default=1.0, help="JSON mode sampling temperature"
    )
    parser.add_argument("--max-tokens", type=int, help="JSON mode answer length limit")
    parser.add_argument(
        "--logprobs",
        action="store_true",
        help="one request per dimension; score = expectation over the tokens 1..5 (open models)",
    )
    parser.add_argument("--top-logprobs", type=int, default=20, help="logprob mode: top_logprobs")
    parser.add_argument(
        "--shots", type=int, default=0, help="few-shot exemplars (needs --train-dataset)"
    )
    parser.add_argument(
        "--train-dataset", type=Path, help="built dataset folder with a train split"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the exemplar draw")
    parser.add_argument(
        "--cache-dir", type=Path, help="response cache folder (reruns cost nothing)"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--max-retries", type=int, default=5, help="retries on 429/5xx/timeouts")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _table(results: list, errors: list[tuple[str, str]], corrupt: int = 0) -> str:
    lines = [f"{'clip':28s} {'dimension':32s} {'score':>6s}"]
    for result in results:
        rows = []
        if result.content_pass is not None:
            rows.append(("content_pass (share of runs)", result.content_pass))
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
    if corrupt:
        lines.append(f"{corrupt} corrupt cache entries ignored (their requests were sent again)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from ..audio import AudioError
    from ..judges import (
        ChatClient,
        ChatJudge,
        EndpointUnreachable,
        LogprobJudge,
        make_item,
        select_exemplars,
    )

    def say(line: str) -> None:  # a line on stderr that does not break the progress bar
        tqdm.write(line, file=sys.stderr)

    try:
        if args.shots and not args.train_dataset:
            raise ValueError("--shots needs --train-dataset")
        rubric = args.rubric.read_text(encoding="utf-8") if args.rubric else ""
        client = ChatClient(
            args.endpoint,
            args.model,
            timeout=args.timeout,
            max_retries=args.max_retries,
            cache_dir=args.cache_dir,
            on_retry=say,
        )
        exemplars = (
            select_exemplars(args.train_dataset, args.mode, args.shots, seed=args.seed)
            if args.shots
            else []
        )
        if args.logprobs:
            judge = LogprobJudge(
                client, args.mode, rubric, exemplars, top_logprobs=args.top_logprobs
            )
        else:
            judge = ChatJudge(
                client,
                args.mode,
                rubric,
                exemplars,
                runs=args.runs,
                temperature=args.temperature,
                max_tokens=args.max_tokens,
            )
    except (ValueError, OSError, AudioError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    context = {
        "question": args.question,
        "profile": args.profile,
        "scene": args.scene,
        "traits": args.traits,
    }
    results, errors = [], []
    with tqdm(args.clips, unit="clip", file=sys.stderr, disable=args.quiet) as bar:
        for clip in bar:
            try:
                item = make_item(clip, clip_id=clip, **context)
                results.append(judge.judge_item(item))
            except AudioError as exc:
                errors.append((clip, str(exc)))
            except (ValueError, EndpointUnreachable) as exc:
                bar.close()
                print(f"error: {exc}", file=sys.stderr)
                return 2
    if args.json:
        out = {
            "results": [r.to_dict() for r in results],
            "errors": [{"clip": c, "reason": m} for c, m in errors],
            "n_failures": sum(r.n_failures for r in results) + len(errors),
            "corrupt_cache_entries": client.stats.corrupt_cache_entries,
        }
        print(json.dumps(out, indent=2))
    else:
        print(_table(results, errors, client.stats.corrupt_cache_entries))
    return 1 if errors or any(not r.ok for r in results) else 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("judge", help=__doc__.split("\n", 1)[0].split(": ", 1)[1])
    add_arguments(parser)
    parser.set_defaults(func=run)
