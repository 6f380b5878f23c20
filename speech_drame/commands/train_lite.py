"""`speech-drame train-lite`: train the LiteScorer on a dataset folder and evaluate it."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from speech_drame.dataset_card import labels_are_synthetic
    from speech_drame.scorers.lite import TrainingOptions
    from speech_drame.scorers.lite_training import train_and_evaluate

    options = TrainingOptions(epochs=args.epochs, seed=args.seed)
    if labels_are_synthetic(args.dataset):
        print(
            "note: this dataset's labels are simulated annotators (synthetic proxy labels); "
            "the table shows that they are learnable, not alignment with human judgement\n"
        )
    train_and_evaluate(
        args.dataset,
        args.out,
        configs=args.configs,
        options=options,
        cache=None if args.no_cache else (args.cache_dir or "default"),
        progress=not args.quiet,
        batch_size=args.batch_size,
    )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("train-lite", help=__doc__.split(": ", 1)[1])
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder")
    parser.add_argument("--out", help="output folder (default: artifacts/lite_scorer)")
    parser.add_argument(
        "--configs", nargs="+", default=["archetype", "realism"], choices=["archetype", "realism"]
    )
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", help="feature cache folder (default: $SPEECH_DRAME_CACHE)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="clips read and decoded at once (memory does not grow with the dataset)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)
