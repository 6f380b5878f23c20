"""Fine-tuning a trained LiteScorer on new ratings (``speech-drame train-lite --init SCORER``),
typically a campaign's export.

What fine-tuning means for this model family (:mod:`.model`: one hidden layer shared by one
5-way head per dimension and the Content Pass head):

- **Warm start.** The network starts from the initial ("parent") scorer's weights: hidden layer,
  heads, Content Pass head and the projection of the context embeddings. Its input
  normalisation, context projection and architecture (hidden size, dropout, components) are
  kept as they are: the weights were learned in those coordinates. Training is the same label
  distribution learning over annotators as :func:`~.fit.train_lite_model`'s.
- **Same features.** The parent must have been trained on the feature versions this
  installation extracts; otherwise :func:`load_parent` refuses, naming both versions of each
  extractor that differs (train from scratch instead).
- **Dimensions.** A dimension the new data rates (at least one usable rating under the label
  policy) is trained. One the parent has and the new data does not rate keeps its head's
  weights exactly; it shares the hidden layer, so its scores still move with it: how far, on
  the new training clips, is recorded (``kept_drift``). One the new data rates and the parent
  lacks gets a new head (seeded start, the usual weight decay). Content Pass likewise.
- **Staying near the parent** (``anchor``): the L2-SP penalty of Li, Grandvalet and Davoine
  (ICML 2018), ``anchor / 2 * ||w - w_parent||^2`` over the inherited weights, is added to
  every step's loss in place of the weight decay toward zero; ``0`` lets them move freely, a
  large value keeps them at the parent's.
- **Zero epochs** copy the parent unchanged (same dimensions, weights and normalisation: the
  same scores to the bit) under a new id: the parent's baseline on the new data.

Every fine-tuned scorer records its parent (id, where it was read, its training data and
evaluation, and its own ancestors) in ``info["init"]``, so its id differs from the parent's
even after zero epochs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.errors import UsageError
from speech_drame.extras import require
from speech_drame.features.blueprint import FEATURE_VERSIONS, Blueprint
from speech_drame.features.common import torch_threads
from speech_drame.schema import CONFIGS, CONTENT_PASS, Config, check_config, dimensions
from speech_drame.scorers.base import ScorerError

from .features import feature_matrix, n_embedded
from .fit import label_targets, run_epochs
from .model import (
    CONFIG_FILE,
    LEVELS,
    LiteModel,
    TrainingOptions,
    build_net,
    differing_feature_versions,
    lite_model_id,
    scorer_folder,
    state_arrays,
)

# Defaults of ``train-lite --init`` (150 epochs from scratch), chosen on
# benchmarks/bench_lite_finetune.py: about 60 new clips whose raters mostly agree with the parent
# are fitted better than by the parent or by training from scratch; raters who contradict it
# are better served by training from scratch.
DEFAULT_ANCHOR = 0.01  # L2-SP strength
DEFAULT_EPOCHS = 50


@dataclass(frozen=True)
class ParentScorer:
    """The scorer a fine-tuning starts from: the model, the folder it was read from and the
    source as given (a folder, or a Hub ``ORG/NAME[@REVISION]``)."""

    model: LiteModel
    folder: Path | None = None
    source: str | None = None
    hub_id: str | None = None  # the Hub repo it was fetched from (``source`` without a folder)

    @property
    def id(self) -> str:
        return lite_model_id(self.model)

    def record(self) -> dict[str, Any]:
        """What a fine-tuned scorer records of its parent: ``id``, ``source`` (as given),
        ``path`` (absolute), ``hub_id``, its training ``dataset``, ``label_policy`` and recorded
        ``evaluation`` (headline figures per split), and its ``lineage`` (its id, then its own
        parent's lineage)."""
        info = self.model.info
        ancestors = info.get("init", {}).get("parent", {}).get("lineage", [])
        return {
            "id": self.id,
            "source": self.source,
            "path": str(self.folder.resolve()) if self.folder is not None else None,
            "hub_id": self.hub_id,
            "dataset": info.get("dataset"),
            "label_policy": self.model.options.label_policy,
            "evaluation": info.get("evaluation", {}),
            "lineage": [self.id, *ancestors],
        }


def _versions(versions: Mapping[str, str], names: Sequence[str]) -> str:
    return ", ".join(f"{k}={versions.get(k, 'none')}" for k in names)


def load_parent(source: str | os.PathLike, config: Config) -> ParentScorer:
    """The ``config`` scorer of ``source`` (a scorer folder, a folder holding one per config,
    or a Hub ``ORG/NAME[@REVISION]``) to fine-tune.

    Raises:
        ScorerError: no ``config`` scorer there (the message lists the configs it holds), or
            one trained on other feature versions (the message names both versions of each
            extractor that differs).
    """
    from .scorer import resolve_scorer_path

    config = check_config(config)
    root = resolve_scorer_path(str(source)) or Path(str(source))
    folder = scorer_folder(config, root)
    cfg_path = folder / CONFIG_FILE
    cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else {}
    if cfg.get("mode") != config:
        held = [c for c in CONFIGS if (root / c / CONFIG_FILE).is_file()]
        if not held and cfg.get("mode") in CONFIGS:
            held = [cfg["mode"]]
        hint = (
            f"it holds {', '.join(held)} only: pass --configs {' '.join(held)}"
            if held
            else f"not a LiteScorer folder (needs {CONFIG_FILE} and model.safetensors, or one "
            "such folder per config)"
        )
        raise ScorerError(f"initial scorer {source}: no {config} LiteScorer there ({hint})")
    recorded = cfg.get("feature_versions") or {}
    differ = differing_feature_versions(recorded)
    if differ:
        raise ScorerError(
            f"initial scorer {folder}: trained on feature versions {_versions(recorded, differ)}"
            f", but this installation extracts {_versions(FEATURE_VERSIONS, differ)}; its "
            "weights only read the features they were trained on: train from scratch "
            "(without --init)"
        )
    hub_id = None if Path(str(source)).exists() else str(source)
    return ParentScorer(LiteModel.load(folder), folder, str(source), hub_id)


def check_anchor(anchor: float) -> float:
    """``anchor`` when it is a finite strength >= 0.

    Raises:
        UsageError: any other value, named.
    """
    if not (anchor >= 0 and np.isfinite(anchor)):
        raise UsageError(f"anchor {anchor!r}: expected a finite strength >= 0")
    return anchor


def fine_tune_lite_model(
    parent: ParentScorer | LiteModel,
    blueprints: Sequence[Blueprint],
    labels: Mapping[str, Sequence[Sequence[Any]]],
    options: TrainingOptions | None = None,
    anchor: float = DEFAULT_ANCHOR,
    info: Mapping[str, Any] | None = None,
) -> LiteModel:
    """Fine-tune ``parent`` on new rated clips (see the module docstring for what changes).

    Args:
        parent: the initial scorer (a bare :class:`~.model.LiteModel` records no folder).
        blueprints: the new training clips, with the parent's mode's context similarities.
        labels: as for :func:`~.fit.train_lite_model`.
        options: schedule (``epochs``, default :data:`DEFAULT_EPOCHS`; ``lr``, ``batch_size``,
            ``seed``, ``label_policy``; ``weight_decay`` for new heads only); the architecture
            is the parent's.
        anchor: L2-SP strength pulling the inherited weights toward the parent's (>= 0).
        info: provenance stored in the config, beside ``n_train`` and ``init``.

    Raises:
        ValueError: no clip or no usable rating in ``labels``; a negative ``anchor``
            (:class:`~speech_drame.errors.UsageError`).
    """
    torch = require("torch", "LiteScorer")
    if not isinstance(parent, ParentScorer):
        parent = ParentScorer(parent)
    base = parent.model
    check_anchor(anchor)
    opts = replace(
        options or TrainingOptions(epochs=DEFAULT_EPOCHS),
        hidden=base.options.hidden,
        dropout=base.options.dropout,
        context_components=base.options.context_components,
    )
    mode, n = base.mode, len(blueprints)
    if not n:
        raise ValueError(f"no {mode} clip to fine-tune on")
    candidates = tuple(d for d in dimensions(mode) if d in labels or d in base.dimensions)
    pass_given = mode == "archetype" and CONTENT_PASS in labels
    scores, votes = label_targets(labels, candidates, pass_given, n, opts.label_policy)
    rated = [d for j, d in enumerate(candidates) if not np.isnan(scores[:, j]).all()]
    pass_rated = votes is not None and not np.isnan(votes).all()
    if not rated and not pass_rated:
        raise ValueError(
            f"no usable {mode} rating among the labels {sorted(labels)} (label policy "
            f"{opts.label_policy!r}): nothing to fine-tune on"
        )
    training = opts.epochs > 0
    dims = tuple(d for d in candidates if d in base.dimensions or (training and d in rated))
    content_pass = base.content_pass or (training and pass_rated)
    x = feature_matrix(blueprints, mode)
    xn = torch.from_numpy((x - base.mean) / base.std)

    torch.manual_seed(opts.seed)
    net = build_net(x.shape[1], dims, content_pass, opts.hidden, opts.dropout, n_embedded(mode),
                    opts.context_components)  # fmt: skip
    parent_net = base.torch_net()
    missing, unexpected = net.load_state_dict(parent_net.state_dict(), strict=False)
    assert not unexpected, unexpected  # every parent weight has its place in the new network
    initial = {k: v.detach().clone() for k, v in parent_net.named_parameters()}
    inherited = [(p, initial[k]) for k, p in net.named_parameters() if k in initial]
    added = [p for k, p in net.named_parameters() if k not in initial]
    groups = [{"params": [p for p, _ in inherited], "weight_decay": 0.0}]
    if added:
        groups.append({"params": added, "weight_decay": opts.weight_decay})
    opt = torch.optim.AdamW(groups, lr=opts.lr)

    def penalty():
        return anchor / 2 * sum(((p - p0) ** 2).sum() for p, p0 in inherited)

    if training:
        rng = np.random.default_rng(opts.seed)
        score_m = scores[:, [candidates.index(d) for d in dims]]
        pass_m = votes if pass_rated else None
        net.train()
        with torch_threads(1):
            run_epochs(net, opt, xn, score_m, pass_m, rng, opts, penalty if anchor else None)
    net.eval()
    model = LiteModel(
        mode, dims, content_pass, base.mean.copy(), base.std.copy(), state_arrays(net), opts
    )
    trained = set(rated) if training else set()
    kept = [d for d in base.dimensions if d not in trained]
    pass_trained = training and pass_rated
    record = {
        "parent": parent.record(),
        "anchor": anchor,
        "epochs": opts.epochs,
        "label_policy": opts.label_policy,
        "dimensions": {
            "updated": [d for d in base.dimensions if d in trained],
            "added": [d for d in dims if d not in base.dimensions],
            "kept": kept,
        },
        "content_pass": _content_pass_fate(base.content_pass, content_pass, pass_trained),
        "kept_drift": (
            _drift(base, model, x, kept, base.content_pass and not pass_trained) if training else {}
        ),
    }
    model.info = {"n_train": n, **(info or {}), "init": record}
    return model


def _content_pass_fate(had: bool, has: bool, rated: bool) -> str | None:
    """What fine-tuning did to the Content Pass head: updated, added, kept (or ``None``)."""
    if not has:
        return None
    return ("updated" if rated else "kept") if had else "added"


def _drift(
    parent: LiteModel, child: LiteModel, x: np.ndarray, kept: Sequence[str], kept_pass: bool
) -> dict[str, float]:
    """Mean |change| on ``x`` of the expected score of each kept dimension (and of the Content
    Pass probability when that head is kept): they move with the shared hidden layer."""
    if not kept and not kept_pass:
        return {}
    before, p_before = parent.predict(x)
    after, p_after = child.predict(x)
    out = {
        d: float(np.mean(np.abs(
            (after[:, child.dimensions.index(d)] - before[:, parent.dimensions.index(d)]) @ LEVELS
        )))
        for d in kept
    }  # fmt: skip
    if kept_pass:
        out[CONTENT_PASS] = float(np.mean(np.abs(p_after - p_before)))
    return out
