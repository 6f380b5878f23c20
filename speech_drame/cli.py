"""`speech-drame` command line: one subcommand per module in :mod:`speech_drame.commands`.

Each command module defines ``register(subparsers)`` which adds its parser and sets
``func(args) -> int`` (the exit status). Imports of heavy libraries happen inside ``func``.
Every parser, nested ones included, shows the default of each option that has one.

Exit status, decided here for every command: 0 when everything was done; 1 when the command
ran but some items failed (the command returns 1 and lists them); for a refusal, i.e. input
refused before any work, the :attr:`~speech_drame.errors.SpeechDrameError.exit_code` of a
:class:`~speech_drame.errors.SpeechDrameError` raised by a command (among them a missing
optional dependency group, :class:`~speech_drame.extras.MissingExtra`), 2 for argparse errors
and for a ``ValueError`` or ``OSError`` of third-party code, each printed as one ``error:`` line;
130 when interrupted.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import sys
from collections.abc import Callable
from typing import Any

COMMANDS = (
    "build",
    "summary",
    "agreement",
    "score",
    "train_lite",
    "judge",
    "bench",
    "scenarios",
    "serve",
    "space",
    "paraling",
    "trace",
    "isdrama",
    "animescore",
    "import_predictions",
    "table",
    "push_metric",
    "install_metric",
    "features",
    "push_dataset",
    "push_lite",
    "campaign",
    "prompt_profile",
)


def _has_default(action: argparse.Action) -> bool:
    """An option whose default is worth showing (not None, False, empty or suppressed)."""
    default = action.default
    return bool(action.option_strings) and not (
        default is None or default is False or default is argparse.SUPPRESS or default in ("", [])
    )


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends "(default: X)" to options with a default, unless their help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if _has_default(action) and "(default" not in text:
            text = f"{text} (default: %(default)s)".strip()
        return text

    def _format_action(self, action: argparse.Action) -> str:
        if not action.help and _has_default(action):  # argparse skips options without help
            action = copy.copy(action)
            action.help = "(default: %(default)s)"
        return super()._format_action(action)


class Parser(argparse.ArgumentParser):
    """The parser of every (sub)command: argparse with :class:`DefaultsHelpFormatter`.

    ``add_subparsers`` creates parsers of the parent's class, so nested commands get it too.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    from speech_drame import __version__

    parser = Parser(
        prog="speech-drame", description="Human-aligned evaluation of spoken role-play."
    )
    parser.add_argument("--version", action="version", version=f"speech-drame {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"speech_drame.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return guarded(args.func, args)


def guarded(func: Callable[..., int | None], *args: Any) -> int:
    """``func(*args)`` as a command runs: its exit status; a refusal as one ``error:`` line and
    its kind's exit code (a ``ValueError``/``OSError`` of third-party code: 2); an interruption
    as 130. Scripts that are no subcommand (``dataset_scripts/``) call it."""
    from speech_drame.errors import SpeechDrameError

    try:
        return int(func(*args) or 0)
    except SpeechDrameError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (ValueError, OSError) as exc:  # a value or file refused by third-party code
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
