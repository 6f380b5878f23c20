import pytest

from speech_drame.languages import (
    OTHER,
    UNKNOWN,
    check_language,
    describe_language,
    is_cjk,
    language_from_id,
    language_from_script,
    language_hint,
)


@pytest.mark.parametrize(
    ("clip_id", "expected"),
    [
        ("250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav", "zh"),
        ("250814_en_Occupation_0003_GPT-4o.wav", "en"),
        ("demo_ZH_archetype_0001", "zh"),
        ("role-eval_v1_0001", None),
        ("zhen_0001", None),  # a tag is a whole underscore-separated part
        ("kitchen_0001", None),
    ],
)
def test_language_from_id_reads_the_official_tag(clip_id, expected):
    assert language_from_id(clip_id) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你是拖延症患者。朋友询问你之前答应帮忙做的一件事进展如何。你说：", "zh"),
        ("Where did you learn to do that, anyway?", "en"),
        ("我刚看完 Star Wars 第一部", "zh"),  # 7 of 15 letters are ideographs
        ("Привет, как дела?", None),  # Cyrillic: neither
        ("123 ... !!", None),
        ("", None),
    ],
)
def test_language_from_script_counts_ideographs_among_letters(text, expected):
    assert language_from_script(text) == expected


def test_the_id_tag_wins_over_the_script():
    assert language_hint("250814_en_x", "你说：") == "en"
    assert language_hint("role-eval_v1_0001", "你说：") == "zh"


def test_is_cjk_covers_ideographs_not_kana_or_fullwidth_punctuation():
    assert all(is_cjk(c) for c in "中文漢字𠀀")
    assert not any(is_cjk(c) for c in "かなカナ，。！A1")


def test_describe_and_check_language():
    assert describe_language("zh", 0.931) == "Mandarin (zh, p=0.93)"
    assert describe_language("en") == "English (en)"
    assert "another language" in describe_language(OTHER, 0.5)
    assert "not identified" in describe_language(UNKNOWN)
    assert check_language("en") == "en"
    with pytest.raises(ValueError, match="'de'"):
        check_language("de")
