"""Character error rate: Levenshtein distance between normalised texts over the reference length.

Normalisation (both sides): Unicode NFKC, lower case, punctuation and symbols removed, all
whitespace removed, so the rate counts characters the same way for Mandarin (no spaces) and
English.
"""

from __future__ import annotations

import unicodedata

import numpy as np


def normalize_characters(text: str) -> str:
    """NFKC, lower case, without punctuation (Unicode P*), symbols (S*) or whitespace."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(
        c for c in text if not c.isspace() and unicodedata.category(c)[0] not in ("P", "S")
    )


def edit_distance(reference: str, hypothesis: str) -> int:
    """Levenshtein distance (substitutions, insertions, deletions all cost 1)."""
    if not reference or not hypothesis:
        return max(len(reference), len(hypothesis))
    hyp = np.array([ord(c) for c in hypothesis])
    row = np.arange(len(hyp) + 1)
    for i, ch in enumerate(reference, start=1):
        # substitution/deletion in one vectorised step, insertions by a running minimum
        diag = row[:-1] + (hyp != ord(ch))
        new = np.empty_like(row)
        new[0] = i
        new[1:] = np.minimum(diag, row[1:] + 1)
        # insertion chain: new[j] = min(new[j], new[j-1] + 1) == min_k(new[k] + j - k)
        offsets = np.arange(len(new))
        new = np.minimum.accumulate(new - offsets) + offsets
        row = new
    return int(row[-1])


def character_error_rate(reference: str, hypothesis: str) -> float:
    """Edit distance of the normalised texts divided by the normalised reference length.

    Example:
        >>> character_error_rate("Hello, world!", "hello word")
        0.1
    """
    ref, hyp = normalize_characters(reference), normalize_characters(hypothesis)
    if not ref:
        raise ValueError(f"reference text {reference!r} has no characters after normalisation")
    return edit_distance(ref, hyp) / len(ref)
