"""A small TRACE demo set: synthetic response pairs with construction-derived HCoT labels.

Each response is a piper rendering of a right or wrong answer to a request, clean or mixed
with white noise at 5 dB SNR, spoken with a lively or a flat delivery. The dimension labels
follow from how the two responses were built (right/clean/lively = acceptable), in the HCoT
order; the overall label is their ``content_first`` fusion (the released SpeakBench rule).
**These are proxy labels, not human judgments**: the demo shows the protocol running end to
end, not its agreement with people.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from speech_drame.atomic_io import write_text

from ..demo_audio import Rendering, render_clips
from .hcot import PairLabels, write_labels
from .labels import fuse

NOISE_SNR_DB = 5.0
REQUESTS: tuple[tuple[str, str, str], ...] = (
    (
        "What is the capital of France? Please answer cheerfully.",
        "The capital of France is Paris, what a lovely city!",
        "I usually have toast and jam for breakfast.",
    ),
    (
        "How many days are there in a week? Answer warmly.",
        "There are seven days in a week, my friend.",
        "The weather was cold and rainy yesterday.",
    ),
    (
        "Can you name a primary colour? Say it with excitement.",
        "Red is a primary colour, and it is brilliant!",
        "My neighbour repaired his old bicycle last night.",
    ),
)


@dataclass(frozen=True)
class Response:
    right: bool
    clean: bool
    lively: bool

    @property
    def tag(self) -> str:
        return "-".join(
            ("right" if self.right else "wrong", "clean" if self.clean else "noisy",
             "lively" if self.lively else "flat")
        )  # fmt: skip


R = Response
# (response 1, response 2): every typed label occurs on some dimension; overall 1, 2 and
# both_bad occur (the last pair: wrong and flat on both sides)
PAIRS: tuple[tuple[Response, Response], ...] = (
    (R(True, True, True), R(True, True, False)),
    (R(True, True, True), R(False, True, True)),
    (R(False, True, True), R(False, True, False)),
    (R(True, False, True), R(True, True, True)),
    (R(True, True, False), R(True, False, False)),
    (R(False, True, True), R(True, False, False)),
    (R(False, True, False), R(False, False, False)),
)


def typed(ok1: bool, ok2: bool) -> str:
    """The proxy label of one dimension: acceptability of each response, no finer comparison."""
    if ok1 and ok2:
        return "both_good"
    if not (ok1 or ok2):
        return "both_bad"
    return "1" if ok1 else "2"


def demo_labels(a: Response, b: Response, pair_id: str) -> PairLabels:
    labels = {
        "content": typed(a.right, b.right),
        "voice_quality": typed(a.clean, b.clean),
        "paralinguistics": typed(a.lively, b.lively),
    }
    overall = fuse(labels["content"], labels["voice_quality"], labels["paralinguistics"],
                   "content_first")  # fmt: skip
    return PairLabels(pair_id, {**labels, "overall": overall})


def _clip_name(pair_index: int, response: Response) -> str:
    return f"audio/q{pair_index % len(REQUESTS)}-{response.tag}.wav"


def build_demo(out: str | Path) -> tuple[Path, Path]:
    """Write ``pairs.jsonl``, ``hcot.jsonl`` and the response wavs into ``out``."""
    out = Path(out)
    if out.exists() and not out.is_dir():  # refused before any audio is synthesized
        raise NotADirectoryError(f"{out}: exists and is not a folder")
    pairs, gold, clips = [], [], {}
    for i, (a, b) in enumerate(PAIRS):
        request, right, wrong = REQUESTS[i % len(REQUESTS)]
        names = []
        for resp in (a, b):
            name = _clip_name(i, resp)
            clips[name] = Rendering.plain(
                right if resp.right else wrong,
                "lively" if resp.lively else "flat",
                None if resp.clean else NOISE_SNR_DB,
            )
            names.append(name)
        pair_id = f"pair{i}"
        pairs.append({"id": pair_id, "instruction": request, "audio_1": names[0],
                      "audio_2": names[1]})  # fmt: skip
        gold.append(demo_labels(a, b, pair_id))
    render_clips(list(clips.values()), [out / n for n in clips])
    manifest = out / "pairs.jsonl"
    write_text(manifest, "".join(json.dumps(p) + "\n" for p in pairs))
    return manifest, write_labels(gold, out / "hcot.jsonl")


def next_steps(out: str | Path) -> str:
    """What the demo wrote into ``out`` and the commands that judge and evaluate it."""
    out = Path(out)
    pairs, hcot, labels = (shlex.quote(str(out / n)) for n in ("pairs.jsonl", "hcot.jsonl",
                                                                "labels.jsonl"))  # fmt: skip
    n_clips = len({_clip_name(i, r) for i, pair in enumerate(PAIRS) for r in pair})
    return (
        f"wrote {len(PAIRS)} pairs ({n_clips} response clips in {out / 'audio'}) to "
        f"{out / 'pairs.jsonl'}\n"
        f"wrote their construction-derived proxy labels (not human judgments) to "
        f"{out / 'hcot.jsonl'}\n"
        "next: judge the pairs offline, then compare with the proxy labels:\n"
        f"  speech-drame trace run {pairs} --out {labels}\n"
        f"  speech-drame trace evaluate {labels} --hcot {hcot}"
    )
