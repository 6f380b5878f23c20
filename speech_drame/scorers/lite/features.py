"""The LiteScorer's input: a clip's blueprint as one fixed-length vector.

The vector holds the clip's offline features (DNSMOS, ASR confidence and rate, the language the
ASR identified, voice activity, prosody, transcript-context similarities; archetype also the
transcript and speaker embeddings). Realism adds what its labels hinge on beyond the audio: the
multilingual sentence embeddings of the shown scene and profile (projected onto their main
training components by the network), their similarity to fixed anchor sentences (the arousal a
scene calls for, the gender and age a profile presents) and products of those cues with the
acoustic arousal and pitch cues.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from speech_drame.features import asr, prosody, text
from speech_drame.features.blueprint import Blueprint
from speech_drame.languages import LANGUAGES
from speech_drame.schema import CONTEXTS, Config, check_config

# clip embeddings that enter the vector as they are (realism overfits on them: 256 clips)
CLIP_EMBEDDINGS: dict[str, tuple[str, ...]] = {
    "archetype": ("transcript", "speaker"),
    "realism": (),
}
# contexts whose sentence embeddings enter the vector, projected onto training components
EMBEDDED_CONTEXTS: dict[str, tuple[str, ...]] = {"archetype": (), "realism": ("scene", "profile")}
# fixed anchor sentences; a context's similarity to each is a text cue
ANCHORS: dict[str, str] = {
    "calm": "A calm, quiet, peaceful and relaxed moment.",
    "excited": "A loud, urgent, frantic and emotional moment with shouting.",
    "child": "A young child.",
    "teen": "A teenager.",
    "old": "An elderly old person.",
    "man": "He is a man.",
    "woman": "She is a woman.",
}
# (context, anchor, acoustic feature): products of a text cue with the delivery's cue
CUE_PRODUCTS: tuple[tuple[str, str, str], ...] = (
    ("scene", "calm", "prosody.energy_mean_db"),
    ("scene", "excited", "prosody.energy_mean_db"),
    ("scene", "calm", "prosody.f0_std_st"),
    ("scene", "excited", "prosody.f0_std_st"),
    ("profile", "man", "prosody.f0_median_hz"),
    ("profile", "woman", "prosody.f0_median_hz"),
)
_SCALARS: tuple[tuple[str, str], ...] = (
    ("seconds", ""),
    ("quality", "sig"),
    ("quality", "bak"),
    ("quality", "ovrl"),
    ("quality", "p808"),
    ("transcript", "avg_logprob"),
    ("transcript", "no_speech_prob"),
    ("transcript", "n_words"),
    ("words_per_second", ""),
    *(
        ("voice_activity", k)
        for k in (
            "speech_ratio",
            "pause_ratio",
            "pauses_per_minute",
            "mean_pause_s",
            "leading_silence_s",
            "trailing_silence_s",
        )
    ),
    *(
        ("prosody", k)
        for k in (
            "f0_median_hz",
            "f0_mean_hz",
            "f0_std_st",
            "f0_range_st",
            "f0_slope_st",
            "voiced_ratio",
            "energy_mean_db",
            "energy_std_db",
            "energy_range_db",
            "energy_slope_db",
            "syllable_rate",
        )
    ),
)


def _scalar_names() -> list[str]:
    return [f"{a}.{b}" if b else a for a, b in _SCALARS] + [f"language.{x}" for x in LANGUAGES]


def _scalar_values(bp: Blueprint) -> list[float]:
    """The blueprint's values at :data:`_SCALARS`, in order, then one indicator per language of
    :data:`~speech_drame.languages.LANGUAGES` (all 0 for a clip identified as neither)."""
    values = [float(getattr(getattr(bp, a), b) if b else getattr(bp, a)) for a, b in _SCALARS]
    return values + [float(bp.transcript.language == x) for x in LANGUAGES]


def feature_names(mode: Config) -> list[str]:
    """Names of the positions of :func:`feature_matrix` for ``mode``; the embedded contexts
    come last."""
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    names = _scalar_names()
    names += [f"context.{c}" for c in CONTEXTS[mode]]
    names += [f"{c}.anchor.{a}" for c in embedded for a in ANCHORS]
    names += [f"{c}.anchor.{a}*{f}" for c, a, f in CUE_PRODUCTS if c in embedded]
    if "transcript" in CLIP_EMBEDDINGS[mode]:
        names += [f"transcript.embedding.{i}" for i in range(asr.EMBEDDING_DIM)]
    if "speaker" in CLIP_EMBEDDINGS[mode]:
        names += [f"speaker.embedding.{i}" for i in range(256)]
    names += [f"{c}.embedding.{i}" for c in embedded for i in range(text.EMBEDDING_DIM)]
    return names


def check_blueprint(bp: Blueprint, mode: Config) -> None:
    """Refuse a blueprint the scorer cannot read: a context similarity or text the mode needs
    is missing, or a feature is undefined (e.g. the F0 slope of a clip without two consecutive
    voiced frames). Nothing is imputed: such a clip is not scored, and the error says why.

    Raises:
        ValueError: naming the clip, the field and the reason.
    """
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    for what, have, need in (
        ("similarity", bp.context, CONTEXTS[mode]),
        ("text", bp.context_texts, embedded),
    ):
        missing = [c for c in need if c not in have]
        if missing:
            raise ValueError(
                f"{bp.source}: blueprint lacks the {mode} context {what} for {', '.join(missing)}"
            )
    for name, value in zip(_scalar_names(), _scalar_values(bp), strict=True):
        if not np.isfinite(value):
            a, _, b = name.partition(".")
            why = prosody.UNDEFINED.get(b, "not finite") if a == prosody.NAME else "not finite"
            raise ValueError(
                f"{bp.source}: feature {name} is undefined ({why}); the LiteScorer does not "
                "score this clip"
            )


def feature_matrix(blueprints: Sequence[Blueprint], mode: Config) -> np.ndarray:
    """The blueprints as the scorer's fixed-length float vectors, ``(n, len(feature_names))``.

    Raises:
        ValueError: a blueprint fails :func:`check_blueprint`.
    """
    from speech_drame.features.text import embed_texts

    for bp in blueprints:
        check_blueprint(bp, mode)
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    scalars = _scalar_names()
    rows = [_scalar_values(bp) + [bp.context[c] for c in CONTEXTS[mode]] for bp in blueprints]
    base = np.asarray(rows, dtype=np.float64).reshape(len(blueprints), -1)
    parts = [base]
    if embedded:
        emb = {
            c: embed_texts([bp.context_texts[c] for bp in blueprints]).astype(np.float64)
            for c in embedded
        }
        anchors = embed_texts(list(ANCHORS.values())).astype(np.float64)
        cues = {c: emb[c] @ anchors.T for c in embedded}
        names = list(ANCHORS)
        parts += [cues[c] for c in embedded]
        parts += [
            cues[c][:, names.index(a), None] * base[:, scalars.index(f), None]
            for c, a, f in CUE_PRODUCTS
            if c in embedded
        ]
    for name in CLIP_EMBEDDINGS[mode]:
        rows = [getattr(bp, name).embedding for bp in blueprints]
        parts.append(np.asarray(rows, dtype=np.float64).reshape(len(blueprints), -1))
    if embedded:
        parts += [emb[c] for c in embedded]
    return np.hstack(parts).astype(np.float32)


def feature_vector(bp: Blueprint, mode: Config) -> np.ndarray:
    """One blueprint's row of :func:`feature_matrix`."""
    return feature_matrix([bp], mode)[0]


def n_embedded(mode: Config) -> int:
    """How many trailing positions of ``mode``'s vector are context embeddings."""
    return text.EMBEDDING_DIM * len(EMBEDDED_CONTEXTS[mode])
