"""`datasets.Features` of each config of the Hub dataset, and the row a validated record becomes.

Official fields keep their official names and nesting; typed columns are added beside them:
``audio`` (16 kHz mono on decode), ``duration_s``, ``not_applicable`` (which nulls were
``"N/A"`` in the release) and ``language`` (what the release says about the spoken language:
the id's ``zh``/``en`` tag, else the script of the spoken transcript or context text; null when
it says nothing; see :func:`release_language`).
"""

from __future__ import annotations

from typing import Any

from datasets import Audio, Features, List, Value

from ..audio import TARGET_SR
from ..languages import language_hint
from ..schema import (
    ARCHETYPE_COMMENTS,
    ARCHETYPE_DIMENSIONS,
    ARCHETYPE_TEXT_FIELDS,
    CONTENT_PASS,
    REALISM_DIMENSIONS,
    REALISM_META_FIELDS,
    REALISM_TEXT_FIELDS,
    Config,
    ValidatedRecord,
)

SCORE = Value("int8")
_KIND = {int: Value("int8"), bool: Value("bool"), str: Value("string")}


def score_fields(config: Config, extra_dims: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The annotation keys holding 1..5 scores (``extra_dims``: e.g. semantic_match if present)."""
    if config == "archetype":
        return (*ARCHETYPE_DIMENSIONS, "confidence")
    return (*REALISM_DIMENSIONS, *extra_dims)


def config_features(config: Config, extra_dims: tuple[str, ...] = ()) -> Features:
    """Features of one config's parquet shards."""
    audio = Audio(sampling_rate=TARGET_SR, num_channels=1)
    if config == "archetype":
        text = ARCHETYPE_TEXT_FIELDS
        annotations: dict[str, Any] = {CONTENT_PASS: List(Value("bool"))}
        annotations |= {k: List(SCORE) for k in score_fields(config)}
        annotations |= {k: List(Value("string")) for k in ARCHETYPE_COMMENTS}
    else:
        text = REALISM_TEXT_FIELDS
        annotations = {k: List(SCORE) for k in score_fields(config, extra_dims)}
        annotations |= {k: List(_KIND[kind]) for k, kind in REALISM_META_FIELDS.items()}
    mask = {k: List(Value("bool")) for k in score_fields(config, extra_dims)}
    return Features(
        {
            **{k: Value("string") for k in text},
            "audio": audio,
            "duration_s": Value("float64"),
            "annotations": annotations,
            "not_applicable": mask,
            "language": Value("string"),
        }
    )


# the text whose script hints at the spoken language, in order of preference
_HINT_TEXT = ("transcript", "question", "local_scene", "char_profile")


def release_language(fields: dict[str, Any]) -> str | None:
    """The language a record's release fields indicate (``zh``, ``en``) or None: the id's
    tag, else the script of the first of transcript / question / scene / profile present."""
    text = next((fields[k] for k in _HINT_TEXT if fields.get(k)), "")
    return language_hint(str(fields["id"]), text)


def record_row(
    record: ValidatedRecord, audio_bytes: bytes, audio_name: str, seconds: float
) -> dict:
    """The parquet row of a validated record (audio embedded as encoded bytes)."""
    row: dict[str, Any] = dict(record.fields)
    row["audio"] = {"bytes": audio_bytes, "path": audio_name}
    row["duration_s"] = seconds
    row["annotations"] = record.annotations
    row["not_applicable"] = record.not_applicable
    row["language"] = release_language(record.fields)
    return row
