"""A/B preference pairs: the release's CSVs, majority vote, and a synthetic demo pair set.

A pair CSV has one judgement per row: ``file_a``, ``file_b`` and ``choice`` (+1 = A preferred,
-1 = B preferred), optionally with ``source_a``/``source_b`` (the corpus of each clip). Users of
the release report other column names, so each column accepts the aliases in
:data:`COLUMN_ALIASES` (exactly one spelling per column may be present).

**Relative paths.** A relative audio path in a pair CSV is relative to the folder the CSV is
in (or to ``audio_root`` when one is given), never to the current folder, so a pair file
works from wherever a command runs. :func:`write_pairs` writes paths relative to the CSV it
writes, so a pairs folder and the audio it points at can move together. Paths are normalised
(``a/../b`` is ``b``) and every file must exist.

**Pair conventions** (:data:`PAIR_CONVENTIONS`, chosen by name wherever pairs are read):
``released`` (the default, as the AnimeScore release reads its CSVs) keeps every row as its own
pair, so repeated judgements of the same two clips, a 1-1 split included, stay separate rows,
and its accuracy takes ``s(a) > s(b)`` as "A preferred" (a difference of exactly 0 predicts B);
``majority`` merges repeated judgements of the same two clips (in either order) by majority
vote, reports and leaves out ties, and counts a difference of 0 half right.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from speech_drame.atomic_io import write_text
from speech_drame.audio import AudioError
from speech_drame.protocols.animescore.config import (
    DEFAULT_PAIR_CONVENTION,
    PAIR_CONVENTIONS,
    check_convention,
)

from ...errors import InputError

_T = TypeVar("_T")

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "file_a": ("file_a", "audio_a", "wav_a", "path_a"),
    "file_b": ("file_b", "audio_b", "wav_b", "path_b"),
    "choice": ("choice", "label", "preference"),
    "source_a": ("source_a", "corpus_a"),
    "source_b": ("source_b", "corpus_b"),
}
REQUIRED = ("file_a", "file_b", "choice")
CHOICE_VALUES = {"1": 1, "+1": 1, "1.0": 1, "a": 1, "-1": -1, "-1.0": -1, "b": -1}
SYNTHETIC_NOTE = (
    "synthetic preferences: within each demo rendering, the less degraded clip is preferred "
    "(construction labels of the demo corpus, not human judgements)"
)


class PairFileError(InputError):
    """A pair or utterance CSV that cannot be used; the message names file, row and column."""


@dataclass(frozen=True)
class Pair:
    """One A/B comparison after the majority vote (``a_preferred`` is the majority choice)."""

    file_a: str
    file_b: str
    a_preferred: bool
    votes_a: int = 1
    votes_b: int = 0
    source_a: str = ""
    source_b: str = ""


@dataclass
class PairSet:
    """Pairs after the vote, the tied pairs left out, and where they came from."""

    pairs: list[Pair]
    ties: list[tuple[str, str, int]] = field(default_factory=list)
    n_judgements: int = 0
    origin: str = ""
    note: str = ""
    unreadable: dict[str, str] = field(default_factory=dict)  # clip -> reason it was left out
    left_out: int = 0  # pairs left out because one of their clips is unreadable
    convention: str = DEFAULT_PAIR_CONVENTION  # a key of PAIR_CONVENTIONS

    def __post_init__(self) -> None:
        check_convention(self.convention)

    def metrics(self, score_diff: Any) -> dict[str, Any]:
        """Accuracy, NLL and ROC-AUC of ``s(a) - s(b)`` per pair under the set's convention."""
        return pair_metrics(score_diff, [int(p.a_preferred) for p in self.pairs], self.convention)

    @property
    def files(self) -> list[str]:
        """Every clip in the pairs, each once, in first-seen order."""
        return list(dict.fromkeys(f for p in self.pairs for f in (p.file_a, p.file_b)))

    def without(self, unreadable: Mapping[str, str]) -> PairSet:
        """The pairs whose clips are all readable; ``unreadable`` maps a clip to its reason."""
        kept = [p for p in self.pairs if p.file_a not in unreadable and p.file_b not in unreadable]
        return replace(
            self,
            pairs=kept,
            unreadable={**self.unreadable, **unreadable},
            left_out=self.left_out + len(self.pairs) - len(kept),
        )


def pair_metrics(score_diff: Any, a_preferred: Any, convention: str) -> dict[str, Any]:
    """:func:`speech_drame.stats.pairwise_preference` with the accuracy of ``convention``
    (``released``: right only when ``s(a) > s(b)`` agrees with the outcome, so 0 predicts B),
    labelled with the convention's name and definition."""
    from speech_drame.stats import pairwise_preference

    out = pairwise_preference(score_diff, a_preferred)
    if check_convention(convention) == "released":
        d = np.asarray(score_diff, dtype=np.float64)
        out["accuracy"] = float(((d > 0) == np.asarray(a_preferred, dtype=bool)).mean())
    return {
        **out,
        "pair_convention": convention,
        "convention_definition": PAIR_CONVENTIONS[convention],
    }


def per_clip(
    fn: Callable[[str], _T], files: Iterable[str], progress: bool = False
) -> tuple[dict[str, _T], dict[str, str]]:
    """``fn(file)`` of each file, and the reason for each file whose audio cannot be read
    (:class:`~speech_drame.audio.AudioError`) instead: for :meth:`PairSet.without`.
    ``progress`` shows a tqdm bar on stderr."""
    from tqdm.auto import tqdm

    values, errors = {}, {}
    for f in tqdm(list(dict.fromkeys(files)), unit="clip", desc="features", disable=not progress):
        try:
            values[f] = fn(f)
        except AudioError as exc:
            errors[f] = str(exc)
    return values, errors


def resolve_columns(header: list[str], where: str) -> dict[str, str]:
    """Canonical column -> the header's spelling; raises if a required one is missing."""
    present = {h.strip(): h for h in header}
    found: dict[str, str] = {}
    for canonical, aliases in COLUMN_ALIASES.items():
        hits = [a for a in aliases if a in present]
        if len(hits) > 1:
            raise PairFileError(f"{where}: columns {hits} are aliases of {canonical!r}; keep one")
        if hits:
            found[canonical] = present[hits[0]]
        elif canonical in REQUIRED:
            raise PairFileError(
                f"{where}: no {canonical!r} column (accepted names: {', '.join(aliases)}); "
                f"header is {header}"
            )
    return found


def _choice(value: str, where: str) -> int:
    parsed = CHOICE_VALUES.get(value.strip().lower())
    if parsed is None:
        raise PairFileError(f"{where}: choice {value!r} is not +1/-1 (or A/B)")
    return parsed


def _audio_path(value: str, root: Path, where: str) -> str:
    if not value.strip():
        raise PairFileError(f"{where}: empty audio path")
    path = Path(os.path.normpath(root / value.strip()))  # an absolute value replaces root
    if not path.is_file():
        raise PairFileError(f"{where}: audio file not found: {path}")
    return str(path)


def _judgement(row: dict, cols: dict[str, str], root: Path, where: str) -> Pair:
    if None in row:
        raise PairFileError(f"{where}: more fields than the header has ({row[None]})")

    def cell(name: str) -> str:
        value = row.get(cols[name])
        if value is None:
            raise PairFileError(f"{where}, column {cols[name]!r}: missing (row too short)")
        return value

    a = _audio_path(cell("file_a"), root, f"{where}, column {cols['file_a']!r}")
    b = _audio_path(cell("file_b"), root, f"{where}, column {cols['file_b']!r}")
    if a == b:
        raise PairFileError(f"{where}: file_a and file_b are the same clip {a}")
    choice = _choice(cell("choice"), f"{where}, column {cols['choice']!r}")
    sources = [cell(s).strip() if s in cols else "" for s in ("source_a", "source_b")]
    return Pair(a, b, choice == 1, int(choice == 1), int(choice == -1), *sources)


def read_judgements(
    csv_path: str | os.PathLike, audio_root: str | os.PathLike | None = None
) -> list[Pair]:
    """Every row of a pair CSV as a one-vote :class:`Pair` (rows numbered from 2, the header is 1).

    Relative audio paths resolve against ``audio_root``, by default the CSV's own folder.

    Raises:
        PairFileError: missing file or column, unreadable row, bad choice, missing audio.
    """
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        raise PairFileError(f"{csv_path}: pair file not found")
    root = Path(audio_root) if audio_root is not None else csv_path.parent
    with csv_path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames:
            raise PairFileError(f"{csv_path}: empty file (no header row)")
        cols = resolve_columns(list(reader.fieldnames), str(csv_path))
        out = []
        for row_no, row in enumerate(reader, start=2):
            out.append(_judgement(row, cols, root, f"{csv_path}: row {row_no}"))
    if not out:
        raise PairFileError(f"{csv_path}: no judgement rows")
    return out


def majority_vote(judgements: list[Pair], origin: str = "") -> PairSet:
    """Merge judgements of the same two clips (either order); ties are listed and left out.

    Each merged pair keeps the orientation of its first judgement.
    """
    first: dict[frozenset[str], Pair] = {}
    votes: dict[frozenset[str], list[int]] = defaultdict(lambda: [0, 0])
    for j in judgements:
        key = frozenset((j.file_a, j.file_b))
        first.setdefault(key, j)
        winner = j.file_a if j.a_preferred else j.file_b
        votes[key][0 if winner == first[key].file_a else 1] += j.votes_a + j.votes_b
    pairs, ties = [], []
    for key, p in first.items():
        va, vb = votes[key]
        if va == vb:
            ties.append((p.file_a, p.file_b, va + vb))
        else:
            pairs.append(Pair(p.file_a, p.file_b, va > vb, va, vb, p.source_a, p.source_b))
    n = sum(j.votes_a + j.votes_b for j in judgements)
    return PairSet(pairs, ties, n, origin, convention="majority")


def every_row(judgements: list[Pair], origin: str = "") -> PairSet:
    """Every judgement as its own pair, in file order (the ``released`` convention)."""
    return PairSet(list(judgements), [], len(judgements), origin, convention="released")


def load_pairs(
    csv_path: str | os.PathLike,
    audio_root: str | os.PathLike | None = None,
    convention: str = DEFAULT_PAIR_CONVENTION,
) -> PairSet:
    """Read a pair CSV under ``convention`` (see :data:`PAIR_CONVENTIONS`): every row a pair
    (``released``) or repeated judgements merged by majority vote (``majority``)."""
    judgements = read_judgements(csv_path, audio_root)
    if check_convention(convention) == "released":
        return every_row(judgements, origin=str(csv_path))
    return majority_vote(judgements, origin=str(csv_path))


def read_utterances(csv_path: str | os.PathLike) -> dict[str, dict[str, str]]:
    """Utterance metadata CSV -> ``{file: row}``; the file column may be ``file``/``audio``/``wav``.

    Raises:
        PairFileError: no file column, an empty or repeated file name (naming the row).
    """
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        raise PairFileError(f"{csv_path}: utterance file not found")
    with csv_path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = list(reader.fieldnames or [])
        names = [n for n in ("file", "audio", "wav", "path") if n in header]
        if len(names) != 1:
            raise PairFileError(
                f"{csv_path}: expected one of the columns file/audio/wav/path, header is {header}"
            )
        out: dict[str, dict[str, str]] = {}
        for row_no, row in enumerate(reader, start=2):
            name = (row.get(names[0]) or "").strip()
            if not name:
                raise PairFileError(f"{csv_path}: row {row_no}, column {names[0]!r}: empty")
            if name in out:
                raise PairFileError(f"{csv_path}: row {row_no}: {name!r} listed twice")
            out[name] = dict(row)
    return out


def _relative_to(path: str, folder: str) -> str:
    """``path`` (absolute or relative to the current folder) relative to ``folder``."""
    try:
        return os.path.relpath(os.path.abspath(path), folder)
    except ValueError:  # another drive (Windows): no relative path exists
        return os.path.abspath(path)


def write_pairs(pairs: list[Pair], csv_path: str | os.PathLike) -> Path:
    """Write pairs as a pair CSV (canonical column names), atomically.

    Audio paths (absolute or relative to the current folder) are written relative to the CSV's
    folder, the rule :func:`read_judgements` reads them by.
    """
    csv_path = Path(csv_path)
    folder = os.path.abspath(csv_path.parent)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["file_a", "file_b", "choice", "source_a", "source_b"])
    for p in pairs:
        a, b = (_relative_to(f, folder) for f in (p.file_a, p.file_b))
        writer.writerow([a, b, "+1" if p.a_preferred else "-1", p.source_a, p.source_b])
    return write_text(csv_path, buffer.getvalue())


def demo_pairs(release_dir: str | os.PathLike, seed: int = 0) -> dict[str, PairSet]:
    """Synthetic pairs from a demo release's ``DEMO_MANIFEST.json``, by split.

    Within each base rendering (same text, voice and engine), every two clips with different
    degradation severities form a pair preferring the less degraded one. A and B are
    shuffled (seeded) so that the preferred side is not always the same.
    """
    release_dir = Path(release_dir)
    manifest_path = release_dir / "DEMO_MANIFEST.json"
    if not manifest_path.is_file():
        raise PairFileError(f"{manifest_path}: not found (build the demo release first)")
    clips = json.loads(manifest_path.read_text(encoding="utf-8"))["clips"]
    groups: dict[tuple[str, str], list[tuple[int, dict]]] = defaultdict(list)
    for i, clip in enumerate(clips):
        try:
            key = clip["split"], clip["base_key"]
            groups[key].append((int(clip["degradation"]["severity"]), clip))
        except (KeyError, TypeError, ValueError) as exc:
            raise PairFileError(f"{manifest_path}: clip {i}: bad or missing field {exc}") from None
    rng = np.random.default_rng(seed)
    by_split: dict[str, list[Pair]] = defaultdict(list)
    for (split, _), members in sorted(groups.items()):
        for i, (sx, x) in enumerate(members):
            for sy, y in members[i + 1 :]:
                if sx == sy:
                    continue
                better, worse = (x, y) if sx < sy else (y, x)
                a, b = (better, worse) if rng.random() < 0.5 else (worse, better)
                path_a, path_b = (str(release_dir / c["wav"]) for c in (a, b))
                label_a, label_b = (c["degradation"]["kind"] for c in (a, b))
                by_split[split].append(
                    Pair(
                        path_a,
                        path_b,
                        a is better,
                        int(a is better),
                        int(b is better),
                        label_a,
                        label_b,
                    )  # fmt: skip
                )
    return {
        split: PairSet(pairs, [], len(pairs), str(manifest_path), SYNTHETIC_NOTE)
        for split, pairs in by_split.items()
    }
