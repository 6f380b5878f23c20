"""The optional dependency groups are honest: the core runs without any of them, and a command
whose group is missing stops with one line naming the extra to install.

"Missing" is real here: each case runs in a fresh interpreter whose import system refuses the
group's modules (as if they were not installed), then calls the CLI or imports the library.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from conftest import LIBRIVOX, OFFICIAL_SAMPLES, REPO
from packaging.requirements import Requirement

from speech_drame.extras import PROVIDERS, install_hint

CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0870.wav"
# Runs in the child: argv = blocked top-level modules (comma-separated), then the code to run.
CHILD = """
import importlib.abc, importlib.util, sys
blocked = set(sys.argv[1].split(","))

class Uninstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Uninstalled())
# libraries that probe for an optional package (datasets: sqlalchemy) find nothing either
_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if name.split(".")[0] in blocked else _find_spec(name, package))
exec(sys.argv[2])
"""
EXTRA_MODULES = {
    extra: sorted(m for m, (_, e) in PROVIDERS.items() if e == extra)
    for extra in {e for _, e in PROVIDERS.values()}
}
# modules of every extra, and what they pull in (so nothing optional is reached indirectly)
NOT_CORE = sorted({*PROVIDERS, "ctranslate2", "piper", "gradio_client"})


def _child(blocked: list[str], code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(blocked), code],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _cli(blocked: list[str], args: list[str], tmp_path) -> subprocess.CompletedProcess:
    code = f"from speech_drame.cli import main; sys.exit(main({args!r}))"
    return _child(blocked, code, tmp_path)


def test_providers_match_the_extras_of_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = {
        extra: {Requirement(req).name.lower() for req in reqs}
        for extra, reqs in project["optional-dependencies"].items()
    }
    for module, (dist, extra) in PROVIDERS.items():
        assert dist in extras[extra], f"{module}: {dist} is not in the {extra} extra"
    assert install_hint("gradio.blocks") == "pip install 'speech-drame[space]'"
    assert install_hint("numpy") == "pip install numpy"


def test_the_core_needs_no_extra(tmp_path) -> None:
    code = (
        "import numpy as np, speech_drame, speech_drame.metrics as m, speech_drame.labels, "
        "speech_drame.schema\n"
        "r = m.pearson(np.array([1., 2, 3, 4]), np.array([1., 3, 2, 4]))\n"
        f"speech_drame.build_dataset({str(OFFICIAL_SAMPLES)!r}, 'dataset', license_id='cc-by-nc-4.0', "
        "progress=False)\n"
        "print(round(float(r), 6))"
    )
    done = _child(NOT_CORE, code, tmp_path)
    assert done.returncode == 0, done.stderr
    from scipy.stats import pearsonr

    assert float(done.stdout.split()[-1]) == pytest.approx(pearsonr([1, 2, 3, 4], [1, 3, 2, 4])[0])
    assert (tmp_path / "dataset" / "build_report.json").is_file()
    assert _cli(NOT_CORE, ["--help"], tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("extra", "args"),
    [
        ("features", ["score", str(CLIP), "--config", "archetype", "--question", "q",
                      "--no-feature-cache"]),
        ("space", ["serve", "--port", "7861"]),
    ],
    ids=["score", "serve"],
)  # fmt: skip
def test_a_command_without_its_extra_names_it_in_one_line(extra, args, tmp_path) -> None:
    done = _cli(EXTRA_MODULES[extra], args, tmp_path)
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]  # no traceback
    assert done.stderr.strip().endswith(line) and f"pip install 'speech-drame[{extra}]'" in line


def test_train_py_without_the_train_extra_names_it(tmp_path) -> None:
    code = "sys.argv = ['train.py', '--help']; from speech_drame.training.run import main; "
    code += "sys.exit(main())"
    done = _child(EXTRA_MODULES["train"], code, tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'speech-drame[train]'" in line
