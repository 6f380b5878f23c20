"""The handcrafted-feature baseline: logistic regression on per-pair feature differences.

Each clip is described by pause ratio (silero VAD), syllable rate, F0 level and range
(pyworld), F1-F3 (LPC) and energy level and spread; a pair is the difference of its two clips'
vectors. The model is scaled logistic regression without intercept, so swapping A and B flips
the predicted probability. It is evaluated by 5-fold cross-validation over pairs, with the
out-of-fold score differences pooled into :func:`.pairs.pair_metrics` under the pair set's
convention (:data:`.config.PAIR_CONVENTIONS`).
Pairs with an unreadable clip are left out and reported (``unreadable``, ``pairs_left_out``).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

import numpy as np

from speech_drame.audio import SCORED_SECONDS, load_audio
from speech_drame.features import formants, prosody, vad
from speech_drame.features.blueprint import CacheArg, resolve_cache
from speech_drame.features.cache import FeatureCache, audio_key
from speech_drame.protocols.animescore.pairs import (
    DEFAULT_PAIR_CONVENTION,
    PairSet,
    pair_metrics,
    per_clip,
)

FEATURES = (
    "pause_ratio",
    "syllable_rate",
    "f0_median_hz",
    "f0_range_st",
    "f1_hz",
    "f2_hz",
    "f3_hz",
    "energy_mean_db",
    "energy_std_db",
)
_EXTRACTORS = (
    (vad.NAME, vad.VERSION, vad.voice_activity),
    (prosody.NAME, prosody.VERSION, prosody.prosody),
    (formants.NAME, formants.VERSION, formants.formants),
)


def clip_features(path: str | os.PathLike, cache: FeatureCache | None = None) -> np.ndarray:
    """The :data:`FEATURES` of one clip (its first 30 s); extractor records go through ``cache``."""
    audio = load_audio(path, max_seconds=SCORED_SECONDS)
    key = audio_key(audio.samples, audio.sample_rate)
    record: dict[str, Any] = {}
    for name, version, fn in _EXTRACTORS:
        stored = cache.get(name, version, key) if cache is not None else None
        if stored is None:
            stored = asdict(fn(audio))
            if cache is not None:
                cache.put(name, version, key, stored)
        record.update(stored)
    return np.array([record[f] for f in FEATURES], dtype=np.float64)


def pair_differences(pairs: PairSet, cache: CacheArg = "default") -> tuple[np.ndarray, np.ndarray]:
    """``X[i] = features(a_i) - features(b_i)`` and ``y[i] = 1`` where A was preferred.

    Raises:
        AudioError: a clip cannot be read.
    """
    store = resolve_cache(cache)
    return _differences(pairs, {f: clip_features(f, store) for f in pairs.files})


def _differences(pairs: PairSet, feats: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([feats[p.file_a] - feats[p.file_b] for p in pairs.pairs])
    return x, np.array([int(p.a_preferred) for p in pairs.pairs])


def baseline_model(c: float = 1.0) -> Any:
    """Scaled (not centred) logistic regression without intercept: antisymmetric in A/B."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(
        StandardScaler(with_mean=False), LogisticRegression(C=c, fit_intercept=False)
    )


def cross_validate(
    x: np.ndarray,
    y: np.ndarray,
    folds: int = 5,
    seed: int = 0,
    c: float = 1.0,
    convention: str = DEFAULT_PAIR_CONVENTION,
) -> dict[str, Any]:
    """Out-of-fold score differences and their pooled and per-fold pairwise metrics
    (accuracy as ``convention`` reads a score difference).

    Also fits on every pair to report the standardised coefficients (largest first).
    """
    from sklearn.model_selection import KFold

    if len(y) < folds:
        raise ValueError(f"{folds}-fold cross-validation needs >= {folds} pairs, got {len(y)}")
    if len(np.unique(y)) < 2:
        raise ValueError("every pair has the same outcome: swap A/B in some pairs first")
    diff = np.zeros(len(y))
    per_fold = []
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(x):
        model = baseline_model(c).fit(x[train], y[train])
        diff[test] = model.decision_function(x[test])
        per_fold.append(pair_metrics(diff[test], y[test], convention))
    coef = baseline_model(c).fit(x, y)[-1].coef_[0]
    order = np.argsort(-np.abs(coef))
    return {
        **pair_metrics(diff, y, convention),
        "folds": folds,
        "per_fold": per_fold,
        "score_diff": diff.tolist(),
        "coefficients": {FEATURES[i]: float(coef[i]) for i in order},
    }


def run_baseline(
    pairs: PairSet, cache: CacheArg = "default", folds: int = 5, seed: int = 0
) -> dict[str, Any]:
    """Extract features for every clip in ``pairs`` and cross-validate the baseline.

    Pairs with an unreadable clip are left out; the result lists the clips (``unreadable``)
    and counts the pairs (``pairs_left_out``).
    """
    store = resolve_cache(cache)
    feats, errors = per_clip(lambda f: clip_features(f, store), pairs.files)
    pairs = pairs.without(errors)
    result = cross_validate(*_differences(pairs, feats), folds, seed, convention=pairs.convention)
    return {**result, "unreadable": pairs.unreadable, "pairs_left_out": pairs.left_out}
