"""Pluggable angle/distance embedders for the ANG and DIS cosine metrics.

The paper embeds binaural audio with SPATIAL-AST, whose weights are not bundled. Any object
with a ``sample_rate`` and a ``__call__(binaural) -> SpatialEmbedding`` fits
:class:`SpatialEmbedder`. :class:`TorchSpatialEmbedder` wraps a torch module that maps a
``(batch, 2, samples)`` waveform (left, right) to an ``(angle, distance)`` pair of
``(batch, dim)`` tensors; :func:`load_spatial_embedder` builds one from a ``module:function``
builder and a state-dict checkpoint, so SPATIAL-AST (or another model) plugs in with a
few-line builder that returns such a module.

Matching the released evaluator (facts from its ``evaluate/evaluate.py``), an embedding is a
per-window MATRIX ``(windows, dim)`` of the model's outputs (SPATIAL-AST: 360 azimuth and 21
distance logits), computed on 32 kHz audio (:data:`SPATIAL_AST_SR`, the default rate), and
:func:`matrix_cosine` compares two of them: both are cut to their common windows, flattened, and
the cosine is taken. Under ``"wrap-above-pi"`` (the released rule) both flattened vectors are
first wrapped to ``(-pi, pi]`` whenever any reference value exceeds pi (the release's heuristic
for phase inputs, which also fires on logits); ``"plain"`` never wraps.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from speech_drame.choices import check_choice
from speech_drame.protocols.isdrama.spatial import binaural_channels, wrap_phase

SPATIAL_AST_SR = 32_000  # SPATIAL-AST's input rate, used by the released evaluator
EMBEDDING_COSINES = {
    "wrap-above-pi": "ANG/DIS: per-window (windows, dim) outputs cut to the common windows, "
    "flattened; both wrapped to (-pi, pi] when any reference value exceeds pi; cosine",
    "plain": "ANG/DIS: per-window (windows, dim) outputs cut to the common windows, flattened; "
    "cosine (never wrapped)",
}


@dataclass(frozen=True)
class SpatialEmbedding:
    """Angle and distance outputs of one binaural clip, each ``(windows, dim)``."""

    angle: np.ndarray
    distance: np.ndarray


@runtime_checkable
class SpatialEmbedder(Protocol):
    """Embeds ``(frames, 2)`` float32 binaural audio sampled at ``sample_rate``."""

    sample_rate: int

    def __call__(self, binaural: np.ndarray) -> SpatialEmbedding: ...


def cosine(a: np.ndarray, b: np.ndarray, name: str = "embedding") -> float:
    """Cosine similarity of two 1-D vectors of the same size."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"{name}: cannot compare embeddings of sizes {a.size} and {b.size}")
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    if norm == 0:
        raise ValueError(f"{name}: cosine of a zero embedding is undefined")
    return float(a @ b / norm)


def _matrix(x: np.ndarray, name: str) -> np.ndarray:
    m = np.asarray(x, dtype=np.float64)
    if m.ndim != 2 or 0 in m.shape or not np.isfinite(m).all():
        raise ValueError(f"{name} must be a finite, non-empty (windows, dim) matrix, got {m.shape}")
    return m


def matrix_cosine(
    reference: np.ndarray,
    generated: np.ndarray,
    name: str = "embedding",
    rule: str = "wrap-above-pi",
) -> float:
    """Cosine of two ``(windows, dim)`` matrices under ``rule`` (see the module docstring).

    Window counts may differ (the longer matrix is cut, as released); output sizes may not.
    """
    check_choice(rule, EMBEDDING_COSINES, "embedding cosine rule")
    ref, gen = _matrix(reference, f"reference {name}"), _matrix(generated, f"generated {name}")
    if ref.shape[1] != gen.shape[1]:
        raise ValueError(
            f"{name}: the reference has {ref.shape[1]} outputs per window, the generated audio "
            f"{gen.shape[1]}: they come from different models"
        )
    windows = min(len(ref), len(gen))
    a, b = ref[:windows].ravel(), gen[:windows].ravel()
    if rule == "wrap-above-pi" and (a > np.pi).any():
        a, b = wrap_phase(a), wrap_phase(b)
    return cosine(a, b, name)


class TorchSpatialEmbedder:
    """A torch module as a :class:`SpatialEmbedder`.

    Args:
        module: maps a float32 ``(batch, 2, samples)`` tensor to ``(angle, distance)``, each
            ``(batch, dim)``.
        sample_rate: the rate the module expects (SPATIAL-AST: 32 kHz); callers resample to it.
        window: if set, the clip is cut into ``window``-second pieces (the last one
            zero-padded), one matrix row each, for models with a fixed input length; ``None``
            embeds the whole clip at once (a one-row matrix).
    """

    def __init__(self, module: Any, sample_rate: int = SPATIAL_AST_SR, window: float | None = None):
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        if window is not None and window <= 0:
            raise ValueError(f"window must be positive seconds or None, got {window}")
        self.module = module.eval()
        self.sample_rate = sample_rate
        self.window = window

    def _pieces(self, x: np.ndarray) -> np.ndarray:
        if self.window is None:
            return x.T[None]
        size = int(round(self.window * self.sample_rate))
        count = -(-len(x) // size)
        padded = np.pad(x, ((0, count * size - len(x)), (0, 0)))
        return padded.reshape(count, size, 2).transpose(0, 2, 1)

    def __call__(self, binaural: np.ndarray) -> SpatialEmbedding:
        import torch

        x = binaural_channels(binaural, "spatial embedder input")
        batch = torch.from_numpy(np.ascontiguousarray(self._pieces(x)))
        with torch.no_grad():
            out = self.module(batch)
        if not (isinstance(out, tuple | list) and len(out) == 2):
            raise ValueError(
                f"spatial embedder module must return (angle, distance), got {type(out).__name__}"
            )
        angle, distance = (np.asarray(t.detach().float().cpu().numpy()) for t in out)
        for name, emb in (("angle", angle), ("distance", distance)):
            if emb.ndim != 2 or emb.shape[0] != batch.shape[0]:
                raise ValueError(
                    f"spatial embedder {name} output must be (batch={batch.shape[0]}, dim), "
                    f"got {emb.shape}"
                )
        return SpatialEmbedding(angle=angle, distance=distance)


def resolve_builder(spec: str) -> Callable[[], Any]:
    """Import ``"package.module:function"`` and return the function."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"embedder builder {spec!r} must look like 'package.module:function'")
    try:
        builder = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"embedder builder {spec!r} cannot be imported: {exc}") from exc
    if not callable(builder):
        raise ValueError(f"embedder builder {spec!r} is not callable")
    return builder


def load_spatial_embedder(
    builder: str | Callable[[], Any],
    checkpoint: str | os.PathLike | None,
    sample_rate: int = SPATIAL_AST_SR,
    window: float | None = None,
) -> TorchSpatialEmbedder:
    """Build the module, load its state dict (strictly) and wrap it.

    Args:
        builder: ``"package.module:function"`` or a callable returning the torch module.
        checkpoint: a ``torch.save``-d state dict (loaded with ``weights_only=True``), or
            ``None`` when the builder loads its own weights.
        sample_rate, window: see :class:`TorchSpatialEmbedder`.

    Raises:
        ValueError: naming the builder or checkpoint that could not be used.
    """
    import torch

    build = resolve_builder(builder) if isinstance(builder, str) else builder
    module = build()
    if not isinstance(module, torch.nn.Module):
        raise ValueError(f"embedder builder returned {type(module).__name__}, not a torch module")
    if checkpoint is not None:
        if not os.path.isfile(checkpoint):
            raise ValueError(f"{checkpoint}: embedder checkpoint not found")
        try:
            state = torch.load(checkpoint, map_location="cpu", weights_only=True)
            module.load_state_dict(state, strict=True)
        except (RuntimeError, TypeError, AttributeError) as exc:
            raise ValueError(f"{checkpoint}: cannot load embedder weights: {exc}") from exc
    return TorchSpatialEmbedder(module, sample_rate, window)
