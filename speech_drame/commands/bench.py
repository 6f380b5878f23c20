"""`speech-drame bench`: RoleBench leaderboard of systems' spoken responses to a scenario set.

Sharding: ``--rank R --world-size N`` in N processes started by hand (each scores every N-th
item into ``OUT/results.rank<R>.jsonl``; the last one to finish merges them and writes the
leaderboard), or ``torchrun --nproc_per_node N -m speech_drame.cli bench ...`` /
``accelerate launch --multi_gpu --num_processes N -m speech_drame.cli bench ...``, which
also shard on a CPU-only machine (rank 0 merges after a barrier). A plain ``accelerate launch
--num_processes N`` starts only one process when there is no GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..distributed import check_shard_args, rank_world
from ..scorers.base import MIN_LABEL_MASS, check_min_label_mass, synthetic_labels_warning
from .options import add_config_option, add_scorer_options, add_shard_options, scorer_from_args


def parse_systems(specs: list[str], systems_dir: str | None) -> dict[str, str]:
    """``NAME=FOLDER`` specs plus every subfolder of ``systems_dir`` (named after the folder)."""
    systems: dict[str, str] = {}
    if systems_dir:
        for sub in sorted(Path(systems_dir).iterdir()):
            if sub.is_dir():
                systems[sub.name] = str(sub)
    for spec in specs:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not folder:
            raise ValueError(f"--system expects NAME=FOLDER, got {spec!r}")
        systems[name] = folder
    if not systems:
        raise ValueError("no systems: give --system NAME=FOLDER or --systems-dir")
    return systems


def _print_retry(message: str) -> None:
    print(message, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from speech_drame.errors import SpeechDrameError
    from speech_drame.rolebench import report, scenarios
    from speech_drame.rolebench import run as bench_run
    from speech_drame.stats import check_human_scores

    try:
        check_min_label_mass(args.min_label_mass)
        check_shard_args(args.rank, args.world_size)
        if args.batch_size < 1:
            raise ValueError(f"--batch-size must be at least 1, got {args.batch_size}")
        systems = parse_systems(args.system, args.systems_dir)
        if Path(args.scenarios).is_dir():
            if not args.config:
                raise ValueError("a dataset folder needs --config archetype|realism")
            scenario_set = scenarios.load_dataset_scenarios(args.scenarios, args.config, args.split)
        else:
            scenario_set = scenarios.load_scenario_file(args.scenarios, args.config)
        human = json.loads(Path(args.human).read_text(encoding="utf-8")) if args.human else None
        if human is not None:
            check_human_scores(human, systems)  # before scoring, not after
        plan = bench_run.plan_work(scenario_set, systems)
        scorer = scorer_from_args(args, scenario_set.mode, on_retry=_print_retry)
    except (SpeechDrameError, ValueError, OSError) as exc:  # refused before any work
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    rank, world, state = rank_world(args.rank, args.world_size)
    if state is None and world == 1:
        bench_run.merge_shards(args.out)  # rows of shards left behind are older than this run's
    # rows are written after each call of the scorer: a batch, or enough clips to keep every
    # feature worker busy
    chunk = max(args.batch_size, 2 * (args.workers or os.cpu_count() or 1))
    summary = bench_run.run_shard(
        plan, args.out, scorer, rank=rank, world_size=world, chunk=chunk,
        retry_failed=args.retry_failed, progress=not args.quiet,
    )  # fmt: skip
    failed = f" ({summary.failed_now} failed)" if summary.failed_now else ""
    print(
        f"shard {rank}/{world}: {summary.rows_written} scored now{failed}, "
        f"{summary.already_done} already done, of {summary.shard_items}",
        file=sys.stderr,
    )
    if state is not None:
        state.wait_for_everyone()
        if rank != 0:
            return 0
    elif world > 1:
        digest = bench_run.plan_digest(plan, scorer.id)
        if not bench_run.finish_shard(args.out, rank, world, digest):
            print(
                f"shard {rank}/{world} finished; the last shard to finish merges the results "
                "and writes the leaderboard",
                file=sys.stderr,
            )
            return 0
        print(f"shard {rank}/{world} finished last: merging the shards", file=sys.stderr)
    bench_run.merge_shards(args.out)
    table = report.system_table(
        bench_run.read_results(args.out), scenario_set, plan, scorer.id,
        common_only=args.common_only, aggregation=args.aggregation, decay=args.decay,
        n_resamples=args.resamples, min_label_mass=args.min_label_mass,
    )  # fmt: skip
    agreement = report.human_agreement(table, human) if human else None
    meta = {"scenarios": str(args.scenarios), "mode": scenario_set.mode, "scorer": scorer.id,
            "scorer_spec": args.scorer, "scorer_description": scorer.description,
            "multi_turn": scenario_set.multi_turn}  # fmt: skip
    warning = synthetic_labels_warning(scorer)
    if warning:
        meta["warning"] = warning
    paths = report.write_reports(
        table, args.out, agreement=agreement, meta=meta, plots=not args.no_plots
    )
    print(paths["markdown"].read_text(encoding="utf-8"))
    for name, path in paths.items():
        print(f"{name}: {path}")
    flagged = sum(len(e.get("unreliable", [])) for e in table.values())
    if flagged:
        print(f"{flagged} score(s) with label mass below {args.min_label_mass}: unreliable, "
              "listed above (kept in the statistics)", file=sys.stderr)  # fmt: skip
    mismatched = sum(len(e["language_mismatches"]) for e in table.values())
    if mismatched:
        print(f"{mismatched} response(s) identified as another language than their scenario "
              "hints at: listed above", file=sys.stderr)  # fmt: skip
    problems = report.problems(table)
    if problems:
        print(
            f"{problems} response(s) missing, failed or not scored; listed above", file=sys.stderr
        )
        return 1
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench",
        help=__doc__.split("\n", 1)[0].split(": ", 1)[1],
        description="Score every system's response audio (file name = scenario id) and write "
        "the leaderboard (coverage, Content Pass rate, per-dimension means, average, bootstrap "
        "intervals) as Markdown, CSV, JSON and PNG plots, with any scorer (--scorer SPEC; "
        "drame-eval:... is the paper's RoleBench). Resumable: clips with a result in "
        "OUT/results.jsonl are not scored again (transient failures are). Shards: N "
        "processes with --rank R --world-size N (the last to finish writes the leaderboard), "
        "or torchrun "
        "--nproc_per_node N / accelerate launch --multi_gpu --num_processes N -m "
        "speech_drame.cli bench ... (also on CPU).",
    )
    parser.add_argument(
        "--scenarios",
        required=True,
        help="scenario JSONL (archetype, realism or multi-turn) or a Hub-ready dataset folder",
    )
    add_config_option(
        parser,
        required=False,
        help="dataset config (a dataset folder needs it; a scenario file's is read from its rows)",
    )
    parser.add_argument("--split", default="test", help="dataset split (default: test)")
    parser.add_argument("--system", action="append", default=[], metavar="NAME=FOLDER")
    parser.add_argument("--systems-dir", help="a folder whose subfolders are the systems")
    parser.add_argument("--out", required=True, help="run folder (results and reports)")
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="also rescore input failures (unreadable audio, no speech); transient failures "
        "(out of memory, a model or endpoint error) are rescored by every run",
    )
    parser.add_argument(
        "--common-only",
        action="store_true",
        help="rank on the scenarios every system has a scored response for (default: every "
        "scenario; Content Pass counts a missing or failed response as not passing)",
    )
    parser.add_argument("--human", help="JSON {system: human score}: report ranking Spearman")
    parser.add_argument("--aggregation", choices=("mean", "recency", "min"), default="mean",
                        help="multi-turn: how turn scores make a dialogue score")  # fmt: skip
    parser.add_argument("--decay", type=float, default=0.5, help="multi-turn recency decay")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument(
        "--min-label-mass",
        type=float,
        default=MIN_LABEL_MASS,
        help="list a score as unreliable when the scorer put less than this probability on the "
        "labels (scorers with label mass: DRAME-Eval)",
    )
    add_shard_options(parser, "; the last to finish writes the leaderboard")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_scorer_options(parser, shared=("--batch-size", "--workers"))  # they size the chunks
    parser.set_defaults(func=run)
