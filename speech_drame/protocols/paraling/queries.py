"""SpeechParaling-Bench queries: the JSONL format, the instruction builder and spoken queries.

A query record holds ``id``, ``task`` (``paralanguage_control``, ``dynamic_variation`` or
``situational_adaptation``), ``subtask`` (``common``/``abstract``, ``transitional``/
``progressive``, or empty), ``dimensions`` (the dimension set, e.g. ``["emotion", "speed"]``),
``targets`` (dimension -> wanted value, in words), ``instruction`` (the query text),
``sentence`` (the sentence to read, for the two reading tasks) and an optional ``audio``
(the spoken query, relative to the file's folder). The id names the query's audio files
(``<id>.wav``), so it must be a plain file name (:func:`speech_drame.paths.safe_name`).

For Paralanguage Control and Dynamic Variation the instruction follows the paper's fixed
prefix, ``Please read this sentence {dimensions}: {sentence}``; for Situational Adaptation it
is the user's utterance itself, with the cues left implicit in how it is spoken.

A query is judged in *verdict units* (:attr:`Query.units`), as the released judge does: one
per target dimension for Paralanguage Control and Situational Adaptation, one for the whole
query (all its dimensions) for Dynamic Variation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_text
from speech_drame.jsonl import read_objects, repeated
from speech_drame.paths import id_path, safe_name

TASKS: dict[str, tuple[str, ...]] = {
    "paralanguage_control": ("common", "abstract"),
    "dynamic_variation": ("transitional", "progressive"),
    "situational_adaptation": ("",),
}
PREFIX = "Please read this sentence {dimensions}: {sentence}"
DIRECTIONS = ("increase", "decrease")


@dataclass(frozen=True)
class Query:
    id: str
    task: str
    dimensions: tuple[str, ...]
    instruction: str
    subtask: str = ""
    targets: Mapping[str, str] = field(default_factory=dict)
    sentence: str = ""
    audio: str | None = None

    def __post_init__(self):
        safe_name(self.id, "query id")
        if self.task not in TASKS:
            raise ValueError(f"query {self.id}: unknown task {self.task!r}; use {', '.join(TASKS)}")
        if self.subtask not in TASKS[self.task]:
            raise ValueError(
                f"query {self.id}: subtask {self.subtask!r} is not one of {TASKS[self.task]}"
            )
        if not self.dimensions or not self.instruction.strip():
            raise ValueError(f"query {self.id}: needs a dimension set and an instruction")
        if len(set(self.dimensions)) != len(self.dimensions):
            raise ValueError(f"query {self.id}: repeated dimensions {list(self.dimensions)}")
        if self.task != "situational_adaptation" and not self.sentence.strip():
            raise ValueError(f"query {self.id}: a {self.task} query needs the sentence to read")

    @property
    def units(self) -> tuple[tuple[str, ...], ...]:
        """The verdict units: each is the dimensions one verdict counts for."""
        if self.task == "dynamic_variation":
            return (self.dimensions,)
        return tuple((d,) for d in self.dimensions)

    def unit_prompt(self, unit: tuple[str, ...]) -> str:
        """The query text narrowed to ``unit`` (for a scorer that rates one prompt at a time):
        the instruction itself for a query of one unit; a common-control instruction rebuilt
        with the unit's target alone; otherwise the instruction with the unit's targets."""
        if len(self.units) == 1:
            return self.instruction
        (dim,) = unit
        value = self.targets.get(dim)
        if self.subtask == "common" and value:
            phrase = f"with {_article(value)} {value} {dim}"
            return PREFIX.format(dimensions=phrase, sentence=self.sentence)
        return f"{self.instruction} [{dim}: {value}]" if value else f"{self.instruction} [{dim}]"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["dimensions"] = list(self.dimensions)
        out["targets"] = dict(self.targets)
        return out


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def dimension_phrase(spec: Mapping[str, Any]) -> tuple[str, tuple[str, ...], dict[str, str]]:
    """The ``{dimensions}`` phrase of a reading task, the dimension set and the targets.

    ``spec`` forms (``task``/``subtask`` as in :data:`TASKS`):

    - common control: ``{"dimensions": {"emotion": "happy", "speed": "fast"}}``
      -> ``"with a happy emotion and a fast speed"``;
    - abstract style: ``{"style": "a lively and mischievous voice"}``
      -> ``"in a lively and mischievous voice"`` (dimension ``style``);
    - transitional: ``{"dimension": "emotion", "from": "happy", "to": "sad"}``
      -> ``"with the emotion changing from happy to sad"``;
    - progressive: ``{..., "direction": "increase"}``
      -> ``"with the volume increasing from whisper to normal"``.
    """
    task, subtask = spec.get("task"), spec.get("subtask", "")
    if task == "paralanguage_control" and subtask == "common":
        dims = spec.get("dimensions")
        if not isinstance(dims, Mapping) or not dims:
            raise ValueError("common control needs 'dimensions': {dimension: value}")
        parts = [f"{_article(v)} {v} {k}" for k, v in dims.items()]
        joined = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        return f"with {joined}", tuple(dims), {k: str(v) for k, v in dims.items()}
    if task == "paralanguage_control" and subtask == "abstract":
        style = spec.get("style")
        if not isinstance(style, str) or not style.strip():
            raise ValueError("abstract style control needs 'style'")
        return f"in {style.strip()}", ("style",), {"style": style.strip()}
    if task == "dynamic_variation":
        dim, start, end = spec.get("dimension"), spec.get("from"), spec.get("to")
        if not (dim and start and end) or start == end:
            raise ValueError("dynamic variation needs 'dimension' and two distinct 'from'/'to'")
        if subtask == "transitional":
            change = f"{start} -> {end}"
            return f"with the {dim} changing from {start} to {end}", (dim,), {dim: change}
        if subtask == "progressive":
            direction = spec.get("direction")
            if direction not in DIRECTIONS:
                raise ValueError(f"progressive variation needs 'direction' in {DIRECTIONS}")
            verb = f"{direction[:-1]}ing"
            change = f"{start} -{direction}-> {end}"
            return f"with the {dim} {verb} from {start} to {end}", (dim,), {dim: change}
    raise ValueError(f"no reading instruction for task {task!r} / subtask {subtask!r}")


def build_query(spec: Mapping[str, Any]) -> Query:
    """A :class:`Query` from a spec (``id``, ``task``, ``subtask``, and the task's fields).

    Reading tasks need ``sentence`` plus the fields of :func:`dimension_phrase`; situational
    adaptation needs ``utterance`` and ``dimensions`` (a mapping of implicit cues, e.g.
    ``{"age": "elderly", "emotion": "worried"}``).
    """
    qid, task = str(spec.get("id", "")), spec.get("task")
    if not qid:
        raise ValueError(f"spec without an id: {dict(spec)}")
    try:
        if task == "situational_adaptation":
            cues = spec.get("dimensions")
            utterance = spec.get("utterance", "")
            if not isinstance(cues, Mapping) or not cues or not utterance.strip():
                raise ValueError("situational adaptation needs 'utterance' and 'dimensions'")
            return Query(qid, task, tuple(cues), utterance.strip(), "",
                         {k: str(v) for k, v in cues.items()})  # fmt: skip
        sentence = str(spec.get("sentence", "")).strip()
        phrase, dims, targets = dimension_phrase(spec)
        instruction = PREFIX.format(dimensions=phrase, sentence=sentence)
        return Query(qid, str(task), dims, instruction, spec.get("subtask", ""), targets, sentence)
    except ValueError as exc:
        raise ValueError(f"spec {qid}: {exc}") from None


def load_queries(path: str | os.PathLike) -> list[Query]:
    """Read a query JSONL file; ``audio`` paths are resolved against its folder.

    Raises:
        ValueError: invalid JSON, an invalid query or a duplicate id (naming the line).
    """
    path = Path(path)
    queries: list[Query] = []
    for where, rec in read_objects(path):
        try:
            rec["dimensions"] = tuple(rec.get("dimensions") or ())
            if rec.get("audio"):
                rec["audio"] = str(path.parent / rec["audio"])
            queries.append(Query(**rec))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    dup = repeated(q.id for q in queries)
    if dup:
        raise ValueError(f"{path}: duplicate query ids {dup[:5]}")
    return queries


def write_queries(queries: Sequence[Query], path: str | os.PathLike) -> Path:
    """Write ``queries`` as JSONL; audio paths are stored relative to the file's folder."""
    path = Path(path)
    lines = []
    for q in queries:
        rec = q.to_dict()
        if q.audio:
            rec["audio"] = os.path.relpath(q.audio, path.parent)
        lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
    write_text(path, "".join(lines))
    return path


# delivery preset of the spoken query, from an implicit emotion or attitude cue
CUE_PRESETS: dict[str, str] = {
    "happy": "lively", "excited": "lively", "cheerful": "lively", "playful": "lively",
    "angry": "exaggerated", "impatient": "rushed", "anxious": "rushed", "worried": "rushed",
    "sad": "subdued", "tired": "dragging", "disappointed": "subdued", "bored": "flat",
}  # fmt: skip


def query_rendering(query: Query):
    """How a query is spoken: reading tasks in the fixed neutral voice; situational queries
    with the delivery preset of their emotion or attitude cue (neutral when none matches)."""
    from ..demo_audio import Rendering

    if query.task != "situational_adaptation":
        return Rendering.plain(query.instruction)
    preset = next(
        (CUE_PRESETS[v.lower()] for v in query.targets.values() if v.lower() in CUE_PRESETS),
        "neutral",
    )
    return Rendering.plain(query.instruction, preset)


def synthesize_queries(queries: Sequence[Query], out_dir: str | os.PathLike) -> list[Query]:
    """Speak every query offline (piper, see :mod:`..demo_audio`) to ``out_dir/<id>.wav``;
    return the queries with ``audio`` set."""
    from ..demo_audio import render_clips

    paths = [id_path(out_dir, q.id, ".wav", "query id") for q in queries]
    render_clips([query_rendering(q) for q in queries], paths)
    return [replace(q, audio=str(p)) for q, p in zip(queries, paths, strict=True)]
