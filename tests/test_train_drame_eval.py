"""End to end on the demo dataset (archetype): train.py on the tiny random Qwen2-Audio, offline,
with the official choices (the defaults: prompt variation, LoRA on every q/k/v/o/gate/up/down
projection, loss on the whole answer, instruction first, N/A counted as 1), then reload, model
card, push listing, resume. Checkpoints are in the output folder, the exported evaluator in its
``evaluator/``."""

import contextlib
import io
import json
import logging
import re

import pytest
from conftest import REPO
from datasets import load_dataset
from huggingface_hub import DatasetCard, ModelCard

from speech_drame.scorers.drame_eval import DrameEvalScorer
from speech_drame.training.export import folder_files
from speech_drame.training.run import main

pytestmark = pytest.mark.slow
STEPS = 20
EVAL_CLIPS = 6


def train_args(dataset, out, *extra):
    return [
        "--config", str(REPO / "configs" / "drame_eval_archetype.yaml"),
        "--tiny", "--dataset", str(dataset), "--output_dir", str(out),
        "--use_cpu", "--bf16", "false", "--model_dtype", "float32",
        "--activation_checkpointing", "false",
        "--learning_rate", "3e-3", "--warmup_steps", "2",
        "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "1",
        "--per_device_eval_batch_size", "3", "--max_eval_samples", str(EVAL_CLIPS),
        "--logging_steps", "1", "--save_steps", "10", "--dataloader_num_workers", "0",
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def run(demo_dataset_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "drame-eval"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            train_args(
                demo_dataset_dir, out, "--max_steps", str(STEPS),
                "--push_dry_run", "--hub_model_id", "someone/drame-eval-tiny",
            )
        )  # fmt: skip
    assert code == 0
    return out, printed.getvalue()


def test_training_lowers_the_loss(run):
    out, _ = run
    state = json.loads((out / f"checkpoint-{STEPS}" / "trainer_state.json").read_text())
    losses = [h["loss"] for h in state["log_history"] if "loss" in h]
    assert len(losses) == STEPS
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < first - 0.3, losses


def test_every_clip_dimension_with_a_usable_label_is_a_training_pair(run, demo_dataset_dir):
    """Under the paper's label policy a null quality rating counts as 1, so every clip is a
    pair of each 1-5 dimension; Content Pass needs a non-null vote."""
    out, _ = run
    metrics = json.loads((out / "evaluator" / "metrics.json").read_text())
    train = metrics["train"]
    assert train["global_step"] == STEPS
    assert metrics["label_policy"] == "paper" and "count as 1" in metrics["label_policy_rule"]
    assert all(t["label_policy"] == "paper" for t in metrics["eval"].values())
    rows = load_dataset(str(demo_dataset_dir), "archetype")["train"]["annotations"]
    dims = ("content_pass", "audio_quality", "human_likeness", "appropriateness")
    votes = sum(any(v is not None for v in ann["content_pass"]) for ann in rows)
    assert train["training_clips"] == len(rows)
    assert train["training_pairs"] == votes + 3 * len(rows)
    assert train["skipped_no_valid_score"] == {
        d: len(rows) - votes if d == dims[0] else 0 for d in dims
    }
    nulls = {d: sum(list(ann[d]).count(None) for ann in rows) for d in dims[1:]}
    assert train["null_ratings_counted_as_1"] == {"content_pass": 0, **nulls}
    assert metrics["training_choices"] == {
        "prompt_order": "instruction_first", "lora_scope": "all",
        "lora_target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                "down_proj"],
        "loss_on": "answer_span", "prompt_variation": True, "label_policy": "paper",
        "recipe": "paper", "sampler": "pairs", "dataloader_drop_last": False,
    }  # fmt: skip


@pytest.mark.parametrize("scope", ["all", "language"])
def test_lora_scope_all_reaches_the_audio_encoder_and_language_does_not(scope, tmp_path):
    from speech_drame.training.arguments import parse_args
    from speech_drame.training.run import build_model

    config = str(REPO / "configs" / "drame_eval_archetype.yaml")
    model_args, _, lora_args, _ = parse_args(
        ["--config", config, "--tiny", "--output_dir", str(tmp_path), "--lora_scope", scope]
    )
    model, _ = build_model(model_args, lora_args)
    adapted = {n.split(".lora_A")[0] for n, _ in model.named_parameters() if ".lora_A" in n}
    audio = {n for n in adapted if ".audio_tower." in n}
    text = {n for n in adapted if ".language_model." in n}
    assert {n.rsplit(".", 1)[1] for n in text} == {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"
    }  # fmt: skip
    assert adapted == audio | text
    if scope == "all":  # the encoder's attention projections (its output one is out_proj)
        assert {n.rsplit(".", 1)[1] for n in audio} == {"q_proj", "k_proj", "v_proj"}
    else:
        assert not audio


def test_adapter_reloads_and_gives_identical_scores(run, demo_dataset_dir):
    run_dir, _ = run
    out = run_dir / "evaluator"
    assert (out / "adapter_model.safetensors").is_file()
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["r"] == 16 and "q_proj" in adapter["target_modules"]
    from safetensors import safe_open

    with safe_open(out / "adapter_model.safetensors", "pt") as weights:
        assert any("audio_tower" in k and "lora_" in k for k in weights.keys())  # noqa: SIM118
    saved = [json.loads(line) for line in (out / "predictions" / "test.jsonl").open()]
    assert len(saved) == EVAL_CLIPS and all("error" not in p for p in saved)

    info = json.loads((out / "drame_eval_config.json").read_text())
    assert info["base_model"] == "tiny" and info["dtype"] == "float32"
    assert (info["prompt_order"], info["lora_scope"], info["loss_on"]) == (
        "instruction_first",
        "all",
        "answer_span",
    )
    assert info["prompt_variation"] is True and info["label_policy"] == "paper"
    # the profile it was trained with (the default) travels with it; PEFT finds the base
    from speech_drame.prompt_profile import default_profile, load_profile

    assert info["prompt_profile"] == "prompt_profile.json"
    carried = load_profile(out / "prompt_profile.json")
    assert info["prompt_profile_digest"] == carried.digest == default_profile().digest
    assert adapter["base_model_name_or_path"] == "tiny"
    trained_on = info["training_data"]  # what the Space shows next to the scores
    assert trained_on["dataset"] == str(demo_dataset_dir) and trained_on["split"] == "train"
    assert trained_on["labels_are_synthetic"] is True
    assert "synthetic proxy labels" in trained_on["label_note"]
    scorer = DrameEvalScorer.from_pretrained(out)  # fresh tiny base from the seed + adapter
    assert scorer.prompt_order == "instruction_first"  # the order it was trained with
    rows = load_dataset(str(demo_dataset_dir), "archetype")["test"].select(range(EVAL_CLIPS))
    again = scorer.score_rows(rows)
    for before, after in zip(saved, again, strict=True):
        assert after.id == before["id"]
        for dim, value in before["scores"].items():
            assert after.scores[dim] == pytest.approx(value, abs=1e-6)
            assert after.distributions[dim] == pytest.approx(before["distributions"][dim], abs=1e-6)
        assert after.content_pass == pytest.approx(before["content_pass"], abs=1e-6)
        assert after.label_mass == pytest.approx(before["label_mass"], abs=1e-6)
    # Training changed the model: the base alone scores differently.
    from speech_drame.audio_llm.tiny import build_tiny

    base = DrameEvalScorer(*build_tiny(0), "archetype").score_rows(rows.select(range(1)))
    assert abs(base[0].scores["audio_quality"] - saved[0]["scores"]["audio_quality"]) > 1e-3


def test_model_card_parses_with_the_measured_metrics(run, demo_dataset_dir):
    out = run[0] / "evaluator"
    card = ModelCard.load(out / "README.md")
    data = card.data
    assert data.library_name == "peft" and data.base_model == "tiny"
    assert data.pipeline_tag == "audio-text-to-text" and data.datasets == [demo_dataset_dir.name]
    metrics = json.loads((out / "metrics.json").read_text())["eval"]["test"]
    expected = {
        ("content_pass", "accuracy"): metrics["content_pass_accuracy"],
        **{
            (d, "pearsonr"): metrics[f"{d}_pearson"]
            for d in ("audio_quality", "human_likeness", "appropriateness")
            if metrics[f"{d}_pearson"] is not None
        },
    }
    got = {(r.metric_config, r.metric_type): r.metric_value for r in data.eval_results}
    assert got.keys() == expected.keys() and ("content_pass", "accuracy") in got
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-4)
    assert all(
        r.dataset_split == "test" and r.dataset_config == "archetype" for r in data.eval_results
    )
    for section in ("## Intended use", "## Prompt format", "## Decoding rule", "## Training data",
                    "## Limitations", "## How to load"):  # fmt: skip
        assert section in card.text
    data_card = DatasetCard.load(demo_dataset_dir / "README.md")
    assert f"Licence of the training data: **{data_card.data.license}**" in card.text
    source = re.search(r"^> \*\*Source\.\*\* (.+)$", data_card.text, re.MULTILINE)[1]
    assert f"**Training data note.** {source}" in card.text
    assert "<answer>" in card.text and "someone/drame-eval-tiny" in card.text
    for row in (
        "| prompt order | `instruction_first`: the dimension's instruction before the clip's "
        "context (the official code's order",
        "| LoRA scope | `all`: every module named q_proj k_proj v_proj o_proj gate_proj up_proj "
        "down_proj (the official config",
        "| loss span | `answer_span`: every token of the answer `<answer>k</answer>` (the official "
        "trainer) |",
        "| prompt variation | one of 30 paraphrases of the dimension's question drawn per "
        "training example",
        '| label policy | `paper`: null and "N/A" ratings count as 1',
    ):
        assert row in card.text, row
    assert "Label policy `paper`" in card.text and "Loss span `answer_span`" in card.text
    assert "in the `instruction_first` order" in card.text


def test_push_dry_run_lists_exactly_the_exported_files(run):
    run_dir, printed = run
    out = run_dir / "evaluator"
    listing = printed[printed.index("push dry run") :].splitlines()
    assert listing[1] == "target: https://huggingface.co/someone/drame-eval-tiny (model repo)"
    files = {}
    for line in listing[3:]:
        match = re.fullmatch(r" *(\d+)  (\S+)", line)
        if not match:
            break
        files[match[2]] = int(match[1])
    expected = {
        "README.md", "adapter_config.json", "adapter_model.safetensors",
        "drame_eval_config.json", "prompt_profile.json", "metrics.json", "predictions/test.jsonl",
        "processor_config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
    }  # fmt: skip
    assert set(files) == expected == {f.as_posix() for f in folder_files(out)}
    assert all(files[name] == (out / name).stat().st_size for name in files)
    assert listing[2] == f"files: {len(files)}, {sum(files.values())} bytes"
    assert not any(name.startswith("checkpoint-") for name in files)


def test_resume_continues_from_the_last_checkpoint(run, demo_dataset_dir, caplog, capsys):
    out, _ = run
    assert main(train_args(demo_dataset_dir, out, "--max_steps", str(STEPS + 2))) == 2
    assert "pass --resume to continue it, --overwrite_output_dir" in capsys.readouterr().err
    with caplog.at_level(logging.INFO, logger="speech_drame.training.run"):
        args = ["--max_steps", str(STEPS + 2), "--resume", "--activation_checkpointing", "true"]
        assert main(train_args(demo_dataset_dir, out, *args)) == 0
    assert f"resuming from {out / f'checkpoint-{STEPS}'}" in caplog.text
    metrics = json.loads((out / "evaluator" / "metrics.json").read_text())
    assert metrics["train"]["global_step"] == STEPS + 2
    state = json.loads((out / f"checkpoint-{STEPS + 2}" / "trainer_state.json").read_text())
    steps = [h["step"] for h in state["log_history"] if "loss" in h]
    assert steps[-2:] == [STEPS + 1, STEPS + 2] and steps.count(STEPS) == 1
