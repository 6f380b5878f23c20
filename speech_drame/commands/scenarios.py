"""`speech-drame scenarios`: write a dataset split's prompts as a RoleBench scenario file.

A system answers each scenario (``responses/SYSTEM/<id>.wav``) and ``bench --scenarios FILE``
scores the answers. The prompts are the split's distinct contexts
(:func:`speech_drame.rolebench.scenarios.dataset_prompts`): EvalBench rates one clip per system
and prompt, so an archetype prompt rated for five systems is one scenario. Each line holds the
scenario ``id``, its context columns and ``clips``, the dataset clips rated on that prompt.
"""

from __future__ import annotations

import argparse
import json

from .options import add_config_option


def run(args: argparse.Namespace) -> int:
    from ..atomic_io import write_text
    from ..rolebench.scenarios import read_dataset_prompts, scenario_from_row
    from ..schema import context_columns

    data, prompts = read_dataset_prompts(args.dataset, args.config, args.split)
    lines = []
    for sid, context, ids in prompts:
        scenario_from_row({"id": sid, **context}, data.config, f"{data.where}: prompt of {ids}")
        row = {"id": sid, **context_columns(context), "clips": ids}
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    out = write_text(args.out, "".join(lines))
    print(f"wrote {out}: {len(lines)} {data.config} scenarios, the distinct prompts of the "
          f"{data.n_rows} clips of {data.where}")  # fmt: skip
    print(f"answer each as RESPONSES/SYSTEM/<id>.wav, then: speech-drame bench --scenarios {out} "
          "--systems-dir RESPONSES --out RUN")  # fmt: skip
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("scenarios", help=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("--dataset", required=True, help="built dataset folder")
    add_config_option(parser)
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", required=True, metavar="SCENARIOS.jsonl", help="file to write")
    parser.set_defaults(func=run)
