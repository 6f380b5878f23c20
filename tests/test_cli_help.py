"""`speech-drame ... --help` for every registered subcommand: exit 0, defaults shown."""

from __future__ import annotations

import argparse

import pytest

from speech_drame.cli import COMMANDS, build_parser, main


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """Every (nested) subcommand path of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _commands(sub, (*prefix, name))


ALL = list(_commands(build_parser()))


def test_every_command_module_is_registered():
    top = {path[0] for path in ALL}
    assert len(top) == len(COMMANDS)
    assert {("animescore", "train"), ("trace", "demo"), ("paraling", "run")} <= set(ALL)


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_help_exits_zero(path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: speech-drame " + " ".join(path))


@pytest.mark.parametrize(
    ("path", "shown", "hidden"),
    [
        (("bench",), ["--split SPLIT", "(default: test)", "--resamples", "(default: 1000)",
                      "(default: mean)"], ["(default: None)", "(default: False)", "(default: [])"]),
        (("judge",), ["(default: 5)", "(default: 120.0)"], ["(default: None)", "(default: )"]),
        (("animescore", "train"), ["(default: released)", "(default: whisper-base)",
                                   "released 20, compact 30", "released 3e-05, compact 0.001"],
         ["(default: None)"]),
        (("trace", "run"), ["(default: rule)", "(default: content_first)"], ["(default: None)"]),
    ],
)  # fmt: skip
def test_help_shows_defaults_that_are_set(path, shown, hidden, capsys):
    with pytest.raises(SystemExit):
        main([*path, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # undo argparse's line wrapping
    for s in shown:
        assert s in text, s
    for s in hidden:
        assert s not in text, s


def test_the_command_list_has_one_line_per_command():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for choice in sub._choices_actions:
        assert choice.help and "\n" not in choice.help, choice.dest
