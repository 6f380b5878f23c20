"""One error base: every refusal the package raises is a SpeechDrameError of one kind, keeps the
base its callers catch, and the command lines exit with the kind's status."""

from __future__ import annotations

import argparse
import importlib

import pytest

from speech_drame import errors
from speech_drame.errors import InputError, SetupError, SpeechDrameError, UsageError

# module, class, kind, the base it had before (callers catch it)
REFUSALS = [
    ("speech_drame.atomic_io", "FolderRefused", UsageError, ValueError),
    ("speech_drame.space_bundle", "BundleError", UsageError, ValueError),
    ("speech_drame.audio", "AudioError", InputError, ValueError),
    ("speech_drame.schema", "RecordError", InputError, ValueError),
    ("speech_drame.campaign.export", "ExportError", InputError, ValueError),
    ("speech_drame.campaign.forms", "FormError", InputError, ValueError),
    ("speech_drame.campaign.store", "CampaignError", InputError, ValueError),
    ("speech_drame.data.release", "ArchiveError", InputError, ValueError),
    ("speech_drame.data.licence", "LicenceError", InputError, ValueError),
    ("speech_drame.data.audio_dirs", "AudioDirError", InputError, ValueError),
    ("speech_drame.data.reader", "DatasetError", InputError, ValueError),
    ("speech_drame.data.reader", "NoAudioError", InputError, ValueError),
    ("speech_drame.protocols.animescore.pairs", "PairFileError", InputError, ValueError),
    ("speech_drame.space_app", "InputError", InputError, ValueError),
    ("speech_drame.data.build", "BuildError", SpeechDrameError, RuntimeError),
    ("speech_drame.scorers.base", "ScorerError", SetupError, RuntimeError),
    ("speech_drame.judges.client", "EndpointUnreachable", SetupError, ConnectionError),
    ("speech_drame.demo.tts", "TTSError", SetupError, RuntimeError),
    ("speech_drame.extras", "MissingExtra", SetupError, ImportError),
    ("speech_drame.training", "SetupError", SetupError, Exception),
]


@pytest.mark.parametrize(("module", "name", "kind", "old"), REFUSALS, ids=lambda v: str(v))
def test_every_refusal_has_its_kind_and_keeps_its_old_base(module, name, kind, old):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, kind) and issubclass(cls, old)
    assert issubclass(cls, ValueError) == (old is ValueError)  # no except clause catches more


def _cli_raising(monkeypatch, exc: BaseException):
    """``speech-drame summary`` made to raise ``exc``."""
    from speech_drame import cli

    def raise_it(args: argparse.Namespace) -> int:
        raise exc

    real = cli.build_parser

    def build_parser():
        parser = real()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices["summary"].set_defaults(func=raise_it)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    return cli.main(["summary"])


@pytest.mark.parametrize("kind", [UsageError, InputError, SetupError])
def test_the_cli_exits_with_the_kind_s_status(kind, monkeypatch, capsys):
    assert _cli_raising(monkeypatch, kind("it cannot be done")) == 2
    assert capsys.readouterr().err == "error: it cannot be done\n"
    monkeypatch.setitem(errors.EXIT_CODES, kind.kind, 7)
    assert _cli_raising(monkeypatch, kind("still not")) == 7
    assert capsys.readouterr().err == "error: still not\n"


def test_the_cli_still_maps_third_party_value_and_os_errors(monkeypatch, capsys):
    assert _cli_raising(monkeypatch, ValueError("bad value")) == 2
    assert _cli_raising(monkeypatch, FileNotFoundError("no such file")) == 2
    assert capsys.readouterr().err == "error: bad value\nerror: no such file\n"
    with pytest.raises(RuntimeError):  # a bug stays a traceback
        _cli_raising(monkeypatch, RuntimeError("a bug"))


def test_train_py_exits_with_the_kind_s_status(monkeypatch, capsys):
    pytest.importorskip("transformers")
    from speech_drame.training import run

    def refuse(*args):
        raise InputError("records.jsonl: line 3 is not JSON")

    monkeypatch.setattr(run, "train", refuse)
    monkeypatch.setitem(errors.EXIT_CODES, "input", 5)
    assert run.main(["--output_dir", "/tmp/unused", "--use_cpu"]) == 5
    assert capsys.readouterr().err.endswith("error: records.jsonl: line 3 is not JSON\n")
