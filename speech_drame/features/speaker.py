"""Speaker embedding: resemblyzer's d-vector (GE2E LSTM encoder bundled with the package).

Follows ``resemblyzer.preprocess_wav`` (volume normalisation, webrtcvad trimming of long
silences) and ``VoiceEncoder.embed_utterance`` (1.6 s partials at 1.3 per second, mean of the
L2-normalised partial embeddings), with the 40-band mel input computed by
:mod:`speech_drame.features.spectral` instead of librosa (same values, no numba start-up).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.features.common import require, samples_16k, thread_count, torch_threads
from speech_drame.features.spectral import mel_spectrogram

NAME = "speaker"
VERSION = "resemblyzer-0.1.4-1"
SR = 16_000


@dataclass
class SpeakerEmbedding:
    """Unit-norm 256-value d-vector; cosine similarity is the dot product."""

    embedding: list[float]

    def similarity(self, other: SpeakerEmbedding) -> float:
        return float(np.dot(self.embedding, other.embedding))


@lru_cache(maxsize=1)
def _encoder() -> Any:
    resemblyzer = require("resemblyzer", "resemblyzer", "speaker embedding")
    return resemblyzer.VoiceEncoder("cpu", verbose=False)


def speaker_embedding(audio: Audio) -> SpeakerEmbedding:
    """The clip's d-vector.

    Raises:
        AudioError: audio not 16 kHz mono, or too little voice left after silence trimming.
    """
    torch = require("torch", "torch", "speaker embedding")
    from resemblyzer import audio as rs_audio
    from resemblyzer import hparams

    encoder = _encoder()
    wav = rs_audio.normalize_volume(
        samples_16k(audio, "speaker embedding"), hparams.audio_norm_target_dBFS, increase_only=True
    )
    wav = rs_audio.trim_long_silences(wav)
    if len(wav) < SR // 4:
        raise AudioError(audio.source, "speaker embedding: under 0.25 s of voice after trimming")
    wav_slices, mel_slices = encoder.compute_partial_slices(len(wav), rate=1.3, min_coverage=0.75)
    wav = np.pad(wav, (0, max(0, wav_slices[-1].stop - len(wav))))
    mel = mel_spectrogram(
        wav,
        SR,
        n_fft=int(SR * hparams.mel_window_length / 1000),
        hop_length=int(SR * hparams.mel_window_step / 1000),
        n_mels=hparams.mel_n_channels,
    ).T
    with torch.no_grad(), torch_threads(thread_count()):
        partials = encoder(torch.from_numpy(np.stack([mel[s] for s in mel_slices]))).numpy()
    raw = partials.mean(axis=0)
    return SpeakerEmbedding([float(v) for v in raw / np.linalg.norm(raw)])
