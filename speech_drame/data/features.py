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
    CONTENT_PASS,
    Config,
    ValidatedRecord,
    score_keys,
    text_fields,
    typed_annotation_keys,
)

SCORE = Value("int8")
_KIND = {int: Value("int8"), bool: Value("bool"), str: Value("string")}


def config_features(config: Config, extra_dims: tuple[str, ...] = ()) -> Features:
    """Features of one config's parquet shards. Every column is nullable: ``audio`` and
    ``duration_s`` are null for a clip whose audio the build did not find, an optional field
    the release does not carry is null (a whole annotator list, for an annotation field)."""
    audio = Audio(sampling_rate=TARGET_SR, num_channels=1)
    typed = typed_annotation_keys(config)
    annotations: dict[str, Any] = (
        {CONTENT_PASS: List(Value("bool"))} if CONTENT_PASS in typed else {}
    )
    annotations |= {k: List(SCORE) for k in score_keys(config, extra_dims)}
    annotations |= {k: List(_KIND[kind]) for k, kind in typed.items() if k != CONTENT_PASS}
    mask = {k: List(Value("bool")) for k in score_keys(config, extra_dims)}
    return Features(
        {
            **{k: Value("string") for k in text_fields(config)},
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
    record: ValidatedRecord,
    audio_bytes: bytes | None = None,
    audio_name: str | None = None,
    seconds: float | None = None,
) -> dict:
    """The parquet row of a validated record (audio embedded as encoded bytes; ``None``, with
    ``duration_s`` null, for a clip without audio)."""
    row: dict[str, Any] = dict(record.fields)
    row["audio"] = None if audio_bytes is None else {"bytes": audio_bytes, "path": audio_name}
    row["duration_s"] = seconds
    row["annotations"] = record.annotations
    row["not_applicable"] = record.not_applicable
    row["language"] = release_language(record.fields)
    return row
