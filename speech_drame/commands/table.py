"""`speech-drame table`: the paper's evaluator table (Table 2 or 3) from predictions files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .options import add_config_option, add_label_policy_option


def add_table_options(
    parser: argparse.ArgumentParser,
    dataset_help: str = "built dataset folder holding the reference ratings",
    dataset_default: str | None = "speech-drame",
) -> None:
    """The reference dataset, label policy, bootstrap and output options of a paper table."""
    from ..paper_tables import FORMATS

    group = parser.add_argument_group("table")
    group.add_argument("--dataset", default=dataset_default, help=dataset_help)
    add_config_option(group)
    group.add_argument("--split", default="test")
    add_label_policy_option(group, "in the references")
    group.add_argument("--format", default="markdown", choices=FORMATS, help="table format")
    group.add_argument(
        "--bootstrap", type=int, default=0, metavar="N", help="resamples for 95%% intervals"
    )
    group.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    group.add_argument(
        "--paper",
        action="store_true",
        help="add the paper's own rows for this config and split (Table 2: archetype test, "
        "Table 3: realism test, Table 4: realism test_real), as published",
    )
    group.add_argument("--json", action="store_true", help="print the report as JSON")
    group.add_argument("--json-out", metavar="PATH", help="also write the report as JSON here")


def table_report(
    args: argparse.Namespace, predictions: list, names: list[str] | None, references: Any = None
):
    """:func:`~speech_drame.paper_tables.paper_table` with the options of
    :func:`add_table_options`, against ``references`` (a
    :class:`~speech_drame.paper_tables.References`) when given, else ``--dataset``'s split."""
    from ..paper_tables import paper_table

    return paper_table(
        predictions,
        references if references is not None else args.dataset,
        args.config,
        args.split,
        names=names,
        label_policy=args.label_policy,
        bootstrap=args.bootstrap,
        seed=args.seed,
        paper=args.paper,
    )


def emit(args: argparse.Namespace, report: dict[str, Any], text: str) -> None:
    """Print ``text`` (or ``report`` as JSON with ``--json``) and write ``--json-out``."""
    from ..atomic_io import strict_json, write_json

    written = write_json(args.json_out, report, indent=2) if args.json_out else None
    print(json.dumps(strict_json(report), indent=2) if args.json else text)
    if written:
        print(f"wrote {written}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from ..paper_tables import render_table

    report = table_report(args, args.predictions, args.name)
    emit(args, report, render_table(report, args.format))
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("table", help=__doc__.split(": ", 1)[1])
    parser.add_argument(
        "--predictions",
        nargs="+",
        required=True,
        metavar="P",
        help="predictions JSONL files (import-predictions --out, or train.py's "
        "<output_dir>/evaluator/predictions/<split>.jsonl); one row each",
    )
    parser.add_argument(
        "--name", nargs="+", metavar="NAME", help="row labels, one per file (default: file stem)"
    )
    add_table_options(parser)
    parser.set_defaults(func=run)
