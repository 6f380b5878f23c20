"""`speech-drame paraling`: SpeechParaling-Bench (candidates vs a baseline, pairwise)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ._pairwise_args import add_chat_arguments, add_feature_cache_argument, chat_client


def _table(report: dict, baseline: str) -> str:
    rows = [("all", report["overall"])] + sorted(report["by_task"].items())
    systems = sorted({c for _, g in rows if g for c in g["candidates"]})
    head = f"{'task':<24s}" + "".join(f"{s:>14s}" for s in [baseline, *systems])
    lines = [head]
    for name, group in rows:
        if not group:
            continue
        values = [group["baseline"]["score"]]
        values += [group["candidates"].get(s, {}).get("score", math.nan) for s in systems]
        cells = [f"{v:>14.1f}" if math.isfinite(v) else f"{'n/a':>14s}" for v in values]
        lines.append(f"{name:<24s}" + "".join(cells))
    bias = report["position_bias"]
    lines.append(
        f"failures: {report['n_failures']}/{report['n_judgments']}; first-played wins "
        f"{bias['first_wins']} of {bias['first_wins'] + bias['second_wins']} decisive verdicts"
    )
    if "human_agreement" in report:
        agreement = report["human_agreement"]
        rho = agreement["spearman"]
        shown = f"{rho:.3f}" if math.isfinite(rho) else agreement.get("note", "undefined")
        lines.append(f"Spearman vs human ranking: {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..audio import AudioError
    from ..jsonl import read_objects
    from ..judges import JudgeRequestError
    from ..protocols.paraling import demo, queries
    from ..scorers.lite import ScorerError

    try:
        if args.action == "build":
            built = [queries.build_query(spec) for _, spec in read_objects(args.specs)]
            if args.speak:
                built = queries.synthesize_queries(built, args.speak)
            print(f"wrote {queries.write_queries(built, args.out)}")
            return 0
        if args.action == "demo":
            demo.build_demo(args.out)
            print(demo.next_steps(args.out))
            return 0
        return _run_protocol(args)
    except (AudioError, ValueError, OSError, JudgeRequestError, ScorerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run_protocol(args: argparse.Namespace) -> int:
    from ..protocols.paraling.judges import ChatPairJudge, OfflineComparator
    from ..protocols.paraling.protocol import run_paraling
    from ..protocols.paraling.queries import load_queries
    from ..protocols.paraling.rule_scorer import rule_aspect_scores

    qs = load_queries(args.queries)
    if args.judge == "chat":
        judge = ChatPairJudge(chat_client(args), temperature=args.temperature)
    elif args.scorer == "lite":
        from ..protocols.paraling.lite_aspects import LiteAspectScorer
        from ..scorers.lite import load_scorer

        aspects = LiteAspectScorer(load_scorer("archetype", args.lite_scorer))
        judge = OfflineComparator(aspects, margin=args.margin, context="all")
    else:
        judge = OfflineComparator(rule_aspect_scores, margin=args.margin)
    human = json.loads(Path(args.human).read_text(encoding="utf-8")) if args.human else None
    result = run_paraling(
        qs,
        args.responses,
        args.baseline,
        args.candidates,
        judge,
        seed=args.seed,
        cache=args.feature_cache,
        human=human,
    )
    if args.out:
        written = result.write(args.out)  # first: nothing printed below can lose the run
    print(_table(result.report, args.baseline))
    if args.out:
        print(f"wrote {written}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("paraling", help=__doc__.split(": ", 1)[1])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    build = actions.add_parser("build", help="turn sentence + dimension specs into a query file")
    build.add_argument("specs", help="JSONL of specs (see protocols/paraling/queries.py)")
    build.add_argument("--out", required=True, help="query JSONL to write")
    build.add_argument("--speak", help="folder for spoken queries (offline piper TTS)")

    demo = actions.add_parser("demo", help="write the demo queries and three demo systems")
    demo.add_argument("--out", required=True, help="folder for queries.jsonl and responses/")

    run_ = actions.add_parser("run", help="judge candidates against the baseline and score")
    run_.add_argument("queries", help="query JSONL")
    run_.add_argument("--responses", required=True, help="folder of <system>/<query id>.wav")
    run_.add_argument("--baseline", required=True, help="the baseline system's folder name")
    run_.add_argument("--candidates", nargs="+", required=True, help="candidate system names")
    run_.add_argument("--judge", choices=("offline", "chat"), default="offline")
    run_.add_argument("--seed", type=int, default=0, help="seed of the play order (recorded)")
    run_.add_argument(
        "--margin", type=float, default=0.25, help="offline: rating-sum difference that is a tie"
    )
    run_.add_argument(
        "--scorer",
        choices=("lite", "rules"),
        default="rules",
        help="offline: the trained default LiteScorer (archetype mode) or blueprint rules",
    )
    run_.add_argument("--lite-scorer", help="LiteScorer folder (default: artifacts/lite_scorer)")
    run_.add_argument("--human", help="JSON {system: human score} to rank-correlate with")
    run_.add_argument("--out", help="JSON file for the report and every judgment")
    add_feature_cache_argument(run_)
    add_chat_arguments(run_)
    for sub in (build, demo, run_):
        sub.set_defaults(func=run)
