"""A tiny random Qwen2-Audio with its tokenizer and processor, built entirely offline.

Same architecture, special tokens, prompt format and audio front end (128 mel bins, 30 s
windows, so the audio encoder keeps ``max_source_positions=1500``) as Qwen2-Audio-7B, with
small widths. Weights are drawn from ``seed`` and the byte-level BPE tokenizer is trained on a
fixed corpus (the rubric texts), so two builds with the same seed are identical: a LoRA
adapter trained on it reloads on a fresh build and gives identical scores.
"""

from __future__ import annotations

from typing import Any

TINY_MODEL = "tiny"  # the --model value that selects this model
VOCAB_SIZE = 1024
SPECIAL_TOKENS = ("<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>")
EOS = "<|endoftext|>"

# Widths chosen so that a CPU step takes a fraction of a second; the audio front end matches
# the real model so that clip lengths, mel frames and audio-token counts are the real ones.
AUDIO_CONFIG = dict(
    d_model=32,
    encoder_layers=2,
    encoder_attention_heads=2,
    encoder_ffn_dim=64,
    num_mel_bins=128,
    max_source_positions=1500,
)
TEXT_CONFIG = dict(
    vocab_size=VOCAB_SIZE,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=4096,
)

_GENERAL_TEXT = (
    "The speaker answers the question in a calm and warm voice, then grows firmer as the "
    "danger becomes clear. A firefighter finds a child in a smoky hall and says: stay with "
    "me, we are going out together. She is a patient older sister who speaks softly and "
    "never rushes. He is a cocky detective who teases his colleagues and loves old movies."
)


def _tokenizer_corpus() -> list[str]:
    from ..prompts import RUBRICS, format_answer, instruction, task_preamble

    texts = [_GENERAL_TEXT, "Role and scene prompt: Character profile: Local scene: traits:"]
    for config, rubrics in RUBRICS.items():
        texts.append(task_preamble(config))
        texts += [instruction(r) for r in rubrics.values()]
    texts += [format_answer(k) for k in range(6)]
    return texts


def build_tiny_tokenizer() -> Any:
    """A Qwen2 byte-level BPE tokenizer with the Qwen2-Audio special tokens (deterministic)."""
    import json

    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - len(SPECIAL_TOKENS) - 1,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_tokenizer_corpus(), trainer)
    merges = [tuple(pair) for pair in json.loads(bpe.to_str())["model"]["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=bpe.get_vocab(), merges=merges)
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    return tokenizer


def build_tiny_processor() -> Any:
    """Qwen2AudioProcessor = tiny tokenizer + the real Whisper front end (128 mels, 30 s)."""
    from transformers import Qwen2AudioProcessor, WhisperFeatureExtractor

    extractor = WhisperFeatureExtractor(feature_size=AUDIO_CONFIG["num_mel_bins"])
    return Qwen2AudioProcessor(feature_extractor=extractor, tokenizer=build_tiny_tokenizer())


def build_tiny_model(seed: int = 0, audio_token_id: int | None = None) -> Any:
    """Random Qwen2AudioForConditionalGeneration drawn from ``seed`` (global RNG untouched)."""
    import torch
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration

    if audio_token_id is None:
        audio_token_id = build_tiny_tokenizer().convert_tokens_to_ids("<|AUDIO|>")
    config = Qwen2AudioConfig(
        audio_config=dict(AUDIO_CONFIG),
        text_config=dict(TEXT_CONFIG),
        audio_token_index=audio_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2AudioForConditionalGeneration(config)
    return model.eval()


def build_tiny(seed: int = 0) -> tuple[Any, Any]:
    """``(model, processor)`` of the tiny random Qwen2-Audio."""
    processor = build_tiny_processor()
    return build_tiny_model(seed, processor.audio_token_id), processor
