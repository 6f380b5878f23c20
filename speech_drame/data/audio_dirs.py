"""Audio kept apart from a release (``speech-drame build --audio-dir DIR``), found by file name.

The public EvalBench is annotation records; its audio, where a user has it, comes separately (from
the authors, or re-generated) in a folder of its own. Every file under each ``DIR`` is indexed by
its name, and the ``.zip``/``.tar``/``.tar.gz`` archives there are unpacked first, with the same
safe extraction as a release's own archives (:func:`.release.extract_archives`). A record's
audio is then looked up, in this order, by the file name of its ``wav_path``, by its ``id``
(archetype ids end in ``.wav``) and by its ``id`` plus an audio suffix (``.wav``, ``.flac``,
``.ogg``, ``.mp3``). Two different files under one name are an error naming both (identical
copies are one file): a clip's audio is never guessed.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..audio import AUDIO_SUFFIXES
from ..errors import InputError
from .release import ARCHIVE_SUFFIXES, UnpackBudget, extract_archives


class AudioDirError(InputError):
    """An ``--audio-dir`` that cannot be used: missing, or two different files under one name."""


@dataclass
class AudioDirs:
    """The files of the ``--audio-dir`` folders by name, and what each folder held."""

    names: dict[str, list[Path]] = field(default_factory=dict)
    # per folder: {"path", "files" (indexed), "extracted": [{"archive", "files", "bytes"}]}
    report: list[dict[str, Any]] = field(default_factory=list)

    def find(self, record_id: str, wav_path: str | None) -> Path | None:
        """The audio file of a record, or ``None`` when no folder holds one.

        Raises:
            AudioDirError: the name found belongs to two files of different content.
        """
        for name in candidate_names(record_id, wav_path):
            paths = self.names.get(name)
            if paths:
                return _one_file(name, paths)
        return None


def candidate_names(record_id: str, wav_path: str | None) -> list[str]:
    """The file names a record's audio may have, in lookup order.

    >>> candidate_names("role-eval_v1_0001", "speech_drame/finetuning/data/x/role-eval_v1_0001.wav")[:3]
    ['role-eval_v1_0001.wav', 'role-eval_v1_0001', 'role-eval_v1_0001.flac']
    """
    names = []
    if wav_path:
        pure = PureWindowsPath(wav_path) if "\\" in wav_path else PurePosixPath(wav_path)
        names.append(pure.name)
    names.append(record_id)
    names += [record_id + suffix for suffix in AUDIO_SUFFIXES]
    return list(dict.fromkeys(n for n in names if n))


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _one_file(name: str, paths: list[Path]) -> Path:
    """The file behind ``name``; two files of different content are an error naming both."""
    first = paths[0]
    for other in paths[1:]:
        same = first.stat().st_size == other.stat().st_size and _digest(first) == _digest(other)
        if not same:
            raise AudioDirError(
                f"two different audio files are named {name!r}: {first} and {other} "
                "(remove one, or give the folders that hold the right one)"
            )
    return first


def resolve_audio_dirs(dirs: Sequence[str | os.PathLike]) -> list[Path]:
    """The ``--audio-dir`` folders, resolved; ``AudioDirError`` naming one that does not exist."""
    out = []
    for given in dirs:
        folder = Path(given).resolve()
        if not folder.is_dir():
            raise AudioDirError(f"--audio-dir {os.fspath(given)}: no such folder")
        out.append(folder)
    return out


def index_audio_dirs(
    dirs: Sequence[Path], unpack_to: Path, budget: UnpackBudget | None = None
) -> AudioDirs:
    """Index every file under the folders ``dirs`` (:func:`resolve_audio_dirs`) by name,
    unpacking their archives under ``unpack_to`` (one subfolder per folder; the caller removes
    it).

    Raises:
        ArchiveError: an archive member that is unsafe (outside its folder, a link, too large)
            or beyond ``budget`` (shared with the release's own archives).
    """
    out = AudioDirs()
    names: dict[str, list[Path]] = defaultdict(list)
    for i, folder in enumerate(dirs):
        target = unpack_to / f"audio-dir-{i}"
        extracted = extract_archives(folder, target, budget)
        files = [p for p in folder.rglob("*") if not p.name.endswith(ARCHIVE_SUFFIXES)]
        files += list(target.rglob("*")) if target.is_dir() else []
        files = sorted(p for p in files if p.is_file())
        for path in files:
            names[path.name].append(path)
        out.report.append({"path": str(folder), "files": len(files), "extracted": extracted})
    out.names = dict(names)
    return out
