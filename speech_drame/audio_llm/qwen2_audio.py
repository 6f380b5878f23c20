"""Qwen2-Audio as a DRAME-Eval judge: loading, prompt layout and input encoding.

A query is the Qwen2-Audio chat format split in two at a fixed point, in one of two orders
(:data:`PROMPT_ORDERS`):

* ``instruction_first`` (the official code's order): prefix = system turn, the audio and the
  task preamble; suffix = the dimension's rubric instruction, then the clip's context;
* ``context_first``: prefix = system turn, the audio, the task preamble and the clip's
  context; suffix = the rubric instruction.

Either way the prefix is shared by every dimension of a clip (scoring runs it once and reuses
its KV cache), and the suffix ends with the end of the user turn and the assistant turn
opened with ``<answer>``. The label (``"1".."5"``, or ``"0"``/``"1"`` for Content Pass) is the
next token, followed by ``</answer>``. Prefix, suffix body, ``<answer>``, label and
``</answer>`` are tokenized separately and concatenated, in training and in scoring alike, so a
cached prefix followed by a suffix is exactly the sequence the model was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..audio import TARGET_SR
from ..prompts import (
    ANSWER_CLOSE,
    ANSWER_OPEN,
    format_context,
    instruction,
    rubric,
    task_preamble,
    with_question,
)
from ..schema import Config
from .tiny import TINY_MODEL, build_tiny

DEFAULT_MODEL = "Qwen/Qwen2-Audio-7B-Instruct"
SYSTEM_PROMPT = "You are a helpful assistant."
AUDIO_PLACEHOLDER = "<|audio_bos|><|AUDIO|><|audio_eos|>"
IGNORE_INDEX = -100

PromptOrder = Literal["instruction_first", "context_first"]
DEFAULT_PROMPT_ORDER: PromptOrder = "instruction_first"
PROMPT_ORDERS: dict[str, str] = {
    "instruction_first": "the dimension's instruction before the clip's context (the official "
    "code's order; the shared prefix is the system turn, the audio and the task preamble)",
    "context_first": "the clip's context before the dimension's instruction (not the official "
    "order; the shared prefix also holds the context)",
}
# LoRA targets. Plain module names (the official config) also match the audio encoder's
# q/k/v projections; the regex keeps LoRA on the language model only.
LORA_TARGET_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LORA_TARGET_REGEX = (
    r".*language_model\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"
)
LORA_SCOPES: dict[str, str] = {
    "all": "every module named " + " ".join(LORA_TARGET_NAMES) + " (the official config; this "
    "includes the audio encoder's attention)",
    "language": "the language model's attention and MLP projections only (not the official "
    "config; the audio encoder stays frozen)",
}
PROMPT_VARIATION: dict[bool, str] = {
    True: "one of 30 paraphrases of the dimension's question drawn per training example (the "
    "official code trains with paraphrased prompts); scoring asks the canonical question",
    False: "the canonical question only (not the official setting)",
}
# Which tokens of the answer <answer>k</answer> carry the training loss.
LOSS_SPANS: dict[str, str] = {
    "answer_span": "every token of the answer `<answer>k</answer>` (the official trainer)",
    "label_token": "the label token k only (not the official trainer)",
}


def _check(value: str, choices: Mapping[str, str], option: str) -> str:
    if value not in choices:
        raise ValueError(f"{option}: unknown value {value!r}; expected one of {', '.join(choices)}")
    return value


def check_prompt_order(order: str) -> PromptOrder:
    """``order`` if known; ``ValueError`` naming ``prompt_order`` and the choices otherwise."""
    return _check(order, PROMPT_ORDERS, "prompt_order")  # type: ignore[return-value]


def lora_targets(scope: str) -> str | list[str]:
    """PEFT ``target_modules`` of a LoRA scope (:data:`LORA_SCOPES`)."""
    _check(scope, LORA_SCOPES, "lora_scope")
    return list(LORA_TARGET_NAMES) if scope == "all" else LORA_TARGET_REGEX


def prefix_text(
    config: Config, fields: Mapping[str, Any], order: str = DEFAULT_PROMPT_ORDER
) -> str:
    """The shared part of every query about one clip (audio placeholder included); with
    ``context_first`` it holds the clip's context (``fields``), else ``fields`` is unused."""
    context = (
        f"{format_context(config, fields)}\n\n"
        if check_prompt_order(order) == "context_first"
        else ""
    )
    return (
        f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n"
        f"Audio 1: {AUDIO_PLACEHOLDER}\n{task_preamble(config)}\n{context}"
    )


def _suffix_body(
    config: Config,
    dimension: str,
    fields: Mapping[str, Any],
    order: str,
    question: str | None,
) -> str:
    r = rubric(config, dimension)
    text = instruction(r if question is None else with_question(r, question))
    if check_prompt_order(order) == "instruction_first":
        text = f"{text}\n\n{format_context(config, fields)}"
    return f"{text}<|im_end|>\n<|im_start|>assistant\n"


def suffix_text(
    config: Config,
    dimension: str,
    fields: Mapping[str, Any],
    order: str = DEFAULT_PROMPT_ORDER,
    question: str | None = None,
) -> str:
    """The per-dimension end of a query, ending where the label token is predicted.

    ``question`` replaces the rubric's question (prompt variation in training); ``fields``
    (the clip's context) is used with ``instruction_first`` only.
    """
    return _suffix_body(config, dimension, fields, order, question) + ANSWER_OPEN


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
    """One clip's encoded prefix: token ids with the audio placeholder expanded, mels, and
    the token ids of each dimension's suffix (which carries the context in ``instruction_first``)."""

    input_ids: list[int]
    input_features: Any  # torch.Tensor (n_mels, frames)
    feature_attention_mask: Any  # torch.Tensor (frames,)
    suffix_ids: dict[str, list[int]] = field(default_factory=dict)


class PromptEncoder:
    """Token ids for the queries of one config in one prompt order.

    Raises ``ValueError`` if a label is not a single token of the tokenizer (the label
    distribution is read from one next-token position) or the order is unknown.
    """

    def __init__(
        self,
        processor: Any,
        config: Config,
        dimensions: Sequence[str],
        order: str = DEFAULT_PROMPT_ORDER,
    ):
        self.processor, self.config, self.dimensions = processor, config, tuple(dimensions)
        self.order = check_prompt_order(order)
        self.tokenizer = tokenizer = processor.tokenizer
        self.pad_id: int = tokenizer.pad_token_id
        if self.pad_id is None:
            raise ValueError("the tokenizer has no pad token")
        self.answer_open_ids = self._ids(ANSWER_OPEN)
        self.answer_close_ids = self._ids(ANSWER_CLOSE)
        self.label_ids: dict[str, list[int]] = {}
        for d in self.dimensions:
            ids = []
            for label in rubric(config, d).labels:
                encoded = self._ids(label)
                if len(encoded) != 1:
                    raise ValueError(f"label {label!r} of {d} is {len(encoded)} tokens, need 1")
                ids.append(encoded[0])
            self.label_ids[d] = ids

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def suffix(
        self, dimension: str, fields: Mapping[str, Any], question: str | None = None
    ) -> list[int]:
        """Token ids of :func:`suffix_text` (ending with those of ``<answer>``)."""
        body = _suffix_body(self.config, dimension, fields, self.order, question)
        return self._ids(body) + self.answer_open_ids

    def encode_prefix(
        self,
        samples: np.ndarray,
        fields: Mapping[str, Any],
        dimensions: Sequence[str] | None = None,
    ) -> PrefixInputs:
        """Encode a clip (16 kHz mono samples, at most 30 s) with its context fields, and the
        suffixes of ``dimensions`` (default: all of the encoder's; ``()`` for none).

        A missing or empty context field raises ``ValueError`` naming it, in either order.
        """
        format_context(self.config, fields)
        out = self.processor(
            text=[prefix_text(self.config, fields, self.order)],
            audio=[np.asarray(samples, dtype=np.float32)],
            sampling_rate=TARGET_SR,
            return_tensors="pt",
        )
        dims = self.dimensions if dimensions is None else dimensions
        return PrefixInputs(
            out["input_ids"][0].tolist(),
            out["input_features"][0],
            out["feature_attention_mask"][0],
            {d: self.suffix(d, fields) for d in dims},
        )

    def answer_ids(self, dimension: str, label: str) -> list[int]:
        """Token ids of the answer after ``<answer>``: the label, then ``</answer>``."""
        return [self.label_id(dimension, label), *self.answer_close_ids]

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
