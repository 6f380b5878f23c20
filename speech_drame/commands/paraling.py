"""`speech-drame paraling`: SpeechParaling-Bench (candidates vs a baseline, pairwise)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ..atomic_io import strict_json
from ..jsonl import read_objects
from .options import (
    add_chat_options,
    add_feature_cache_options,
    add_judge_options,
    add_scorer_settings,
    chat_client,
    feature_cache,
    scorer_from_args,
)

RULES = "rules"  # --scorer: the blueprint rule scorer (no trained model)


def _table(report: dict, baseline: str) -> str:
    judge, failed_as = report["judge"], report["failed_as"]
    rows = [("all", report["overall"])] + sorted(report["by_task"].items())
    rows += [(f"  {d}", g) for d, g in sorted(report["by_dimension"].items())]
    systems = sorted({c for _, g in rows if g for c in g["candidates"]})
    head = f"{'task / dimension':<24s}" + "".join(f"{s:>14s}" for s in [baseline, *systems])
    lines = [
        f"judge: {judge['description']}",
        f"verdict unit: {report['verdict_unit']}",
        f"--failed-as {failed_as['value']}: {failed_as['definition']}",
        f"baseline {baseline}: its wins against each candidate, weighted by the candidates' "
        "points (equation 3); candidates: their points out of 100",
        head,
    ]
    for name, group in rows:
        if not group:
            continue
        values = [group["baseline"]["score"]]
        values += [group["candidates"].get(s, {}).get("score", math.nan) for s in systems]
        cells = [f"{v:>14.1f}" if math.isfinite(v) else f"{'n/a':>14s}" for v in values]
        lines.append(f"{name:<24s}" + "".join(cells))
    bias = report["position_bias"]
    failed = {c: s["failures"] for c, s in report["overall"].get("candidates", {}).items()}
    lines.append(
        f"failures: {report['n_failures']}/{report['n_judgments']} comparisons, "
        f"{report['n_failed_units']}/{report['n_units']} verdict units "
        f"({', '.join(f'{c} {n}' for c, n in failed.items())}); first-played wins "
        f"{bias['first_wins']} of {bias['first_wins'] + bias['second_wins']} decisive verdicts"
    )
    if "human_agreement" in report:
        agreement = report["human_agreement"]
        rho = agreement["spearman"]
        shown = f"{rho:.3f}" if math.isfinite(rho) else agreement.get("note", "undefined")
        lines.append(f"Spearman vs human ranking: {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..protocols.paraling import demo, queries

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


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def offline_scorer(args: argparse.Namespace):
    """The offline comparator's scorer: the rule scorer, or the archetype scorer ``--scorer``
    names (a chat judge takes the chat endpoint and chat judge options)."""
    from ..protocols.paraling.rule_scorer import rule_aspect_scores

    if args.scorer == RULES:
        return rule_aspect_scores
    # a response the scorer cannot score fails its verdicts, which then count by --failed-as
    scorer = scorer_from_args(argparse.Namespace(**{**vars(args), "failed_as": "skip"}),
                              "archetype", on_retry=_say)  # fmt: skip
    _say(f"scorer: {scorer.description} [{scorer.id}]")
    return scorer


def _run_protocol(args: argparse.Namespace) -> int:
    from ..protocols.paraling.judges import ChatPairJudge, OfflineComparator
    from ..protocols.paraling.protocol import run_paraling
    from ..protocols.paraling.queries import load_queries

    qs = load_queries(args.queries)
    human = json.loads(Path(args.human).read_text(encoding="utf-8")) if args.human else None
    if args.judge == "chat":
        if args.scorer != RULES:
            raise ValueError("--scorer is the offline comparator's: use it with --judge offline")
        judge = ChatPairJudge(
            chat_client(args, on_retry=_say),
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            query_audio=args.query_audio,
        )
    else:
        judge = OfflineComparator(offline_scorer(args), margin=args.margin)
    result = run_paraling(
        qs,
        args.responses,
        args.baseline,
        args.candidates,
        judge,
        seed=args.seed,
        cache=feature_cache(args),
        human=human,
        failed_as=args.failed_as,
    )
    if args.json_out:
        written = result.write(args.json_out)  # first: nothing printed below can lose the run
    if args.json:
        print(json.dumps(strict_json(result.to_dict()), indent=1))
    else:
        print(_table(result.report, args.baseline))
    if args.json_out:
        _say(f"wrote {written}")
    for name, reason in result.report["failures"].items():
        _say(f"failed {name}: {reason}")
    return 1 if result.failures else 0


def register(subparsers) -> None:
    from ..protocols.paraling.scoring import FAILED_AS
    from ..scorers.specs import SPEC_HELP

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
    run_.add_argument(
        "--judge",
        choices=("offline", "chat"),
        default="offline",
        help="offline: a stand-in comparator rates both responses with --scorer (not the "
        "released audio-LLM judge); chat: an audio LLM hears both (--endpoint, --model)",
    )
    run_.add_argument("--seed", type=int, default=0, help="seed of the play order (recorded)")
    run_.add_argument(
        "--margin", type=float, default=0.25, help="offline: rating-sum difference that is a tie"
    )
    run_.add_argument(
        "--query-audio",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="chat: send the spoken query too (default: the query as text only, as released)",
    )
    run_.add_argument("--human", help="JSON {system: human score} to rank-correlate with")
    run_.add_argument(
        "--json-out", metavar="PATH", help="JSON file for the report and every judgment"
    )
    run_.add_argument(
        "--json", action="store_true", help="print the report and every judgment as JSON"
    )
    group = run_.add_argument_group("offline comparator")
    group.add_argument(
        "--scorer",
        metavar="SPEC",
        default=RULES,
        help=f"'{RULES}' (blueprint rules, no trained model) or an archetype scorer: "
        f"{SPEC_HELP}; a judge: scorer takes the chat endpoint and chat judge options",
    )
    add_scorer_settings(group)
    add_feature_cache_options(run_)
    add_chat_options(run_, temperature=1.0)  # the released judge samples at 1.0
    add_judge_options(run_, failed_as=False)  # this command's --failed-as counts verdict units
    run_.add_argument(
        "--failed-as",
        choices=tuple(FAILED_AS),
        default="loss",
        help="how a failed verdict unit counts: "
        + "; ".join(f"{k}: {v}" for k, v in FAILED_AS.items()),
    )
    for sub in (build, demo, run_):
        sub.set_defaults(func=run)
