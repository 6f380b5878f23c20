"""A wheel of this package built from the source checkout it is imported from, for folders that
leave the machine and install the package themselves (the metric Space, the Space bundle).

The wheel is built from a copy of what it is made of (:data:`SOURCE_FILES`, :data:`SOURCE_FOLDERS`
and the package), so the checkout gets no ``build/`` or egg-info, and without network or build
isolation (setuptools comes from the running environment).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE")
# top-level folders setup.py ships inside the package: the card templates, the evaluate module
SOURCE_FOLDERS = ("model_card", "evaluate_metric")


def checkout_root() -> Path:
    """The source checkout the package is imported from.

    Raises:
        FileNotFoundError: the package is installed from a wheel (no ``pyproject.toml`` beside
            it).
    """
    import speech_drame

    root = Path(speech_drame.__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        raise FileNotFoundError(
            f"{root}: no pyproject.toml; the package wheel is built from a source checkout "
            "(run this from an editable install of the repository: pip install -e .)"
        )
    return root


def copy_source(root: Path, dst: Path) -> Path:
    """What the package is built from (:data:`SOURCE_FILES`, :data:`SOURCE_FOLDERS` and the
    package, no caches), copied from the checkout ``root`` into the new folder ``dst``."""
    dst.mkdir()
    for name in SOURCE_FILES:
        shutil.copy2(root / name, dst / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    for name in (*SOURCE_FOLDERS, "speech_drame"):
        shutil.copytree(root / name, dst / name, ignore=ignore)
    return dst


def build_wheel(target: str | os.PathLike) -> Path:
    """Build the package's wheel into the folder ``target``; returns its path.

    Raises:
        FileNotFoundError: not a source checkout (:func:`checkout_root`).
        RuntimeError: the build failed (pip's error output is in the message).
    """
    root, target = checkout_root(), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="speech-drame-wheel-") as tmp:
        source = copy_source(root, Path(tmp, "source"))
        dist = Path(tmp, "dist")
        done = subprocess.run(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "wheel",
             "--no-deps", "--no-build-isolation", "--no-index", str(source), "-w", str(dist)],
            capture_output=True, text=True, cwd=tmp,
        )  # fmt: skip
        wheels = sorted(dist.glob("speech_drame-*.whl"))
        if done.returncode or len(wheels) != 1:
            raise RuntimeError(f"building the speech-drame wheel failed:\n{done.stderr.strip()}")
        return Path(shutil.copy2(wheels[0], target / wheels[0].name))
