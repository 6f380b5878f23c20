"""Dimensions, rubric names and the official EvalBench record format.

The official release (``archetype_data/*.jsonl`` and ``realism_data/*.jsonl``) stores one
record per clip with positional annotator lists. This module names its fields exactly as the
release does (quirks included: ``prmopt_quality``, ``multi-speaker_influence``) and validates
raw records into a typed, normalised form. Nothing is renamed; ``"N/A"`` scores become ``None``
and are flagged in a separate mask so that the distinction is never lost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Config = Literal["archetype", "realism"]
CONFIGS: tuple[Config, ...] = ("archetype", "realism")

SCORE_MIN, SCORE_MAX = 1, 5
SCORE_RANGE = SCORE_MAX - SCORE_MIN  # R in the paper's agreement formula
NOT_APPLICABLE = "N/A"

# --- archetype -------------------------------------------------------------------------
CONTENT_PASS = "content_pass"
ARCHETYPE_DIMENSIONS: tuple[str, ...] = ("audio_quality", "human_likeness", "appropriateness")
ARCHETYPE_COMMENTS: tuple[str, ...] = tuple(f"{d}_comment" for d in ARCHETYPE_DIMENSIONS)
ARCHETYPE_TEXT_FIELDS: tuple[str, ...] = ("id", "question", "wav_path")

# --- realism ---------------------------------------------------------------------------
REALISM_DIMENSIONS: tuple[str, ...] = (
    "pitch_variation",
    "rhythmic_naturalness",
    "stress_and_emphasis",
    "emotion_accuracy",
    "emotion_intensity_control",
    "dynamic_range",
    "voice_identity_matching",
    "trait_embodiment",
    "local_story_fit",
    "global_story_coherence",
)
# The paper's 11th dimension. It has no field in the public release; it is used only when a
# release actually carries it.
SEMANTIC_MATCH = "semantic_match"
REALISM_TEXT_FIELDS: tuple[str, ...] = (
    "id",
    "local_scene",
    "char_age",
    "char_style",
    "char_profile",
    "transcript",
    "wav_path",
    "data_source",
)
REALISM_META_FIELDS: dict[str, type] = {
    "annotator_confidence_rating": int,
    "comments": str,
    "multi-speaker_influence": bool,
    "observed_character_style_dimensions": str,
    "sufficient": bool,
    "contradictory": bool,
    "prmopt_quality": str,
}

# Paper wording for each key (rubric names differ from field names).
RUBRIC_NAMES: dict[str, str] = {
    CONTENT_PASS: "Content Pass",
    "audio_quality": "Audio Quality",
    "human_likeness": "Human Likeness",
    "appropriateness": "Appropriateness",
    "pitch_variation": "Pitch Variation",
    "rhythmic_naturalness": "Rhythmic Naturalness",
    "stress_and_emphasis": "Stress & Emphasis",
    "emotion_accuracy": "Emotion Accuracy",
    "emotion_intensity_control": "Emotion Intensity Control",
    "dynamic_range": "Emotion Transition (Dynamic Range)",
    "voice_identity_matching": "Voice Identity Matching",
    "trait_embodiment": "Trait Embodiment",
    "local_story_fit": "Local Scene Fit",
    "global_story_coherence": "Global Story Coherence",
    SEMANTIC_MATCH: "Semantic Match",
}

# Progressive gating of the emotion dimensions: (gated dimension, gate dimension).
# A gated dimension is rated only when its gate scored >= EMOTION_GATE_THRESHOLD.
EMOTION_GATES: tuple[tuple[str, str], ...] = (
    ("emotion_intensity_control", "emotion_accuracy"),
    ("dynamic_range", "emotion_intensity_control"),
)
EMOTION_GATE_THRESHOLD = 3

SPLITS: dict[Config, tuple[str, ...]] = {
    "archetype": ("train", "test"),
    "realism": ("train", "test", "test_real"),
}
DATA_DIRS: dict[Config, str] = {"archetype": "archetype_data", "realism": "realism_data"}
MIN_ANNOTATORS_PAPER = 3  # the paper collects at least three ratings per clip


# --- context: what a scorer is told about the role ---------------------------------------
# The context texts a config's clips are scored against, by their short names (command-line
# options, scenario files, scorer inputs) ...
CONTEXTS: dict[Config, tuple[str, ...]] = {
    "archetype": ("question",),
    "realism": ("profile", "scene", "traits"),
}
# ... and the EvalBench column that holds each of them.
CONTEXT_COLUMNS: dict[str, str] = {
    "question": "question",
    "profile": "char_profile",
    "scene": "local_scene",
    "traits": "char_style",
}


def context_from_row(row: Mapping[str, Any], config: Config, where: str) -> dict[str, str]:
    """The context texts of ``config`` from a dataset row or scenario object, read from the
    EvalBench column (``char_profile``) or the short name (``profile``), column first.

    Raises:
        ValueError: naming ``where`` and the field, for a missing or empty text.
    """
    out = {}
    for name in CONTEXTS[check_config(config)]:
        keys = dict.fromkeys((CONTEXT_COLUMNS[name], name))
        value = next((row[k] for k in keys if row.get(k)), None)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                f"{where}: field {' or '.join(map(repr, keys))} must be a non-empty string"
            )
        out[name] = value
    return out


def context_columns(context: Mapping[str, str]) -> dict[str, str]:
    """Context texts by short name -> the same texts by EvalBench column."""
    return {CONTEXT_COLUMNS[name]: text for name, text in context.items()}


def dimensions(config: Config) -> tuple[str, ...]:
    """Rated 1..5 dimensions of a config (Content Pass is separate, see ``CONTENT_PASS``)."""
    check_config(config)
    return ARCHETYPE_DIMENSIONS if config == "archetype" else REALISM_DIMENSIONS


def check_config(config: str) -> Config:
    if config not in CONFIGS:
        raise ValueError(f"unknown config {config!r}; expected one of {', '.join(CONFIGS)}")
    return config  # type: ignore[return-value]


class RecordError(ValueError):
    """An official record that does not follow the release format.

    The message names the record id (or line) and the offending field.
    """

    def __init__(self, where: str, field_name: str, reason: str):
        self.where, self.field_name, self.reason = where, field_name, reason
        super().__init__(f"{where}: field {field_name!r}: {reason}")


@dataclass
class ValidatedRecord:
    """A raw record after validation: official fields with official names, typed.

    ``not_applicable`` maps each score field to a per-annotator mask of the ``"N/A"`` values
    that became ``None`` in ``annotations``.
    """

    config: Config
    fields: dict[str, Any]
    annotations: dict[str, list[Any]]
    not_applicable: dict[str, list[bool]] = field(default_factory=dict)
    n_annotators: int = 0

    @property
    def id(self) -> str:
        return self.fields["id"]

    @property
    def n_na(self) -> int:
        return sum(sum(mask) for mask in self.not_applicable.values())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _score(value: Any, where: str, key: str, i: int) -> tuple[int | None, bool]:
    """Return (score or None, was_na) for one annotator's score. ``"N/A"`` is accepted in
    both configs (realism gates emotion ratings; archetype records may carry it too)."""
    if value is None:
        return None, False
    if isinstance(value, str) and value.strip().upper() == NOT_APPLICABLE:
        return None, True
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        value = int(value)
    if not _is_int(value):
        raise RecordError(
            where, f"annotations.{key}[{i}]", f"expected an integer score, got {value!r}"
        )
    if not SCORE_MIN <= value <= SCORE_MAX:
        raise RecordError(
            where, f"annotations.{key}[{i}]", f"score {value} outside {SCORE_MIN}..{SCORE_MAX}"
        )
    return value, False


def _typed_list(values: list[Any], kind: type, where: str, key: str) -> list[Any]:
    out = []
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
        elif (
            kind is bool
            and isinstance(v, bool)
            or kind is int
            and _is_int(v)
            or kind is str
            and isinstance(v, str)
        ):
            out.append(v)
        else:
            raise RecordError(
                where, f"annotations.{key}[{i}]", f"expected {kind.__name__}, got {v!r}"
            )
    return out


def validate_record(raw: Any, config: Config, where: str = "record") -> ValidatedRecord:
    """Validate one raw JSONL record of ``config`` against the official schema.

    ``where`` names the record for messages until its id is known (e.g. ``"test.jsonl:3"``).
    Raises :class:`RecordError` naming the record id and field on the first problem.
    """
    check_config(config)
    if not isinstance(raw, dict):
        raise RecordError(where, "<record>", f"expected a JSON object, got {type(raw).__name__}")
    rid = raw.get("id")
    if isinstance(rid, str) and rid:
        where = f"record {rid!r} ({where})"
    text_fields = ARCHETYPE_TEXT_FIELDS if config == "archetype" else REALISM_TEXT_FIELDS
    fields: dict[str, Any] = {}
    for key in text_fields:
        if key not in raw:
            raise RecordError(where, key, "required field is missing")
        if not isinstance(raw[key], str):
            raise RecordError(where, key, f"expected a string, got {raw[key]!r}")
        fields[key] = raw[key]
    if not fields["id"]:
        raise RecordError(where, "id", "empty id")
    if not fields["wav_path"]:
        raise RecordError(where, "wav_path", "empty path")

    ann = raw.get("annotations")
    if not isinstance(ann, dict):
        raise RecordError(where, "annotations", "required object is missing")

    if config == "archetype":
        score_keys = list(ARCHETYPE_DIMENSIONS) + ["confidence"]
        typed = {CONTENT_PASS: bool, **{c: str for c in ARCHETYPE_COMMENTS}}
    else:
        score_keys = list(REALISM_DIMENSIONS) + ([SEMANTIC_MATCH] if SEMANTIC_MATCH in ann else [])
        typed = dict(REALISM_META_FIELDS)

    lengths: dict[str, int] = {}
    for key in [*score_keys, *typed]:
        if key not in ann:
            raise RecordError(where, f"annotations.{key}", "required field is missing")
        if not isinstance(ann[key], list):
            raise RecordError(where, f"annotations.{key}", f"expected a list, got {ann[key]!r}")
        lengths[key] = len(ann[key])
    n = max(lengths.values())
    if n == 0:
        raise RecordError(where, "annotations", "no annotators")
    for key, length in lengths.items():
        if length != n:
            raise RecordError(
                where, f"annotations.{key}", f"has {length} annotators, other fields have {n}"
            )

    annotations: dict[str, list[Any]] = {}
    not_applicable: dict[str, list[bool]] = {}
    for key in score_keys:
        pairs = [_score(v, where, key, i) for i, v in enumerate(ann[key])]
        annotations[key] = [p[0] for p in pairs]
        not_applicable[key] = [p[1] for p in pairs]
    for key, kind in typed.items():
        annotations[key] = _typed_list(ann[key], kind, where, key)
    return ValidatedRecord(config, fields, annotations, not_applicable, n)
