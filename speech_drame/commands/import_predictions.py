"""`speech-drame import-predictions`: read the official pipelines' outputs, write a predictions
file and print its paper table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .table import add_table_options, emit, table_report


def format_import(report: dict[str, Any]) -> str:
    lines = [
        f"read {report['clips']} clips of {report['config']} from {len(report['files'])} "
        f"{'fine-tuning result' if report['format'] == 'finetune' else 'zero/few-shot trial'} "
        f"file(s); trials per clip {report['trials_per_clip'][0]}..{report['trials_per_clip'][1]}",
        f"scores: {report['score']}",
        f"unusable answers: {report['unusable']}; {report['failed_rule']}",
    ]
    grouped: dict[tuple[str, str, str], list[str]] = {}  # one line per answer and reason
    for u in report["unusable_answers"]:
        grouped.setdefault((u["where"], u["id"], u["reason"]), []).append(u["dimension"])
    lines += [
        f"  {where} {clip} ({', '.join(dims)}): {reason}"
        for (where, clip, reason), dims in list(grouped.items())[:5]
    ]
    if report["unusable"]:
        by_dim = ", ".join(f"{d} {n}" for d, n in report["unusable_by_dimension"].items())
        lines.append(f"  by dimension: {by_dim}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..atomic_io import write_text
    from ..official_formats import import_official
    from ..paper_tables import parse_predictions, render_table

    imported = import_official(args.inputs, args.config, args.score, args.failed_as)
    rows = imported.rows()
    # scored exactly as `table` reads the file, which is written once the table stands
    preds = parse_predictions(((f"{args.out}:{i}", r) for i, r in enumerate(rows, 1)), args.out)
    table = table_report(args, [preds], [args.name or Path(args.out).stem])
    lines = [json.dumps(r, ensure_ascii=False, allow_nan=False) for r in rows]
    out = write_text(args.out, "".join(f"{r}\n" for r in lines))
    summary = {**imported.report(), "out": str(out)}
    text = f"{format_import(summary)}\nwrote {out}\n\n{render_table(table, args.format)}"
    emit(args, {"import": summary, "table": table}, text)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "import-predictions", help=" ".join(__doc__.split(": ", 1)[1].split())
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="zero/few-shot JSONL files (one per trial, averaged), or fine-tuning result "
        "folders / *.json files (one JSON array per dimension)",
    )
    parser.add_argument("--out", required=True, help="predictions JSONL to write")
    parser.add_argument("--name", help="row label of the table (default: the --out file stem)")
    parser.add_argument(
        "--score",
        choices=("probability", "model"),
        help="fine-tuning results: probability_score (the expectation) or model_score "
        "(the generated label) (default: probability)",
    )
    parser.add_argument(
        "--failed-as",
        choices=("skip", "1"),
        default="skip",
        help="skip: an unusable answer (failed call, unparseable or missing answer, null or "
        "out-of-scale score) is counted and not scored; 1: it counts as 1, Content Pass as a "
        "pass (the official scoring of the paper's zero/few-shot tables)",
    )
    add_table_options(parser)
    parser.set_defaults(func=run)
