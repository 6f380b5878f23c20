"""Training examples for DRAME-Eval: one clip, one dimension, one sampled annotator label.

Each (clip, dimension) pair with at least one usable annotator label is an example. The
annotator lists are read through the label policy (:mod:`speech_drame.labels`): under
``paper`` (the default) a null or "N/A" rating of a 1-5 dimension counts as 1, under ``skip``
it is left out; Content Pass null votes are left out under both. Every time an example is
drawn, the target is the label of ONE annotator picked uniformly at random among the usable
ones, so over many draws each label appears with its share of the annotators (the paper's
sampling-based training); a pair without any usable label is skipped and counted.

With prompt variation, each draw also picks one paraphrase of the dimension's question
(:func:`speech_drame.prompts.instruction_pool`). Draws use torch's default generator, which
the Trainer seeds and checkpoints, so a run is repeatable and resumes where it stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..audio_llm.qwen2_audio import IGNORE_INDEX, LOSS_SPANS, PromptEncoder, pad, stack_audio
from ..labels import DEFAULT_LABEL_POLICY, apply_label_policy, check_label_policy
from ..scorers.drame_eval import clip_from_row


def valid_labels(values: Sequence[int | bool | None]) -> list[int]:
    """The non-null annotator values, as ints (Content Pass booleans become 0/1)."""
    return [int(v) for v in values if v is not None]


def sample_label(values: Sequence[int | bool | None], generator: Any = None) -> int:
    """One annotator's label, drawn uniformly over the annotators with a valid value.

    Raises ``ValueError`` when every value is null.
    """
    labels = valid_labels(values)
    if not labels:
        raise ValueError(f"no valid annotator label among {list(values)!r}")
    return labels[_draw(len(labels), generator)]


def sample_paraphrase(paraphrases: Sequence[str], generator: Any = None) -> str:
    """One paraphrase, drawn uniformly (torch's default generator unless one is given)."""
    return paraphrases[_draw(len(paraphrases), generator)]


def _draw(n: int, generator: Any) -> int:
    import torch

    return int(torch.randint(n, (1,), generator=generator))


@dataclass
class ExampleIndex:
    """The (row, dimension) training pairs; per dimension, the clips skipped (no usable
    label) and the null ratings the label policy counted as 1."""

    pairs: list[tuple[int, str]]
    skipped: dict[str, int] = field(default_factory=dict)
    filled: dict[str, int] = field(default_factory=dict)


def index_examples(
    annotations: Sequence[Mapping[str, Sequence[Any]]],
    dimensions: Sequence[str],
    label_policy: str = DEFAULT_LABEL_POLICY,
) -> ExampleIndex:
    """Pairs of every row with each dimension that has a usable label under ``label_policy``."""
    check_label_policy(label_policy)
    pairs: list[tuple[int, str]] = []
    skipped: Counter = Counter({d: 0 for d in dimensions})
    filled: Counter = Counter({d: 0 for d in dimensions})
    for i, ann in enumerate(annotations):
        for dim in dimensions:
            if dim not in ann:
                raise ValueError(f"row {i}: annotations have no {dim!r} (have {sorted(ann)})")
            labels = apply_label_policy(ann[dim], dim, label_policy)
            filled[dim] += list(ann[dim]).count(None) - labels.count(None)
            if valid_labels(labels):
                pairs.append((i, dim))
            else:
                skipped[dim] += 1
    return ExampleIndex(pairs, dict(skipped), dict(filled))


class AnnotatorSampledDataset:
    """A map-style dataset over the pairs of :func:`index_examples`, for the Trainer.

    ``__getitem__`` decodes the clip (first 30 s, 16 kHz mono) and samples its label anew
    from the policy-applied annotator list, and, when ``paraphrases`` (dimension -> texts) is
    given, a paraphrase of the dimension's question (``question``; else ``None``, canonical).
    """

    def __init__(
        self,
        rows: Any,
        dimensions: Sequence[str],
        label_policy: str = DEFAULT_LABEL_POLICY,
        paraphrases: Mapping[str, Sequence[str]] | None = None,
    ):
        self.rows = rows
        self.dimensions = tuple(dimensions)
        self.label_policy = label_policy
        self.paraphrases = paraphrases
        annotations = rows.select_columns(["annotations"])["annotations"]
        self.index = index_examples(annotations, dimensions, label_policy)

    def __len__(self) -> int:
        return len(self.index.pairs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        row_index, dim = self.index.pairs[i]
        row = self.rows[row_index]
        labels = apply_label_policy(row["annotations"][dim], dim, self.label_policy)
        return {
            "clip": clip_from_row(row),
            "dimension": dim,
            "label": str(sample_label(labels)),
            "question": (
                sample_paraphrase(self.paraphrases[dim])
                if self.paraphrases and dim in self.paraphrases
                else None
            ),
        }


class RandomDimensionDataset(AnnotatorSampledDataset):
    """The official code's sampler (``--sampler random_dimension``): one example per clip per
    visit, its dimension drawn uniformly at each visit among the clip's dimensions with a usable
    label (the pairs of :func:`index_examples`), then its label as in the parent class."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        by_clip: dict[int, list[int]] = {}
        for k, (row_index, _) in enumerate(self.index.pairs):
            by_clip.setdefault(row_index, []).append(k)
        self.clips = list(by_clip.values())  # per clip, its positions in ``index.pairs``

    def __len__(self) -> int:
        return len(self.clips)

    def __getitem__(self, i: int) -> dict[str, Any]:
        pairs = self.clips[i]
        return super().__getitem__(pairs[_draw(len(pairs), None)])


SAMPLERS = {"pairs": AnnotatorSampledDataset, "random_dimension": RandomDimensionDataset}


class DrameEvalCollator:
    """Batches examples: prefix + dimension suffix (ending with ``<answer>``) + label +
    ``</answer>``; the loss is on the answer's tokens (``answer_span``: ``<answer>k</answer>``)
    or on the label only (``label_token``)."""

    def __init__(self, encoder: PromptEncoder, loss_on: str = "answer_span"):
        if loss_on not in LOSS_SPANS:
            raise ValueError(
                f"loss_on: unknown value {loss_on!r}; expected one of {', '.join(LOSS_SPANS)}"
            )
        self.encoder, self.loss_on = encoder, loss_on

    def __call__(self, examples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import torch

        enc = self.encoder
        sequences, spans = [], []
        prefixes = [enc.encode_prefix(ex["clip"].samples, ex["clip"].fields, ()) for ex in examples]
        for prefix, ex in zip(prefixes, examples, strict=True):
            suffix = enc.suffix(ex["dimension"], ex["clip"].fields, ex.get("question"))
            answer = enc.answer_ids(ex["dimension"], ex["label"])
            sequences.append(prefix.input_ids + suffix + answer)
            label_at = len(sequences[-1]) - len(answer)
            spans.append(
                range(label_at - len(enc.answer_open_ids), len(sequences[-1]))
                if self.loss_on == "answer_span"
                else range(label_at, label_at + 1)
            )
        input_ids, attention_mask = pad(sequences, enc.pad_id, "right")
        labels = torch.full_like(input_ids, IGNORE_INDEX)
        for i, span in enumerate(spans):
            labels[i, span.start : span.stop] = input_ids[i, span.start : span.stop]
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": labels,
            **stack_audio(prefixes),
        }


def answer_token_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
    """Cross-entropy on the labelled positions (the answer span or the label token), summed
    and divided by ``num_items_in_batch``.

    Passed to the Trainer as ``compute_loss_func`` so that the loss is normalised by the
    number of loss tokens of the whole accumulated batch (across devices), not per micro-batch.
    """
    import torch

    logits = outputs.logits[:, :-1]
    targets = labels[:, 1:].to(logits.device)
    keep = targets != IGNORE_INDEX
    loss = torch.nn.functional.cross_entropy(logits[keep].float(), targets[keep], reduction="sum")
    count = num_items_in_batch if num_items_in_batch is not None else keep.sum()
    return loss / count
