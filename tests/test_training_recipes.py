"""train.py --recipe paper|official-code: the defaults it sets where the paper and the official
code differ, what wins over it, what it says, the card row, and the official sampler."""

import logging
from collections import Counter

import pytest
from conftest import REPO

from speech_drame.training.arguments import parse_args
from speech_drame.training.recipes import RECIPES, recipe_defaults

CONFIG = str(REPO / "configs" / "drame_eval_archetype.yaml")
BASE = ["--tiny", "--use_cpu", "--bf16", "false", "--output_dir", "/tmp/recipe-test"]


def effective(argv):
    _, data, _, args = parse_args(argv)
    return {
        "per_device_train_batch_size": args.per_device_train_batch_size,
        "warmup_steps": args.warmup_steps,
        "dataloader_drop_last": args.dataloader_drop_last,
        "prompt_variation": data.prompt_variation,
        "sampler": data.sampler,
    }, args.recipe


PAPER = {
    "per_device_train_batch_size": 4,
    "warmup_steps": 500,
    "dataloader_drop_last": False,
    "prompt_variation": True,
    "sampler": "pairs",
}
OFFICIAL = {
    "per_device_train_batch_size": 8,
    "warmup_steps": 1000,
    "dataloader_drop_last": True,
    "prompt_variation": False,
    "sampler": "random_dimension",
}


@pytest.mark.parametrize("config", [[], ["--config", CONFIG]])
def test_each_recipe_sets_its_column(config):
    assert recipe_defaults("paper") == PAPER and recipe_defaults("official-code") == OFFICIAL
    assert effective([*config, *BASE]) == (PAPER, "paper")  # the default recipe
    assert effective([*config, *BASE, "--recipe", "paper"]) == (PAPER, "paper")
    assert effective([*config, *BASE, "--recipe", "official-code"]) == (OFFICIAL, "official-code")
    # every setting of the table has a source in both columns
    assert all(set(s) == {"paper", "official-code"} and all(s.values()) for s in RECIPES.values())


def test_explicit_options_win_over_the_recipe(tmp_path):
    argv = [*BASE, "--recipe", "official-code", "--per_device_train_batch_size", "2",
            "--prompt_variation", "true", "--sampler", "pairs"]  # fmt: skip
    got, _ = effective(argv)
    assert got == {**OFFICIAL, "per_device_train_batch_size": 2, "prompt_variation": True,
                   "sampler": "pairs"}  # fmt: skip
    yaml_file = tmp_path / "mine.yaml"
    yaml_file.write_text("recipe: official-code\nwarmup_steps: 7\ndataloader_drop_last: false\n")
    got, recipe = effective(["--config", str(yaml_file), *BASE])
    assert recipe == "official-code"
    assert got == {**OFFICIAL, "warmup_steps": 7, "dataloader_drop_last": False}
    # the command line beats the YAML's recipe too
    got, recipe = effective(["--config", str(yaml_file), *BASE, "--recipe", "paper"])
    assert recipe == "paper" and got == {**PAPER, "warmup_steps": 7}


def test_the_recipe_says_what_it_is_changed_and_kept(caplog):
    with caplog.at_level(logging.INFO, logger="speech_drame.training.arguments"):
        parse_args([*BASE, "--recipe", "official-code", "--per_device_train_batch_size", "2"])
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("recipe ")]
    assert line.startswith("recipe official-code: per_device_train_batch_size 8 (sft_lora.yaml)")
    assert "sampler random_dimension (dataset.py: one random dimension per clip per visit)" in line
    assert "changed: warmup_steps 1000, dataloader_drop_last true, prompt_variation false, " \
           "sampler random_dimension;" in line  # fmt: skip
    assert "kept as given: per_device_train_batch_size 2;" in line
    assert "offloads the optimizer" in line and "deepspeed_zero1_offload.json" in line
    assert (REPO / "configs" / "deepspeed_zero1_offload.json").is_file()


def test_an_unknown_recipe_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args([*BASE, "--recipe", "mine"])
    assert "invalid choice: 'mine'" in capsys.readouterr().err


@pytest.mark.parametrize("recipe", ["paper", "official-code"])
def test_the_model_card_states_the_recipe(recipe):
    from speech_drame.training.export import training_recipe
    from speech_drame.training.run import training_choices

    _, data, lora, args = parse_args([*BASE, "--recipe", recipe])
    metrics = {
        "train": {"global_step": 3, "effective_batch_size": 8},
        "training_choices": training_choices(data, lora, args),
    }
    rows = dict(training_recipe(lora, args, metrics))
    assert rows["recipe"].startswith(f"`{recipe}`: per_device_train_batch_size ")
    sampler = "random_dimension" if recipe == "official-code" else "pairs"
    assert rows["sampler"].startswith(f"`{sampler}`: ")
    assert rows["drop the last incomplete batch"] is (recipe == "official-code")
    assert metrics["training_choices"]["recipe"] == recipe


def test_random_dimension_sampler_visits_each_clip_once_with_a_random_dimension(monkeypatch):
    import torch
    from datasets import Dataset

    from speech_drame.training import data

    monkeypatch.setattr(data, "clip_from_row", lambda row: row["id"])
    dims = ["content_pass", "audio_quality", "human_likeness", "appropriateness"]
    rows = Dataset.from_list([
        {"id": "a", "annotations": {"content_pass": [True, False], "audio_quality": [3, 4],
                                    "human_likeness": [2, 2], "appropriateness": [5, 5]}},
        # no Content Pass vote: its three rated dimensions only
        {"id": "b", "annotations": {"content_pass": [None, None], "audio_quality": [1, 1],
                                    "human_likeness": [4, 4], "appropriateness": [2, 2]}},
    ])  # fmt: skip
    pairs = data.AnnotatorSampledDataset(rows, dims)
    visits = data.RandomDimensionDataset(rows, dims)
    assert len(pairs) == 7 and len(visits) == 2 and visits.index.pairs == pairs.index.pairs
    assert data.SAMPLERS["random_dimension"] is data.RandomDimensionDataset
    assert data.SAMPLERS["pairs"] is data.AnnotatorSampledDataset
    torch.manual_seed(0)
    drawn = {"a": Counter(), "b": Counter()}
    for _ in range(400):
        for i in range(len(visits)):
            example = visits[i]
            drawn[example["clip"]][example["dimension"]] += 1
            rating = rows[i]["annotations"][example["dimension"]]
            assert int(example["label"]) in [int(v) for v in rating if v is not None]
    assert set(drawn["a"]) == set(dims) and set(drawn["b"]) == set(dims[1:])
    assert all(70 < n < 130 for n in drawn["a"].values())  # uniform: 100 each
    assert all(100 < n < 170 for n in drawn["b"].values())  # uniform: 133 each
