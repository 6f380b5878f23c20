"""A campaign's ratings as an official-format release that ``speech-drame build`` reads.

:func:`export_release` writes ``OUT/{archetype_data|realism_data}/{split}.jsonl`` with the clips'
audio copied beside it, and ``OUT/CAMPAIGN.json``. Each record holds a clip's regular ratings
(the first per rater, annotators in order of arrival) as :func:`annotation_lists` builds them;
repeats and gold checks are left out, and so are clips nobody rated. With a ``test_share`` the
clips are dealt to ``train`` and ``test`` by a hash of their id (:func:`held_out`), so that a
scorer can be trained on the ratings and tested on clips it did not see, and a clip keeps its
split when the campaign grows.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import atomic_io
from ..errors import InputError
from ..schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    DATA_DIRS,
    NOT_APPLICABLE,
    REALISM_META_FIELDS,
    SPLITS,
    Config,
    check_config,
    context_columns,
    dimensions,
    validate_record,
)
from .forms import CONFIDENCE, REALISM_COMMENTS, comment_fields
from .records import CampaignClip, StoredRating

CAMPAIGN_FILE = "CAMPAIGN.json"
# The official realism release's key order inside ``annotations``.
REALISM_ANNOTATION_ORDER: tuple[str, ...] = (
    "annotator_confidence_rating",
    "comments",
    "dynamic_range",
    "emotion_accuracy",
    "emotion_intensity_control",
    "global_story_coherence",
    "local_story_fit",
    "multi-speaker_influence",
    "observed_character_style_dimensions",
    "pitch_variation",
    "sufficient",
    "contradictory",
    "prmopt_quality",
    "rhythmic_naturalness",
    "stress_and_emphasis",
    "trait_embodiment",
    "voice_identity_matching",
)
# Realism annotation fields the page does not collect: null for every annotator.
NOT_COLLECTED: tuple[str, ...] = tuple(
    k for k in REALISM_META_FIELDS if k not in ("annotator_confidence_rating", REALISM_COMMENTS)
)


class ExportError(InputError):
    """The release cannot be written (an existing OUT, an unknown split, missing audio)."""


def release_ratings(ratings: Iterable[StoredRating]) -> dict[str, list[StoredRating]]:
    """Clip id -> the ratings a release holds: regular ones, the first per rater, in order
    of arrival."""
    out: dict[str, list[StoredRating]] = {}
    seen: set[tuple[str, str]] = set()
    for r in sorted(ratings, key=lambda r: r.rating_id):
        if r.kind == "regular" and (r.rater, r.clip_id) not in seen:
            seen.add((r.rater, r.clip_id))
            out.setdefault(r.clip_id, []).append(r)
    return out


def score_value(rating: StoredRating, dim: str) -> int | str | None:
    """One annotator's release value of ``dim``: the score, ``"N/A"`` when gated, else null."""
    return rating.answers.release_value(dim)


def annotation_lists(config: Config, ratings: list[StoredRating]) -> dict[str, list[Any]]:
    """One clip's release ``annotations`` object from its ratings (annotators by rating id).

    Gated scores are ``"N/A"``; quality scores and confidence after a failed Content Pass are
    null; a missing comment is ``""``; realism fields the page does not collect are null.
    """
    check_config(config)
    if not ratings:
        raise ValueError("annotation_lists: no ratings")
    ordered = sorted(ratings, key=lambda r: r.rating_id)
    for r in ordered:
        if r.answers.config != config:
            raise ValueError(f"rating {r.rating_id}: answers of {r.answers.config}, not {config}")
    comments = {
        key: [r.answers.comments.get(key, "") for r in ordered] for key in comment_fields(config)
    }
    scores = {d: [score_value(r, d) for r in ordered] for d in dimensions(config)}
    if config == "archetype":
        return {
            CONTENT_PASS: [r.answers.content_pass for r in ordered],
            **{d: scores[d] for d in ARCHETYPE_DIMENSIONS},
            CONFIDENCE: [
                None if r.answers.content_pass is False else r.answers.confidence for r in ordered
            ],
            **comments,
        }
    fields = {
        **scores,
        **comments,
        "annotator_confidence_rating": [r.answers.confidence for r in ordered],
        **{k: [None] * len(ordered) for k in NOT_COLLECTED},
    }
    return {k: fields[k] for k in REALISM_ANNOTATION_ORDER}


def dataset_annotations(config: Config, ratings: list[StoredRating]) -> dict[str, list[Any]]:
    """:func:`annotation_lists` as the built dataset holds them, what the statistics read:
    ``"N/A"`` is null there (and masked)."""
    return {key: [None if v == NOT_APPLICABLE else v for v in values]
            for key, values in annotation_lists(config, ratings).items()}  # fmt: skip


def _file_name(clip: CampaignClip, used: set[str]) -> str:
    """The copied audio's file name: the clip id made safe, with the audio's suffix."""
    suffix = Path(clip.audio_path).suffix.lower()
    stem = re.sub(r"[^\w.-]", "_", clip.id).lstrip(".") or "clip"
    if stem.lower().endswith(suffix):
        stem = stem[: -len(suffix)]
    name = f"{stem}{suffix}"
    if name in used:
        name = f"{stem}-{clip.position}{suffix}"
    used.add(name)
    return name


def held_out(clip_id: str, test_share: float) -> bool:
    """Whether a clip goes to ``test``: the first 8 bytes of the SHA-256 of its id, as a
    fraction of 2**64, below ``test_share`` (the same clip, the same answer, on any machine).

    >>> held_out("c01", 0.0), held_out("c01", 1.0)
    (False, True)
    """
    digest = hashlib.sha256(clip_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < test_share


def release_record(
    config: Config, clip: CampaignClip, ratings: list[StoredRating], wav_path: str
) -> dict[str, Any]:
    """The official record of one rated clip (field order as in the release)."""
    annotations = annotation_lists(config, ratings)
    ctx = context_columns(clip.context)
    if config == "archetype":
        return {"id": clip.id, "question": ctx["question"], "annotations": annotations,
                "wav_path": wav_path}  # fmt: skip
    return {
        "id": clip.id,
        "local_scene": ctx["local_scene"],
        "char_age": clip.extra.get("char_age", ""),
        "char_style": ctx["char_style"],
        "char_profile": ctx["char_profile"],
        "transcript": clip.extra.get("transcript", ""),
        "annotations": annotations,
        "wav_path": wav_path,
        "data_source": clip.extra.get("data_source", ""),
    }


def _check_target(campaign: Any, clips: list[CampaignClip], out: Any, overwrite: bool) -> Path:
    """The folder an export may replace (:func:`~speech_drame.atomic_io.replaceable_folder`)."""
    holds = [("the campaign database", campaign.database_file)] if getattr(
        campaign, "database_file", None) else []  # fmt: skip
    holds += [(f"the audio of clip {c.id!r}", c.audio_path) for c in clips]
    try:
        return atomic_io.replaceable_folder(
            out, "campaign export", lambda p: (p / CAMPAIGN_FILE).is_file(),
            overwrite=overwrite, holds=holds,
        )  # fmt: skip
    except atomic_io.FolderRefused as exc:
        raise ExportError(str(exc)) from None


def export_release(campaign: Any, out: str | os.PathLike, split: str = "test",
                   overwrite: bool = False, test_share: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Write the campaign's regular ratings as a release folder ``out``; returns the report.

    Every rated clip goes to ``split``, or with ``test_share`` (0 < share < 1) to ``test`` or
    ``train`` by :func:`held_out`; the report's ``splits`` counts the records of each.
    Uses ``campaign.config``, ``campaign.raters_per_clip``, ``campaign.clips()``,
    ``campaign.ratings(kinds=("regular",))`` and ``campaign.database_file`` when it has one. The
    folder is built beside ``out`` (its symlinks resolved) and moved into place when complete.
    Only an earlier export (``CAMPAIGN.json``) is ever replaced, and only with ``overwrite``;
    ``out`` may not hold the campaign's database or its clips' audio, be the current folder or
    a mount point.

    Raises:
        ExportError: ``out`` may not be replaced (see above), the split is not one of the
            config's, ``test_share`` is not between 0 and 1, or a clip's audio file is missing.
    """
    config = check_config(campaign.config)
    if split not in SPLITS[config]:
        raise ExportError(f"split {split!r}: {config} splits are {', '.join(SPLITS[config])}")
    if test_share is not None and not 0 < test_share < 1:
        raise ExportError(f"test share {test_share}: expected a fraction between 0 and 1")
    clips = campaign.clips()
    target = _check_target(campaign, clips, out, overwrite)
    by_clip = release_ratings(campaign.ratings(kinds=("regular",)))
    staged = atomic_io.staging_dir(target)
    try:
        folder = staged / DATA_DIRS[config]
        folder.mkdir()
        lines: dict[str, list[str]] = {}
        used, raters = set(), set()
        for clip in clips:
            ratings = by_clip.get(clip.id)
            if not ratings:
                continue
            source = Path(clip.audio_path)
            if not source.is_file():
                raise ExportError(f"clip {clip.id!r}: audio file {source} is missing")
            name = _file_name(clip, used)
            shutil.copyfile(source, folder / name)
            record = release_record(config, clip, ratings, name)
            validate_record(record, config, f"clip {clip.id!r}")
            into = (
                split
                if test_share is None
                else "test"
                if held_out(clip.id, test_share)
                else "train"
            )
            lines.setdefault(into, []).append(json.dumps(record, ensure_ascii=False) + "\n")
            raters.update(r.rater for r in ratings)
        if not lines:
            raise ExportError("no clip has a rating yet: nothing to export")
        for name, records in lines.items():
            atomic_io.write_text(folder / f"{name}.jsonl", "".join(records))
        k = campaign.raters_per_clip
        counts = [len(by_clip.get(c.id, ())) for c in clips]
        report = {
            "out": str(target),
            "config": config,
            "split": split if test_share is None else None,
            "test_share": test_share,
            "splits": {name: len(lines.get(name, [])) for name in SPLITS[config] if name in lines},
            "raters_per_clip": k,
            "clips": len(clips),
            "records": sum(len(v) for v in lines.values()),
            "clips_without_ratings": sum(n == 0 for n in counts),
            "clips_under_target": sum(0 < n < k for n in counts),
            "ratings": sum(counts),
            "raters": sorted(raters),
            "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        atomic_io.write_json(staged / CAMPAIGN_FILE, report, indent=2)
        _check_target(campaign, clips, out, overwrite)  # again: the folder may have appeared
        atomic_io.replace_dir(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return report
