"""`speech-drame serve`: start the Gradio Space (score one clip in the browser) on 127.0.0.1."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from speech_drame.space_app import launch

    launch(port=args.port, scorer=args.scorer)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=__doc__.split(": ", 1)[1],
        description="Serve the Speech-DRAME Space locally. The scorer is the LiteScorer "
        "(default artifacts/lite_scorer), or a DRAME-Eval adapter named by "
        "$SPEECH_DRAME_EVAL_ADAPTER.",
    )
    parser.add_argument("--port", type=int, default=7860, help="port on 127.0.0.1")
    parser.add_argument("--scorer", help="LiteScorer folder (default: artifacts/lite_scorer)")
    parser.set_defaults(func=run)
