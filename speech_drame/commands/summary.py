"""`speech-drame summary`: rows, hours, languages and labels of a dataset; flags synthetic labels.

With ``--scorer`` it also prints a trained LiteScorer's evaluation tables (per language too).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from ..data.summary import format_summary, summarize_dataset

    if not (Path(args.dataset) / "build_report.json").is_file():
        raise FileNotFoundError(
            f"{args.dataset}: not a built dataset folder (no build_report.json); "
            "build one with `speech-drame build`"
        )
    if args.json and args.scorer is not None:
        raise ValueError(
            f"--scorer prints tables; the JSON of its evaluation is {args.scorer}/metrics.json"
        )
    summary = summarize_dataset(args.dataset)
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    if args.scorer is not None:
        from ..scorers.lite.training import read_reports
        from .lite_report import format_table

        for config, reports in read_reports(args.scorer).items():
            print(f"\nLiteScorer evaluation ({args.scorer}/{config}):\n")
            print(format_table(config, reports))
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("summary", help=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--scorer",
        metavar="DIR",
        help="also print the evaluation tables train-lite wrote to DIR/metrics.json "
        "(per split and per language; not with --json: read that file instead)",
    )
    parser.set_defaults(func=run)
