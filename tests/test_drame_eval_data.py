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
from speech_drame.prompts import (
    INSTRUCTION_POOL,
    RUBRICS,
    instruction_pool,
    question,
    rubric,
    scored_dimensions,
)
from speech_drame.training.arguments import load_yaml_defaults, parse_args
from speech_drame.training.data import (
    AnnotatorSampledDataset,
    DrameEvalCollator,
    answer_token_loss,
    index_examples,
    sample_label,
    sample_paraphrase,
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


def test_pairs_without_a_valid_score_are_skipped_and_counted_under_skip():
    failed = archetype_record("f")["annotations"] | {
        "content_pass": [False, False],
        "audio_quality": [None, None],
        "human_likeness": [None, None],
        "appropriateness": [None, None],
    }
    rows = [archetype_record("a")["annotations"], failed]
    paper = index_examples(rows, scored_dimensions("archetype"))  # the default policy
    assert len(paper.pairs) == 8 and set(paper.skipped.values()) == {0}
    # row "a" has one null per quality dimension (the annotator who failed Content Pass)
    assert paper.filled == {
        "content_pass": 0,
        "audio_quality": 3,
        "human_likeness": 3,
        "appropriateness": 3,
    }
    index = index_examples(rows, scored_dimensions("archetype"), "skip")
    assert set(index.filled.values()) == {0}
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


def test_dataset_resamples_on_every_draw_and_never_draws_na_under_skip(realism_rows):
    dims = scored_dimensions("realism")
    data = AnnotatorSampledDataset(realism_rows, dims, "skip")
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
    assert example["clip"].samples.dtype.name == "float32" and example["question"] is None


def test_paper_policy_counts_na_as_1_in_training_targets(realism_rows):
    dims = scored_dimensions("realism")
    data = AnnotatorSampledDataset(realism_rows, dims)  # default: paper
    assert set(data.index.skipped.values()) == {0} and len(data) == 2 * len(dims)
    assert data.index.filled["dynamic_range"] == 2 + 3
    where = {pair: i for i, pair in enumerate(data.index.pairs)}
    torch.manual_seed(0)
    # emotion_intensity_control of r0 is [3, "N/A", 2]: 3, 1 and 2, about a third each.
    labels = Counter(data[where[(0, "emotion_intensity_control")]]["label"] for _ in range(150))
    assert set(labels) == {"1", "2", "3"} and min(labels.values()) > 30
    # dynamic_range of "gated" is all "N/A": a pair (not skipped) whose target is always 1.
    assert {data[where[(1, "dynamic_range")]]["label"] for _ in range(10)} == {"1"}


def test_instruction_pool_has_30_distinct_paraphrases_per_dimension():
    for config in ("archetype", "realism"):
        pool = instruction_pool(config)
        assert set(pool) == set(RUBRICS[config])  # semantic_match included
        for key, texts in pool.items():
            canonical = rubric(config, key)
            assert len(texts) == len(set(texts)) == 30, key
            assert question(canonical) not in texts and canonical.focus not in texts
            assert all(t.strip() == t and len(t) > 20 for t in texts), key


def test_paraphrase_draws_vary_and_repeat_with_the_seed(realism_rows):
    texts = instruction_pool("realism")["pitch_variation"]
    draws = [sample_paraphrase(texts, torch.Generator().manual_seed(s)) for s in range(10)]
    assert len(set(draws)) > 3 and set(draws) <= set(texts)
    again = [sample_paraphrase(texts, torch.Generator().manual_seed(s)) for s in range(10)]
    assert again == draws
    # In the dataset: drawn with torch's default generator (the Trainer's seed), per example.
    data = AnnotatorSampledDataset(
        realism_rows, scored_dimensions("realism"), paraphrases=instruction_pool("realism")
    )
    dim_of = dict(enumerate(d for _, d in data.index.pairs))

    def run(seed):
        torch.manual_seed(seed)
        return [data[i]["question"] for i in range(8)]

    first = run(3)
    assert first == run(3) and first != run(4)
    assert all(q in instruction_pool("realism")[dim_of[i]] for i, q in enumerate(first))


def test_the_pool_file_ships_with_the_package():
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"]["package-data"]["speech_drame.resources"]
    assert INSTRUCTION_POOL.endswith(tuple(d.lstrip("*") for d in data))
    assert (REPO / "speech_drame" / "resources" / "__init__.py").is_file()


@pytest.mark.parametrize("loss_on", ["answer_span", "label_token"])
@pytest.mark.parametrize("order", ["instruction_first", "context_first"])
def test_collator_puts_the_loss_on_the_answer_span_or_the_label(realism_rows, loss_on, order):
    processor = build_tiny_processor()
    dims = scored_dimensions("realism")
    encoder = PromptEncoder(processor, "realism", dims, order)
    data = AnnotatorSampledDataset(realism_rows, dims, paraphrases=instruction_pool("realism"))
    examples = [data[0], data[len(data) - 1]]
    batch = DrameEvalCollator(encoder, loss_on)(examples)
    assert batch["input_features"].shape == (2, 128, 3000)
    tok = processor.tokenizer
    for i, ex in enumerate(examples):
        n = int(batch["attention_mask"][i].sum())
        ids = batch["input_ids"][i, :n].tolist()
        answer = f"<answer>{ex['label']}</answer>"
        assert tok.decode(ids).endswith(f"<|im_start|>assistant\n{answer}")
        assert ex["question"] in tok.decode(ids)  # the drawn paraphrase is asked
        target = encoder.label_id(ex["dimension"], ex["label"])
        label_at = n - 1 - len(encoder.answer_close_ids)
        assert ids[label_at] == target
        positions = batch["labels"][i].ne(IGNORE_INDEX).nonzero().flatten().tolist()
        if loss_on == "answer_span":  # <answer>, k and </answer>: every answer token
            assert tok.decode([ids[p] for p in positions]) == answer
            assert positions == list(range(n - len(positions), n))
        else:
            assert positions == [label_at]
        assert batch["labels"][i, positions].tolist() == [ids[p] for p in positions]
        suffix = encoder.suffix(ex["dimension"], ex["clip"].fields, ex["question"])
        assert ids[label_at - len(suffix) : label_at] == suffix

    # The loss is the summed cross-entropy of the loss tokens given everything before them,
    # divided by the loss-token count (of the micro-batch, or num_items_in_batch).
    logits = torch.randn(*batch["input_ids"].shape, len(tok))
    outputs = type("Out", (), {"logits": logits})()
    labels = batch["labels"]
    total, count = 0.0, 0
    for i, p in labels.ne(IGNORE_INDEX).nonzero().tolist():
        total -= torch.log_softmax(logits[i, p - 1], -1)[labels[i, p]].item()
        count += 1
    assert count == (2 * 6 if loss_on == "answer_span" else 2)  # 2 + 1 + 3 answer tokens
    assert answer_token_loss(outputs, labels) == pytest.approx(total / count, rel=1e-5)
    assert answer_token_loss(outputs, labels, num_items_in_batch=50) == pytest.approx(
        total / 50, rel=1e-5
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
        assert lora.lora_scope == "all" and lora.lora_target_modules is None
        assert (data.prompt_order, data.loss_on) == ("instruction_first", "answer_span")
        assert data.prompt_variation is True and data.label_policy == "paper"
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
