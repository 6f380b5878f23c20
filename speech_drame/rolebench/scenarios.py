"""RoleBench scenario sets: the prompts systems answer, with the context texts a scorer gets.

A *scenario set* is an EvalBench config and split (a Hub-ready dataset folder; see
:func:`load_dataset_scenarios` for how its rated clips become prompts), a JSONL of
archetype questions (``id, question``) or realism contexts (``id, char_profile|profile,
local_scene|scene, char_style|traits``), or a multi-turn JSONL of dialogues
(:mod:`speech_drame.rolebench.multiturn`; every turn is a realism scenario). Scenario ids name
the response files, so each must be a plain file name (:func:`speech_drame.paths.safe_name`).

Each scenario's :attr:`Scenario.context_hash` fingerprints its context texts: it is part of the
key of a stored result, so correcting a question or a profile rescores that scenario only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speech_drame.audio import AUDIO_SUFFIXES
from speech_drame.jsonl import read_objects
from speech_drame.languages import language_hint
from speech_drame.paths import safe_name
from speech_drame.schema import Config, check_config, context_from_row


def context_hash(context: Mapping[str, str]) -> str:
    """A short fingerprint of context texts (by short name), independent of their order.

    Example:
        >>> context_hash({"question": "You say:"}) == context_hash({"question": "You say:"})
        True
        >>> context_hash({"question": "You say:"}) == context_hash({"question": "You say!"})
        False
    """
    text = json.dumps(dict(context), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Scenario:
    """One prompt a system answers: its id, mode and the scorer's context texts (short names,
    :data:`speech_drame.schema.CONTEXTS`)."""

    id: str
    mode: Config
    context: dict[str, str]
    dialogue: str | None = None  # multi-turn: the dialogue this turn belongs to
    turn: int | None = None

    @property
    def context_hash(self) -> str:
        return context_hash(self.context)

    @property
    def language_hint(self) -> str | None:
        """The language the id or the context texts hint at (:func:`~speech_drame.languages.
        language_hint`), or None."""
        return language_hint(self.id, "\n".join(self.context.values()))


@dataclass(frozen=True)
class ScenarioSet:
    mode: Config
    scenarios: tuple[Scenario, ...]
    multi_turn: bool = False

    def dialogues(self) -> dict[str, list[str]]:
        """Multi-turn: dialogue id -> its scenario ids in turn order."""
        out: dict[str, list[str]] = {}
        for s in sorted(self.scenarios, key=lambda s: (s.dialogue or "", s.turn or 0)):
            out.setdefault(s.dialogue or "", []).append(s.id)
        return out


def scenario_from_row(obj: Mapping[str, Any], mode: Config, where: str) -> Scenario:
    """A scenario from a JSONL object or dataset row; errors name ``where`` and the field."""
    sid = obj.get("id")
    if not isinstance(sid, (str, int)) or isinstance(sid, bool) or not str(sid).strip():
        raise ValueError(f"{where}: field 'id' must be a non-empty string, got {sid!r}")
    try:
        safe_name(str(sid), "scenario id")  # it names the response files
    except ValueError as exc:
        raise ValueError(f"{where}: field 'id': {exc}") from None
    return Scenario(str(sid), mode, context_from_row(obj, mode, where))


def _check_unique(scenarios: Sequence[Scenario], where: str) -> None:
    seen: set[str] = set()
    for s in scenarios:
        if s.id in seen:
            raise ValueError(f"{where}: scenario id {s.id!r} repeated")
        seen.add(s.id)


def load_scenario_file(path: str | os.PathLike, mode: Config | None = None) -> ScenarioSet:
    """Scenarios of a JSONL file; the mode is ``mode`` or read from the first row's fields.

    A file whose rows have ``turns`` is a multi-turn scenario file (realism context per turn).
    """
    from speech_drame.rolebench import multiturn

    path = Path(path)
    rows = read_objects(path)
    if not rows:
        raise ValueError(f"{path}: no scenarios")
    first = rows[0][1]
    if "turns" in first:
        scenarios = [
            Scenario(
                t.scenario_id,
                "realism",
                {"profile": d.profile, "scene": d.scene, "traits": d.traits},
                d.dialogue_id,
                t.index,
            )
            for d in multiturn.load_scenarios(path)
            for t in d.turns
        ]
        return ScenarioSet("realism", tuple(scenarios), multi_turn=True)
    if mode is None:
        mode = "archetype" if "question" in first else "realism"
    mode = check_config(mode)
    scenarios = [scenario_from_row(obj, mode, where) for where, obj in rows]
    _check_unique(scenarios, str(path))
    return ScenarioSet(mode, tuple(scenarios))


def _strip_audio_suffix(clip_id: str) -> str:
    """``x_Qwen2.5-Omni-7B.wav`` -> ``x_Qwen2.5-Omni-7B`` (archetype ids end in ``.wav``)."""
    suffix = Path(clip_id).suffix.lower()
    return clip_id[: -len(suffix)] if suffix in AUDIO_SUFFIXES else clip_id


def _common_prefix(ids: Sequence[str]) -> str:
    """The ``_``-separated tokens every id starts with, joined (``""`` when none)."""
    split = [i.split("_") for i in ids]
    common = []
    for tokens in zip(*split, strict=False):
        if len(set(tokens)) > 1:
            break
        common.append(tokens[0])
    return "_".join(common)


def dataset_prompts(
    rows: Sequence[Mapping[str, Any]], config: Config
) -> list[tuple[str, dict[str, str], list[str]]]:
    """The prompts behind a dataset split's rated clips: ``(scenario id, context, clip ids)``
    in order of first appearance, one per distinct context.

    EvalBench rates every system's answer to one prompt as its own clip, so clips are grouped by
    their context texts. A realism prompt is named after its first clip. An archetype prompt is
    named after its clips' ids (``250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav``, one per
    rated system) without the audio suffix, cut to the ``_``-separated tokens they share
    (``250814_zh_SocialIdentity_0051``); one rated for a single system loses the system name when
    other prompts' clips show it is one. Where names would collide, prompts keep their first
    clip's id.
    """
    groups: dict[str, tuple[dict[str, str], list[str]]] = {}
    for row in rows:
        context = context_from_row(row, config, f"clip {row['id']!r}")
        groups.setdefault(context_hash(context), (context, []))[1].append(str(row["id"]))
    first = {k: _strip_audio_suffix(ids[0]) for k, (_, ids) in groups.items()}
    named = dict(first)
    if config == "archetype":
        systems: set[str] = set()
        for key, (_, ids) in groups.items():
            stems = [_strip_audio_suffix(i) for i in ids]
            prefix = _common_prefix(stems) if len(stems) > 1 else ""
            if prefix:
                named[key] = prefix
                systems.update(stem[len(prefix) + 1 :] for stem in stems if stem != prefix)
        for key, (_, ids) in groups.items():
            owner = next(
                (s for s in systems if len(ids) == 1 and named[key].endswith(f"_{s}")), None
            )
            if owner:
                named[key] = named[key][: -len(owner) - 1]
        counts = Counter(named.values())
        named = {k: first[k] if counts[v] > 1 else v for k, v in named.items()}
    return [(named[k], context, ids) for k, (context, ids) in groups.items()]


def read_dataset_prompts(
    folder: str | os.PathLike, config: Config, split: str
) -> tuple[Any, list[tuple[str, dict[str, str], list[str]]]]:
    """``(the split, its prompts)``: :func:`dataset_prompts` of a built dataset's split, read
    without its audio."""
    from speech_drame.data.reader import open_split
    from speech_drame.schema import CONTEXT_COLUMNS, CONTEXTS

    data = open_split(folder, check_config(config), split)
    columns = ["id", *(CONTEXT_COLUMNS[name] for name in CONTEXTS[data.config])]
    return data, dataset_prompts(list(data.rows(columns)), data.config)


def load_dataset_scenarios(folder: str | os.PathLike, config: Config, split: str) -> ScenarioSet:
    """Scenarios of an EvalBench config and split in a Hub-ready dataset folder: one per prompt
    (:func:`dataset_prompts`), no audio read (an annotation-only build serves as well)."""
    data, prompts = read_dataset_prompts(folder, config, split)
    scenarios = [
        scenario_from_row({"id": sid, **context}, data.config, f"{data.where}: prompt of {ids}")
        for sid, context, ids in prompts
    ]
    _check_unique(scenarios, data.where)
    return ScenarioSet(data.config, tuple(scenarios))
