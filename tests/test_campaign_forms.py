"""The rating page's rubric and answer validation (speech_drame.campaign.forms)."""

from __future__ import annotations

import json

import pytest

from speech_drame.campaign.forms import (
    COMMENT_MAX_CHARS,
    FormError,
    page_rubric,
    validate_answers,
)
from speech_drame.prompts import RUBRICS
from speech_drame.schema import EMOTION_GATE_THRESHOLD, EMOTION_GATES, REALISM_DIMENSIONS

ARCH_OK = {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5}
REAL_OK = dict.fromkeys(REALISM_DIMENSIONS, 4)


def refused(config: str, answers, field: str) -> FormError:
    with pytest.raises(FormError) as info:
        validate_answers(config, answers)
    assert info.value.field == field
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)
    return info.value


def test_archetype_rubric_puts_content_pass_first_with_our_wording():
    rubric = page_rubric("archetype")
    json.dumps(rubric)  # JSON-able
    keys = [d["key"] for d in rubric["dimensions"]]
    assert keys == ["content_pass", "audio_quality", "human_likeness", "appropriateness"]
    cp = rubric["dimensions"][0]
    assert cp["kind"] == "pass" and [a["value"] for a in cp["anchors"]] == [False, True]
    quality = rubric["dimensions"][1]
    assert quality["name"] == "Audio Quality"
    assert quality["focus"] == RUBRICS["archetype"]["audio_quality"].focus
    assert [a["value"] for a in quality["anchors"]] == [1, 2, 3, 4, 5]
    assert quality["anchors"][4]["text"] == dict(RUBRICS["archetype"]["audio_quality"].levels)["5"]
    assert [c["key"] for c in rubric["comments"]] == [
        "audio_quality_comment",
        "human_likeness_comment",
        "appropriateness_comment",
    ]
    assert rubric["gates"] == []
    assert rubric["confidence"] == {**rubric["confidence"], "min": 1, "max": 5, "required": False}


def test_realism_rubric_has_the_emotion_gates():
    rubric = page_rubric("realism")
    json.dumps(rubric)
    assert [d["key"] for d in rubric["dimensions"]] == list(REALISM_DIMENSIONS)
    assert rubric["gates"] == [
        {"dimension": gated, "gate": gate, "min": EMOTION_GATE_THRESHOLD}
        for gated, gate in EMOTION_GATES
    ]
    by_key = {d["key"]: d for d in rubric["dimensions"]}
    assert by_key["dynamic_range"]["gate"] == {"dimension": "emotion_intensity_control", "min": 3}
    assert by_key["pitch_variation"]["gate"] is None
    assert [c["key"] for c in rubric["comments"]] == ["comments"]
    assert all(len(d["anchors"]) == 5 for d in rubric["dimensions"])


def test_unknown_config_is_refused():
    with pytest.raises(ValueError, match="unknown config"):
        page_rubric("both")


def test_valid_archetype_answers():
    a = validate_answers("archetype", {**ARCH_OK, "confidence": 2, "human_likeness_comment": "ok"})
    assert a.content_pass is True and a.confidence == 2 and a.gated == frozenset()
    assert a.scores == {"audio_quality": 4, "human_likeness": 3, "appropriateness": 5}
    assert a.comments == {
        "audio_quality_comment": "",
        "human_likeness_comment": "ok",
        "appropriateness_comment": "",
    }


def test_failed_content_pass_leaves_quality_unrated():
    a = validate_answers("archetype", {"content_pass": False, "audio_quality_comment": None})
    assert a.content_pass is False and a.confidence is None
    assert a.scores == dict.fromkeys(["audio_quality", "human_likeness", "appropriateness"])
    assert a.gated == frozenset()


@pytest.mark.parametrize("field", ["audio_quality", "appropriateness", "confidence"])
def test_quality_after_failed_content_pass_is_refused(field):
    refused("archetype", {"content_pass": False, field: 3}, field)


@pytest.mark.parametrize(
    "answers, field",
    [
        ("not an object", "answers"),
        ([], "answers"),
        ({**ARCH_OK, "speed": 3}, "speed"),
        ({**ARCH_OK, "dynamic_range": 3}, "dynamic_range"),  # a realism field
        ({k: v for k, v in ARCH_OK.items() if k != "content_pass"}, "content_pass"),
        ({**ARCH_OK, "content_pass": "yes"}, "content_pass"),
        ({**ARCH_OK, "content_pass": 1}, "content_pass"),
        ({**ARCH_OK, "audio_quality": None}, "audio_quality"),
        ({k: v for k, v in ARCH_OK.items() if k != "human_likeness"}, "human_likeness"),
        ({**ARCH_OK, "audio_quality": 4.0}, "audio_quality"),
        ({**ARCH_OK, "audio_quality": "4"}, "audio_quality"),
        ({**ARCH_OK, "audio_quality": True}, "audio_quality"),
        ({**ARCH_OK, "audio_quality": 0}, "audio_quality"),
        ({**ARCH_OK, "appropriateness": 6}, "appropriateness"),
        ({**ARCH_OK, "confidence": 0}, "confidence"),
        ({**ARCH_OK, "confidence": 6}, "confidence"),
        ({**ARCH_OK, "confidence": 2.5}, "confidence"),
        ({**ARCH_OK, "audio_quality_comment": 5}, "audio_quality_comment"),
        (
            {**ARCH_OK, "audio_quality_comment": "x" * (COMMENT_MAX_CHARS + 1)},
            "audio_quality_comment",
        ),
        ({**ARCH_OK, "comments": "realism only"}, "comments"),
    ],
)
def test_archetype_refusals(answers, field):
    refused("archetype", answers, field)


def test_comment_of_the_maximum_length_is_accepted():
    text = "字" * COMMENT_MAX_CHARS
    a = validate_answers("archetype", {**ARCH_OK, "appropriateness_comment": text})
    assert a.comments["appropriateness_comment"] == text


def test_valid_realism_answers():
    a = validate_answers("realism", {**REAL_OK, "confidence": 5, "comments": "fine"})
    assert a.content_pass is None and a.gated == frozenset() and a.confidence == 5
    assert a.scores == REAL_OK and a.comments == {"comments": "fine"}


def test_accuracy_2_gates_intensity_and_transition():
    obj = {
        k: v for k, v in REAL_OK.items() if k not in ("emotion_intensity_control", "dynamic_range")
    }
    a = validate_answers("realism", {**obj, "emotion_accuracy": 2})
    assert a.gated == {"emotion_intensity_control", "dynamic_range"}
    assert a.scores["emotion_intensity_control"] is None and a.scores["dynamic_range"] is None
    # gated and sent as null is the same as absent
    b = validate_answers("realism", {**obj, "emotion_accuracy": 2, "dynamic_range": None})
    assert b == a
    refused("realism", {**obj, "emotion_accuracy": 2, "emotion_intensity_control": 4},
            "emotion_intensity_control")  # fmt: skip
    error = refused("realism", {**obj, "emotion_accuracy": 1, "dynamic_range": 4}, "dynamic_range")
    assert "not rated" in str(error)


def test_accuracy_3_intensity_2_gates_transition():
    obj = {k: v for k, v in REAL_OK.items() if k != "dynamic_range"}
    a = validate_answers("realism", {**obj, "emotion_accuracy": 3, "emotion_intensity_control": 2})
    assert a.gated == {"dynamic_range"} and a.scores["emotion_intensity_control"] == 2
    refused("realism", {**obj, "emotion_accuracy": 3, "emotion_intensity_control": 2,
                        "dynamic_range": 3}, "dynamic_range")  # fmt: skip


def test_accuracy_3_intensity_3_requires_transition():
    obj = {k: v for k, v in REAL_OK.items() if k != "dynamic_range"}
    obj.update(emotion_accuracy=3, emotion_intensity_control=3)
    refused("realism", obj, "dynamic_range")
    a = validate_answers("realism", {**obj, "dynamic_range": 1})
    assert a.gated == frozenset() and a.scores["dynamic_range"] == 1


def test_accuracy_3_requires_intensity():
    obj = {k: v for k, v in REAL_OK.items() if k != "emotion_intensity_control"}
    refused("realism", {**obj, "emotion_accuracy": 3}, "emotion_intensity_control")


@pytest.mark.parametrize(
    "answers, field",
    [
        ({**REAL_OK, "content_pass": True}, "content_pass"),
        ({**REAL_OK, "audio_quality": 3}, "audio_quality"),
        ({**REAL_OK, "pitch_variation": 7}, "pitch_variation"),
        ({k: v for k, v in REAL_OK.items() if k != "trait_embodiment"}, "trait_embodiment"),
        ({**REAL_OK, "comments": ["a"]}, "comments"),
        ({**REAL_OK, "comments": "x" * (COMMENT_MAX_CHARS + 1)}, "comments"),
        ({**REAL_OK, "confidence": -1}, "confidence"),
        ({**REAL_OK, "annotator_confidence_rating": 3}, "annotator_confidence_rating"),
    ],
)
def test_realism_refusals(answers, field):
    refused("realism", answers, field)


def test_answers_survive_their_json_form():
    from speech_drame.campaign.records import Answers

    a = validate_answers("realism", {**REAL_OK, "emotion_accuracy": 2, "emotion_intensity_control": None,
                                     "dynamic_range": None})  # fmt: skip
    assert Answers.from_json(json.loads(json.dumps(a.to_json()))) == a
