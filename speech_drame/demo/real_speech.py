"""Real human speech available offline: Debian test clips and the official sample clip.

* ``pocketsphinx-testdata``: five LibriVox clips of *Sense and Sensibility* (transcripts in
  ``librivox/transcription``), five card-calling utterances (``cards/*.wav``, transcripts in
  ``cards/cards.transcription``) and three raw 16 kHz 16-bit little-endian PCM utterances.
* ``alsa-utils``: a human voice naming each speaker channel (``Front_Left.wav`` ...; the
  ``Noise.wav`` clip is not speech and is excluded).
* the official realism sample clip, with the transcript of its official record.

Clips are located, never modified; :func:`load_real_clip` reads them through
:func:`speech_drame.audio.load_audio`. A missing file raises :class:`FileNotFoundError` naming
the path and the Debian package that provides it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speech_drame.audio import Audio, AudioError, load_audio

POCKETSPHINX_DIR = Path("/usr/share/pocketsphinx/test/data")
ALSA_DIR = Path("/usr/share/sounds/alsa")
RAW_SAMPLE_RATE = 16_000

# Transcripts with their casing, checked word by word against the Debian transcription files.
_LIBRIVOX = {
    "0870": "And Mister John Dashwood had then leisure to consider how much there might be "
    "prudently in his power to do for them.",
    "0880": "He was not an ill disposed young man.",
    "0890": "Unless to be rather cold hearted and rather selfish is to be ill disposed.",
    "0920": "Had he married a more, a amiable woman, he might have been made still more "
    "respectable than he was.",
    "0930": "He might even have been made amiable himself.",
}
_CARDS = {
    "001": "Ten of clubs.",
    "002": "Four, queen of clubs.",
    "003": "Seven of clubs.",
    "004": "Five, five.",
    "005": "Eight of spades, four of clubs, seven of hearts.",
}
# No transcription files ship with these; written for the demo after listening (ASR-checked).
_RAW = {
    "goforward": "Go forward ten meters.",
    "numbers": "Thirty three, four, six, ninety two.",
    "something": "Go somewhere and do something.",
}
_ALSA = ("Front_Center", "Front_Left", "Front_Right", "Rear_Center", "Rear_Left", "Rear_Right",
         "Side_Left", "Side_Right")  # fmt: skip
OFFICIAL_REALISM_CLIP = "role-eval_v1_0001"


@dataclass(frozen=True)
class RealClip:
    """One real recording: ``group`` names the demo character it is given."""

    clip_id: str
    path: Path
    group: str
    transcript: str
    speaker_gender: str  # "F" or "M", as heard
    raw_pcm: bool = False

    @property
    def copyable(self) -> bool:
        """True when the file is a wav that can be copied into a release unchanged."""
        return not self.raw_pcm


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _transcription_file(path: Path) -> dict[str, str]:
    """Parse ``<s> words </s> (utterance-id)`` lines."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*<s>(.*)</s>\s*\((.+)\)\s*$", line)
        if match:
            out[match.group(2).strip()] = match.group(1).strip()
    return out


def _require(path: Path, package: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: real speech clip missing (install {package})")
    return path


def _checked(transcripts: dict[str, str], source: Path, key: str, text: str) -> str:
    if key not in transcripts:
        raise ValueError(f"{source}: no transcript for {key!r}")
    if _words(transcripts[key]) != _words(text):
        raise ValueError(f"{source}: transcript of {key!r} is {transcripts[key]!r}, not {text!r}")
    return text


def _official_transcript(jsonl: Path, clip_id: str) -> str:
    for line in _require(jsonl, "the official samples").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("id") == clip_id:
            return record["transcript"]
    raise ValueError(f"{jsonl}: no record {clip_id!r}")


def find_real_clips(
    official_dir: Path | None = None,
    pocketsphinx_dir: Path = POCKETSPHINX_DIR,
    alsa_dir: Path = ALSA_DIR,
) -> list[RealClip]:
    """All real clips, in a fixed order. ``official_dir`` holds ``realism_data/`` (optional)."""
    pkg = "the Debian package pocketsphinx-testdata"
    clips = []
    libri = pocketsphinx_dir / "librivox"
    libri_tx = _transcription_file(_require(libri / "transcription", pkg))
    for num, text in _LIBRIVOX.items():
        stem = f"sense_and_sensibility_01_austen_64kb-{num}"
        path = _require(libri / f"{stem}.wav", pkg)
        clips.append(
            RealClip(f"librivox_{num}", path, "librivox", _checked(libri_tx, path, stem, text), "M")
        )
    cards = pocketsphinx_dir / "cards"
    cards_tx = _transcription_file(_require(cards / "cards.transcription", pkg))
    for num, text in _CARDS.items():
        path = _require(cards / f"{num}.wav", pkg)
        clips.append(
            RealClip(f"cards_{num}", path, "cards", _checked(cards_tx, path, num, text), "M")
        )
    for stem, text in _RAW.items():
        group = "bingo" if stem == "numbers" else "drill"
        path = _require(pocketsphinx_dir / f"{stem}.raw", pkg)
        clips.append(RealClip(f"raw_{stem}", path, group, text, "M", raw_pcm=True))
    for stem in _ALSA:
        path = _require(alsa_dir / f"{stem}.wav", "the Debian package alsa-utils")
        clips.append(RealClip(f"alsa_{stem}", path, "alsa", stem.replace("_", " ") + ".", "F"))
    if official_dir is not None:
        realism = Path(official_dir) / "realism_data"
        path = _require(realism / f"{OFFICIAL_REALISM_CLIP}.wav", "the official samples")
        text = _official_transcript(realism / "test.jsonl", OFFICIAL_REALISM_CLIP)
        clips.append(RealClip(f"official_{OFFICIAL_REALISM_CLIP}", path, "official", text, "F"))
    return clips


def load_real_clip(clip: RealClip, sample_rate: int | None = None) -> Audio:
    """Read a real clip (raw PCM through numpy) as checked mono audio."""
    if clip.raw_pcm:
        data = np.fromfile(clip.path, dtype="<i2")
        if data.size == 0:
            raise AudioError(str(clip.path), "empty raw PCM file")
        samples = (data.astype(np.float32) / 32768.0, RAW_SAMPLE_RATE)
        audio = load_audio(samples, sample_rate=sample_rate)
        return Audio(
            audio.samples, audio.sample_rate, str(clip.path), RAW_SAMPLE_RATE, 1,
            audio.original_seconds,
        )  # fmt: skip
    return load_audio(clip.path, sample_rate=sample_rate)
