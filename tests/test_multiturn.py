"""Dialogue-level aggregation of per-turn scores and the multi-turn scenario format."""

from __future__ import annotations

import json
import math

import pytest

from speech_drame.rolebench.multiturn import aggregate_turns, load_scenarios, recency_weights

TURNS = [
    {"trait_embodiment": 2.0, "local_story_fit": 5.0},
    {"trait_embodiment": 4.0, "local_story_fit": 3.0},
    {"trait_embodiment": 3.0, "local_story_fit": 4.0},
]


def test_mean_min_and_recency_by_hand():
    assert aggregate_turns(TURNS) == pytest.approx(
        {"trait_embodiment": 3.0, "local_story_fit": 4.0}
    )
    assert aggregate_turns(TURNS, "min") == {"trait_embodiment": 2.0, "local_story_fit": 3.0}
    # decay 0.5: weights 0.25, 0.5, 1 over a total of 1.75
    recency = aggregate_turns(TURNS, "recency", decay=0.5)
    assert recency["trait_embodiment"] == pytest.approx((0.5 + 2.0 + 3.0) / 1.75)  # 3.142857
    assert recency["local_story_fit"] == pytest.approx((1.25 + 1.5 + 4.0) / 1.75)  # 3.857143
    # decay 1 is the mean; a tiny decay approaches the last turn
    assert aggregate_turns(TURNS, "recency", decay=1.0) == pytest.approx(aggregate_turns(TURNS))
    last = aggregate_turns(TURNS, "recency", decay=1e-9)
    assert last == pytest.approx(TURNS[-1], abs=1e-6)


def test_single_turn_and_dimension_selection():
    assert aggregate_turns(TURNS[:1], "recency") == TURNS[0]
    assert aggregate_turns(TURNS, "mean", dims=["local_story_fit"]) == {"local_story_fit": 4.0}
    assert recency_weights(2, 0.25) == pytest.approx([0.2, 0.8])


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([], "empty dialogue"),
        ([{"a": 1.0}, {"b": 2.0}], r"turn 1: dimension 'a' is missing"),
        ([{"a": 1.0}, {"a": 2.0}, {"a": math.nan}], r"turn 2: dimension 'a' is nan, not finite"),
        ([{"a": 1.0, "b": math.inf}], r"turn 0: dimension 'b' is inf"),
        ([{"a": "3"}], r"turn 0: dimension 'a' is '3', not a number"),
        ([{"a": None}], r"turn 0: dimension 'a' is None"),
    ],
)
def test_invalid_turns_raise_naming_turn_and_dimension(turns, message):
    with pytest.raises(ValueError, match=message):
        aggregate_turns(turns)


def test_bad_method_and_decay():
    with pytest.raises(ValueError, match="unknown aggregation 'median'"):
        aggregate_turns(TURNS, "median")  # type: ignore[arg-type]
    for decay in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="decay must be in"):
            aggregate_turns(TURNS, "recency", decay=decay)


def dialogue(did="d1", turns=None, **extra) -> dict:
    return {
        "dialogue_id": did,
        "profile": "Mara is a weary ship captain who hides fear behind jokes.",
        "scene": "A storm hits while the crew argues about turning back.",
        "traits": "Wry, Tired",
        "turns": turns
        if turns is not None
        else [
            {"turn": 1, "scenario_id": f"{did}-t1", "prompt": "Captain, the mast is cracking!"},
            {"turn": 0, "scenario_id": f"{did}-t0", "prompt": "Should we turn back?", "lang": "en"},
        ],
        **extra,
    }


def write_jsonl(path, objects) -> str:
    path.write_text("".join(json.dumps(o) + "\n" if o is not None else "\n" for o in objects))
    return str(path)


def test_load_scenarios(tmp_path):
    path = write_jsonl(
        tmp_path / "s.jsonl", [dialogue(source="demo"), None, dialogue("d2", traits="Brisk")]
    )
    first, second = load_scenarios(path)
    assert first.dialogue_id == "d1" and first.traits == "Wry, Tired"
    assert first.extra == {"source": "demo"} and second.traits == "Brisk"
    assert [t.index for t in first.turns] == [0, 1]  # sorted by turn index
    assert [t.scenario_id for t in first.turns] == ["d1-t0", "d1-t1"]
    assert first.turns[0].prompt == "Should we turn back?" and first.turns[0].extra == {
        "lang": "en"
    }
    assert first.profile == second.profile and first.scene.startswith("A storm")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], r"s\.jsonl:1: invalid JSON"),
        ([dialogue(), dialogue()], r"s\.jsonl:2: dialogue id 'd1' repeated"),
        ([{**dialogue(), "profile": ""}], r"s\.jsonl:1 \(dialogue 'd1'\): field 'profile'"),
        ([{k: v for k, v in dialogue().items() if k != "scene"}], r"field 'scene' is missing"),
        (  # no stand-in for the traits (the profile used to be substituted silently)
            [dialogue("d1"), {k: v for k, v in dialogue("d2").items() if k != "traits"}],
            r"s\.jsonl:2 \(dialogue 'd2'\): field 'traits' is missing",
        ),
        (
            [dialogue(traits=" ")],
            r"s\.jsonl:1 \(dialogue 'd1'\): field 'traits' must be a non-empty",
        ),
        (
            [dialogue(turns=[{"turn": 0, "scenario_id": "../elsewhere"}])],
            r"turns\[0\]: field 'scenario_id': scenario id '\.\./elsewhere' cannot be a file name",
        ),
        ([dialogue(turns=[])], r"field 'turns' must be a non-empty list"),
        (
            [dialogue(turns=[{"turn": 0, "scenario_id": "a"}, {"turn": 2, "scenario_id": "b"}])],
            r"turn indices \[0, 2\] are not 0\.\.1",
        ),
        ([dialogue(turns=[{"turn": "0", "scenario_id": "a"}])], r"turns\[0\]: field 'turn'"),
        ([dialogue(turns=[{"turn": 0}])], r"turns\[0\]: field 'scenario_id' is missing"),
        (
            [dialogue("d1"), dialogue("d2", turns=[{"turn": 0, "scenario_id": "d1-t0"}])],
            r"s\.jsonl:2: scenario id 'd1-t0' already used in dialogue 'd1'",
        ),
    ],
)
def test_bad_scenario_files_name_line_and_field(tmp_path, lines, message):
    path = tmp_path / "s.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    with pytest.raises(ValueError, match=message):
        load_scenarios(path)
