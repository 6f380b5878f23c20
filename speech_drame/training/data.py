"""Training examples for DRAME-Eval: one clip, one dimension, one sampled annotator label.

Each (clip, dimension) pair with at least one valid annotator score is an example. Every time
an example is drawn, the target is the label of ONE annotator picked uniformly at random
among those with a valid (non-null) score, so over many draws each label appears with its
share of the annotators (the paper's sampling-based training). Null scores (Content Pass
failures, gated "N/A") are never sampled; a pair without any valid score is skipped and
counted. Draws use torch's default generator, which the Trainer seeds and checkpoints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..audio_llm.qwen2_audio import IGNORE_INDEX, PromptEncoder, pad, stack_audio
from ..scorers.drame_eval import clip_from_row


def valid_labels(values: Sequence[int | bool | None]) -> list[int]:
    """The non-null annotator values, as ints (Content Pass booleans become 0/1)."""
    return [int(v) for v in values if v is not None]


def sample_label(values: Sequence[int | bool | None], generator: Any = None) -> int:
    """One annotator's label, drawn uniformly over the annotators with a valid value.

    Raises ``ValueError`` when every value is null.
    """
    import torch

    labels = valid_labels(values)
    if not labels:
        raise ValueError(f"no valid annotator label among {list(values)!r}")
    return labels[int(torch.randint(len(labels), (1,), generator=generator))]


@dataclass
class ExampleIndex:
    """The (row, dimension) training pairs and, per dimension, the clips skipped."""

    pairs: list[tuple[int, str]]
    skipped: dict[str, int] = field(default_factory=dict)


def index_examples(
    annotations: Sequence[Mapping[str, Sequence[Any]]], dimensions: Sequence[str]
) -> ExampleIndex:
    """Pairs of every row with each dimension that has at least one valid score."""
    pairs: list[tuple[int, str]] = []
    skipped: Counter = Counter({d: 0 for d in dimensions})
    for i, ann in enumerate(annotations):
        for dim in dimensions:
            if dim not in ann:
                raise ValueError(f"row {i}: annotations have no {dim!r} (have {sorted(ann)})")
            if valid_labels(ann[dim]):
                pairs.append((i, dim))
            else:
                skipped[dim] += 1
    return ExampleIndex(pairs, dict(skipped))


class AnnotatorSampledDataset:
    """A map-style dataset over the pairs of :func:`index_examples`, for the Trainer.

    ``__getitem__`` decodes the clip (first 30 s, 16 kHz mono) and samples its label anew.
    """

    def __init__(self, rows: Any, dimensions: Sequence[str]):
        self.rows = rows
        self.dimensions = tuple(dimensions)
        self.index = index_examples(rows.select_columns(["annotations"])["annotations"], dimensions)

    def __len__(self) -> int:
        return len(self.index.pairs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        row_index, dim = self.index.pairs[i]
        row = self.rows[row_index]
        return {
            "clip": clip_from_row(row),
            "dimension": dim,
            "label": str(sample_label(row["annotations"][dim])),
        }


class DrameEvalCollator:
    """Batches examples: prefix + dimension suffix + label token, loss on the label only."""

    def __init__(self, encoder: PromptEncoder):
        self.encoder = encoder

    def __call__(self, examples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import torch

        prefixes = [
            self.encoder.encode_prefix(ex["clip"].samples, ex["clip"].fields) for ex in examples
        ]
        sequences, targets = [], []
        for prefix, ex in zip(prefixes, examples, strict=True):
            target = self.encoder.label_id(ex["dimension"], ex["label"])
            sequences.append(prefix.input_ids + self.encoder.suffix_ids[ex["dimension"]] + [target])
            targets.append(target)
        input_ids, attention_mask = pad(sequences, self.encoder.pad_id, "right")
        labels = torch.full_like(input_ids, IGNORE_INDEX)
        for i, (seq, target) in enumerate(zip(sequences, targets, strict=True)):
            labels[i, len(seq) - 1] = target
        return {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "labels": labels,
            **stack_audio(prefixes),
        }


def answer_token_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
    """Cross-entropy on the label positions only, summed and divided by ``num_items_in_batch``.

    Passed to the Trainer as ``compute_loss_func`` so that the loss is normalised by the label
    count of the whole accumulated batch (across devices), not per micro-batch.
    """
    import torch

    logits = outputs.logits[:, :-1]
    targets = labels[:, 1:].to(logits.device)
    keep = targets != IGNORE_INDEX
    loss = torch.nn.functional.cross_entropy(logits[keep].float(), targets[keep], reduction="sum")
    count = num_items_in_batch if num_items_in_batch is not None else keep.sum()
    return loss / count
