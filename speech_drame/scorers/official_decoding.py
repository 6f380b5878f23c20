"""Official decoding: the next-token scores the official pipeline reads a label from.

The official fine-tuning test scripts call ``generate`` with :data:`OFFICIAL_SAMPLING` and
``output_scores=True``, and read the label distribution from the returned scores at the label
position. Those scores are the logits after every processor ``generate`` builds: first the
checkpoint's own ``generation_config`` processors (repetition penalty, no-repeat n-gram,
suppressed tokens, ...), then the sampling filters (top-k, top-p and any others the
``generation_config`` sets). :func:`official_scores` builds that list with transformers' own
code for one prompt, exactly as ``generate`` does before its first new token, and applies it.
"""

from __future__ import annotations

from typing import Any

# The official test scripts' generate() arguments (temperature 1, top-k capped at 50, top-p
# 0.95, sampling, at most 256 new tokens); the rest comes from the model's generation_config.
OFFICIAL_SAMPLING: dict[str, Any] = {
    "do_sample": True,
    "temperature": 1.0,
    "top_k": 50,
    "top_p": 0.95,
    "max_new_tokens": 256,
}
OFFICIAL_TOP_K, OFFICIAL_TOP_P = OFFICIAL_SAMPLING["top_k"], OFFICIAL_SAMPLING["top_p"]

# A label's share of the distribution (label_mass) is read before these: they only prune.
_PRUNING = (
    "TopKLogitsWarper",
    "TopPLogitsWarper",
    "TopHLogitsWarper",
    "MinPLogitsWarper",
    "TypicalLogitsWarper",
    "EpsilonLogitsWarper",
    "EtaLogitsWarper",
)
# The setting each processor's description shows, by attribute name.
_SETTINGS = ("penalty", "temperature", "top_k", "top_p", "min_p", "mass", "epsilon", "ngram_size")


def _generator(model: Any) -> Any:
    """The model ``generate`` runs on, under a PEFT wrapper if there is one."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def generation_processors(model: Any, prompt_ids: Any, **sampling: Any) -> Any:
    """The ``LogitsProcessorList`` that ``model.generate(prompt_ids, **OFFICIAL_SAMPLING)``
    applies to the logits of its first new token (``prompt_ids``: a (1, length) tensor, the
    whole unpadded prompt, audio tokens included); ``sampling`` overrides
    :data:`OFFICIAL_SAMPLING` (e.g. ``top_k=...``)."""
    generator = _generator(model)
    config, _ = generator._prepare_generation_config(None, **{**OFFICIAL_SAMPLING, **sampling})
    generator._prepare_special_tokens(config, True, device=prompt_ids.device, batch_size=1)
    length, defaults = prompt_ids.shape[1], generator.generation_config
    config = generator._prepare_generated_length(
        config,
        has_default_max_length=defaults.max_length is None,
        has_default_min_length=defaults.min_length is None,
        model_input_name="input_ids",
        input_ids_length=length,
        inputs_tensor=prompt_ids,
    )
    return generator._get_logits_processor(
        config,
        input_ids_seq_length=length,
        encoder_input_ids=prompt_ids,
        device=prompt_ids.device,
        model_kwargs={},  # no padding: generate drops an all-ones attention mask
    )


def official_scores(model: Any, prompt_ids: Any, logits: Any, **sampling: Any) -> tuple[Any, Any]:
    """``(reshaped, scores)`` of one prompt's next-token ``logits`` (vocab,): ``scores`` is what
    ``generate`` returns as ``output_scores`` for the first new token (pruned tokens at
    ``-inf``); ``reshaped`` is the same before the sampling filters pruned anything (the
    distribution a label's share is read from)."""
    from transformers import LogitsProcessorList

    processors = generation_processors(model, prompt_ids, **sampling)
    cut = next(
        (i for i, p in enumerate(processors) if type(p).__name__ in _PRUNING), len(processors)
    )
    row = logits.float().clone()[None, :]
    reshaped = LogitsProcessorList(processors[:cut])(prompt_ids, row)
    scores = LogitsProcessorList(processors[cut:])(prompt_ids, reshaped.clone())
    return reshaped[0], scores[0]


def official_filter(logits: Any, model: Any, prompt_ids: Any, **sampling: Any) -> Any:
    """Which tokens of one prompt's ``logits`` (vocab,) survive official decoding: a boolean
    tensor (a NaN survives, to be reported as non-finite output)."""
    return official_scores(model, prompt_ids, logits, **sampling)[1] != float("-inf")


def describe_processors(model: Any) -> list[str]:
    """What official decoding applies to ``model``, in order, e.g.
    ``["RepetitionPenalty(1.1)", "TopK(50)", "TopP(0.95)"]``."""
    import torch

    device = next(model.parameters()).device
    names = []
    for p in generation_processors(model, torch.zeros((1, 1), dtype=torch.long, device=device)):
        name = type(p).__name__.removesuffix("LogitsProcessor").removesuffix("LogitsWarper")
        values = [getattr(p, a) for a in _SETTINGS if isinstance(getattr(p, a, None), int | float)]
        names.append(f"{name}({values[0]:g})" if values else name)
    return names
