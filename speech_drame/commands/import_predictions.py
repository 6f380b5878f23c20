"""`speech-drame import-predictions`: read the official pipelines' outputs, write a predictions
file and print its paper table.

The references are ``--dataset``'s split, or, for fine-tuning result folders without
``--dataset``, the ``ground_truth_ratings`` the result files carry (named as such in the output).
With both, the clips on which the two disagree are counted and listed.
"""

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
        f"unusable answers: {report['unusable_lines']} ({report['unusable']} clip-dimension "
        f"scores); {report['failed_rule']}",
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


def result_references(imported: Any) -> Any:
    """The :class:`~speech_drame.paper_tables.References` that fine-tuning result files carry
    (their ``ground_truth_ratings``); a field a clip's records lack is an empty list (left out
    of that dimension)."""
    from ..paper_tables import References
    from ..prompts import scored_dimensions

    if not imported.references:
        raise ValueError(
            "the fine-tuning result files carry no ground_truth_ratings: give --dataset (a built "
            "dataset folder) for the reference ratings"
        )
    dims = scored_dimensions(imported.config)
    ids = list(imported.references)
    annotations = [{d: imported.references[c].get(d, []) for d in dims} for c in ids]
    source = f"ground_truth_ratings of the {len(imported.files)} fine-tuning result file(s)"
    return References(source, ids, annotations)


def disagreements(results: Any, dataset: Any, config: str) -> list[dict[str, Any]]:
    """Per clip and dimension in both, where the result files' ratings differ from the
    dataset's (``N/A`` and null compare equal: the dataset keeps ``N/A`` as null)."""
    from ..official_formats import clip_key
    from ..prompts import scored_dimensions

    index = {clip_key(c): i for i, c in enumerate(dataset.ids)}
    out = []
    for clip, ann in zip(results.ids, results.annotations, strict=True):
        if clip_key(clip) not in index:
            continue
        theirs = dataset.annotations[index[clip_key(clip)]]
        for dim in scored_dimensions(config):
            if ann[dim] and list(theirs[dim]) != list(ann[dim]):
                out.append({"id": clip, "dimension": dim, "dataset": list(theirs[dim]),
                            "results": list(ann[dim])})  # fmt: skip
    return out


def run(args: argparse.Namespace) -> int:
    from ..atomic_io import write_text
    from ..official_formats import import_official
    from ..paper_tables import load_references, parse_predictions, render_table

    imported = import_official(args.inputs, args.config, args.score, args.failed_as)
    if args.dataset is not None:
        references = load_references(args.dataset, args.config, args.split)
        carried = result_references(imported) if imported.references else None
    elif imported.source_format != "finetune":
        raise ValueError(
            "zero/few-shot outputs carry no reference ratings: give --dataset (a built dataset "
            "folder, e.g. one built from the public EvalBench)"
        )
    else:
        references = carried = result_references(imported)
    rows = imported.rows()
    # scored exactly as `table` reads the file, which is written once the table stands
    preds = parse_predictions(((f"{args.out}:{i}", r) for i, r in enumerate(rows, 1)), args.out)
    table = table_report(args, [preds], [args.name or Path(args.out).stem], references)
    lines = [json.dumps(r, ensure_ascii=False, allow_nan=False) for r in rows]
    out = write_text(args.out, "".join(f"{r}\n" for r in lines))
    summary = {**imported.report(), "out": str(out)}
    text = f"{format_import(summary)}\nwrote {out}"
    if args.dataset is not None and carried is not None:
        differ = disagreements(carried, references, args.config)
        summary["references_disagree"] = {"count": len(differ), "items": differ}
        text += (
            f"\nreference check: the result files' ground_truth_ratings and {references.source} "
            f"disagree on {len(differ)} clip-dimension(s)"
            + "".join(
                f"\n  {d['id']} {d['dimension']}: dataset {d['dataset']}, results {d['results']}"
                for d in differ[:5]
            )
            + (f"\n  ... ({len(differ) - 5} more in the JSON report)" if len(differ) > 5 else "")
        )
    text += f"\n\n{render_table(table, args.format)}"
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
    add_table_options(
        parser,
        "built dataset folder holding the reference ratings (default: fine-tuning result files "
        "are scored against the ground_truth_ratings they carry; zero/few-shot outputs need it)",
        None,
    )
    parser.set_defaults(func=run)
