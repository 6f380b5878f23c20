"""Multi-turn role-play: dialogue-level aggregation of per-turn scores and a scenario format.

Speech-DRAME (Appendix C) scores each turn ``t = 1..T`` of a dialogue with the single-turn
evaluator, ``E(t) = SEM(S(t), profile, scene)``, and obtains a dialogue score with an
aggregation operator over the turns. Three operators are provided, per dimension:

- ``mean``:    ``(1/T) * sum_t E(t)``
- ``recency``: ``sum_t w(t) E(t) / sum_t w(t)`` with ``w(t) = decay ** (T - t)``, so the last
  turn weighs 1, the one before ``decay``, and so on (``decay = 1`` is the mean)
- ``min``:     ``min_t E(t)`` (the weakest turn)

Scenario files are JSONL, one dialogue per line::

    {"dialogue_id": "d1", "profile": "...", "scene": "...", "traits": "...",
     "turns": [{"turn": 0, "scenario_id": "d1-t0", "prompt": "..."}, ...]}

``profile``, ``scene`` and ``traits`` (the character style, the release's ``char_style``) are
shared by every turn and required: the realism evaluator rates trait embodiment against the
traits, and nothing stands in for them. Each turn's ``prompt`` is optional; ``scenario_id``
names the turn's response file, so it must be a plain file name
(:func:`speech_drame.paths.safe_name`); turn indices run 0..T-1 (any order in the file);
other keys are kept in ``extra``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from speech_drame.jsonl import read_objects
from speech_drame.paths import safe_name

Aggregation = Literal["mean", "recency", "min"]
AGGREGATIONS: tuple[Aggregation, ...] = ("mean", "recency", "min")
DEFAULT_DECAY = 0.5


def check_turns(
    turns: Sequence[Mapping[str, float]], dims: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Validate per-turn score dicts; return the dimensions (``dims`` or the first turn's keys).

    Raises:
        ValueError: for an empty dialogue, or naming the turn (0-based) and the dimension that
            is missing or not a finite number.
    """
    if not turns:
        raise ValueError("empty dialogue: no turns to aggregate")
    dims = tuple(dims) if dims is not None else tuple(turns[0])
    if not dims:
        raise ValueError("turn 0 has no dimensions")
    for t, scores in enumerate(turns):
        for dim in dims:
            if dim not in scores:
                raise ValueError(f"turn {t}: dimension {dim!r} is missing")
            value = scores[dim]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"turn {t}: dimension {dim!r} is {value!r}, not a number")
            if not math.isfinite(value):
                raise ValueError(f"turn {t}: dimension {dim!r} is {value!r}, not finite")
    return dims


def recency_weights(n_turns: int, decay: float = DEFAULT_DECAY) -> list[float]:
    """Normalised weights ``decay ** (T - t)`` for turns ``t = 1..T``.

    Example:
        >>> recency_weights(3, 0.5)
        [0.14285714285714285, 0.2857142857142857, 0.5714285714285714]
    """
    if not 0 < decay <= 1:
        raise ValueError(f"decay must be in (0, 1], got {decay}")
    raw = [decay ** (n_turns - 1 - i) for i in range(n_turns)]
    total = sum(raw)
    return [w / total for w in raw]


def aggregate_turns(
    turns: Sequence[Mapping[str, float]],
    method: Aggregation = "mean",
    *,
    decay: float = DEFAULT_DECAY,
    dims: Sequence[str] | None = None,
) -> dict[str, float]:
    """Dialogue-level score of each dimension from per-turn scores (oldest turn first).

    Example:
        >>> turns = [{"trait_embodiment": 2}, {"trait_embodiment": 4}]
        >>> aggregate_turns(turns)
        {'trait_embodiment': 3.0}
        >>> round(aggregate_turns(turns, "recency", decay=0.5)["trait_embodiment"], 4)
        3.3333
    """
    if method not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {method!r}; expected one of {AGGREGATIONS}")
    dims = check_turns(turns, dims)
    if method == "min":
        return {d: float(min(turn[d] for turn in turns)) for d in dims}
    if method == "mean":
        weights = [1 / len(turns)] * len(turns)
    else:
        weights = recency_weights(len(turns), decay)
    return {d: sum(w * turn[d] for w, turn in zip(weights, turns, strict=True)) for d in dims}


@dataclass(frozen=True)
class Turn:
    """One turn of a multi-turn scenario."""

    index: int
    scenario_id: str
    prompt: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Dialogue:
    """A dialogue: turns in order, sharing one character profile and scene."""

    dialogue_id: str
    profile: str
    scene: str
    turns: tuple[Turn, ...]
    traits: str
    extra: dict[str, Any] = field(default_factory=dict)


def _text(obj: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    if key not in obj:
        if required:
            raise ValueError(f"{where}: field {key!r} is missing")
        return ""
    value = obj[key]
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def parse_dialogue(obj: Any, where: str = "dialogue") -> Dialogue:
    """One dialogue from its JSON object; errors name ``where`` and the field."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    did = _text(obj, "dialogue_id", where)
    where = f"{where} (dialogue {did!r})"
    profile, scene = _text(obj, "profile", where), _text(obj, "scene", where)
    traits = _text(obj, "traits", where)
    raw_turns = obj.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise ValueError(f"{where}: field 'turns' must be a non-empty list")
    turns = []
    for i, raw in enumerate(raw_turns):
        at = f"{where} turns[{i}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{at}: expected a JSON object, got {type(raw).__name__}")
        index = raw.get("turn")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"{at}: field 'turn' must be an integer >= 0, got {index!r}")
        extra = {k: v for k, v in raw.items() if k not in ("turn", "scenario_id", "prompt")}
        scenario_id = _text(raw, "scenario_id", at)
        try:
            safe_name(scenario_id, "scenario id")
        except ValueError as exc:
            raise ValueError(f"{at}: field 'scenario_id': {exc}") from None
        turns.append(Turn(index, scenario_id, _text(raw, "prompt", at, required=False), extra))
    turns.sort(key=lambda t: t.index)
    indices = [t.index for t in turns]
    if indices != list(range(len(turns))):
        raise ValueError(f"{where}: turn indices {indices} are not 0..{len(turns) - 1}")
    known = ("dialogue_id", "profile", "scene", "traits", "turns")
    extra = {k: v for k, v in obj.items() if k not in known}
    return Dialogue(did, profile, scene, tuple(turns), traits, extra)


def load_scenarios(path: str | os.PathLike) -> list[Dialogue]:
    """Dialogues of a multi-turn scenario JSONL file (blank lines skipped).

    Raises:
        ValueError: naming ``file:line`` and the field, for bad JSON, a bad field, a repeated
            dialogue id or a scenario id used twice in the file.
    """
    path = Path(path)
    dialogues: list[Dialogue] = []
    seen_dialogues: set[str] = set()
    seen_scenarios: dict[str, str] = {}
    for where, obj in read_objects(path):
        dialogue = parse_dialogue(obj, where)
        if dialogue.dialogue_id in seen_dialogues:
            raise ValueError(f"{where}: dialogue id {dialogue.dialogue_id!r} repeated")
        seen_dialogues.add(dialogue.dialogue_id)
        for turn in dialogue.turns:
            if turn.scenario_id in seen_scenarios:
                raise ValueError(
                    f"{where}: scenario id {turn.scenario_id!r} already used in dialogue "
                    f"{seen_scenarios[turn.scenario_id]!r}"
                )
            seen_scenarios[turn.scenario_id] = dialogue.dialogue_id
        dialogues.append(dialogue)
    return dialogues
