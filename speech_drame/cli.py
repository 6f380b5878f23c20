"""`speech-drame` command line: one subcommand per module in :mod:`speech_drame.commands`.

Each command module defines ``register(subparsers)`` which adds its parser and sets
``func(args) -> int`` (the exit status). Imports of heavy libraries happen inside ``func``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = (
    "build",
    "summary",
    "agreement",
    "score",
    "train_lite",
    "judge",
    "bench",
    "serve",
    "paraling",
    "trace",
    "isdrama",
    "animescore",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="speech-drame", description="Human-aligned evaluation of spoken role-play."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"speech_drame.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
