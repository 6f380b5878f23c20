"""`speech-drame features`: fill the feature cache for a dataset's splits, sharded over processes.

Every distinct clip is computed by exactly one rank (:mod:`speech_drame.features.shard`), so N
processes on one machine or on several (``accelerate launch --multi_gpu --num_processes N
[--num_machines M --machine_rank K ...] -m speech_drame.cli features ...``, ``torchrun``, or N
processes with ``--rank R --world-size N``) share the work and write one shared cache, which
``train-lite``, ``score`` and ``bench`` then read.
"""

from __future__ import annotations

import argparse
from datetime import timedelta

from ..schema import CONFIGS
from .options import add_config_option, add_shard_options

BARRIER_TIMEOUT = timedelta(hours=24)  # ranks finish their shares hours apart on a large split


def run(args: argparse.Namespace) -> int:
    from speech_drame.distributed import check_shard_args, rank_world
    from speech_drame.features.shard import dataset_parts, fill_cache, total

    check_shard_args(args.rank, args.world_size)
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    configs = list(CONFIGS) if args.config == "all" else [args.config]
    splits = [s.strip() for s in args.splits.split(",") if s.strip()] if args.splits else None
    todo = dataset_parts(args.dataset, configs, splits)
    rank, world, state = rank_world(args.rank, args.world_size, BARRIER_TIMEOUT)
    summary = fill_cache(
        args.dataset, todo, args.cache or "default", rank, world,
        batch_size=args.batch_size, workers=args.workers, progress=not args.quiet,
    )  # fmt: skip
    print(summary.line(), flush=True)
    failed = bool(summary.failed)
    if state is not None:
        from accelerate.utils import gather_object

        try:
            summaries = gather_object([summary])  # also the barrier: every rank has finished
        finally:
            state.destroy_process_group()  # left open, gloo can abort the process at exit
        if rank == 0:
            everything = total(summaries)
            print(everything.line(), flush=True)
            failed = bool(everything.failed)
    return 1 if failed else 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "features",
        help=__doc__.split("\n", 1)[0].split(": ", 1)[1],
        description="Extract every clip's features (ASR, quality, speaker, voice activity, "
        "prosody and the context-text embeddings) of the given splits into the feature cache. "
        "Clips already cached are only read; a clip repeated in several splits or configs is "
        "computed once. Shards: accelerate launch --multi_gpu --num_processes N -m "
        "speech_drame.cli features ... (also on CPU, and over machines with --num_machines / "
        "--machine_rank; rank 0 prints the total), torchrun --nproc_per_node N, or N processes "
        "with --rank R --world-size N (each reports its own part). Exit status 1 if a clip "
        "failed (listed with its reason).",
    )
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder")
    add_config_option(
        parser, required=False, default="all", choices=(*CONFIGS, "all"), help="dataset config(s)"
    )
    parser.add_argument(
        "--splits", help="comma-separated splits, e.g. train,test (default: every split)"
    )
    parser.add_argument(
        "--cache",
        "--feature-cache",
        help="feature cache folder, shared by every process (default: $SPEECH_DRAME_CACHE or "
        "~/.cache/speech-drame/features)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="clips read and decoded at once (memory does not grow with the dataset)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="clips extracted at once per process (default: this machine's CPUs divided by its "
        "processes and $SPEECH_DRAME_THREADS)",
    )
    add_shard_options(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
