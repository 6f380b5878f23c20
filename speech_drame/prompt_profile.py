"""Prompt profiles: everything that makes a DRAME-Eval query, as data.

A profile is one JSON (or YAML) file, format version 1::

    {
      "format_version": 1,
      "name": "my-profile",                  # recorded in every scorer description and id
      "description": "...",                  # optional
      "system": "You are ...",               # the system turn, or null for none
      "orders": {                            # the user turn of each prompt order
        "mine": "Audio 1: {audio}\\n{preamble}\\n{instruction}\\n\\n{context}"
      },
      "default_order": "mine",
      "preamble": {"realism": "..."},        # per config: the text of {preamble}
      "instructions": {"realism": {"pitch_variation": "...", ...}},  # every dimension
      "questions": {"realism": {"pitch_variation": "..."}},  # optional, see below
      "context": {"realism": "Profile: {char_profile}\\nScene: {local_scene}\\n..."},
      "answer_prefix": "<answer>",           # forced at the start of the assistant turn
      "answer_suffix": "</answer>",          # after the label in training targets ("" for none)
      "labels": {"score": ["1", "2", "3", "4", "5"], "content_pass": ["0", "1"]},
      "paraphrases": {"realism": {"pitch_variation": ["...", ...]}}   # optional
    }

An order template holds ``{audio}`` (the audio placeholder), ``{preamble}``, ``{instruction}``
(the dimension's) and ``{context}`` (the clip's), each once, with ``{audio}`` before
``{instruction}``; the text before ``{instruction}`` is the prefix every dimension of a clip
shares (scoring runs it once). A context template names dataset context columns
(``schema.context_columns``: ``question``; ``char_profile``, ``local_scene``, ``char_style``).
An instruction may hold ``{rubric_question}``: then ``questions`` gives the canonical text and
``paraphrases`` (a mapping, or a JSON file beside the profile) the alternatives drawn in
training with prompt variation. Labels are single tokens, in the order of their values
(1..5; Content Pass 0, 1). The query is laid out in the model's chat format
(:mod:`speech_drame.audio_llm.qwen2_audio`). This package's wording is the default profile,
``speech_drame/resources/prompt_profile.json``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import InputError
from .schema import (
    CONFIGS,
    CONTENT_PASS,
    CONTEXT_COLUMNS,
    CONTEXTS,
    SEMANTIC_MATCH,
    Config,
    dimensions,
)

FORMAT_VERSION = 1
DEFAULT_PROFILE = "prompt_profile.json"  # in speech_drame/resources
PROFILE_FILE = "prompt_profile.json"  # the copy an exported evaluator carries
ORDER_FIELDS = ("audio", "preamble", "instruction", "context")
QUESTION_FIELD = "rubric_question"
LABEL_COUNTS = {"score": 5, "content_pass": 2}
_FIELD = re.compile(r"\{(\w+)\}")
_KEYS = {"format_version", "name", "description", "system", "orders", "default_order",
         "preamble", "instructions", "questions", "context", "answer_prefix",
         "answer_suffix", "labels", "paraphrases"}  # fmt: skip


class ProfileError(InputError):
    """A profile that cannot be used: ``SOURCE: FIELD.PATH: problem``."""


def render(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{name}`` replaced by ``values[name]`` (in one pass, so a value
    holding braces is left as it is)."""
    return _FIELD.sub(lambda m: values[m.group(1)], template)


def fields_of(template: str) -> list[str]:
    """The ``{name}`` fields of ``template``, in order."""
    return _FIELD.findall(template)


def scored_keys(config: Config) -> tuple[str, ...]:
    """The dimensions a profile must instruct for ``config`` (Semantic Match is optional)."""
    lead = (CONTENT_PASS,) if config == "archetype" else ()
    return (*lead, *dimensions(config))


@dataclass(frozen=True)
class PromptProfile:
    """A checked profile (see the module docstring for the fields); build with :func:`load_profile`
    or :func:`profile_from_dict`. ``source`` is the file it was read from."""

    name: str
    system: str | None
    orders: dict[str, str]
    default_order: str
    preamble: dict[str, str]
    instructions: dict[str, dict[str, str]]
    context: dict[str, str]
    answer_prefix: str
    answer_suffix: str
    labels: dict[str, list[str]]
    questions: dict[str, dict[str, str]] = field(default_factory=dict)
    paraphrases: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    description: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The file contents (paraphrases inline): what an exported evaluator carries."""
        out: dict[str, Any] = {"format_version": FORMAT_VERSION}
        for key in ("name", "description", "system", "orders", "default_order", "preamble",
                    "instructions", "questions", "context", "answer_prefix", "answer_suffix",
                    "labels", "paraphrases"):  # fmt: skip
            out[key] = getattr(self, key)
        return out

    @functools.cached_property
    def digest(self) -> str:
        """The first 12 hex digits of the SHA-256 of the canonical JSON of :meth:`to_dict`."""
        text = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        """``NAME@DIGEST``, as scorer descriptions name it."""
        return f"{self.name}@{self.digest}"

    def check_order(self, order: str | None) -> str:
        """``order`` (default: :attr:`default_order`) if the profile has it; ``ValueError``
        naming ``prompt_order`` and the choices otherwise."""
        order = self.default_order if order is None else order
        if order not in self.orders:
            raise ValueError(
                f"prompt_order: unknown value {order!r}; expected one of {', '.join(self.orders)}"
                f" (prompt profile {self.name})"
            )
        return order

    def configs(self) -> tuple[str, ...]:
        """The configs the profile can query."""
        return tuple(c for c in CONFIGS if c in self.instructions)

    def dimensions(self, config: Config) -> tuple[str, ...]:
        """The dimensions the profile instructs for ``config``, Content Pass first."""
        have = self._config(config)
        return tuple(d for d in (*scored_keys(config), SEMANTIC_MATCH) if d in have)

    def _config(self, config: Config) -> dict[str, str]:
        if config not in self.instructions:
            raise ValueError(f"prompt profile {self.name} has no {config} instructions")
        return self.instructions[config]

    def instruction(self, config: Config, dimension: str, question: str | None = None) -> str:
        """The dimension's instruction; ``question`` replaces its canonical question."""
        text = self._config(config).get(dimension)
        if text is None:
            raise ValueError(f"prompt profile {self.name} has no {config} {dimension} instruction")
        if QUESTION_FIELD not in fields_of(text):
            if question is not None:
                raise ValueError(
                    f"{config}.{dimension}: the instruction has no {{{QUESTION_FIELD}}}"
                )
            return text
        canonical = self.questions[config][dimension]
        return render(text, {QUESTION_FIELD: canonical if question is None else question})

    def context_text(self, config: Config, fields: Mapping[str, Any]) -> str:
        """The clip's context; a missing or empty field raises ``ValueError`` naming it."""
        values = {}
        for name in fields_of(self.context[config]):
            value = fields.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(
                    f"{config} context needs a non-empty {name!r} field, got {value!r}"
                )
            values[name] = value.strip()
        return render(self.context[config], values)

    def label_tokens(self, dimension: str) -> list[str]:
        """The label texts of ``dimension`` in the order of their values."""
        return self.labels["content_pass" if dimension == CONTENT_PASS else "score"]

    def user_parts(self, order: str) -> tuple[str, str]:
        """The order's user-turn template split before ``{instruction}``: (shared, per dimension)."""
        template = self.orders[self.check_order(order)]
        at = template.index("{instruction}")
        return template[:at], template[at:]


def profile_from_dict(
    data: Any, source: str = "profile", base: Path | None = None
) -> PromptProfile:
    """A :class:`PromptProfile` from parsed file contents, every field checked.

    ``base`` is the folder a ``paraphrases`` file name is relative to. Raises
    :class:`ProfileError` ``SOURCE: FIELD.PATH: problem`` at the first problem.
    """

    def fail(where: str, problem: str) -> ProfileError:
        return ProfileError(f"{source}: {where}: {problem}")

    def text(where: str, value: Any, empty: bool = False) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise fail(
                where, "missing" if value is None else f"needs a non-empty string, got {value!r}"
            )
        return value

    def mapping(where: str, value: Any) -> dict:
        if not isinstance(value, dict):
            raise fail(where, "missing" if value is None else "needs a mapping")
        return value

    data = mapping("(top level)", data)
    if data.get("format_version") != FORMAT_VERSION:
        raise fail("format_version", f"needs {FORMAT_VERSION}, got {data.get('format_version')!r}")
    for key in data:
        if key not in _KEYS:
            raise fail(key, f"unknown field; known: {', '.join(sorted(_KEYS))}")
    system = data.get("system")
    if system is not None:
        text("system", system)
    orders = mapping("orders", data.get("orders"))
    if not orders:
        raise fail("orders", "needs at least one order")
    for name, template in orders.items():
        text(f"orders.{name}", template)
        found = fields_of(template)
        for f in found:
            if f not in ORDER_FIELDS:
                raise fail(
                    f"orders.{name}", f"unknown field {{{f}}}; known: {', '.join(ORDER_FIELDS)}"
                )
        for f in ORDER_FIELDS:
            if found.count(f) != 1:
                raise fail(f"orders.{name}", f"needs {{{f}}} exactly once")
        if found.index("audio") > found.index("instruction"):
            raise fail(f"orders.{name}", "{audio} must come before {instruction}")
    default_order = text("default_order", data.get("default_order"))
    if default_order not in orders:
        raise fail("default_order", f"{default_order!r} is not one of orders: {', '.join(orders)}")
    instructions = mapping("instructions", data.get("instructions"))
    configs = [c for c in instructions if c in CONFIGS]
    for c in instructions:
        if c not in CONFIGS:
            raise fail(f"instructions.{c}", f"unknown config; known: {', '.join(CONFIGS)}")
    if not configs:
        raise fail("instructions", f"needs {' or '.join(CONFIGS)}")
    preamble, context, questions_in = {}, {}, data.get("questions") or {}
    questions: dict[str, dict[str, str]] = {}
    for c in configs:
        preamble[c] = text(f"preamble.{c}", mapping("preamble", data.get("preamble")).get(c), True)
        context[c] = text(f"context.{c}", mapping("context", data.get("context")).get(c))
        columns = {CONTEXT_COLUMNS[name] for name in CONTEXTS[c]}
        for f in fields_of(context[c]):
            if f not in columns:
                raise fail(
                    f"context.{c}", f"unknown field {{{f}}}; {c} has {', '.join(sorted(columns))}"
                )
        given = mapping(f"instructions.{c}", instructions[c])
        known = (*scored_keys(c), SEMANTIC_MATCH)
        for d in given:
            if d not in known:
                raise fail(f"instructions.{c}.{d}", f"unknown dimension; known: {', '.join(known)}")
        for d in scored_keys(c):
            if d not in given:
                raise fail(f"instructions.{c}.{d}", "missing")
        for d, template in given.items():
            text(f"instructions.{c}.{d}", template)
            for f in fields_of(template):
                if f != QUESTION_FIELD:
                    raise fail(
                        f"instructions.{c}.{d}", f"unknown field {{{f}}}; only {{{QUESTION_FIELD}}}"
                    )
            if QUESTION_FIELD in fields_of(template):
                q = mapping("questions", questions_in).get(c, {})
                questions.setdefault(c, {})[d] = text(f"questions.{c}.{d}", q.get(d))
    answer_prefix = text("answer_prefix", data.get("answer_prefix"))
    answer_suffix = text("answer_suffix", data.get("answer_suffix", ""), empty=True)
    labels_in = mapping("labels", data.get("labels"))
    labels = {}
    for kind, count in LABEL_COUNTS.items():
        values = labels_in.get(kind)
        if not isinstance(values, list) or len(values) != count:
            raise fail(f"labels.{kind}", f"needs a list of {count} label texts")
        if len(set(values)) != count:
            raise fail(f"labels.{kind}", "repeats a label")
        labels[kind] = [text(f"labels.{kind}[{i}]", v) for i, v in enumerate(values)]
    paraphrases = _paraphrases(data.get("paraphrases"), base, fail)
    for c, per_dim in paraphrases.items():
        for d, texts in per_dim.items():
            where = f"paraphrases.{c}.{d}"
            if c not in configs or d not in instructions[c]:
                raise fail(where, "no instruction of that dimension")
            if d not in questions.get(c, {}):
                raise fail(where, f"the instruction has no {{{QUESTION_FIELD}}} to replace")
            if not isinstance(texts, list) or not texts:
                raise fail(where, "needs a non-empty list")
            for i, t in enumerate(texts):
                text(f"{where}[{i}]", t)
            if len(set(texts)) != len(texts) or questions[c][d] in texts:
                raise fail(where, "repeats a paraphrase or the canonical question")
    return PromptProfile(
        name=text("name", data.get("name")), system=system, orders=dict(orders),
        default_order=default_order, preamble=preamble,
        instructions={c: dict(instructions[c]) for c in configs}, context=context,
        answer_prefix=answer_prefix, answer_suffix=answer_suffix, labels=labels,
        questions=questions, paraphrases=paraphrases,
        description=str(data.get("description") or ""), source=source,
    )  # fmt: skip


def _paraphrases(value: Any, base: Path | None, fail: Any) -> dict[str, dict[str, list[str]]]:
    """The ``paraphrases`` field: inline, or read from a JSON file beside the profile."""
    if value is None:
        return {}
    if isinstance(value, str):
        path = (base or Path(".")) / value
        if base is None:
            raise fail("paraphrases", "a file name needs a profile read from a file")
        if not path.is_file():
            raise fail("paraphrases", f"{path}: no such file")
        value = json.loads(path.read_text(encoding="utf-8"))
        value = {c: v for c, v in value.items() if c in CONFIGS}
    if not isinstance(value, dict):
        raise fail("paraphrases", "needs a mapping or a file name")
    return {c: {d: list(t) if isinstance(t, list) else t for d, t in v.items()}
            for c, v in value.items()}  # fmt: skip


def load_profile(path: str | os.PathLike) -> PromptProfile:
    """Read and check a profile file (``.json``, or ``.yaml``/``.yml``).

    Raises:
        FileNotFoundError: no such file.
        ProfileError: a field that cannot be used (named), or a file that does not parse.
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no such prompt profile")
    raw = file.read_text(encoding="utf-8")
    if file.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ProfileError(f"{file.name}: does not parse: {exc}") from None
    else:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ProfileError(f"{file.name}: does not parse: {exc}") from None
    return profile_from_dict(data, file.name, file.parent)


@functools.cache
def default_profile() -> PromptProfile:
    """This package's own wording (``speech_drame/resources/prompt_profile.json``)."""
    folder = resources.files("speech_drame.resources")
    with resources.as_file(folder / DEFAULT_PROFILE) as path:
        return load_profile(path)


def save_profile(profile: PromptProfile, folder: str | os.PathLike) -> Path:
    """Write ``profile`` (paraphrases inline) as ``folder/prompt_profile.json``."""
    from .atomic_io import write_json

    return write_json(Path(folder) / PROFILE_FILE, profile.to_dict(), indent=2)
