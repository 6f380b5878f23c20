"""`speech-drame agreement`: inter-annotator agreement and the human ceiling of a split."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from ..labels import describe_label_policy
from .options import add_config_option, add_label_policy_option


def agreement_report(
    dataset: str,
    config: str,
    split: str,
    label_policy: str,
    ceiling_method: str,
    per_sample: bool,
) -> dict[str, Any]:
    """Per dimension: Appendix K agreement, its counts and the leave-one-out human ceiling,
    with null ratings treated by ``label_policy`` (:mod:`speech_drame.labels`). Reads the
    ratings only: an annotation-only build (no audio) serves as well."""
    from ..data.reader import open_split
    from ..schema import SCORE_RANGE, SEMANTIC_MATCH, check_config, dimensions
    from ..stats import agreement, annotator_matrices, human_ceiling

    check_config(config)
    policy = describe_label_policy(label_policy)
    data = open_split(dataset, config, split)
    read = list(data.rows(["id", "annotations"]))
    rows = [r["annotations"] for r in read]
    dims = list(dimensions(config))
    if rows and SEMANTIC_MATCH in rows[0]:
        dims.append(SEMANTIC_MATCH)
    mats = annotator_matrices(rows, dims, label_policy=label_policy)
    report: dict[str, Any] = {
        "dataset": dataset,
        "config": config,
        "split": split,
        "samples": data.n_rows,
        **policy,
        "score_range": SCORE_RANGE,
        "ceiling_method": ceiling_method,
        "dimensions": {},
    }
    ids = [r["id"] for r in read]
    for dim in dims:
        a = agreement(mats[dim])
        c = human_ceiling(mats[dim], ceiling_method)
        entry: dict[str, Any] = {
            "agreement": a.overall,
            "mean_std": a.mean_std,
            "samples_used": a.n_samples,
            "samples_ignored": a.n_ignored,
            "null_ratings": a.n_null,
            "null_ratings_counted_as_1": mats[dim].n_filled,
            "null_ratings_left_out": a.n_null - mats[dim].n_filled,
            "ceiling": c.ceiling,
            "ceiling_per_position": c.per_position.tolist(),
            "ceiling_counts": c.counts.tolist(),
        }
        if c.note:
            entry["ceiling_note"] = c.note
        if per_sample:
            entry["per_sample"] = a.per_sample(ids)
        report["dimensions"][dim] = entry
    return report


def format_report(report: dict[str, Any]) -> str:
    from ..schema import RUBRIC_NAMES

    def num(value: float, width: int) -> str:
        return f"{'n/a':>{width}}" if math.isnan(value) else f"{value:>{width}.3f}"

    paper = report["label_policy"] == "paper"
    nulls = "nulls as 1" if paper else "nulls out"
    lines = [
        f"{report['config']}/{report['split']} of {report['dataset']}: {report['samples']} samples, "
        f"R = {report['score_range']}",
        f"label policy {report['label_policy']}: {report['label_policy_rule']}",
        f"{'dimension':36s}{'agreement':>10}{'mean std':>10}{'used':>7}{'<2 ratings':>11}"
        f"{nulls:>12}{'ceiling':>9}",
    ]
    lines.append("-" * len(lines[2]))
    for dim, e in report["dimensions"].items():
        n = e["null_ratings_counted_as_1" if paper else "null_ratings_left_out"]
        lines.append(
            f"{RUBRIC_NAMES.get(dim, dim):36s}{num(e['agreement'], 10)}{num(e['mean_std'], 10)}"
            f"{e['samples_used']:>7}{e['samples_ignored']:>11}{n:>12}{num(e['ceiling'], 9)}"
        )
    lines.append(
        f"agreement: 1 - mean per-sample std / R (Speech-DRAME Appendix K); ceiling: "
        f"leave-one-annotator-out {report['ceiling_method']} correlation with the other annotators"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..atomic_io import strict_json, write_json

    report = agreement_report(
        args.dataset, args.config, args.split, args.label_policy, args.ceiling, args.per_sample
    )
    written = write_json(args.json_out, report, indent=2) if args.json_out else None
    if args.json:
        print(json.dumps(strict_json(report), indent=2))
    else:
        print(format_report(report))
    if written:
        print(f"wrote {written}", file=sys.stderr if args.json else sys.stdout)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("agreement", help=__doc__.split(": ", 1)[1])
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder or name")
    add_config_option(parser, required=False, default="realism")
    parser.add_argument("--split", default="test")
    add_label_policy_option(
        parser, "(a gated N/A, or a quality rating after a failed Content Pass; counted either way)"
    )
    parser.add_argument(
        "--ceiling", default="pearson", choices=("pearson", "spearman"), help="ceiling correlation"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--json-out", metavar="PATH", help="also write the report as JSON here")
    parser.add_argument(
        "--per-sample", action="store_true", help="include per-sample details in the JSON"
    )
    parser.set_defaults(func=run)
