"""Error rates and word counts: against a textbook Levenshtein, Mandarin and mixed text."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import speech_drame.text_metrics as text_metrics
from speech_drame.text_metrics import (
    character_error_rate,
    count_words,
    edit_distance,
    normalize_characters,
    tokens,
    word_error_rate,
)


def _levenshtein(a, b) -> int:
    """Textbook dynamic programme, the reference for the vectorised version."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[:], i
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
    return row[-1]


def test_edit_distance_matches_textbook_on_strings_and_token_lists():
    rng = np.random.default_rng(2)
    for _ in range(200):
        a = "".join(rng.choice(list("ab你好"), rng.integers(0, 15)))
        b = "".join(rng.choice(list("ab你好"), rng.integers(0, 15)))
        assert edit_distance(a, b) == _levenshtein(a, b)
        words_a = list(rng.choice(["the", "cat", "猫", "sat"], rng.integers(0, 8)))
        words_b = list(rng.choice(["the", "cat", "猫", "mat"], rng.integers(0, 8)))
        assert edit_distance(words_a, words_b) == _levenshtein(words_a, words_b)


def test_normalisation_removes_full_width_and_chinese_punctuation():
    assert normalize_characters("你好，世界！") == "你好世界"
    assert normalize_characters("「ＡＢＣ」　１２３。") == "abc123"
    assert character_error_rate("你好，世界！", "你好世界") == 0.0
    assert word_error_rate("你好，世界！", "你好世界") == 0.0
    assert character_error_rate("Hello, World!", "hello world") == 0.0
    assert character_error_rate("你好，世界。", "你好世") == pytest.approx(1 / 4)


def test_tokens_split_ideographs_and_keep_latin_words():
    assert tokens("今天我们用Zoom开会，OK？") == [
        "今",
        "天",
        "我",
        "们",
        "用",
        "zoom",
        "开",
        "会",
        "ok",
    ]
    assert tokens("Ｈｅｌｌｏ,  ｗｏｒｌｄ！") == ["hello", "world"]
    assert count_words("我爱 New York") == 4
    assert count_words("…！？") == 0


def test_word_error_rate_counts_words_in_english_and_characters_in_mandarin():
    ref, hyp = "The quick brown fox.", "the quick brawn fox jumps"
    assert word_error_rate(ref, hyp) == pytest.approx(2 / 4)
    mandarin_ref, mandarin_hyp = "我们明天去北京。", "我们今天去北京"
    assert word_error_rate(mandarin_ref, mandarin_hyp) == pytest.approx(
        character_error_rate(mandarin_ref, mandarin_hyp)
    )
    mixed_ref, mixed_hyp = "我用Python写代码", "我用 python 写带码"
    expected = _levenshtein(tokens(mixed_ref), tokens(mixed_hyp)) / len(tokens(mixed_ref))
    assert word_error_rate(mixed_ref, mixed_hyp) == pytest.approx(expected) == pytest.approx(1 / 6)


@pytest.mark.parametrize("rate", [character_error_rate, word_error_rate])
def test_empty_reference_is_refused_with_the_text(rate):
    with pytest.raises(ValueError, match=r"'\?！' has no .* after normalisation"):
        rate("?！", "x")


def test_docstring_examples_hold():
    result = doctest.testmod(text_metrics)
    assert result.attempted >= 5 and result.failed == 0
