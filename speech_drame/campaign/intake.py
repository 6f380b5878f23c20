"""The clips a campaign is created from (``speech-drame campaign create --clips``, ``--gold``).

``--clips`` is either

- a built dataset folder (``speech-drame build``; ``--split``, default ``test``): its clips with
  audio, whose encoded audio is written to a folder of the caller's (``audio_out``), the context
  and text fields from their columns; the clips without audio (an annotation-only release) are
  left out and listed in ``missing``;
- a JSONL file (or a ``.json`` file holding a JSON array, as the public release's record files
  are), one clip per line: ``id``, the audio as ``audio`` (a path relative to the JSONL's
  folder, or absolute) or ``wav_path`` (resolved as the dataset build resolves an official
  release's ``wav_path``, so an official ``test.jsonl`` is accepted as it is), the context texts
  by EvalBench column or short name (``question``; ``char_profile|profile``,
  ``local_scene|scene``, ``char_style|traits``), and for realism the optional text fields
  ``transcript``, ``char_age``, ``data_source``. Other fields (an official record's
  ``annotations``) are ignored. A line whose audio file is absent is left out, as the dataset
  build leaves it out, and listed in ``missing`` when the caller passes a list;
- or a folder of audio files (wav/flac/ogg/mp3, searched recursively, sorted) with a RoleBench
  scenario file (``--contexts``): a file's scenario is its stem, its clip id the path relative
  to the folder without suffix, ``/`` replaced by ``__`` (``DIR/sysA/s01.wav`` -> ``sysA__s01``).

``--gold`` is a JSONL of the same clip fields plus ``expect``: what a careful rater answers,
``{"content_pass": false}`` (archetype) or ``{"audio_quality": [1, 2]}`` (inclusive ranges of
the config's dimensions). Gold audio must be present.

Every audio file is read once (:func:`speech_drame.audio.load_audio`, first 30 s); errors name
the file and line (or the audio file) and the field.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..atomic_io import write_bytes
from ..audio import AUDIO_SUFFIXES, SCORED_SECONDS, AudioError, load_audio
from ..data.release import resolve_wav_path
from ..jsonl import read_objects
from ..schema import (
    CONTENT_PASS,
    CONTEXT_COLUMNS,
    CONTEXTS,
    SCORE_MAX,
    SCORE_MIN,
    Config,
    check_config,
    context_from_row,
    dimensions,
)
from .records import CampaignClip

REALISM_EXTRA = ("transcript", "char_age", "data_source")

PathLike = str | os.PathLike


def _check_audio(path: Path, where: str) -> None:
    try:
        load_audio(path, sample_rate=None, max_seconds=SCORED_SECONDS)
    except AudioError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _clip_id(obj: dict[str, Any], where: str) -> str:
    value = obj.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise ValueError(f"{where}: field 'id' must be a non-empty string, got {value!r}")
    return str(value)


def _audio_path(obj: dict[str, Any], folder: Path, where: str) -> tuple[Path | None, str]:
    """The clip's audio file (``None`` when absent) and how the line named it."""
    key = "audio" if "audio" in obj else "wav_path"
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(
            f"{where}: field 'audio' or 'wav_path' must name the clip's audio file, got {value!r}"
        )
    if key == "wav_path":
        found = resolve_wav_path(folder, folder, value, where)
        return (None if found is None else found.absolute()), value
    path = folder / value
    return (path.absolute() if path.is_file() else None), value


def _extra(obj: dict[str, Any], config: Config, where: str) -> dict[str, str]:
    if config != "realism":
        return {}
    extra = {}
    for key in REALISM_EXTRA:
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{where}: field {key!r} must be a string, got {value!r}")
        extra[key] = value
    return extra


def _check_unique(clip_id: str, where: str, seen: dict[str, str]) -> None:
    if clip_id in seen:
        raise ValueError(f"{where}: clip id {clip_id!r} repeats the one of {seen[clip_id]}")
    seen[clip_id] = where


def _read_jsonl(
    path: Path, config: Config, missing: list[str] | None, gold: bool
) -> list[CampaignClip]:
    clips: list[CampaignClip] = []
    seen: dict[str, str] = {}
    folder = path.parent
    rows = read_objects(path)
    if not rows:
        raise ValueError(f"{path}: no clips")
    for where, obj in rows:
        clip_id = _clip_id(obj, where)
        where = f"{where} (clip {clip_id!r})"
        _check_unique(clip_id, where, seen)
        context = context_from_row(obj, config, where)
        extra = _extra(obj, config, where)
        expect = _expect(obj, config, where) if gold else None
        audio, named = _audio_path(obj, folder, where)
        if audio is None:
            message = f"{where}: audio file {named!r} not found"
            if gold:
                raise ValueError(message)
            if missing is not None:
                missing.append(message)
            continue
        _check_audio(audio, where)
        clips.append(CampaignClip(clip_id, len(clips), str(audio), context, extra, expect))
    if not clips:
        raise ValueError(f"{path}: no clip has its audio file ({len(rows)} lines)")
    return clips


def _read_folder(folder: Path, config: Config, contexts: PathLike | None) -> list[CampaignClip]:
    from ..rolebench.scenarios import load_scenario_file

    if contexts is None:
        raise ValueError(
            f"{folder}: a folder of clips needs a scenario file with their contexts (--contexts)"
        )
    scenario_set = load_scenario_file(contexts, config)
    if scenario_set.mode != config:
        raise ValueError(f"{contexts}: {scenario_set.mode} scenarios, the campaign is {config}")
    by_id = {s.id: s.context for s in scenario_set.scenarios}
    files = sorted(
        p for p in folder.rglob("*") if p.suffix.lower() in AUDIO_SUFFIXES and p.is_file()
    )
    if not files:
        raise ValueError(f"{folder}: no audio files ({', '.join(AUDIO_SUFFIXES)})")
    clips: list[CampaignClip] = []
    seen: dict[str, str] = {}
    for file in files:
        clip_id = "__".join(file.relative_to(folder).with_suffix("").parts)
        _check_unique(clip_id, str(file), seen)
        if file.stem not in by_id:
            raise ValueError(f"{file}: scenario {file.stem!r} is not in {contexts}")
        _check_audio(file, str(file))
        clips.append(
            CampaignClip(clip_id, len(clips), str(file.absolute()), dict(by_id[file.stem]))
        )
    return clips


def is_dataset_folder(path: PathLike) -> bool:
    """Whether ``path`` is a built dataset folder (its card and build report), not a folder
    of audio files."""
    return (Path(path) / "README.md").is_file() and (Path(path) / "build_report.json").is_file()


def _read_dataset(
    folder: Path, config: Config, split: str, audio_out: Path, missing: list[str] | None
) -> list[CampaignClip]:
    from ..data.reader import open_split, require_audio

    data = open_split(folder, config, split)
    require_audio([data], "a rating campaign")
    names = [CONTEXT_COLUMNS[c] for c in CONTEXTS[config]]
    extra_names = REALISM_EXTRA if config == "realism" else ()
    clips: list[CampaignClip] = []
    for row in data.rows(["id", "audio", *names], optional=extra_names, with_audio_only=True):
        where = f"{data.where} clip {row['id']!r}"
        suffix = Path(row["audio"].get("path") or "").suffix.lower() or ".wav"
        audio = write_bytes(audio_out / f"{len(clips):06d}{suffix}", row["audio"]["bytes"])
        _check_audio(audio, where)
        extra = {k: row[k] for k in extra_names if isinstance(row.get(k), str)}
        context = context_from_row(row, config, where)
        clips.append(
            CampaignClip(str(row["id"]), len(clips), str(audio.absolute()), context, extra)
        )
    if missing is not None:
        missing += [
            f"{data.where} clip {cid!r}: no audio in the dataset" for cid in data.without_audio
        ]
    return clips


def read_clips(
    source: PathLike,
    config: Config,
    contexts: PathLike | None = None,
    *,
    missing: list[str] | None = None,
    split: str = "test",
    audio_out: PathLike | None = None,
) -> list[CampaignClip]:
    """The clips of ``source`` (a built dataset folder's ``split``, whose audio is written to
    ``audio_out``; a JSONL file; or a folder of audio files with the scenario file
    ``contexts``), positions in order.

    A clip whose audio is absent (a JSONL line's file, a dataset row's audio) is left out; pass
    a list as ``missing`` to receive one message per such clip.

    Raises:
        ValueError: naming the file and line (or audio file) and the field: bad JSON, a missing
            id or context, a repeated id (naming both), unreadable audio, a folder file whose
            scenario is not in ``contexts``, a dataset without ``audio_out`` or without audio.
    """
    config = check_config(config)
    path = Path(source)
    if path.is_dir() and is_dataset_folder(path):
        if audio_out is None:
            raise ValueError(f"{path}: a dataset's clips need a folder to write their audio to")
        if contexts is not None:
            raise ValueError(f"{contexts}: a dataset carries its own contexts")
        return _read_dataset(path, config, split, Path(audio_out), missing)
    if path.is_dir():
        return _read_folder(path, config, contexts)
    if not path.is_file():
        raise ValueError(f"{path}: no such file or folder of clips")
    if contexts is not None:
        raise ValueError(
            f"{contexts}: a contexts file goes with a folder of clips; the lines of {path} "
            "carry their own contexts"
        )
    return _read_jsonl(path, config, missing, gold=False)


def _expect(obj: dict[str, Any], config: Config, where: str) -> dict[str, Any]:
    expect = obj.get("expect")
    if not isinstance(expect, dict) or not expect:
        raise ValueError(
            f"{where}: field 'expect' must be a non-empty object, e.g. "
            '{"content_pass": false} or {"audio_quality": [1, 2]}'
        )
    allowed = dimensions(config)
    for key, value in expect.items():
        field = f"expect.{key}"
        if key == CONTENT_PASS and config == "archetype":
            if not isinstance(value, bool):
                raise ValueError(f"{where}: field {field!r} must be true or false, got {value!r}")
        elif key in allowed:
            if not (
                isinstance(value, list)
                and len(value) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
                and SCORE_MIN <= value[0] <= value[1] <= SCORE_MAX
            ):
                raise ValueError(
                    f"{where}: field {field!r} must be [low, high] with "
                    f"{SCORE_MIN} <= low <= high <= {SCORE_MAX}, got {value!r}"
                )
        else:
            names = ([CONTENT_PASS] if config == "archetype" else []) + list(allowed)
            raise ValueError(
                f"{where}: field {field!r}: not a {config} dimension ({', '.join(names)})"
            )
    if expect.get(CONTENT_PASS) is False and len(expect) > 1:
        raise ValueError(
            f"{where}: field 'expect': a clip that fails Content Pass has no scores to expect"
        )
    return dict(expect)


def read_gold(path: PathLike, config: Config) -> list[CampaignClip]:
    """The attention-check clips of the JSONL ``path`` (clip fields plus ``expect``).

    Raises:
        ValueError: as :func:`read_clips`, and for an absent audio file or a bad ``expect``.
    """
    config = check_config(config)
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such gold file")
    return _read_jsonl(path, config, None, gold=True)
