"""Pairwise preference: a score-difference model on A/B outcomes (AnimeScore)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from speech_drame.stats.correlation import _roc_auc
from speech_drame.stats.inputs import _pair


def pairwise_preference(score_diff: Any, a_preferred: Any) -> dict[str, Any]:
    """Accuracy, NLL and ROC-AUC of a score-difference model on A/B preferences (AnimeScore).

    ``score_diff`` is ``s(a) - s(b)``, read as ``P(a preferred) = sigmoid(score_diff)``;
    ``a_preferred`` the human outcome (1 = a). A difference of exactly 0 counts half right.

    >>> r = pairwise_preference([2.0, -1.0, 0.5, -0.2], [1, 0, 0, 0])
    >>> r["accuracy"], round(r["nll"], 4), r["roc_auc"]
    (0.75, 0.5031, 1.0)
    """
    d, y = _pair(score_diff, a_preferred, ("score_diff", "a_preferred"))
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("a_preferred: expected 0/1 (or booleans) per pair")
    sign = np.where(y == 1, 1.0, -1.0)
    correct = np.where(d == 0, 0.5, (np.sign(d) == sign).astype(float))
    out: dict[str, Any] = {
        "accuracy": float(correct.mean()),
        "nll": float(np.logaddexp(0.0, -sign * d).mean()),
        "roc_auc": _roc_auc(y == 1, d),
        "count": int(d.size),
    }
    if math.isnan(out["roc_auc"]):
        out["note"] = "roc_auc undefined: every pair has the same outcome"
    return out
