"""Qwen2-Audio as a DRAME-Eval judge: loading, prompt layout and input encoding.

A query is the Qwen2-Audio chat format split in two at a fixed point:

* prefix (shared by every dimension of a clip): system turn, the audio, the task preamble
  and the clip's context;
* suffix (one per dimension): the rubric instruction, the end of the user turn and the
  assistant turn opened with ``<answer>``.

The label (``"1".."5"``, or ``"0"``/``"1"`` for Content Pass) is the next token. Prefix and
suffix are tokenized separately and concatenated, in training and in scoring alike, so a
cached prefix followed by a suffix is exactly the sequence the model was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..audio import TARGET_SR
from ..prompts import ANSWER_OPEN, format_context, instruction, rubric, task_preamble
from ..schema import Config
from .tiny import TINY_MODEL, build_tiny

DEFAULT_MODEL = "Qwen/Qwen2-Audio-7B-Instruct"
SYSTEM_PROMPT = "You are a helpful assistant."
AUDIO_PLACEHOLDER = "<|audio_bos|><|AUDIO|><|audio_eos|>"
# LoRA on the language model's attention and MLP projections only. Plain names such as
# "q_proj" would also match the audio encoder's attention, hence a regex on the text model.
LORA_TARGET_REGEX = (
    r".*language_model\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"
)
IGNORE_INDEX = -100


def prefix_text(config: Config, fields: Mapping[str, Any]) -> str:
    """The shared part of every query about one clip (audio placeholder included)."""
    return (
        f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n"
        f"Audio 1: {AUDIO_PLACEHOLDER}\n{task_preamble(config)}\n"
        f"{format_context(config, fields)}\n\n"
    )


def suffix_text(config: Config, dimension: str) -> str:
    """The per-dimension end of a query, ending where the label token is predicted."""
    return (
        f"{instruction(rubric(config, dimension))}<|im_end|>\n<|im_start|>assistant\n{ANSWER_OPEN}"
    )


def load_base(name_or_path: str, *, dtype: Any = None, seed: int = 0) -> tuple[Any, Any]:
    """``(model, processor)`` for a Qwen2-Audio checkpoint, or the tiny random model.

    ``name_or_path`` is a Hub id or local folder; :data:`~.tiny.TINY_MODEL` builds the tiny
    model offline from ``seed``. ``dtype`` is a torch dtype (default: the checkpoint's).
    """
    if name_or_path == TINY_MODEL:
        model, processor = build_tiny(seed)
        return (model.to(dtype) if dtype is not None else model), processor
    from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration

    processor = AutoProcessor.from_pretrained(name_or_path)
    model = Qwen2AudioForConditionalGeneration.from_pretrained(
        name_or_path, dtype=dtype if dtype is not None else "auto"
    )
    return model, processor


@dataclass
class PrefixInputs:
    """One clip's encoded prefix: token ids with the audio placeholder expanded, and mels."""

    input_ids: list[int]
    input_features: Any  # torch.Tensor (n_mels, frames)
    feature_attention_mask: Any  # torch.Tensor (frames,)


class PromptEncoder:
    """Token ids for the queries of one config: per-clip prefixes, per-dimension suffixes.

    Raises ``ValueError`` if a label is not a single token of the tokenizer (the label
    distribution is read from one next-token position).
    """

    def __init__(self, processor: Any, config: Config, dimensions: Sequence[str]):
        self.processor, self.config, self.dimensions = processor, config, tuple(dimensions)
        tokenizer = processor.tokenizer
        self.pad_id: int = tokenizer.pad_token_id
        if self.pad_id is None:
            raise ValueError("the tokenizer has no pad token")
        self.suffix_ids = {
            d: tokenizer(suffix_text(config, d), add_special_tokens=False)["input_ids"]
            for d in self.dimensions
        }
        self.label_ids: dict[str, list[int]] = {}
        for d in self.dimensions:
            ids = []
            for label in rubric(config, d).labels:
                encoded = tokenizer(label, add_special_tokens=False)["input_ids"]
                if len(encoded) != 1:
                    raise ValueError(f"label {label!r} of {d} is {len(encoded)} tokens, need 1")
                ids.append(encoded[0])
            self.label_ids[d] = ids

    def encode_prefix(self, samples: np.ndarray, fields: Mapping[str, Any]) -> PrefixInputs:
        """Encode a clip (16 kHz mono samples, at most 30 s) with its context fields."""
        out = self.processor(
            text=[prefix_text(self.config, fields)],
            audio=[np.asarray(samples, dtype=np.float32)],
            sampling_rate=TARGET_SR,
            return_tensors="pt",
        )
        return PrefixInputs(
            out["input_ids"][0].tolist(), out["input_features"][0], out["feature_attention_mask"][0]
        )

    def label_id(self, dimension: str, label: str) -> int:
        """The token id of ``label`` for ``dimension``."""
        labels = rubric(self.config, dimension).labels
        return self.label_ids[dimension][labels.index(label)]


def pad(sequences: Sequence[Sequence[int]], pad_id: int, side: str) -> tuple[Any, Any]:
    """``(ids, attention_mask)`` long tensors of shape (n, longest), padded on ``side``."""
    import torch

    longest = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), longest), dtype=torch.long)
    for i, seq in enumerate(sequences):
        span = slice(longest - len(seq), longest) if side == "left" else slice(0, len(seq))
        ids[i, span] = torch.tensor(list(seq), dtype=torch.long)
        mask[i, span] = 1
    return ids, mask


def stack_audio(prefixes: Sequence[PrefixInputs]) -> dict[str, Any]:
    """Batch the mel features of several prefixes."""
    import torch

    return {
        "input_features": torch.stack([p.input_features for p in prefixes]),
        "feature_attention_mask": torch.stack([p.feature_attention_mask for p in prefixes]),
    }
