"""`speech-drame train-lite`: train the LiteScorer on a dataset folder and evaluate it."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import UsageError
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
    from speech_drame.scorers.lite.finetune import DEFAULT_EPOCHS
    from speech_drame.scorers.lite.model import TrainingOptions, default_scorer_dir
    from speech_drame.scorers.lite.training import METRICS_FILE, train_and_evaluate

    from .lite_report import print_config_run, print_run_end

    if args.anchor is not None and args.init is None:
        raise UsageError("--anchor is the pull toward the --init scorer's weights: pass --init")
    if args.anchor is not None and not (args.anchor >= 0 and math.isfinite(args.anchor)):
        raise UsageError(f"--anchor {args.anchor}: expected a finite strength >= 0")
    if args.epochs is not None and args.epochs < 0:
        raise UsageError(f"--epochs {args.epochs}: expected 0 or more")
    token = push_token(args)
    scratch = TrainingOptions.epochs
    epochs = args.epochs if args.epochs is not None else DEFAULT_EPOCHS if args.init else scratch
    options = TrainingOptions(epochs=epochs, seed=args.seed, label_policy=args.label_policy)
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
        init=args.init,
        **({"anchor": args.anchor} if args.anchor is not None else {}),
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
    parser.add_argument(
        "--out", help="output folder (default: artifacts/lite_scorer; with --init, not its folder)"
    )
    parser.add_argument(
        "--configs",
        nargs="+",
        choices=CONFIGS,
        help="configs to train (default: every config the dataset has)",
    )
    parser.add_argument(
        "--init",
        metavar="SCORER",
        help="fine-tune this LiteScorer (a folder, or ORG/NAME on the Hub) instead of training from "
        "scratch: warm start from its weights and input normalisation, same feature versions "
        "required; dimensions the dataset does not rate keep their heads",
    )
    parser.add_argument(
        "--anchor",
        type=float,
        metavar="STRENGTH",
        help="with --init: how strongly the weights are pulled back toward the initial scorer's "
        "(L2-SP penalty STRENGTH/2 * ||w - w_init||^2; 0: free; default 0.01)",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        help="training epochs (default 150; 50 with --init, where 0 copies the initial scorer "
        "unchanged under a new id and evaluates it on the dataset)",
    )
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
