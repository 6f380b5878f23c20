"""Prompt profiles: the default reproduces this package's query text byte for byte; a profile
file is checked field by field."""

import copy
import dataclasses
import json

import pytest

from speech_drame.audio_llm.qwen2_audio import AUDIO_PLACEHOLDER, prefix_text, suffix_text
from speech_drame.prompt_profile import (
    ProfileError,
    default_profile,
    load_profile,
    profile_from_dict,
)
from speech_drame.prompts import (
    ANSWER_OPEN,
    instruction,
    instruction_pool,
    question,
    rubric,
    scored_dimensions,
    task_preamble,
)

FIELDS = {
    "question": "You are a firefighter. Smoke fills the hall and you find a trapped child. You say:",
    "char_profile": "Ann is a patient older sister who speaks softly and never rushes.",
    "local_scene": "Ann calms her brother after a storm knocked the power out.",
    "char_style": "Calm, Warm",
}


def format_context(config, fields):
    """The context lines as the code wrote them before prompts were data."""
    if config == "archetype":
        return f"Role and scene prompt: {fields['question'].strip()}"
    return (
        f"Character profile: {fields['char_profile'].strip()}\n"
        f"Local scene: {fields['local_scene'].strip()}\n"
        f"Character traits: {fields['char_style'].strip()}"
    )


def old_instruction(config, dimension, paraphrase=None):
    """A dimension's instruction, its question replaced by ``paraphrase`` (as the code did)."""
    r = rubric(config, dimension)
    if paraphrase is None:
        return instruction(r)
    focus = paraphrase + r.focus.removeprefix(question(r))
    return instruction(dataclasses.replace(r, focus=focus))


def old_prefix(config, fields, order):
    """The query prefix as the code built it before prompts were data."""
    context = f"{format_context(config, fields)}\n\n" if order == "context_first" else ""
    return (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        f"Audio 1: {AUDIO_PLACEHOLDER}\n{task_preamble(config)}\n{context}"
    )


def old_suffix(config, dimension, fields, order, question=None):
    text = old_instruction(config, dimension, question)
    if order == "instruction_first":
        text = f"{text}\n\n{format_context(config, fields)}"
    return f"{text}<|im_end|>\n<|im_start|>assistant\n{ANSWER_OPEN}"


@pytest.mark.parametrize("order", ["instruction_first", "context_first"])
@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_default_profile_reproduces_the_code_built_query_byte_for_byte(config, order):
    assert prefix_text(config, FIELDS, order) == old_prefix(config, FIELDS, order)
    pool = instruction_pool(config)
    for d in scored_dimensions(config, ("semantic_match",) if config == "realism" else ()):
        assert suffix_text(config, d, FIELDS, order) == old_suffix(config, d, FIELDS, order)
        for q in pool[d][:3]:
            assert suffix_text(config, d, FIELDS, order, q) == old_suffix(
                config, d, FIELDS, order, q
            )
    # the default order is the one the code used by default
    assert prefix_text(config, FIELDS) == old_prefix(config, FIELDS, "instruction_first")


def test_default_profile_paraphrases_are_the_instruction_pool():
    profile = default_profile()
    for config in ("archetype", "realism"):
        assert {d: tuple(t) for d, t in profile.paraphrases[config].items()} == instruction_pool(
            config
        )


def test_a_profile_round_trips_through_its_dict_with_the_same_digest(tmp_path):
    profile = default_profile()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile.to_dict()))
    again = load_profile(path)
    assert again.to_dict() == profile.to_dict() and again.digest == profile.digest
    assert again.label == f"speech-drame@{profile.digest}"


def test_a_yaml_profile_reads_like_its_json(tmp_path):
    import yaml

    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(default_profile().to_dict()))
    assert load_profile(path).digest == default_profile().digest


def _broken(edit):
    data = copy.deepcopy(default_profile().to_dict())
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["instructions"]["realism"].pop("pitch_variation"),
         "p.json: instructions.realism.pitch_variation: missing"),
        (lambda d: d.update(format_version=2), "p.json: format_version: needs 1"),
        (lambda d: d.update(colour="red"), "p.json: colour: unknown field"),
        (lambda d: d["orders"].update(x="{instruction} {audio} {preamble} {context}"),
         r"p.json: orders.x: \{audio\} must come before \{instruction\}"),
        (lambda d: d["orders"].update(x="{audio} {instruction}"),
         r"p.json: orders.x: needs \{preamble\} exactly once"),
        (lambda d: d["context"].update(realism="{char_profile} {mood}"),
         r"p.json: context.realism: unknown field \{mood\}"),
        (lambda d: d["labels"].update(score=["1", "2"]), "p.json: labels.score: needs a list of 5"),
        (lambda d: d.update(default_order="sideways"), "p.json: default_order: 'sideways' is not"),
        (lambda d: d["questions"]["archetype"].pop("audio_quality"),
         "p.json: questions.archetype.audio_quality: missing"),
        (lambda d: d["paraphrases"]["realism"]["pitch_variation"].append(
            d["questions"]["realism"]["pitch_variation"]),
         "p.json: paraphrases.realism.pitch_variation: repeats"),
        (lambda d: d.pop("answer_prefix"), "p.json: answer_prefix: missing"),
    ],
)  # fmt: skip
def test_check_names_the_field_at_fault(edit, message):
    with pytest.raises(ProfileError, match=message):
        profile_from_dict(_broken(edit), "p.json")


def test_a_profile_for_one_config_queries_only_that_config():
    def realism_only(d):
        for key in ("instructions", "preamble", "context", "questions", "paraphrases"):
            d[key].pop("archetype")

    profile = profile_from_dict(_broken(realism_only), "p.json")
    assert profile.configs() == ("realism",)
    with pytest.raises(ValueError, match="no archetype instructions"):
        prefix_text("archetype", FIELDS, profile=profile) + suffix_text(
            "archetype", "audio_quality", FIELDS, profile=profile
        )


def test_cli_show_prints_the_default_and_check_names_the_field(tmp_path, capsys):
    from speech_drame.cli import main

    assert main(["prompt-profile", "show"]) == 0
    shown = capsys.readouterr().out
    path = tmp_path / "profile.json"
    path.write_text(shown)
    assert load_profile(path).digest == default_profile().digest  # it stands alone
    assert main(["prompt-profile", "check", str(path)]) == 0
    assert f"prompt profile {default_profile().label} is usable" in capsys.readouterr().out
    broken = _broken(lambda d: d["instructions"]["realism"].pop("pitch_variation"))
    path.write_text(json.dumps(broken))
    assert main(["prompt-profile", "check", str(path)]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert line == "error: profile.json: instructions.realism.pitch_variation: missing"
