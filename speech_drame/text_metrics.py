"""Error rates and word counts for Mandarin, English and text mixing the two.

Both sides are normalised the same way: Unicode NFKC (full-width forms become half-width),
lower case, punctuation (Unicode P*) and symbols (S*) removed. Characters are then counted
without whitespace; words are :func:`tokens`, where each CJK ideograph is one word (Mandarin
has no spaces) and other runs of letters and digits split on whitespace. Mandarin WER is
therefore a character-level rate, and mixed text counts each part in its own units.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

from speech_drame.languages import is_cjk


def _strip(text: str) -> str:
    """NFKC, lower case, without punctuation or symbols (whitespace kept)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] not in ("P", "S"))


def normalize_characters(text: str) -> str:
    """NFKC, lower case, without punctuation (Unicode P*), symbols (S*) or whitespace.

    Example:
        >>> normalize_characters("你好，世界！ Ｏｋ")
        '你好世界ok'
    """
    return "".join(c for c in _strip(text) if not c.isspace())


def tokens(text: str) -> list[str]:
    """Words of ``text`` after normalisation: each CJK ideograph alone, other runs split on
    whitespace.

    Example:
        >>> tokens("我喜欢 Python 3，真的！")
        ['我', '喜', '欢', 'python', '3', '真', '的']
    """
    spaced = "".join(f" {c} " if is_cjk(c) else c for c in _strip(text))
    return spaced.split()


def count_words(text: str) -> int:
    """Number of :func:`tokens` (a Mandarin character counts as one word)."""
    return len(tokens(text))


def edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Levenshtein distance (substitutions, insertions, deletions all cost 1) between two
    strings or two token lists."""
    if not reference or not hypothesis:
        return max(len(reference), len(hypothesis))
    ids: dict[str, int] = {}
    ref = [ids.setdefault(item, len(ids)) for item in reference]
    hyp = np.array([ids.setdefault(item, len(ids)) for item in hypothesis])
    offsets = np.arange(len(hyp) + 1)
    row = offsets.copy()
    for i, item in enumerate(ref, start=1):
        # substitution/deletion in one vectorised step, insertions by a running minimum
        new = np.empty_like(row)
        new[0] = i
        new[1:] = np.minimum(row[:-1] + (hyp != item), row[1:] + 1)
        # insertion chain: new[j] = min(new[j], new[j-1] + 1) == min_k(new[k] + j - k)
        row = np.minimum.accumulate(new - offsets) + offsets
    return int(row[-1])


def _rate(
    reference: str, hypothesis: str, split: Callable[[str], Sequence[str]], unit: str
) -> float:
    ref, hyp = split(reference), split(hypothesis)
    if not ref:
        raise ValueError(f"reference text {reference!r} has no {unit} after normalisation")
    return edit_distance(ref, hyp) / len(ref)


def character_error_rate(reference: str, hypothesis: str) -> float:
    """Edit distance of the normalised texts divided by the normalised reference length.

    Example:
        >>> character_error_rate("Hello, world!", "hello word")
        0.1
    """
    return _rate(reference, hypothesis, normalize_characters, "characters")


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Edit distance over :func:`tokens` divided by the number of reference tokens.

    Example:
        >>> word_error_rate("Hello, big world!", "hello world")
        0.3333333333333333
        >>> word_error_rate("你好，世界！", "你好世")
        0.25
    """
    return _rate(reference, hypothesis, tokens, "words")
