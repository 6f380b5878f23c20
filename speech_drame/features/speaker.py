"""Speaker embedding: the d-vector of the GE2E voice encoder shipped in resemblyzer 0.1.4.

Our own implementation of that encoder's pipeline, giving the package's embeddings (within
float rounding; ``tests/test_speaker_encoder.py`` compares them) without installing it:

1. volume normalisation: raise quiet clips to -30 dBFS RMS (louder clips are left as they are);
2. silence trimming: webrtcvad (mode 3) marks 30 ms windows as voiced, a majority vote over 8
   windows smooths the marks, voiced runs are widened by 3 windows each side, and the rest is cut;
3. 1.6 s partials (160 mel frames of 10 ms) every 77 frames (1.3 per second), the last one kept
   if at least 75 % of it is audio (the waveform is zero-padded to its end);
4. each partial's 40-band power mel spectrogram (:mod:`speech_drame.features.spectral`, the
   values librosa gives) through a 3-layer LSTM (256 units), the last layer's final hidden state
   through Linear 256->256 and ReLU, L2-normalised; the clip's d-vector is the L2-normalised mean.
   The LSTM runs in ONNX Runtime (a graph built from the weights, :func:`lstm_model`), so no
   torch is needed.

The weights (``speech_drame/resources/voice_encoder.safetensors``, Apache-2.0, see
``voice_encoder.LICENSE.md``) are resemblyzer's ``pretrained.pt`` converted unchanged by
``dataset_scripts/convert_voice_encoder.py``; their SHA-256 is checked when they are loaded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from speech_drame.audio import Audio, AudioError
from speech_drame.extras import require
from speech_drame.features import onnx_graph
from speech_drame.features.common import load_once, samples_16k, thread_count
from speech_drame.features.spectral import mel_spectrogram

NAME = "speaker"
VERSION = "resemblyzer-0.1.4-1"
SR = 16_000

WEIGHTS = resources.files("speech_drame.resources") / "voice_encoder.safetensors"
WEIGHTS_SHA256 = "f92743a2f0b97338213c23b26cde5d823eac420fe169c8c01e14c4426517c71a"

TARGET_DBFS = -30.0
INT16_MAX = 2**15 - 1
VAD_WINDOW = SR * 30 // 1000  # samples per webrtcvad decision
VAD_SMOOTHING = 8  # windows in the majority vote
VAD_DILATION = 7  # a voiced window keeps 3 windows either side
N_FFT, HOP, N_MELS = SR * 25 // 1000, SR * 10 // 1000, 40
PARTIAL_FRAMES = 160
PARTIAL_STEP = round(SR / 1.3 / HOP)  # 77 frames: 1.3 partials per second
MIN_COVERAGE = 0.75
HIDDEN, LAYERS = 256, 3


@dataclass
class SpeakerEmbedding:
    """Unit-norm 256-value d-vector; cosine similarity is the dot product."""

    embedding: list[float]

    def similarity(self, other: SpeakerEmbedding) -> float:
        return float(np.dot(self.embedding, other.embedding))


def normalise_volume(samples: np.ndarray) -> np.ndarray:
    """``samples`` scaled up to ``TARGET_DBFS`` RMS if quieter (silence is returned as is)."""
    rms = np.sqrt(np.mean((samples * INT16_MAX) ** 2))
    if rms == 0:
        return samples
    gain_db = TARGET_DBFS - 20 * np.log10(rms / INT16_MAX)
    return samples if gain_db < 0 else samples * 10 ** (gain_db / 20)


def _windows_sum(flags: np.ndarray, width: int) -> np.ndarray:
    """For each window, the sum of ``flags`` over ``width`` windows around it (zeros outside).

    The span runs from ``(width - 1) // 2`` windows before to ``width // 2`` after.
    """
    full = np.convolve(flags.astype(np.int64), np.ones(width, dtype=np.int64))
    return full[width // 2 : width // 2 + len(flags)]


def trim_long_silences(samples: np.ndarray) -> np.ndarray:
    """``samples`` without the silences that webrtcvad finds beyond 3 windows from speech.

    The samples are first cut to whole 30 ms windows.
    """
    webrtcvad = require("webrtcvad", "speaker embedding")
    n_windows = len(samples) // VAD_WINDOW
    if n_windows == 0:
        return samples[:0]
    windows = samples[: n_windows * VAD_WINDOW].reshape(n_windows, VAD_WINDOW)
    pcm = np.round(windows * INT16_MAX).astype("<i2")
    vad = webrtcvad.Vad(3)
    voiced = np.array([vad.is_speech(w.tobytes(), SR) for w in pcm])
    # majority of the 8 windows from 3 before to 4 after; a 4-4 tie counts as silence
    smoothed = np.round(_windows_sum(voiced, VAD_SMOOTHING) / VAD_SMOOTHING) > 0
    keep = _windows_sum(smoothed, VAD_DILATION) > 0
    return windows[keep].ravel()


def preprocess(samples: np.ndarray) -> np.ndarray:
    """The 16 kHz samples the encoder sees: volume-normalised, long silences trimmed."""
    return trim_long_silences(normalise_volume(samples))


def partial_starts(n_samples: int) -> list[int]:
    """First mel frame of each 160-frame partial of a clip of ``n_samples`` samples.

    Partials start every ``PARTIAL_STEP`` frames and cover every frame of the clip; the last
    one is dropped if under ``MIN_COVERAGE`` of it is audio, unless it is the only one.
    """
    n_frames = -(-(n_samples + 1) // HOP)
    starts = list(range(0, max(1, n_frames - PARTIAL_FRAMES + PARTIAL_STEP + 1), PARTIAL_STEP))
    coverage = (n_samples - starts[-1] * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(starts) > 1:
        starts.pop()
    return starts


def _weights() -> dict[str, np.ndarray]:
    """The LSTM and projection weights (torch's names and layout), after checking their SHA-256."""
    safetensors_numpy = require("safetensors.numpy", "speaker embedding")
    data = WEIGHTS.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise ValueError(
            f"{WEIGHTS}: SHA-256 {digest[:12]}... is not the pinned {WEIGHTS_SHA256[:12]}...: "
            "the voice encoder weights are damaged or replaced; reinstall speech-drame"
        )
    return safetensors_numpy.load(data)


def lstm_model(weights: dict[str, np.ndarray]) -> bytes:
    """The 3-layer LSTM as an ONNX model: ``mels (time, batch, 40)`` -> ``hidden (1, batch, 256)``,
    the top layer's final hidden state.

    torch orders the gates input, forget, cell, output; ONNX input, output, forget, cell.
    """
    order = [0, 3, 1, 2]

    def gates(array: np.ndarray) -> np.ndarray:
        return np.concatenate([np.split(array, 4)[k] for k in order])[None]

    nodes, initializers = [], []
    x = "mels"
    for k in range(LAYERS):
        bias = np.concatenate(
            [gates(weights[f"lstm.bias_{kind}_l{k}"]) for kind in ("ih", "hh")], 1
        )
        for name, array in (
            (f"W{k}", gates(weights[f"lstm.weight_ih_l{k}"])),
            (f"R{k}", gates(weights[f"lstm.weight_hh_l{k}"])),
            (f"B{k}", bias),
        ):
            initializers.append(onnx_graph.tensor(name, array))
        outputs = ["", "hidden"] if k == LAYERS - 1 else [f"Y{k}"]  # Y, then the final state
        nodes.append(
            onnx_graph.node("LSTM", [x, f"W{k}", f"R{k}", f"B{k}"], outputs, hidden_size=HIDDEN)
        )
        if k < LAYERS - 1:  # Y (time, directions, batch, hidden) -> the next layer's input
            nodes.append(onnx_graph.node("Squeeze", [f"Y{k}", "direction_axis"], [f"X{k + 1}"]))
            x = f"X{k + 1}"
    initializers.append(onnx_graph.tensor("direction_axis", np.array([1], dtype=np.int64)))
    return onnx_graph.model(
        "voice-encoder-lstm",
        nodes,
        initializers,
        [onnx_graph.value_info("mels", ["time", "batch", N_MELS])],
        [onnx_graph.value_info("hidden", [1, "batch", HIDDEN])],
        opset=17,
    )


@load_once
def _encoder() -> tuple[Any, np.ndarray, np.ndarray]:
    """ONNX Runtime running :func:`lstm_model`, and the projection's weight and bias.

    The whole recurrence is one call, which releases the interpreter (a Python loop over 160
    steps of 3 layers would hold it); the weights are not kept beyond what the session holds.
    """
    ort = require("onnxruntime", "speaker embedding")
    options = ort.SessionOptions()
    options.intra_op_num_threads = thread_count()
    options.inter_op_num_threads = 1
    weights = _weights()
    session = ort.InferenceSession(lstm_model(weights), options, providers=["CPUExecutionProvider"])
    return session, weights["linear.weight"].T.copy(), weights["linear.bias"]


def load() -> None:
    """Load the encoder (see :mod:`speech_drame.features.loading`)."""
    _encoder()


def speaker_embedding(audio: Audio) -> SpeakerEmbedding:
    """The clip's d-vector.

    Raises:
        AudioError: audio not 16 kHz mono, or too little voice left after silence trimming.
    """
    session, projection, bias = _encoder()
    wav = preprocess(samples_16k(audio, "speaker embedding"))
    if len(wav) < SR // 4:
        raise AudioError(audio.source, "speaker embedding: under 0.25 s of voice after trimming")
    starts = partial_starts(len(wav))
    wav = np.pad(wav, (0, max(0, (starts[-1] + PARTIAL_FRAMES) * HOP - len(wav))))
    mel = mel_spectrogram(wav, SR, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS).T
    mels = np.stack([mel[s : s + PARTIAL_FRAMES] for s in starts], axis=1)  # (time, partial, mel)
    (hidden,) = session.run(["hidden"], {"mels": mels.astype(np.float32, copy=False)})
    hidden = hidden[0]
    partials = np.maximum(hidden @ projection + bias, 0)
    partials /= np.linalg.norm(partials, axis=1, keepdims=True)
    raw = partials.mean(axis=0)
    return SpeakerEmbedding([float(v) for v in raw / np.linalg.norm(raw)])
