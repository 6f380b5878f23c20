"""The SpeechParaling-Bench demo set: six queries (two per task) and three synthetic systems.

Queries are built with :func:`.queries.build_query` from the specs below and spoken offline.
The demo systems answer every query with piper (deterministic) and differ by construction:

- ``plain`` (the baseline): the right words in a neutral delivery;
- ``expressive``: the right words in the delivery the targets ask for (a preset per target
  word; a change within the utterance splits the sentence in two deliveries);
- ``noisy``: like ``plain``, mixed with white noise at 5 dB SNR.

**Nothing here is a human judgment**: the demo shows the protocol running end to end.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..demo_audio import Rendering, render_clips
from .queries import Query, build_query, synthesize_queries, write_queries

BASELINE = "plain"
CANDIDATES: tuple[str, ...] = ("expressive", "noisy")
NOISE_SNR_DB = 5.0
DEMO_SPECS: tuple[dict[str, Any], ...] = (
    {"id": "pc-common-01", "task": "paralanguage_control", "subtask": "common",
     "sentence": "We finally won the championship after ten long years.",
     "dimensions": {"emotion": "happy", "speed": "fast"}},
    {"id": "pc-abstract-01", "task": "paralanguage_control", "subtask": "abstract",
     "sentence": "Guess who left a surprise on your desk this morning.",
     "style": "a lively and mischievous voice"},
    {"id": "dv-trans-01", "task": "dynamic_variation", "subtask": "transitional",
     "sentence": "I opened the letter with a smile, but then I read the bad news.",
     "dimension": "emotion", "from": "happy", "to": "sad"},
    {"id": "dv-prog-01", "task": "dynamic_variation", "subtask": "progressive",
     "sentence": "Listen closely, because this part of the story matters most.",
     "dimension": "volume", "from": "whisper", "to": "normal", "direction": "increase"},
    {"id": "sa-01", "task": "situational_adaptation",
     "utterance": "I failed my driving test again today, I don't know what to do.",
     "dimensions": {"emotion": "sad", "age": "young adult"},
     "reply": "I'm so sorry. You were close, and you can try again soon. I believe in you."},
    {"id": "sa-02", "task": "situational_adaptation",
     "utterance": "Grandpa, guess what, I got the lead role in the school play!",
     "dimensions": {"emotion": "excited", "age": "child"},
     "reply": "That is wonderful news! I am so proud of you, I will be in the front row!"},
)  # fmt: skip
PRESET_OF: dict[str, str] = {
    "happy": "lively", "excited": "lively", "lively": "lively", "mischievous": "lively",
    "fast": "rushed", "slow": "dragging", "sad": "subdued", "whisper": "subdued",
    "soft": "subdued", "loud": "exaggerated", "angry": "exaggerated", "normal": "neutral",
}  # fmt: skip


def demo_queries() -> list[Query]:
    """The demo queries, built from :data:`DEMO_SPECS`."""
    return [build_query({k: v for k, v in s.items() if k != "reply"}) for s in DEMO_SPECS]


def _preset(words: str) -> str:
    for word in words.lower().split():
        if word in PRESET_OF:
            return PRESET_OF[word]
    return "neutral"


def expressive_rendering(query: Query, text: str) -> Rendering:
    """The ``expressive`` system's delivery of ``text`` for ``query``."""
    if query.task == "dynamic_variation":
        spec = next(s for s in DEMO_SPECS if s["id"] == query.id)
        words = text.split()
        half = len(words) // 2
        return Rendering(
            (
                (" ".join(words[:half]), _preset(spec["from"])),
                (" ".join(words[half:]), _preset(spec["to"])),
            )
        )
    return Rendering.plain(text, _preset(" ".join(query.targets.values())))


def response_text(query: Query) -> str:
    if query.task == "situational_adaptation":
        return next(s["reply"] for s in DEMO_SPECS if s["id"] == query.id)
    return query.sentence


def build_demo(out: str | os.PathLike, queries: Sequence[Query] | None = None) -> Path:
    """Write ``queries.jsonl`` (with spoken queries) and ``responses/<system>/<id>.wav``."""
    out = Path(out)
    if out.exists() and not out.is_dir():  # refused before any audio is synthesized
        raise NotADirectoryError(f"{out}: exists and is not a folder")
    queries = list(queries) if queries is not None else demo_queries()
    spoken = synthesize_queries(queries, out / "query_audio")
    renderings, paths = [], []
    for q in queries:
        text = response_text(q)
        for system, rendering in (
            (BASELINE, Rendering.plain(text)),
            ("expressive", expressive_rendering(q, text)),
            ("noisy", Rendering.plain(text, noise_snr_db=NOISE_SNR_DB)),
        ):
            renderings.append(rendering)
            paths.append(out / "responses" / system / f"{q.id}.wav")
    render_clips(renderings, paths)
    return write_queries(spoken, out / "queries.jsonl")


def next_steps(out: str | os.PathLike) -> str:
    """What :func:`build_demo` wrote into ``out`` and the command that runs the protocol on it."""
    out = Path(out)
    queries, responses = (shlex.quote(str(out / n)) for n in ("queries.jsonl", "responses"))
    return (
        f"wrote {len(DEMO_SPECS)} spoken queries to {out / 'queries.jsonl'} and the responses of "
        f"{1 + len(CANDIDATES)} synthetic systems to {out / 'responses'}\n"
        "next: judge the candidates against the baseline offline (rule scorer, a stand-in for "
        "the released audio-LLM judge):\n"
        f"  speech-drame paraling run {queries} --responses {responses} --baseline {BASELINE} "
        f"--candidates {' '.join(CANDIDATES)}"
    )
