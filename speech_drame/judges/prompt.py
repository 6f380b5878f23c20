"""Chat messages for a zero/few-shot audio-LLM judge (Speech-DRAME, Appendix L.1).

One user message holds, in order: the rubric text and the answer format, then ``k``
demonstrations (context, audio, gold minified JSON), then the clip to judge (context, audio)
and a closing request for minified JSON only. Audio is sent as ``input_audio`` parts with
base64 16 kHz mono WAV of the first 30 s (the part the annotators judged).

The rubric is by default :func:`default_rubric`: every dimension's anchors from
:mod:`speech_drame.prompts` plus the paper's rules for unusable clips.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..audio import SCORED_SECONDS, AudioSource, load_audio
from ..prompts import PASS_LABELS, RUBRICS, SCORE_LABELS, scored_dimensions, task_preamble
from ..schema import CONTENT_PASS, RUBRIC_NAMES, SCORE_MAX, SCORE_MIN, Config, dimensions

DEFAULT_SYSTEM = "You are a careful evaluator of spoken role-play performances."


def wav_base64(source: AudioSource, max_seconds: float | None = SCORED_SECONDS) -> str:
    """The first ``max_seconds`` of ``source`` as base64 16-bit 16 kHz mono WAV."""
    import soundfile as sf

    audio = load_audio(source, max_seconds=max_seconds)
    buffer = io.BytesIO()
    sf.write(buffer, audio.samples, audio.sample_rate, format="WAV", subtype="PCM_16")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def audio_part(b64_wav: str) -> dict[str, Any]:
    """An OpenAI ``input_audio`` content part."""
    return {"type": "input_audio", "input_audio": {"data": b64_wav, "format": "wav"}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


@dataclass(frozen=True)
class JudgeItem:
    """One clip with its context: ``question`` (archetype) or profile/scene/traits (realism)."""

    audio_b64: str
    question: str = ""
    profile: str = ""
    scene: str = ""
    traits: str = ""
    id: str = ""
    gold: Mapping[str, Any] = field(default_factory=dict)  # exemplar answer; empty for the clip


def format_context(item: JudgeItem, config: Config) -> str:
    """The textual input of a clip, as shown to the judge."""
    if config == "archetype":
        return f"Role and scene given to the speaker: {item.question}"
    return (
        f"Character profile: {item.profile}\nLocal scene: {item.scene}\n"
        f"Character traits: {item.traits}"
    )


def minified(answer: Mapping[str, Any]) -> str:
    """``answer`` as minified JSON (no spaces)."""
    return json.dumps(dict(answer), separators=(",", ":"), ensure_ascii=False)


def answer_format(config: Config) -> str:
    """Instructions naming every key the JSON answer must carry."""
    lines = [
        "Answer with one minified JSON object (no spaces, no other text) with these keys:",
    ]
    if config == "archetype":
        lines.append(
            f'- "{CONTENT_PASS}" ({RUBRIC_NAMES[CONTENT_PASS]}): true if the speech follows the '
            "instruction and is free of audio defects, else false"
        )
    for dim in dimensions(config):
        lines.append(f'- "{dim}" ({RUBRIC_NAMES[dim]}): an integer from {SCORE_MIN} to {SCORE_MAX}')
    return "\n".join(lines)


def _realism_rules() -> list[str]:
    n = RUBRIC_NAMES
    return [
        f"If the voice is plainly not the character's (the wrong speaker), give "
        f"{n['voice_identity_matching']} and {n['trait_embodiment']} 1.",
        f"{n['emotion_intensity_control']} is judged only when {n['emotion_accuracy']} is 3 or "
        f"more, and {n['dynamic_range']} only when {n['emotion_intensity_control']} is 3 or "
        "more; otherwise give it 1.",
    ]


def default_rubric(config: Config) -> str:
    """The built-in rubric of ``config``: the task, each dimension's 1..5 anchors
    (:data:`speech_drame.prompts.RUBRICS`) and what to answer for an unusable clip: archetype
    lists the Content Pass rejection reasons and gives a rejected response 1 on every score;
    realism gives a wrong speaker 1 on identity and traits and a gated emotion dimension 1."""
    rubrics = RUBRICS[config]
    lines = [task_preamble(config)]
    if config == "archetype":
        levels = dict(rubrics[CONTENT_PASS].levels)
        lines += [
            "",
            f"{RUBRIC_NAMES[CONTENT_PASS]} ({CONTENT_PASS}): {rubrics[CONTENT_PASS].focus}",
            f"true = {levels['1']}",
            f"false = {levels['0']}",
            "If any rejection reason applies, the response is rejected: set every score to 1.",
        ]
    for dim in dimensions(config):
        rubric = rubrics[dim]
        lines += ["", f"{rubric.name} ({dim}): {rubric.focus}"]
        lines += [f"{label}: {meaning}" for label, meaning in rubric.levels]
    if config == "realism":
        lines += ["", *_realism_rules()]
    return "\n".join(lines)


def resolve_rubric(config: Config, rubric: str | None) -> str:
    """``rubric`` itself, or :func:`default_rubric` when it is ``None`` (``""``: no rubric)."""
    return default_rubric(config) if rubric is None else rubric


def dimension_labels(dimension: str) -> tuple[str, ...]:
    """The answer labels of one dimension: ``0``/``1`` for Content Pass, else ``1``..``5``."""
    return PASS_LABELS if dimension == CONTENT_PASS else SCORE_LABELS


def build_messages(
    config: Config,
    rubric: str,
    item: JudgeItem,
    exemplars: Sequence[JudgeItem] = (),
    system: str = DEFAULT_SYSTEM,
) -> list[dict[str, Any]]:
    """Messages asking for every dimension of ``config`` at once, as minified JSON.

    ``rubric`` is the rubric text (scales and their meaning); ``exemplars`` carry a ``gold``
    answer each and are shown, in order, before the clip.
    """
    head = f"{rubric.strip()}\n\n" if rubric.strip() else ""
    parts = [text_part(f"{head}{answer_format(config)}")]
    for i, example in enumerate(exemplars, start=1):
        if not example.gold:
            raise ValueError(f"exemplar {i} ({example.id or 'no id'}) has no gold answer")
        parts += [
            text_part(f"\n\nExample {i}\nInput:\n{format_context(example, config)}\nAudio:"),
            audio_part(example.audio_b64),
            text_part(f"\nAnswer: {minified(example.gold)}"),
        ]
    parts += [
        text_part(f"\n\nNow evaluate this clip.\nInput:\n{format_context(item, config)}\nAudio:"),
        audio_part(item.audio_b64),
        text_part("\nReply with the minified JSON object only."),
    ]
    return [{"role": "system", "content": system}, {"role": "user", "content": parts}]


def build_dimension_messages(
    config: Config,
    rubric: str,
    item: JudgeItem,
    dimension: str,
    exemplars: Sequence[JudgeItem] = (),
    system: str = DEFAULT_SYSTEM,
) -> list[dict[str, Any]]:
    """Messages asking for one dimension as a single digit (the open-model logprob mode):
    ``1``..``5``, or for archetype's Content Pass ``1`` (passed) or ``0`` (rejected)."""
    if dimension not in scored_dimensions(config):
        raise ValueError(f"{dimension!r} is not a {config} dimension")
    name = RUBRIC_NAMES[dimension]
    if dimension == CONTENT_PASS:
        ask = f"Decide {name} only. Reply 1 if the response passes, 0 if it is rejected."
    else:
        ask = f"Rate {name} only. Reply with a single digit from {SCORE_MIN} to {SCORE_MAX}."
    head = f"{rubric.strip()}\n\n" if rubric.strip() else ""
    parts = [text_part(f"{head}{ask}")]
    for i, example in enumerate(exemplars, start=1):
        if dimension not in example.gold:
            raise ValueError(f"exemplar {i} ({example.id or 'no id'}) has no gold {dimension}")
        parts += [
            text_part(f"\n\nExample {i}\nInput:\n{format_context(example, config)}\nAudio:"),
            audio_part(example.audio_b64),
            text_part(f"\n{name}: {int(example.gold[dimension])}"),
        ]
    parts += [
        text_part(f"\n\nNow rate this clip.\nInput:\n{format_context(item, config)}\nAudio:"),
        audio_part(item.audio_b64),
        text_part(f"\n{name}:"),
    ]
    return [{"role": "system", "content": system}, {"role": "user", "content": parts}]
