"""The official Speech-DRAME pipelines' outputs, read into per-clip predictions.

Two formats come out of the official code (``Anuttacon/speech_drame``):

- **zero/few-shot** (``zeroshot``/``fewshot`` ``eval.py``): JSONL, one line per clip and trial,
  ``{"id", "model_name", "response", "audio_path"}`` (plus ``"error": true`` when the call
  failed). ``response`` is the judge's answer as a JSON string (possibly in a Markdown code
  fence) holding scores under the official dimension names; a line without ``response``
  holds them itself. The clip id is the ``audio_path`` file name without ``.wav``, else
  ``id`` (also without ``.wav``, so that trials naming a clip either way are averaged).
  Several trial files are averaged per clip and dimension.
- **fine-tuning** (``finetuning/src/test_role.py``, ``test_arche.py``): a folder of JSON
  arrays, one per dimension, records ``{"id", "specific_dimension", "model_score",
  "probability_score", "ground_truth_ratings", ...}``. ``probability_score`` is the expectation
  over the label tokens, ``model_score`` the generated label. ``ground_truth_ratings`` holds the
  release's annotator lists (release field names, ``"N/A"`` kept, ``[]`` for a field the test
  data lacked): :attr:`ImportedPredictions.references` collects them, so such a folder can be
  scored without the dataset it was made from.

An answer that cannot be used (a failed call, a response that is not JSON, a dimension missing
from it, a null or out-of-scale score) is never scored silently: by default it is left out and
listed in :attr:`ImportedPredictions.unusable`; ``failed_as="1"`` scores it 1 instead, as
the official zero/few-shot scoring does (a failed Content Pass then counts as a pass, also as the
official code does). Malformed files (invalid JSON, a record without id, an unknown dimension)
raise ``ValueError`` naming the file and line.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .jsonl import read_objects
from .labels import FILL_SCORE
from .prompts import scored_dimensions
from .schema import (
    CONTENT_PASS,
    SCORE_MAX,
    SCORE_MIN,
    SEMANTIC_MATCH,
    Config,
    RecordError,
    annotator_score,
)

__all__ = [
    "OFFICIAL_DIMENSIONS",
    "ImportedPredictions",
    "Unusable",
    "clip_key",
    "import_official",
    "parse_score",
    "read_fewshot",
    "read_finetune",
    "release_dimension",
]

ScoreKind = Literal["probability", "model"]
SCORE_KINDS: dict[str, str] = {
    "probability": "probability_score (the expectation over the label tokens)",
    "model": "model_score (the generated label)",
}

# Official evaluation name -> release field name (the only place this mapping is spelt out).
OFFICIAL_DIMENSIONS: dict[str, str] = {
    CONTENT_PASS: CONTENT_PASS,
    "audio_quality": "audio_quality",
    "human_likeness": "human_likeness",
    "appropriateness": "appropriateness",
    "pitch_dynamics": "pitch_variation",
    "rhythmic_naturalness": "rhythmic_naturalness",
    "stress_emphasis": "stress_and_emphasis",
    "emotion_accuracy": "emotion_accuracy",
    "emotion_intensity": "emotion_intensity_control",
    "emotional_dynamic_range": "dynamic_range",
    "voice_identity_matching": "voice_identity_matching",
    "trait_embodiment": "trait_embodiment",
    "local_scene_fit": "local_story_fit",
    "global_story_fit": "global_story_coherence",
    "semantic_matchness": SEMANTIC_MATCH,
}
OFFICIAL_NAMES: dict[str, str] = {release: name for name, release in OFFICIAL_DIMENSIONS.items()}
_FENCE = re.compile(r"```(?:json)?")


def release_dimension(name: str, where: str) -> str:
    """The release field of an official dimension name.

    >>> release_dimension("emotional_dynamic_range", "x")
    'dynamic_range'
    """
    if name not in OFFICIAL_DIMENSIONS:
        raise ValueError(
            f"{where}: unknown dimension {name!r}; official names: {', '.join(OFFICIAL_DIMENSIONS)}"
        )
    return OFFICIAL_DIMENSIONS[name]


def clip_key(clip_id: str) -> str:
    """The id a clip is matched by: without a trailing ``.wav``, as the official scoring does
    (archetype release ids end in ``.wav``, the judges' ``audio_path`` names are cut there).

    >>> clip_key("250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav")
    '250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B'
    """
    return clip_id[:-4] if clip_id.endswith(".wav") else clip_id


@dataclass(frozen=True)
class Unusable:
    """One answer that could not be used: where (``file:line``), clip, dimension, why."""

    where: str
    id: str
    dimension: str
    reason: str


@dataclass
class ImportedPredictions:
    """Per clip (in first-seen order) the scores by release dimension name (Content Pass
    apart), the number of trials read, and every unusable answer."""

    config: Config
    source_format: Literal["fewshot", "finetune"]
    files: list[str]
    score: str  # what the numbers are, for the report
    failed_as: str  # a FAILED_AS mode
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    trials: dict[str, int] = field(default_factory=dict)
    unusable: list[Unusable] = field(default_factory=list)
    # fine-tuning results: clip -> release field -> the annotator list its records carry
    references: dict[str, dict[str, list[Any]]] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """One predictions-file row per clip: ``{"id", "content_pass"?, "scores"}`` (the
        layout of :meth:`ClipScores.to_dict`, plus ``trials`` for zero/few-shot input), or
        ``{"id", "error", "error_kind"}`` when no answer of the clip was usable."""
        out = []
        for clip, values in self.scores.items():
            row: dict[str, Any] = {"id": clip}
            scores = {d: v for d, v in values.items() if d != CONTENT_PASS}
            if not values:
                row.update(error="no usable answer (see the import report)", error_kind="model")
            else:
                if CONTENT_PASS in values:
                    row[CONTENT_PASS] = values[CONTENT_PASS]
                row["scores"] = scores
            if self.source_format == "fewshot":
                row["trials"] = self.trials[clip]
            out.append(row)
        return out

    def report(self) -> dict[str, Any]:
        """What was read: format, files, what the scores are, the rule for unusable answers
        and each of them (``where``, ``id``, ``dimension``, ``reason``)."""
        by_dim: dict[str, int] = defaultdict(int)
        for u in self.unusable:
            by_dim[u.dimension] += 1
        trials = list(self.trials.values())
        return {
            "config": self.config,
            "format": self.source_format,
            "files": self.files,
            "score": self.score,
            "failed_as": self.failed_as,
            "failed_rule": failed_rule(self.failed_as, self.config),
            "clips": len(self.scores),
            "trials_per_clip": [min(trials), max(trials)] if trials else [0, 0],
            # one unusable answer (a file line) leaves out every dimension it should have scored
            "unusable_lines": len({(u.where, u.id) for u in self.unusable}),
            "unusable": len(self.unusable),
            "unusable_by_dimension": dict(by_dim),
            "unusable_answers": [vars(u) for u in self.unusable],
        }


FAILED_AS: dict[str, str] = {
    "skip": "unusable answers are left out and counted (not scored)",
    "1": "unusable answers count as 1 (Content Pass: as a pass), as the official "
    "zero/few-shot scoring does",
}


def failed_rule(failed_as: str, config: Config) -> str:
    """The rule for unusable answers as a report states it (Content Pass named only where the
    config has it)."""
    rule = FAILED_AS[_check_failed_as(failed_as)]
    return rule if config == "archetype" else rule.replace(" (Content Pass: as a pass)", "")


def _check_failed_as(failed_as: str) -> str:
    if failed_as not in FAILED_AS:
        raise ValueError(f"failed_as must be one of {', '.join(FAILED_AS)}, got {failed_as!r}")
    return failed_as


def parse_score(value: Any, dim: str) -> tuple[float | None, str]:
    """``(score, "")`` if ``value`` is a usable score of ``dim``, else ``(None, reason)``."""
    is_cp = dim == CONTENT_PASS
    if isinstance(value, bool):
        return (float(value), "") if is_cp else (None, f"boolean {value!r} is not a score")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None, f"{value[:40]!r} is not a number"
    if value is None:
        return None, "no score (null)"
    if not isinstance(value, numbers.Real) or not math.isfinite(value):
        return None, f"{value!r} is not a finite number"
    low, high = (0, 1) if is_cp else (SCORE_MIN, SCORE_MAX)
    if not low <= value <= high:
        return None, f"score {value:g} outside {low}..{high}"
    return float(value), ""


def _fail_value(dim: str) -> float:
    """What ``failed_as="1"`` scores an unusable answer (the official code's default)."""
    return 1.0 if dim == CONTENT_PASS else float(FILL_SCORE)


def _parse_answer(line: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str]:
    """The judge's answer of a zero/few-shot line, or ``(None, reason)``."""
    response = line.get("response")
    if line.get("error"):
        return None, f"the pipeline recorded an error: {str(response)[:80]!r}"
    if response is None:
        return line, ""
    if isinstance(response, str):
        try:
            response = json.loads(_FENCE.sub("", response).strip())
        except json.JSONDecodeError:
            return None, f"response is not JSON: {response[:80]!r}"
    if not isinstance(response, Mapping):
        return None, f"response is a JSON {type(response).__name__}, not an object"
    return response, ""


def _fewshot_id(where: str, line: Mapping[str, Any]) -> str:
    path = line.get("audio_path")
    if isinstance(path, str) and path:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        return name[:-4] if name.endswith(".wav") else name
    clip = line.get("id")
    if not isinstance(clip, str) or not clip:
        raise ValueError(f"{where}: no clip id (neither a non-empty audio_path nor id)")
    return clip_key(clip)


def read_fewshot(
    paths: Sequence[str | os.PathLike], config: Config, failed_as: str = "skip"
) -> ImportedPredictions:
    """Zero/few-shot trial files (JSONL) -> per-clip means over the usable answers."""
    dims = scored_dimensions(config)
    out = ImportedPredictions(
        config,
        "fewshot",
        [str(p) for p in paths],
        "the judge's answers (response)",
        _check_failed_as(failed_as),
    )
    values: dict[str, dict[str, list[float]]] = {}
    for path in paths:
        for where, line in read_objects(path):
            clip = _fewshot_id(where, line)
            answer, reason = _parse_answer(line)
            clip_values = values.setdefault(clip, {})
            out.trials[clip] = out.trials.get(clip, 0) + 1
            for dim in dims:
                name = OFFICIAL_NAMES[dim]
                if answer is None:
                    score, why = None, reason
                elif name not in answer:
                    score, why = None, f"no {name!r} in the answer"
                else:
                    score, why = parse_score(answer[name], dim)
                if score is None:
                    out.unusable.append(Unusable(where, clip, dim, why))
                    if failed_as == "skip":
                        continue
                    score = _fail_value(dim)
                clip_values.setdefault(dim, []).append(score)
    out.scores = {c: {d: sum(v) / len(v) for d, v in dv.items()} for c, dv in values.items()}
    return out


def _array_records(path: Path) -> list[tuple[str, Any]]:
    """``(file:line, record)`` for each element of the JSON array in ``path``."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of records, got {type(data).__name__}")
    decoder, out = json.JSONDecoder(), []
    pos, line = text.index("[") + 1, 1 + text.count("\n", 0, text.index("["))
    for _ in data:  # the text is valid JSON: "[ value (, value)* ]"
        start = pos
        while text[pos] in " \t\r\n,":
            pos += 1
        line += text.count("\n", start, pos)
        record, end = decoder.raw_decode(text, pos)
        out.append((f"{path}:{line}", record))
        line += text.count("\n", pos, end)
        pos = end
    return out


def read_finetune(
    paths: Sequence[str | os.PathLike],
    config: Config,
    score: ScoreKind = "probability",
    failed_as: str = "skip",
) -> ImportedPredictions:
    """Fine-tuning result files (JSON arrays, one per dimension; folders are expanded to
    their ``*.json`` files) -> per-clip scores of ``probability_score`` or ``model_score``."""
    if score not in SCORE_KINDS:
        raise ValueError(f"unknown score {score!r}; expected one of {', '.join(SCORE_KINDS)}")
    allowed = set(scored_dimensions(config)) | ({SEMANTIC_MATCH} if config == "realism" else set())
    files = _expand(paths)
    out = ImportedPredictions(
        config, "finetune", [str(p) for p in files], SCORE_KINDS[score], _check_failed_as(failed_as)
    )
    seen: dict[tuple[str, str], str] = {}
    truth_seen: dict[tuple[str, str], str] = {}
    key = f"{score}_score"
    for path in files:
        for where, record in _array_records(path):
            if not isinstance(record, Mapping):
                raise ValueError(
                    f"{where}: expected a record (object), got {type(record).__name__}"
                )
            clip, name = record.get("id"), record.get("specific_dimension")
            if not isinstance(clip, str) or not clip:
                raise ValueError(f"{where}: record without a string id")
            if not isinstance(name, str):
                raise ValueError(f"{where}: record without specific_dimension")
            dim = release_dimension(name, where)
            if dim not in allowed:
                raise ValueError(f"{where}: {name!r} is not a {config} dimension")
            if key not in record:
                raise ValueError(f"{where}: record without {key}")
            if (clip, dim) in seen:
                raise ValueError(f"{where}: {clip} {name} already read at {seen[clip, dim]}")
            seen[clip, dim] = where
            _add_references(out, record, clip, where, truth_seen)
            out.trials[clip] = 1
            clip_scores = out.scores.setdefault(clip, {})
            value, why = parse_score(record[key], dim)
            if value is None:
                out.unusable.append(Unusable(where, clip, dim, f"{key}: {why}"))
                if failed_as == "skip":
                    continue
                value = _fail_value(dim)
            clip_scores[dim] = value
    return out


GROUND_TRUTH = "ground_truth_ratings"


def _reference_list(values: Any, dim: str, where: str) -> list[Any] | None:
    """One annotator list of ``ground_truth_ratings`` (``"N/A"`` -> None), or None for ``[]``
    (a field the test data lacked); ``ValueError`` naming ``where`` for anything else."""
    key = f"{GROUND_TRUTH}.{dim}"
    if not isinstance(values, list):
        raise ValueError(f"{where}: {key}: expected a list of ratings, got {values!r}")
    if not values:
        return None
    if dim == CONTENT_PASS:
        bad = [v for v in values if v is not None and not isinstance(v, bool)]
        if bad:
            raise ValueError(f"{where}: {key}: expected true/false votes, got {bad[0]!r}")
        return list(values)
    try:
        return [annotator_score(v, where, key, i)[0] for i, v in enumerate(values)]
    except RecordError as exc:
        raise ValueError(str(exc)) from None


def _add_references(
    out: ImportedPredictions, record: Mapping[str, Any], clip: str, where: str, seen: dict
) -> None:
    """Collect the ``ground_truth_ratings`` of one record into ``out.references``; the same
    clip's records must agree (``seen``: (clip, field) -> where first read)."""
    truth = record.get(GROUND_TRUTH)
    if truth is None:
        return
    if not isinstance(truth, Mapping):
        raise ValueError(f"{where}: {GROUND_TRUTH} must be an object of field -> ratings")
    clip_refs = out.references.setdefault(clip, {})
    for dim in scored_dimensions(out.config):
        if dim not in truth:
            continue
        ratings = _reference_list(truth[dim], dim, where)
        if ratings is None:
            continue
        if dim in clip_refs and clip_refs[dim] != ratings:
            raise ValueError(
                f"{where}: clip {clip} {GROUND_TRUTH}.{dim} {ratings} differs from "
                f"{clip_refs[dim]} read at {seen[clip, dim]}"
            )
        clip_refs[dim] = ratings
        seen.setdefault((clip, dim), where)
    if not clip_refs:
        del out.references[clip]


def _expand(paths: Iterable[str | os.PathLike]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise ValueError(f"{p}: no *.json result files in this folder")
            files.extend(found)
        else:
            files.append(p)
    return files


def import_official(
    paths: Sequence[str | os.PathLike],
    config: Config,
    score: ScoreKind | None = None,
    failed_as: str = "skip",
) -> ImportedPredictions:
    """Read official outputs, telling the formats apart: folders and ``*.json`` files are
    fine-tuning results, other files zero/few-shot JSONL trials (one file per trial).
    ``score`` (default ``probability``) applies to fine-tuning results only."""
    if not paths:
        raise ValueError("no input files")
    finetune = [Path(p).is_dir() or str(p).endswith(".json") for p in paths]
    if any(finetune) and not all(finetune):
        raise ValueError(
            "mixed inputs: give either fine-tuning result folders/*.json files or "
            "zero/few-shot *.jsonl trial files"
        )
    if all(finetune):
        return read_finetune(paths, config, score or "probability", failed_as)
    if score is not None:
        raise ValueError("score= (--score) applies to fine-tuning results, not zero/few-shot JSONL")
    return read_fewshot(paths, config, failed_as)
