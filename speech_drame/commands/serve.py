"""`speech-drame serve`: start the Gradio Space (score one clip in the browser) on 127.0.0.1."""

from __future__ import annotations

import argparse

from ..scorers.specs import SPEC_HELP, parse_spec


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1-65535, got {args.port}")
    if args.scorer is not None:
        parse_spec(args.scorer)  # a malformed spec stops here, not on the page
    from speech_drame.space_app import launch

    launch(port=args.port, scorer=args.scorer)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=__doc__.split(": ", 1)[1],
        description="Serve the Speech-DRAME Space locally, scoring with --scorer, else "
        "$SPEECH_DRAME_SCORER, else the LiteScorer in artifacts/lite_scorer.",
    )
    parser.add_argument("--port", type=int, default=7860, help="port on 127.0.0.1")
    parser.add_argument("--scorer", metavar="SPEC", help=SPEC_HELP)
    parser.set_defaults(func=run)
