"""`speech-drame install-metric`: make evaluate.load("drame_metric") work from any folder, offline.

Registers the package's ``drame_metric`` module in ``evaluate``'s module cache
(:mod:`speech_drame.metric_module`); run it again after updating the package.
"""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from speech_drame.metric_module import install_metric

    path = install_metric(args.modules_cache)
    print(f"drame_metric registered: {path}")
    print('load it from any folder: evaluate.load("drame_metric")')
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("install-metric", help=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument(
        "--modules-cache",
        metavar="DIR",
        help="evaluate's module cache to register in (default: $HF_MODULES_CACHE, else "
        "$HF_HOME/modules)",
    )
    parser.set_defaults(func=run)
