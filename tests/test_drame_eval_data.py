import json
from collections import Counter

import pytest
import torch
import yaml
from conftest import REPO, archetype_record, realism_record, write_release
from datasets import load_dataset

from speech_drame.audio_llm.qwen2_audio import IGNORE_INDEX, PromptEncoder
from speech_drame.audio_llm.tiny import build_tiny_processor
from speech_drame.data.build import build_dataset
from speech_drame.prompts import scored_dimensions
from speech_drame.training.arguments import load_yaml_defaults, parse_args
from speech_drame.training.data import (
    AnnotatorSampledDataset,
    DrameEvalCollator,
    answer_token_loss,
    index_examples,
    sample_label,
)


def draw(values, n=20_000, seed=0) -> Counter:
    g = torch.Generator().manual_seed(seed)
    return Counter(sample_label(values, g) for _ in range(n))


def test_each_valid_annotator_label_appears_with_its_share():
    counts = draw([4, None, 5, 4, None, 2])  # valid: 4, 5, 4, 2
    assert set(counts) == {2, 4, 5}  # null never drawn
    n = sum(counts.values())
    for label, share in {4: 0.5, 5: 0.25, 2: 0.25}.items():
        assert counts[label] / n == pytest.approx(share, abs=0.02)


def test_content_pass_votes_are_binary_targets():
    counts = draw([True, False, True, None], n=9_000)
    assert set(counts) == {0, 1}
    assert counts[1] / 9_000 == pytest.approx(2 / 3, abs=0.02)


def test_all_null_cannot_be_sampled():
    with pytest.raises(ValueError, match="no valid annotator label"):
        sample_label([None, None])


def test_pairs_without_a_valid_score_are_skipped_and_counted():
    failed = archetype_record("f")["annotations"] | {
        "content_pass": [False, False],
        "audio_quality": [None, None],
        "human_likeness": [None, None],
        "appropriateness": [None, None],
    }
    rows = [archetype_record("a")["annotations"], failed]
    index = index_examples(rows, scored_dimensions("archetype"))
    assert index.pairs == [
        (0, "content_pass"),
        (0, "audio_quality"),
        (0, "human_likeness"),
        (0, "appropriateness"),
        (1, "content_pass"),
    ]
    assert index.skipped == {
        "content_pass": 0,
        "audio_quality": 1,
        "human_likeness": 1,
        "appropriateness": 1,
    }
    with pytest.raises(ValueError, match="no 'semantic_match'"):
        index_examples(rows, ["semantic_match"])


@pytest.fixture(scope="module")
def realism_rows(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sampling")
    gated = realism_record("gated")
    gated["annotations"]["dynamic_range"] = ["N/A", "N/A", "N/A"]
    src = write_release(tmp / "rel", {"realism_data/train.jsonl": [realism_record("r0"), gated]})
    build_dataset(src, tmp / "ds", progress=False)
    return load_dataset(str(tmp / "ds"), "realism")["train"]


def test_dataset_resamples_on_every_draw_and_never_draws_na(realism_rows):
    dims = scored_dimensions("realism")
    data = AnnotatorSampledDataset(realism_rows, dims)
    assert data.index.skipped["dynamic_range"] == 1 and len(data) == 2 * len(dims) - 1
    where = {pair: i for i, pair in enumerate(data.index.pairs)}
    torch.manual_seed(0)
    # emotion_intensity_control of r0 is [3, "N/A", 2]: only 3 and 2, about half each.
    labels = Counter(data[where[(0, "emotion_intensity_control")]]["label"] for _ in range(120))
    assert set(labels) == {"2", "3"} and min(labels.values()) > 30
    # dynamic_range of r0 is [4, "N/A", "N/A"]: always 4.
    assert {data[where[(0, "dynamic_range")]]["label"] for _ in range(20)} == {"4"}
    example = data[where[(1, "trait_embodiment")]]
    assert example["clip"].id == "gated" and example["dimension"] == "trait_embodiment"
    assert example["clip"].samples.dtype.name == "float32"


def test_collator_puts_the_loss_on_the_label_token_only(realism_rows):
    processor = build_tiny_processor()
    dims = scored_dimensions("realism")
    encoder = PromptEncoder(processor, "realism", dims)
    data = AnnotatorSampledDataset(realism_rows, dims)
    examples = [data[0], data[len(data) - 1]]
    batch = DrameEvalCollator(encoder)(examples)
    assert batch["input_features"].shape == (2, 128, 3000)
    for i, ex in enumerate(examples):
        n = int(batch["attention_mask"][i].sum())
        target = encoder.label_id(ex["dimension"], ex["label"])
        assert batch["input_ids"][i, n - 1] == target
        assert batch["labels"][i].ne(IGNORE_INDEX).nonzero().flatten().tolist() == [n - 1]
        assert batch["labels"][i, n - 1] == target
        suffix = encoder.suffix_ids[ex["dimension"]]
        assert batch["input_ids"][i, n - 1 - len(suffix) : n - 1].tolist() == suffix

    # The loss is the cross-entropy of the label given everything before it.
    logits = torch.randn(*batch["input_ids"].shape, len(processor.tokenizer))
    outputs = type("Out", (), {"logits": logits})()
    expected = []
    for i in range(2):
        n = int(batch["attention_mask"][i].sum())
        expected.append(torch.log_softmax(logits[i, n - 2], -1)[batch["labels"][i, n - 1]])
    assert answer_token_loss(outputs, batch["labels"]) == pytest.approx(-sum(expected).item() / 2)
    assert answer_token_loss(outputs, batch["labels"], num_items_in_batch=8) == pytest.approx(
        -sum(expected).item() / 8
    )


def test_configs_hold_the_paper_recipe_and_cli_overrides_yaml():
    for config in ("archetype", "realism"):
        path = REPO / "configs" / f"drame_eval_{config}.yaml"
        model, data, lora, args = parse_args(
            ["--config", str(path), "--use_cpu", "--output_dir", "/tmp/x", "--max_steps", "7"]
        )
        assert data.dataset_config_name == config and model.model_name_or_path.endswith(
            "Qwen2-Audio-7B-Instruct"
        )
        assert (lora.lora_r, lora.lora_alpha, lora.lora_dropout) == (16, 32, 0.1)
        assert args.learning_rate == 5e-5 and args.lr_scheduler_type.value == "cosine"
        assert args.weight_decay == 0.01 and args.max_grad_norm == 1.0 and args.warmup_steps > 0
        assert args.bf16 and args.activation_checkpointing and args.max_steps == 7
        accelerate = yaml.safe_load((REPO / "configs/accelerate_deepspeed_zero1.yaml").read_text())
        effective = (
            args.per_device_train_batch_size
            * args.gradient_accumulation_steps
            * accelerate["num_processes"]
        )
        assert effective == 32


def test_deepspeed_config_is_zero1_and_takes_the_recipe_from_the_trainer():
    from accelerate.commands.config.config_args import load_config_from_file

    cluster = load_config_from_file(str(REPO / "configs/accelerate_deepspeed_zero1.yaml"))
    assert cluster.distributed_type.value == "DEEPSPEED"
    ds_file = REPO / cluster.deepspeed_config["deepspeed_config_file"]
    ds = json.loads(ds_file.read_text())
    assert ds["zero_optimization"]["stage"] == 1
    for key in (
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "gradient_clipping",
    ):
        assert ds[key] == "auto", key  # filled from the training options: one source of truth
    assert ds["bf16"]["enabled"] == "auto"


def test_yaml_with_an_unknown_option_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("lora_rank: 8\n")
    from speech_drame.training.arguments import build_parser

    with pytest.raises(ValueError, match="unknown option\\(s\\) lora_rank"):
        load_yaml_defaults(bad, build_parser())
