"""Optional affect cues for the TRACE blueprint: class scores from a local audio classifier.

The released TRACE blueprint carries emotion category scores (emotion2vec+ large, nine
categories) and accent similarities (a SpeechBrain ECAPA accent classifier, 16 accents). No
package that installs offline here ships a speech-emotion or accent model, so by default the
blueprint has neither and says so (:data:`ABSENT`). With weights at hand, a local transformers
folder holding an ``AutoModelForAudioClassification`` model, its feature extractor and an
``id2label`` map supplies the scores: ``trace run --emotion-model FOLDER`` (and
``--accent-model FOLDER``). Scores are the softmax over the model's classes (sigmoid for a
multi-label model) on the same first 30 s the other cues use, cached per clip under a
fingerprint of the model folder (:func:`cached_clip_scores`, which also caches the personalised
DNSMOS scores).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.audio import SCORED_SECONDS, Audio, load_audio, resample
from speech_drame.extras import require
from speech_drame.features.cache import FeatureCache

KINDS: tuple[str, ...] = ("emotion", "accent")
ABSENT: dict[str, str] = {
    "emotion": (
        "no offline speech-emotion model ships with the package; give one with --emotion-model"
    ),
    "accent": "no offline accent model ships with the package; give one with --accent-model",
}
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")


def folder_fingerprint(folder: Path) -> str:
    """SHA-256 over ``config.json`` and the names, sizes and modification times of the weight
    files (cache key; weights replaced in place get a new key without hashing gigabytes)."""
    h = hashlib.sha256((folder / "config.json").read_bytes())
    for path in sorted(folder.iterdir()):
        if path.suffix in _WEIGHTS:
            stat = path.stat()
            h.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


class AudioClassifier:
    """A transformers audio-classification model whose classes are emotions (or accents).

    Args:
        model: a loaded ``AutoModelForAudioClassification`` model.
        extractor: its feature extractor (gives the sampling rate and the input features).
        name: where it came from (reports and the cache identity).
        kind: the cue it supplies, ``"emotion"`` or ``"accent"``.
        fingerprint: identity of the weights for the cache.
    """

    def __init__(self, model: Any, extractor: Any, name: str, kind: str, fingerprint: str):
        if kind not in KINDS:
            raise ValueError(f"unknown cue kind {kind!r}; use one of {', '.join(KINDS)}")
        labels = model.config.id2label
        names = [str(labels.get(i, labels.get(str(i), ""))) for i in range(model.config.num_labels)]
        if any(not n or n.startswith("LABEL_") for n in names) or len(set(names)) != len(names):
            raise ValueError(
                f"{name}: the model's id2label must name each of its {len(names)} classes "
                f"uniquely (got {names})"
            )
        self.model = model.eval().requires_grad_(False)
        self.extractor, self.name, self.kind = extractor, name, kind
        self.labels = names
        self.multi_label = model.config.problem_type == "multi_label_classification"
        self.sample_rate = int(extractor.sampling_rate)
        self.cache_name = f"trace-{kind}-{fingerprint}"

    @classmethod
    def from_folder(cls, folder: str | os.PathLike, kind: str) -> AudioClassifier:
        """Load the model and feature extractor from a local folder (never from the Hub).

        Raises:
            FileNotFoundError: no folder, or no ``config.json`` in it.
            ValueError: classes without names in ``id2label``.
        """
        path = Path(folder)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path}: no config.json (need a transformers model folder)")
        transformers = require("transformers", f"the {kind} model")
        model = transformers.AutoModelForAudioClassification.from_pretrained(
            path, local_files_only=True
        )
        extractor = transformers.AutoFeatureExtractor.from_pretrained(path, local_files_only=True)
        return cls(model, extractor, str(path), kind, folder_fingerprint(path))

    def scores(self, audio: Audio) -> dict[str, float]:
        """Class probabilities of ``audio``, by class name."""
        import torch

        x = resample(audio.samples, audio.sample_rate, self.sample_rate)
        inputs = self.extractor(x, sampling_rate=self.sample_rate, return_tensors="pt")
        with torch.no_grad():
            logits = self.model(**inputs).logits[0].double()
        p = torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=-1)
        return dict(zip(self.labels, p.numpy().astype(float).tolist(), strict=True))

    def cached_scores(self, path: str, key: str, cache: FeatureCache | None) -> dict[str, float]:
        """:meth:`scores` of the clip at ``path`` (its first 30 s), read from ``cache`` by ``key``
        (the blueprint's sample hash) when there."""
        return cached_clip_scores(
            cache, self.cache_name, "1", key, path, self.scores, f"the {self.kind} model"
        )


def cached_clip_scores(
    cache: FeatureCache | None,
    name: str,
    version: str,
    key: str,
    path: str,
    score: Callable[[Audio], dict[str, float]],
    what: str,
) -> dict[str, float]:
    """``score`` of the clip at ``path`` (its first 30 s, as the blueprint reads it), stored in
    ``cache`` under ``name``/``version`` and ``key`` (the blueprint's sample hash) and read back
    from there on later runs.

    Raises:
        ValueError: a non-finite score (``what`` names the scorer).
    """
    stored = cache.get(name, version, key) if cache is not None else None
    if stored is not None:
        return stored
    out = score(load_audio(path, max_seconds=SCORED_SECONDS))
    if not all(np.isfinite(list(out.values()))):
        raise ValueError(f"{path}: {what} returned non-finite scores")
    if cache is not None:
        cache.put(name, version, key, out)
    return out
