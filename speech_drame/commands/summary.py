"""`speech-drame summary`: rows, hours and label distributions of a dataset; flags synthetic labels."""

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
    summary = summarize_dataset(args.dataset)
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("summary", help=__doc__.split(": ", 1)[1])
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)
