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

from .errors import InputError

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


class RecordError(InputError):
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
    that became ``None`` in ``annotations``. An optional field the record does not carry is
    ``None`` (a whole annotator list, in ``annotations`` and ``not_applicable``) and named in
    ``absent``; ``ignored`` names the record's fields that are not part of the format (the
    official training code's ``dataset_name``, ``audio_info``, ...), which are not kept.
    """

    config: Config
    fields: dict[str, Any]
    annotations: dict[str, list[Any] | None]
    not_applicable: dict[str, list[bool] | None] = field(default_factory=dict)
    n_annotators: int = 0
    absent: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.fields["id"]

    @property
    def n_na(self) -> int:
        return sum(sum(mask) for mask in self.not_applicable.values() if mask is not None)


# What a record must carry. Everything else of the format is optional: absent or null, it is
# kept as null and counted (the official training code reads only these fields, and reads the
# ratings from the top level or from ``annotations``).
REQUIRED_TEXT_FIELDS: dict[Config, tuple[str, ...]] = {
    "archetype": ("id", "question"),
    "realism": ("id", "local_scene", "char_style", "char_profile"),
}
REQUIRED_RATINGS: dict[Config, tuple[str, ...]] = {
    "archetype": (CONTENT_PASS, *ARCHETYPE_DIMENSIONS),
    "realism": REALISM_DIMENSIONS,
}
ANNOTATIONS = "annotations"


def text_fields(config: Config) -> tuple[str, ...]:
    """The text fields of a config's records, in column order."""
    return ARCHETYPE_TEXT_FIELDS if check_config(config) == "archetype" else REALISM_TEXT_FIELDS


def score_keys(config: Config, extra_dims: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The annotation keys holding 1..5 scores (``extra_dims``: e.g. semantic_match if present)."""
    if check_config(config) == "archetype":
        return (*ARCHETYPE_DIMENSIONS, "confidence")
    return (*REALISM_DIMENSIONS, *extra_dims)


def typed_annotation_keys(config: Config) -> dict[str, type]:
    """The annotation keys that are not 1..5 scores, with the type of their entries."""
    if check_config(config) == "archetype":
        return {CONTENT_PASS: bool, **{c: str for c in ARCHETYPE_COMMENTS}}
    return dict(REALISM_META_FIELDS)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def annotator_score(value: Any, where: str, key: str, i: int) -> tuple[int | None, bool]:
    """Return (score or None, was_na) for one annotator's score. ``"N/A"`` is accepted in
    both configs (realism gates emotion ratings; archetype records may carry it too)."""
    if value is None:
        return None, False
    if isinstance(value, str) and value.strip().upper() == NOT_APPLICABLE:
        return None, True
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        value = int(value)
    if not _is_int(value):
        raise RecordError(where, f"{key}[{i}]", f"expected an integer score, got {value!r}")
    if not SCORE_MIN <= value <= SCORE_MAX:
        raise RecordError(where, f"{key}[{i}]", f"score {value} outside {SCORE_MIN}..{SCORE_MAX}")
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
            raise RecordError(where, f"{key}[{i}]", f"expected {kind.__name__}, got {v!r}")
    return out


def _rating_lists(
    raw: dict[str, Any], keys: list[str], where: str
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The annotator lists of ``keys`` read from ``annotations`` or from the top level, as the
    official training code reads them: ``(values, field name used in messages, unknown
    annotation keys)``. A key given in both places with different values is an error."""
    nested = raw.get(ANNOTATIONS, {})
    if ANNOTATIONS in raw and not isinstance(nested, dict):
        raise RecordError(where, ANNOTATIONS, f"expected an object, got {nested!r}")
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key in keys:
        inside, top = key in nested, key in raw
        if inside and top and nested[key] != raw[key]:
            raise RecordError(
                where, key, "given at the top level and under 'annotations', with different values"
            )
        if inside or top:
            values[key] = nested[key] if inside else raw[key]
            names[key] = f"{ANNOTATIONS}.{key}" if inside else key
    unknown = [f"{ANNOTATIONS}.{k}" for k in nested if k not in keys]
    return values, names, unknown


def validate_record(raw: Any, config: Config, where: str = "record") -> ValidatedRecord:
    """Validate one raw record of ``config`` against the official schema.

    ``where`` names the record for messages until its id is known (e.g. ``"test.jsonl:3"``).
    The ratings may sit under ``annotations`` (the release) or at the top level (accepted by the
    official training code). Required: the id, the context texts a scorer is given
    (:data:`REQUIRED_TEXT_FIELDS`) and the rated dimensions (:data:`REQUIRED_RATINGS`); every
    other field of the format may be absent or null (kept as null, named in ``absent``).
    Raises :class:`RecordError` naming the record id and field on the first problem.
    """
    check_config(config)
    if not isinstance(raw, dict):
        raise RecordError(where, "<record>", f"expected a JSON object, got {type(raw).__name__}")
    rid = raw.get("id")
    if isinstance(rid, str) and rid:
        where = f"record {rid!r} ({where})"
    absent: list[str] = []
    fields: dict[str, Any] = {}
    for key in text_fields(config):
        value = raw.get(key)
        required = key in REQUIRED_TEXT_FIELDS[config]
        if value is None:
            if required:
                raise RecordError(where, key, "required field is missing")
            absent.append(key)
        elif not isinstance(value, str):
            raise RecordError(where, key, f"expected a string, got {value!r}")
        fields[key] = value
    if not fields["id"]:
        raise RecordError(where, "id", "empty id")
    if fields.get("wav_path") == "":
        raise RecordError(where, "wav_path", "empty path")

    typed = typed_annotation_keys(config)
    scores = list(score_keys(config))
    if config == "realism":
        scores.append(SEMANTIC_MATCH)  # the paper's 11th dimension, kept where a release has it
    lists, names, unknown = _rating_lists(raw, [*scores, *typed], where)
    if config == "realism" and SEMANTIC_MATCH not in lists:
        scores.remove(SEMANTIC_MATCH)
    known = {*text_fields(config), ANNOTATIONS, *scores, *typed}
    ignored = tuple(sorted(k for k in raw if k not in known)) + tuple(unknown)

    lengths: dict[str, int] = {}
    for key in [*scores, *typed]:
        if lists.get(key) is None:
            if key in REQUIRED_RATINGS[config]:
                raise RecordError(where, f"{ANNOTATIONS}.{key}", "required field is missing")
            absent.append(f"{ANNOTATIONS}.{key}")
            continue
        if not isinstance(lists[key], list):
            raise RecordError(where, names[key], f"expected a list, got {lists[key]!r}")
        lengths[key] = len(lists[key])
    n = max(lengths.values())
    if n == 0:
        raise RecordError(where, ANNOTATIONS, "no annotators")
    for key, length in lengths.items():
        if length != n:
            raise RecordError(where, names[key], f"has {length} annotators, other fields have {n}")

    annotations: dict[str, list[Any] | None] = {}
    not_applicable: dict[str, list[bool] | None] = {}
    for key in scores:
        if key not in lengths:
            annotations[key] = not_applicable[key] = None
            continue
        pairs = [annotator_score(v, where, names[key], i) for i, v in enumerate(lists[key])]
        annotations[key] = [p[0] for p in pairs]
        not_applicable[key] = [p[1] for p in pairs]
    for key, kind in typed.items():
        annotations[key] = (
            _typed_list(lists[key], kind, where, names[key]) if key in lengths else None
        )
    return ValidatedRecord(config, fields, annotations, not_applicable, n, tuple(absent), ignored)
