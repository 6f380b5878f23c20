"""Qwen2-Audio as a DRAME-Eval judge: loading, prompt layout and input encoding.

The words of a query come from a prompt profile (:mod:`speech_drame.prompt_profile`; default:
this package's wording); this module lays them out in the Qwen2-Audio chat format: the
profile's system turn, the user turn of the chosen prompt order, and the assistant turn opened
with the profile's answer prefix. The user turn is split before the dimension's instruction:

* prefix = system turn + the user turn up to ``{instruction}`` (the audio included), shared
  by every dimension of a clip (scoring runs it once and reuses its KV cache);
* suffix = the rest of the user turn, the end of the user turn and the opened assistant turn.

In the default profile the orders are ``instruction_first`` (the official code's order: the
context follows the instruction, in the suffix) and ``context_first`` (the context is in the
prefix), :data:`PROMPT_ORDERS`. The label (a single token) is the next token, followed in
training by the answer suffix. Prefix, suffix body, answer prefix, label and answer suffix are
tokenized separately and concatenated, in training and in scoring alike, so a cached prefix
followed by a suffix is exactly the sequence the model was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..audio import TARGET_SR
from ..prompt_profile import PromptProfile, default_profile, render
from ..prompts import rubric
from ..schema import Config
from .tiny import TINY_MODEL, build_tiny

DEFAULT_MODEL = "Qwen/Qwen2-Audio-7B-Instruct"
AUDIO_PLACEHOLDER = "<|audio_bos|><|AUDIO|><|audio_eos|>"
IGNORE_INDEX = -100

PromptOrder = Literal["instruction_first", "context_first"]
DEFAULT_PROMPT_ORDER: PromptOrder = "instruction_first"
PROMPT_ORDERS: dict[str, str] = {  # the orders of the default profile
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
    "paper's Appendix L.3 samples prompts at random); scoring asks the canonical question",
    False: "the canonical question only (the official code's choice, apart from its realism "
    "RoleVariation records)",
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


def check_prompt_order(order: str | None, profile: PromptProfile | None = None) -> str:
    """``order`` (default: the profile's default order) if ``profile`` (default: this
    package's) has it; ``ValueError`` naming ``prompt_order`` and the choices otherwise."""
    return (profile or default_profile()).check_order(order)


def lora_targets(scope: str) -> str | list[str]:
    """PEFT ``target_modules`` of a LoRA scope (:data:`LORA_SCOPES`)."""
    _check(scope, LORA_SCOPES, "lora_scope")
    return list(LORA_TARGET_NAMES) if scope == "all" else LORA_TARGET_REGEX


def _system_turn(profile: PromptProfile) -> str:
    return "" if profile.system is None else f"<|im_start|>system\n{profile.system}<|im_end|>\n"


def _user_values(
    profile: PromptProfile, config: Config, fields: Mapping[str, Any], template: str
) -> dict[str, str]:
    """The values of the order fields ``template`` uses (the context only if it is there)."""
    profile.dimensions(config)  # a profile without the config says so
    values = {"audio": AUDIO_PLACEHOLDER, "preamble": profile.preamble[config]}
    if "{context}" in template:
        values["context"] = profile.context_text(config, fields)
    return values


def prefix_text(
    config: Config,
    fields: Mapping[str, Any],
    order: str | None = None,
    profile: PromptProfile | None = None,
) -> str:
    """The shared part of every query about one clip (audio placeholder included), in
    ``profile`` (default: this package's) and ``order`` (default: the profile's); ``fields``
    (the clip's context) is used if the order puts the context there."""
    profile = profile or default_profile()
    head, _ = profile.user_parts(profile.check_order(order))
    user = render(head, _user_values(profile, config, fields, head))
    return f"{_system_turn(profile)}<|im_start|>user\n{user}"


def _suffix_body(
    profile: PromptProfile,
    config: Config,
    dimension: str,
    fields: Mapping[str, Any],
    order: str,
    question: str | None,
) -> str:
    _, tail = profile.user_parts(order)
    values = _user_values(profile, config, fields, tail)
    values["instruction"] = profile.instruction(config, dimension, question)
    return f"{render(tail, values)}<|im_end|>\n<|im_start|>assistant\n"


def suffix_text(
    config: Config,
    dimension: str,
    fields: Mapping[str, Any],
    order: str | None = None,
    question: str | None = None,
    profile: PromptProfile | None = None,
) -> str:
    """The per-dimension end of a query, ending where the label token is predicted.

    ``question`` replaces the rubric's question (prompt variation in training); ``fields``
    (the clip's context) is used if the order puts the context after the instruction.
    """
    profile = profile or default_profile()
    order = profile.check_order(order)
    body = _suffix_body(profile, config, dimension, fields, order, question)
    return body + profile.answer_prefix


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
    """Token ids for the queries of one config in one prompt order of a prompt profile
    (default: this package's, in its default order).

    Raises ``ValueError`` if a label is not a single token of the tokenizer (the label
    distribution is read from one next-token position), the order is unknown, or the profile
    has no instruction for one of ``dimensions``.
    """

    def __init__(
        self,
        processor: Any,
        config: Config,
        dimensions: Sequence[str],
        order: str | None = None,
        profile: PromptProfile | None = None,
    ):
        self.processor, self.config, self.dimensions = processor, config, tuple(dimensions)
        self.profile = profile = profile or default_profile()
        self.order = profile.check_order(order)
        for d in self.dimensions:
            profile.instruction(config, d)
        self.tokenizer = tokenizer = processor.tokenizer
        self.pad_id: int = tokenizer.pad_token_id
        if self.pad_id is None:
            raise ValueError("the tokenizer has no pad token")
        self.answer_open_ids = self._ids(profile.answer_prefix)
        self.answer_close_ids = self._ids(profile.answer_suffix) if profile.answer_suffix else []
        self.label_ids: dict[str, list[int]] = {}
        for d in self.dimensions:
            ids = []
            for label in profile.label_tokens(d):
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
        """Token ids of :func:`suffix_text` (ending with those of the answer prefix)."""
        body = _suffix_body(self.profile, self.config, dimension, fields, self.order, question)
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
        self.profile.context_text(self.config, fields)
        out = self.processor(
            text=[prefix_text(self.config, fields, self.order, self.profile)],
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
        """Token ids of the answer after the answer prefix: the label, then the answer suffix."""
        return [self.label_id(dimension, label), *self.answer_close_ids]

    def label_id(self, dimension: str, label: str) -> int:
        """The token id of ``label`` (a value, ``"1".."5"`` or ``"0"``/``"1"``) for ``dimension``."""
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
