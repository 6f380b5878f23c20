"""One name per concept on the command line: ``--config archetype|realism`` everywhere, old
spellings accepted for one release with one deprecation line."""

from __future__ import annotations

import argparse

import pytest

from speech_drame.cli import build_parser
from speech_drame.schema import CONFIGS


def _parsers(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """``(path, parser)`` of every (nested) subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _parsers(sub, (*prefix, name))


def _visible(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        option: action
        for action in parser._actions
        if action.help is not argparse.SUPPRESS
        for option in action.option_strings
    }


def test_the_config_is_called_config_on_every_command():
    with_config = []
    for path, parser in _parsers(build_parser()):
        options = _visible(parser)
        assert "--mode" not in options and "--dataset_config_name" not in options, path
        action = options.get("--config")
        if action is not None and action.choices is not None:
            assert set(CONFIGS) <= set(action.choices), path
            with_config.append(path[0])
    assert {"score", "judge", "agreement", "bench", "table", "features", "scenarios"} <= set(
        with_config
    )
    assert "campaign" in with_config


@pytest.mark.parametrize("command", ["score", "judge"])
def test_mode_is_a_deprecated_spelling_of_config(command, capsys):
    args = build_parser().parse_args([command, "clip.wav", "--mode", "realism"])
    assert args.config == "realism"
    assert capsys.readouterr().err.splitlines() == ["--mode is deprecated; use --config"]
    args = build_parser().parse_args([command, "clip.wav", "--config", "archetype"])
    assert args.config == "archetype" and capsys.readouterr().err == ""


def test_config_is_required_and_checked(capsys):
    for argv in (["score", "clip.wav"], ["score", "clip.wav", "--mode", "drama"]):
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv)
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--config is required" in err and "invalid choice: 'drama'" in err
    with pytest.raises(SystemExit):  # the two spellings together are one option given twice
        build_parser().parse_args(["score", "x.wav", "--config", "realism", "--mode", "realism"])


def test_animescore_preset_has_its_own_name(capsys):
    base = ["animescore", "train", "--pairs", "p.csv", "--out", "o"]
    assert build_parser().parse_args(base).preset == "released"
    assert build_parser().parse_args([*base, "--preset", "compact"]).preset == "compact"
    assert capsys.readouterr().err == ""
    assert build_parser().parse_args([*base, "--config", "compact"]).preset == "compact"
    assert capsys.readouterr().err.splitlines() == ["--config is deprecated; use --preset"]


# --- scorer settings: a group per kind, a setting of another kind refused in one line --------


def test_score_help_groups_the_settings_by_scorer_kind(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "--help"])
    out = capsys.readouterr().out
    for title, option in [("lite: scorer settings", "--workers"),
                          ("drame-eval: scorer settings", "--device"),
                          ("lite: feature cache", "--no-feature-cache"),
                          ("judge: chat judge", "--runs"),
                          ("judge: chat endpoint", "--temperature")]:  # fmt: skip
        assert option in out.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0], title


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (["--temperature", "0.5"], "--temperature is a judge: option; the scorer in use is lite"),
        (["--scorer", "judge:m@http://127.0.0.1:9/v1", "--no-feature-cache"],
         "--no-feature-cache is a lite: option; the scorer in use is judge:m@http://127.0.0.1:9/v1"),
        (["--scorer", "lite:some/folder", "--device", "cuda:0"],
         "--device is a drame-eval: option; the scorer in use is lite:some/folder"),
        (["--scorer", "drame-eval:some/folder", "--logprobs"],
         "--logprobs is a judge: option; the scorer in use is drame-eval:some/folder"),
    ],
)  # fmt: skip
def test_a_setting_of_another_scorer_kind_is_refused_in_one_line(extra, line, tmp_path, capsys):
    from speech_drame.cli import main

    argv = ["score", str(tmp_path / "clip.wav"), "--config", "archetype", "--question", "q"]
    assert main([*argv, *extra]) == 2  # before any scorer is loaded
    assert capsys.readouterr().err == f"error: {line}\n"


def test_settings_of_the_scorer_in_use_and_defaults_pass():
    from speech_drame.commands.options import check_scorer_settings
    from speech_drame.scorers.specs import parse_spec

    base = ["score", "clip.wav", "--config", "archetype"]
    args = build_parser().parse_args([*base, "--scorer", "judge:m", "--runs", "2", "--logprobs"])
    assert (args.runs, args.logprobs, args.timeout) == (2, True, 120.0)
    check_scorer_settings(args, parse_spec(args.scorer))
    check_scorer_settings(build_parser().parse_args(base), parse_spec("drame-eval:x"))
    # bench sizes its chunks with --batch-size and --workers whatever the scorer
    bench = ["bench", "--scenarios", "s.jsonl", "--out", "run", "--scorer", "judge:m"]
    args = build_parser().parse_args([*bench, "--batch-size", "2", "--workers", "1"])
    check_scorer_settings(args, parse_spec(args.scorer))
    with pytest.raises(ValueError, match="--device is a drame-eval: option"):
        check_scorer_settings(build_parser().parse_args([*bench, "--device", "cpu"]),
                              parse_spec("judge:m"))  # fmt: skip
