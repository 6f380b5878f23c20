"""HCoT labels (dimension-first typed-tie human judgments) and evaluation of a judge against them.

A label file is JSONL (or a JSON list) of records with ``content``, ``voice_quality``,
``paralinguistics`` and ``overall``, each ``"1"``, ``"2"``, ``"both_good"`` or ``"both_bad"``,
and an ``id`` (the line number when absent). Predictions use the same format; a prediction may
hold ``overall`` only (an overall-only judge), and the dimension metrics then skip it. A
prediction that has dimension labels but no content label (absent or null) has a *missing
content label*; :func:`evaluate` treats it by the missing-content rule
(:data:`~.labels.MISSING_CONTENT`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_text
from speech_drame.jsonl import read_objects

from .labels import (
    DIMENSIONS,
    LABELS,
    MISSING_CONTENT,
    OVERALL,
    WINNERS,
    MissingContent,
    check_missing_content,
    parse_label,
)

FIELDS: tuple[str, ...] = (*DIMENSIONS, OVERALL)


@dataclass(frozen=True)
class PairLabels:
    """The labels of one pair; a dimension a judge did not give is absent from ``labels``."""

    id: str
    labels: Mapping[str, str]

    def __getitem__(self, name: str) -> str:
        return self.labels[name]


def parse_record(
    record: Mapping[str, Any], where: str, require_dimensions: bool = True
) -> PairLabels:
    """One record -> :class:`PairLabels`; ``overall`` is always required.

    Raises:
        ValueError: a missing or invalid label, naming ``where`` and the field.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}")
    needed = FIELDS if require_dimensions else (OVERALL,)
    missing = [f for f in needed if f not in record]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    labels = {
        f: parse_label(record[f], f"{where} {f}") for f in FIELDS if record.get(f) is not None
    }
    if OVERALL not in labels:
        raise ValueError(f"{where}: overall is null")
    rid = record.get("id", where)
    return PairLabels(str(rid), labels)


def _records(path: Path) -> list[tuple[str, Any]]:
    if path.suffix != ".json":
        return read_objects(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of records")
    return [(f"{path}[{i}]", r) for i, r in enumerate(data)]


def load_labels(path: str | os.PathLike, require_dimensions: bool = True) -> list[PairLabels]:
    """Read an HCoT label (or prediction) file; ids must be unique.

    Raises:
        ValueError: unreadable JSON, an invalid record or a duplicate id (naming the line).
    """
    path = Path(path)
    pairs = []
    for where, record in _records(path):
        if isinstance(record, dict) and "id" not in record:
            record = {**record, "id": where.rsplit(":", 1)[-1]}
        pairs.append(parse_record(record, where, require_dimensions))
    seen: set[str] = set()
    for p in pairs:
        if p.id in seen:
            raise ValueError(f"{path}: duplicate id {p.id!r}")
        seen.add(p.id)
    return pairs


def write_labels(pairs: Sequence[PairLabels], path: str | os.PathLike) -> Path:
    """Write ``pairs`` as JSONL in the HCoT format."""
    lines = [json.dumps({"id": p.id, **dict(p.labels)}) + "\n" for p in pairs]
    return write_text(path, "".join(lines))


def _rate(hits: int, n: int) -> dict[str, Any]:
    return {"rate": hits / n if n else float("nan"), "hits": hits, "n": n}


@dataclass
class Evaluation:
    """A judge's agreement with HCoT labels (see :func:`evaluate`)."""

    n_gold: int
    n_evaluated: int
    missing: list[str]  # gold ids the judge gave no usable labels for (excluded)
    accuracy: dict[str, float] = field(default_factory=dict)
    kappa: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # pairs behind each field's numbers
    winner_on_bad: dict[str, Any] = field(default_factory=dict)
    winner_slice: dict[str, Any] = field(default_factory=dict)
    content_tie_resolution: dict[str, Any] = field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)  # gold -> predicted
    mcnemar: dict[str, Any] | None = None
    # the missing-content rule, its definition, the pairs it touched (and, under both_bad,
    # those whose overall in the file was not both_bad)
    missing_content: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _by_id(pairs: Sequence[PairLabels], what: str) -> dict[str, PairLabels]:
    out: dict[str, PairLabels] = {}
    for p in pairs:
        if p.id in out:
            raise ValueError(f"{what}: duplicate id {p.id!r}")
        out[p.id] = p
    return out


def missing_content_label(pair: PairLabels) -> bool:
    """True when ``pair`` has dimension labels but no content label (not an overall-only one)."""
    return "content" not in pair.labels and any(d in pair.labels for d in DIMENSIONS)


def apply_missing_content(
    predictions: Sequence[PairLabels], rule: MissingContent
) -> tuple[list[PairLabels], dict[str, Any]]:
    """``predictions`` under the missing-content ``rule``, and what it did.

    ``both_bad`` (released): such a pair's overall becomes both_bad (``changed`` lists those
    whose file said otherwise); ``exclude``: such pairs are dropped.
    """
    check_missing_content(rule)
    hit = [p.id for p in predictions if missing_content_label(p)]
    info: dict[str, Any] = {
        "rule": rule,
        "definition": MISSING_CONTENT[rule],
        "n": len(hit),
        "ids": hit,
    }
    if rule == "exclude":
        drop = set(hit)
        return [p for p in predictions if p.id not in drop], info
    out, changed = [], []
    for p in predictions:
        if missing_content_label(p) and p[OVERALL] != "both_bad":
            changed.append(p.id)
            p = PairLabels(p.id, {**p.labels, OVERALL: "both_bad"})
        out.append(p)
    info["changed"] = changed
    return out, info


def evaluate(
    predictions: Sequence[PairLabels],
    gold: Sequence[PairLabels],
    other: Sequence[PairLabels] | None = None,
    missing_content: MissingContent = "both_bad",
) -> Evaluation:
    """Agreement of ``predictions`` with the ``gold`` HCoT labels.

    Pairs are matched by id. A gold pair without a prediction is a failure of the judge:
    excluded from every number and listed in ``missing``. A prediction with a missing content
    label follows ``missing_content`` (:func:`apply_missing_content`; the same rule is applied
    to ``other``); the pairs affected are listed in ``missing_content``, and under ``exclude``
    they are left out of every number. Reported: accuracy and Cohen's kappa
    per dimension and overall; the winner-on-bad rate (a winner named where humans said
    both_bad); accuracy on the slice where humans named a winner; the share of pairs whose
    human content label is a tie (both_good or both_bad) that the judge resolved to a winner
    overall; the overall confusion table; and, with ``other`` (another judge's predictions),
    McNemar's test on overall correctness over the pairs both judges labelled (exact binomial
    and chi-square with continuity correction).

    Raises:
        ValueError: a prediction for an id absent from ``gold``, duplicate ids, or no pair
            left to evaluate.
    """
    from speech_drame.stats import cohen_kappa, mcnemar

    gold_by = _by_id(gold, "gold")
    pred_by = _by_id(predictions, "predictions")
    unknown = sorted(set(pred_by) - set(gold_by))
    if unknown:
        raise ValueError(f"predictions for ids not in the gold labels: {unknown[:5]}")
    kept, handled = apply_missing_content(list(pred_by.values()), missing_content)
    pred_by = {p.id: p for p in kept}
    excluded = set(handled["ids"]) if missing_content == "exclude" else set()
    ids = [i for i in gold_by if i in pred_by]
    if not ids:
        raise ValueError("no gold pair has a prediction")
    result = Evaluation(
        len(gold_by),
        len(ids),
        [i for i in gold_by if i not in pred_by and i not in excluded],
        missing_content=handled,
    )
    for name in FIELDS:
        both = [i for i in ids if name in pred_by[i].labels and name in gold_by[i].labels]
        if not both:
            continue
        g = [gold_by[i][name] for i in both]
        p = [pred_by[i][name] for i in both]
        result.counts[name] = len(both)
        result.accuracy[name] = sum(a == b for a, b in zip(g, p, strict=True)) / len(both)
        result.kappa[name] = cohen_kappa(g, p)
    gold_o = {i: gold_by[i][OVERALL] for i in ids}
    pred_o = {i: pred_by[i][OVERALL] for i in ids}
    bad = [i for i in ids if gold_o[i] == "both_bad"]
    result.winner_on_bad = _rate(sum(pred_o[i] in WINNERS for i in bad), len(bad))
    won = [i for i in ids if gold_o[i] in WINNERS]
    result.winner_slice = {
        "accuracy": _rate(sum(pred_o[i] == gold_o[i] for i in won), len(won))["rate"],
        "n": len(won),
    }
    tied = [i for i in ids if gold_by[i].labels.get("content") in ("both_good", "both_bad")]
    result.content_tie_resolution = _rate(sum(pred_o[i] in WINNERS for i in tied), len(tied))
    result.confusion = {g: {p: 0 for p in LABELS} for g in LABELS}
    for i in ids:
        result.confusion[gold_o[i]][pred_o[i]] += 1
    if other is not None:
        other_by = _by_id(apply_missing_content(other, missing_content)[0], "other")
        shared = [i for i in ids if i in other_by]
        if not shared:
            raise ValueError("the other judge labelled none of the evaluated pairs")
        a = [int(pred_o[i] == gold_o[i]) for i in shared]
        b = [int(other_by[i][OVERALL] == gold_o[i]) for i in shared]
        result.mcnemar = {
            "n": len(shared),
            "accuracy": sum(a) / len(shared),
            "other_accuracy": sum(b) / len(shared),
            "exact": mcnemar(a, b, exact=True),
            "chi2": mcnemar(a, b, exact=False, correction=True),
        }
    return result


def reconstruct_overall(
    gold: Sequence[PairLabels], folds: int = 5, seed: int = 0
) -> dict[str, Any]:
    """How well a multinomial logistic model rebuilds ``overall`` from the three dimensions.

    The features are the one-hot dimension labels (12 columns). Returns the training accuracy
    and the stratified ``folds``-fold cross-validated accuracy (fewer folds when the rarest
    overall label has fewer pairs; none when it has a single one).
    """
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rows = [p for p in gold if all(f in p.labels for f in FIELDS)]
    if len(rows) < 2:
        raise ValueError(f"need at least 2 fully labelled pairs, got {len(rows)}")
    x = np.array(
        [[float(p[d] == lab) for d in DIMENSIONS for lab in LABELS] for p in rows], dtype=float
    )
    y = np.array([p[OVERALL] for p in rows])
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"every pair has overall {classes[0]!r}: nothing to model")
    model = LogisticRegression(max_iter=2000)
    out: dict[str, Any] = {
        "n": len(rows),
        "train_accuracy": float((model.fit(x, y).predict(x) == y).mean()),
    }
    k = min(folds, int(counts.min()))
    if k >= 2:
        cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        pred = cross_val_predict(LogisticRegression(max_iter=2000), x, y, cv=cv)
        out.update(cv_accuracy=float((pred == y).mean()), folds=k)
    else:
        out.update(cv_accuracy=None, folds=0, note="rarest overall label has one pair: no CV")
    return out
