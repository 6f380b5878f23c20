"""Frozen frame encoders for the ranker, and their on-disk frame-feature cache.

- :class:`WhisperEncoder` (offline default): the multilingual Whisper base encoder states of
  the ASR model (:func:`speech_drame.features.asr.encoder_frames`), 512 values per 20 ms.
- :class:`HFEncoder`: any transformers SSL speech model (wav2vec 2.0, HuBERT, WavLM,
  data2vec-audio) from a name or folder, one hidden layer chosen by index.

Frame features are stored in the shared :class:`speech_drame.features.cache.FeatureCache`
(keyed by the clip's audio hash, the encoder id and its version) as base64 float32 arrays.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Protocol

import numpy as np

from speech_drame.audio import SCORED_SECONDS, Audio, load_audio
from speech_drame.extras import require
from speech_drame.features.cache import FeatureCache, audio_key
from speech_drame.features.common import samples_16k

# The CLI's name for the offline encoder; it predates the multilingual model (the frames are
# now Whisper base's), kept until the CLI, the ranker default and their docs are renamed together.
WHISPER = "whisper-base"


class FrameEncoder(Protocol):
    """Maps a 16 kHz clip to frame features ``(frames, dim)``; ``spec`` rebuilds it."""

    cache_name: str
    version: str
    dim: int

    def frames(self, audio: Audio) -> np.ndarray: ...

    def spec(self) -> dict[str, Any]: ...


class WhisperEncoder:
    """Multilingual Whisper base encoder states (CTranslate2 int8, offline)."""

    cache_name = "frames-whisper-base"

    def __init__(self) -> None:
        from speech_drame.features import asr

        self.version = asr.VERSION
        self.dim = asr.EMBEDDING_DIM

    def frames(self, audio: Audio) -> np.ndarray:
        from speech_drame.features.asr import encoder_frames

        return encoder_frames(audio)

    def spec(self) -> dict[str, Any]:
        return {"kind": "whisper", "name": WHISPER}


class HFEncoder:
    """A frozen transformers SSL model; features are hidden state ``layer`` (``-1`` = last).

    Args:
        model: a loaded audio model whose forward takes ``input_values``.
        name: the name or folder it came from (its cache and config identity).
        layer: index into ``hidden_states`` (0 = the CNN/projection output).
        normalize: zero-mean unit-variance waveform, as the model's feature extractor says.
    """

    def __init__(self, model: Any, name: str, layer: int = -1, normalize: bool = True):
        n_states = model.config.num_hidden_layers + 1
        if not -n_states <= layer < n_states:
            raise ValueError(f"{name}: layer {layer} out of range for {n_states} hidden states")
        self.model = model.eval().requires_grad_(False)
        self.name, self.layer, self.normalize = name, layer, normalize
        self.dim = int(model.config.hidden_size)
        self.cache_name = "frames-hf-" + name.strip("/").replace("/", "--")
        self.version = f"layer{layer % n_states}-norm{int(normalize)}"

    @classmethod
    def from_pretrained(cls, name_or_path: str, layer: int = -1) -> HFEncoder:
        """Load weights with ``AutoModel`` (local folder or Hub cache; offline is respected)."""
        transformers = require("transformers", "SSL encoders")
        model = transformers.AutoModel.from_pretrained(name_or_path)
        try:
            extractor = transformers.AutoFeatureExtractor.from_pretrained(name_or_path)
            normalize = bool(getattr(extractor, "do_normalize", True))
        except OSError:
            normalize = True
        return cls(model, name_or_path, layer, normalize)

    def forward(self, waves: Any, lengths: Any) -> tuple[Any, Any]:
        """Batched hidden states ``(batch, frames, dim)`` and frame counts, without gradients.

        ``waves`` is a zero-padded float tensor ``(batch, samples)``, ``lengths`` the sample
        counts; normalisation uses each clip's own samples.
        """
        import torch

        mask = torch.arange(waves.shape[1])[None, :] < lengths[:, None]
        if self.normalize:
            n = lengths[:, None].clamp(min=1)
            mean = (waves * mask).sum(1, keepdim=True) / n
            var = (((waves - mean) * mask) ** 2).sum(1, keepdim=True) / n
            waves = (waves - mean) / torch.sqrt(var + 1e-7) * mask
        with torch.no_grad():
            out = self.model(
                input_values=waves, attention_mask=mask.long(), output_hidden_states=True
            )
        frame_lengths = self.model._get_feat_extract_output_lengths(lengths)
        return out.hidden_states[self.layer], frame_lengths

    def frames(self, audio: Audio) -> np.ndarray:
        import torch

        x = torch.from_numpy(samples_16k(audio, f"{self.name} encoder"))[None]
        hidden, n = self.forward(x, torch.tensor([x.shape[1]]))
        return hidden[0, : int(n[0])].float().numpy()

    def spec(self) -> dict[str, Any]:
        return {"kind": "hf", "name": self.name, "layer": self.layer}


def build_encoder(spec: dict[str, Any] | str) -> FrameEncoder:
    """An encoder from ``WHISPER``/a transformers name or folder, or a saved spec."""
    if isinstance(spec, str):
        spec = {"kind": "whisper"} if spec == WHISPER else {"kind": "hf", "name": spec}
    if spec["kind"] == "whisper":
        return WhisperEncoder()
    if spec["kind"] == "hf":
        return HFEncoder.from_pretrained(spec["name"], int(spec.get("layer", -1)))
    raise ValueError(f"unknown encoder kind {spec['kind']!r} (whisper or hf)")


def _pack(frames: np.ndarray) -> dict[str, Any]:
    data = base64.b64encode(np.ascontiguousarray(frames, dtype=np.float32).tobytes()).decode()
    return {"shape": list(frames.shape), "float32_base64": data}


def _unpack(record: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(record["float32_base64"])
    return np.frombuffer(raw, dtype=np.float32).reshape(record["shape"]).copy()


def clip_frames(
    encoder: FrameEncoder,
    source: str | os.PathLike | Audio,
    cache: FeatureCache | None = None,
) -> np.ndarray:
    """Frame features of one clip (its first 30 s), read from or written to ``cache``."""
    audio = source if isinstance(source, Audio) else load_audio(source, max_seconds=SCORED_SECONDS)
    if cache is None:
        return encoder.frames(audio)
    key = audio_key(audio.samples, audio.sample_rate)
    stored = cache.get(encoder.cache_name, encoder.version, key)
    if stored is not None:
        return _unpack(stored)
    frames = encoder.frames(audio)
    cache.put(encoder.cache_name, encoder.version, key, _pack(frames))
    return frames
