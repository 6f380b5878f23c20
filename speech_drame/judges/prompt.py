"""Chat messages for a zero/few-shot audio-LLM judge (Speech-DRAME, Appendix L.1).

One user message holds, in order: the rubric text and the answer format, then ``k``
demonstrations (context, audio, gold minified JSON), then the clip to judge (context, audio)
and a closing request for minified JSON only. Audio is sent as ``input_audio`` parts with
base64 16 kHz mono WAV of the first 30 s (the part the annotators judged).
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..audio import SCORED_SECONDS, AudioSource, load_audio
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
    """Messages asking for one dimension as a single digit (the open-model logprob mode)."""
    if dimension not in dimensions(config):
        raise ValueError(f"{dimension!r} is not a {config} dimension")
    name = RUBRIC_NAMES[dimension]
    ask = f"Rate {name} only. Reply with a single digit from {SCORE_MIN} to {SCORE_MAX}."
    head = f"{rubric.strip()}\n\n" if rubric.strip() else ""
    parts = [text_part(f"{head}{ask}")]
    for i, example in enumerate(exemplars, start=1):
        if dimension not in example.gold:
            raise ValueError(f"exemplar {i} ({example.id or 'no id'}) has no gold {dimension}")
        parts += [
            text_part(f"\n\nExample {i}\nInput:\n{format_context(example, config)}\nAudio:"),
            audio_part(example.audio_b64),
            text_part(f"\n{name}: {example.gold[dimension]}"),
        ]
    parts += [
        text_part(f"\n\nNow rate this clip.\nInput:\n{format_context(item, config)}\nAudio:"),
        audio_part(item.audio_b64),
        text_part(f"\n{name}:"),
    ]
    return [{"role": "system", "content": system}, {"role": "user", "content": parts}]
