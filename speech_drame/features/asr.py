"""Transcript, spoken language and Whisper encoder embedding (faster-whisper, Whisper base).

One multilingual model serves every clip, so the embedding means the same thing in both
languages: OpenAI's Whisper base in CTranslate2 int8, from the weight packages assembled by
:mod:`speech_drame.features.whisper_weights` (nothing is downloaded).

Short clips are encoded at their own length (plus a second of padding) rather than padded to
Whisper's 30 s window: CTranslate2 accepts shorter inputs, which makes a 3-8 s clip several
times cheaper with the same transcripts, and language identification on that encoding is as
sure as on the padded one (espeak-ng Mandarin: P(zh) 0.99 vs 0.36 with 30 s of padding).

The language is identified on the clip's own encoder output (``detect_language``, one decoder
step) and then decoded greedily, without timestamps, in that language (rule in
:func:`_choose_language`). Mandarin is decoded after a short prompt in simplified characters,
which steers Whisper away from traditional characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.extras import require
from speech_drame.features.common import cpu_count, load_once, samples_16k, thread_count
from speech_drame.features.whisper_weights import whisper_base_dir
from speech_drame.languages import LANGUAGES, OTHER, UNKNOWN
from speech_drame.text_metrics import count_words

NAME = "asr"
VERSION = "whisper-base-int8-lid-1"
PAD_SECONDS = 1.0
MAX_SECONDS = 30.0  # Whisper's window; longer audio is cut by load_audio's 30 s rule first
HOP = 160  # Whisper mel hop at 16 kHz
EMBEDDING_DIM = 512  # Whisper base's encoder width
# Language identification (see _choose_language), measured with this model on clip-length
# encodings. P(zh) + P(en): English speech >= 0.63 (LibriVox 1.00; piper, flite and espeak-ng
# voices 0.63-1.00); espeak-ng German, Spanish, French, Italian, Russian 0.00-0.15, Portuguese
# 0.31, each but Portuguese with its own language on top. Below MIN_MASS, with another language
# on top, the clip is "other": this also keeps a clip Whisper hears as Latin (P 0.34) with
# P(en) 0.27 from being called English.
MIN_MASS = 0.4
# Renormalised over zh/en: English clips above 0.99, espeak-ng Mandarin that Whisper hears as
# Mandarin 0.85-0.99, and the garbled ones (heard partly as Thai or English, transcripts mostly
# wrong) 0.52-0.67. Below MIN_SHARE (the better language at least 4x the other) neither is claimed.
MIN_SHARE = 0.8
# "What follows is a Mandarin sentence.", in simplified characters. Of 7 espeak-ng Mandarin
# clips decoded in zh, 6 held traditional characters (這, 後, 關, 飄) without it, 1 (寫) with it.
ZH_PROMPT = "以下是普通话的句子。"


@dataclass
class Transcript:
    """ASR output for one clip.

    ``avg_logprob`` is the mean token log-probability of the greedy transcript and
    ``no_speech_prob`` Whisper's probability that the clip holds no speech; ``embedding`` is
    the mean of the encoder states over the clip's own frames (512 values).

    ``language`` is one of ``zh``, ``en``, ``other`` or ``unknown`` and
    ``language_probability`` its probability renormalised over zh/en (for ``unknown``: that of
    the likelier of the two, below :data:`MIN_SHARE`; for ``other``: the detected language's
    own probability); ``detected_language`` and ``detected_probability`` are Whisper's top
    language over all 99 it knows. ``text`` is decoded in ``detected_language`` for ``other``
    and in the likelier of zh/en otherwise.
    """

    text: str
    n_tokens: int
    avg_logprob: float
    no_speech_prob: float
    embedding: list[float]
    language: str
    language_probability: float
    detected_language: str
    detected_probability: float

    @property
    def n_words(self) -> int:
        """Words, counting each CJK character as one."""
        return count_words(self.text)


@load_once
def _whisper() -> Any:
    fw = require("faster_whisper", "ASR")
    # num_workers lets that many clips be decoded concurrently (extract_blueprints' threads)
    return fw.WhisperModel(
        str(whisper_base_dir()),
        device="cpu",
        compute_type="int8",
        cpu_threads=thread_count(),
        num_workers=max(1, cpu_count() // thread_count()),
    )


@load_once
def _prompt_and_suppressed(language: str) -> tuple[list[int], list[int], int]:
    """Decoder prompt for ``language``, the tokens to suppress, and the end-of-text token."""
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_suppressed_tokens

    model = _whisper()
    tok = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=language)
    prompt = [*tok.sot_sequence, tok.no_timestamps]
    if language == "zh":
        prompt = [tok.sot_prev, *tok.encode(ZH_PROMPT), *prompt]
    return prompt, list(get_suppressed_tokens(tok, [-1])), tok.eot


def load() -> None:
    """Load the model and both languages' prompts (see :mod:`speech_drame.features.loading`)."""
    for language in LANGUAGES:
        _prompt_and_suppressed(language)


def _encode(model: Any, x: np.ndarray) -> tuple[Any, int]:
    """Encoder output (CTranslate2 storage) and how many of its frames cover the clip itself."""
    feats = model.feature_extractor(x)  # (80, frames)
    n = feats.shape[1]
    target = min(3000, n + int(PAD_SECONDS * 100))
    target += target % 2
    feats = np.pad(feats, ((0, 0), (0, max(0, target - n))))[:, :target]
    enc = model.encode(np.ascontiguousarray(feats, dtype=np.float32))
    n_states = np.asarray(enc).shape[1]  # target / 2 states of 512 values
    return enc, max(1, min(n_states, (len(x) // HOP + 1) // 2))


def _choose_language(probs: dict[str, float]) -> tuple[str, float, str]:
    """``(language, its probability, language to decode in)`` from Whisper's language probs.

    ``other`` when zh and en together hold less than MIN_MASS and the top language is another
    one (decoded in it); otherwise zh/en renormalised, ``unknown`` when the better of the two
    has less than MIN_SHARE (decoded in that better one, but never reported as it).
    """
    top = max(probs, key=probs.__getitem__)
    mass = sum(probs.get(lang, 0.0) for lang in LANGUAGES)
    if mass < MIN_MASS and top not in LANGUAGES:
        return OTHER, probs[top], top
    best = max(LANGUAGES, key=lambda lang: probs.get(lang, 0.0))
    share = probs.get(best, 0.0) / mass if mass > 0 else 0.0
    return (best if share >= MIN_SHARE else UNKNOWN), share, best


def _check_length(audio: Audio) -> None:
    if audio.seconds > MAX_SECONDS + 1e-6:
        raise AudioError(
            audio.source,
            f"ASR takes at most {MAX_SECONDS:.0f} s, got {audio.seconds:.1f} s "
            "(load with max_seconds=SCORED_SECONDS)",
        )


def encoder_frames(audio: Audio) -> np.ndarray:
    """Whisper base encoder states over the clip's own frames: ``(frames, 512)`` float32.

    One state per 20 ms of audio (the padding added for the encoder is dropped).

    Raises:
        AudioError: for audio that is not 16 kHz mono or is longer than 30 s.
    """
    x = samples_16k(audio, "Whisper encoder")
    _check_length(audio)
    enc, own = _encode(_whisper(), x)
    return np.array(np.asarray(enc)[0][:own], dtype=np.float32)


def transcribe(audio: Audio) -> Transcript:
    """Spoken language, greedy transcript in it, and the mean encoder state of the clip.

    Raises:
        AudioError: for audio that is not 16 kHz mono or is longer than 30 s.
    """
    x = samples_16k(audio, "ASR")
    _check_length(audio)
    model = _whisper()
    enc, own = _encode(model, x)
    embedding = np.asarray(enc)[0][:own].mean(axis=0)
    probs = {token[2:-2]: p for token, p in model.model.detect_language(enc)[0]}  # "<|zh|>"
    detected = max(probs, key=probs.__getitem__)
    language, probability, decode_in = _choose_language(probs)
    prompt, suppressed, eot = _prompt_and_suppressed(decode_in)
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
        language=language,
        language_probability=float(probability),
        detected_language=detected,
        detected_probability=float(probs[detected]),
    )


_ABBREVIATIONS = {"mr": "mister", "mrs": "missus", "dr": "doctor", "st": "saint"}


def normalize_text(text: str) -> str:
    """Lower case, punctuation and hyphens to spaces, common abbreviations spelled out."""
    words = re.sub(r"[^a-z0-9' ]+", " ", text.lower().replace("-", " ")).split()
    return " ".join(_ABBREVIATIONS.get(w, w) for w in words)
