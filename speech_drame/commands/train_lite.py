"""`speech-drame train-lite`: train the LiteScorer on a dataset folder and evaluate it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..schema import CONFIGS
from .options import (
    add_feature_cache_options,
    add_label_policy_option,
    add_push_options,
    feature_cache,
    push_token,
)


def run(args: argparse.Namespace) -> int:
    from speech_drame.data.card import labels_are_synthetic
    from speech_drame.features.blueprint import resolve_cache
    from speech_drame.scorers.lite.model import TrainingOptions, default_scorer_dir
    from speech_drame.scorers.lite.training import METRICS_FILE, train_and_evaluate

    from .lite_report import print_config_run, print_run_end

    token = push_token(args)
    options = TrainingOptions(epochs=args.epochs, seed=args.seed, label_policy=args.label_policy)
    if labels_are_synthetic(args.dataset):
        print(
            "note: this dataset's labels are simulated annotators (synthetic proxy labels); "
            "the table shows that they are learnable, not alignment with human judgement\n"
        )
    out = args.out or default_scorer_dir()
    cache = resolve_cache(feature_cache(args))  # one cache object: its counts cover the run
    train_and_evaluate(
        args.dataset,
        out,
        configs=args.configs,
        options=options,
        cache=cache,
        progress=not args.quiet,
        batch_size=args.batch_size,
        on_config=print_config_run,
    )
    print_run_end(Path(out) / METRICS_FILE, cache)
    if args.push_to_hub is not None:
        from speech_drame.scorers.lite.publish import push_lite_scorer

        push_lite_scorer(
            out, args.push_to_hub, dry_run=args.dry_run, private=args.private or None, token=token
        )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("train-lite", help=__doc__.split(": ", 1)[1])
    parser.add_argument("--dataset", default="speech-drame", help="built dataset folder")
    parser.add_argument("--out", help="output folder (default: artifacts/lite_scorer)")
    parser.add_argument(
        "--configs",
        nargs="+",
        choices=CONFIGS,
        help="configs to train (default: every config the dataset has)",
    )
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    add_label_policy_option(parser, "in training targets and the evaluation")
    add_feature_cache_options(parser)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="clips read and decoded at once (memory does not grow with the dataset)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_push_options(
        parser,
        "after training, upload the scorers, metrics.json and a model card (README.md) to this "
        "Hub model repo (token access is checked before training)",
        "write the card and list the files and sizes; upload nothing",
    )
    parser.set_defaults(func=run)
