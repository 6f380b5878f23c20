import pytest

from speech_drame.prompts import (
    ANSWER_CLOSE,
    ANSWER_OPEN,
    PASS_LABELS,
    RUBRICS,
    SCORE_LABELS,
    format_answer,
    instruction,
    rubric,
    scored_dimensions,
    task_preamble,
)
from speech_drame.schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    REALISM_DIMENSIONS,
    RUBRIC_NAMES,
    SEMANTIC_MATCH,
)


def test_every_dimension_has_one_rubric_with_paper_name():
    assert set(RUBRICS["archetype"]) == {CONTENT_PASS, *ARCHETYPE_DIMENSIONS}
    assert set(RUBRICS["realism"]) == {*REALISM_DIMENSIONS, SEMANTIC_MATCH}
    for config, rubrics in RUBRICS.items():
        for key, r in rubrics.items():
            assert r.key == key and r.name == RUBRIC_NAMES[key]
            expected = PASS_LABELS if key == CONTENT_PASS else SCORE_LABELS
            assert r.labels == expected, (config, key)
            assert [label for label, _ in r.levels] == sorted(r.labels, reverse=True)
            assert all(meaning.strip() for _, meaning in r.levels)
    # No two dimensions share a description: each rubric is its own text.
    texts = [instruction(r) for rs in RUBRICS.values() for r in rs.values()]
    assert len(set(texts)) == len(texts)


def test_scored_dimensions_order_and_extras():
    assert scored_dimensions("archetype") == (CONTENT_PASS, *ARCHETYPE_DIMENSIONS)
    assert scored_dimensions("realism") == REALISM_DIMENSIONS
    assert scored_dimensions("realism", (SEMANTIC_MATCH,))[-1] == SEMANTIC_MATCH
    with pytest.raises(ValueError, match="no archetype rubric for 'semantic_match'"):
        scored_dimensions("archetype", (SEMANTIC_MATCH,))


def test_instruction_lists_every_level_and_the_answer_format():
    r = rubric("realism", "emotion_intensity_control")
    text = instruction(r)
    assert text.startswith("Dimension: Emotion Intensity Control")
    for label, meaning in r.levels:
        assert f"\n{label}: {meaning}" in text
    assert text.endswith(f"Reply {ANSWER_OPEN}k{ANSWER_CLOSE} with k in 1/2/3/4/5.")
    cp = instruction(rubric("archetype", CONTENT_PASS))
    assert cp.endswith("with k in 0/1.")
    assert "consult nothing but the audio" in instruction(rubric("archetype", "audio_quality"))
    assert format_answer(4) == "<answer>4</answer>"


def test_context_per_config():
    from speech_drame.prompt_profile import default_profile

    format_context = default_profile().context_text
    assert format_context("archetype", {"question": " You are a nurse. "}) == (
        "Role and scene prompt: You are a nurse."
    )
    fields = {
        "char_profile": "A calm sister.",
        "local_scene": "After a storm.",
        "char_style": "Warm",
    }
    assert format_context("realism", fields) == (
        "Character profile: A calm sister.\nLocal scene: After a storm.\nCharacter traits: Warm"
    )
    with pytest.raises(ValueError, match="'local_scene'"):
        format_context("realism", {**fields, "local_scene": ""})
    with pytest.raises(ValueError, match="unknown config"):
        task_preamble("drama")
