"""Training a :class:`~.model.LiteModel` by label distribution learning over annotators
(Speech-DRAME Sec. 5.1, App. L.3): at every step one annotator's label is sampled per example
and dimension; archetype Content Pass is trained on sampled annotator votes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from speech_drame.extras import require
from speech_drame.features.blueprint import Blueprint
from speech_drame.features.common import torch_threads
from speech_drame.labels import apply_label_policy, check_label_policy
from speech_drame.schema import CONTENT_PASS, SCORE_MIN, Config, check_config, dimensions

from .features import feature_matrix, n_embedded
from .model import LiteModel, TrainingOptions, build_net, state_arrays


def _label_matrix(labels: Sequence[Sequence[Any]], what: str) -> np.ndarray:
    """Ragged per-example annotator labels -> float array (n, max annotators), NaN = missing."""
    width = max((len(row) for row in labels), default=0)
    out = np.full((len(labels), max(width, 1)), np.nan)
    for i, row in enumerate(labels):
        for j, v in enumerate(row):
            if v is None:
                continue
            if what != CONTENT_PASS and (
                isinstance(v, bool) or not isinstance(v, (int, np.integer, float))
            ):
                raise ValueError(f"{what}: example {i}, annotator {j}: not a score: {v!r}")
            out[i, j] = float(v)
    return out


def _sample(matrix: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One random non-missing entry per row (NaN where a row has none)."""
    sub = matrix[rows]
    valid = ~np.isnan(sub)
    keys = np.where(valid, rng.random(sub.shape), -1.0)
    pick = keys.argmax(axis=1)
    out = sub[np.arange(len(rows)), pick]
    out[~valid.any(axis=1)] = np.nan
    return out


def train_lite_model(
    blueprints: Sequence[Blueprint],
    labels: Mapping[str, Sequence[Sequence[Any]]],
    mode: Config,
    options: TrainingOptions | None = None,
    info: Mapping[str, Any] | None = None,
) -> LiteModel:
    """Train a LiteScorer network by label distribution learning over annotators.

    Args:
        blueprints: training clips, with this mode's context similarities.
        labels: per dimension, per clip, every annotator's rating (``None`` = null rating,
            treated by ``options.label_policy``); for archetype, ``content_pass`` holds the
            annotators' boolean votes. Dimensions of the mode that the data lacks are left out.
        mode: ``archetype`` or ``realism``.
        options: hyper-parameters.
        info: free-form provenance stored in the config (dataset, split, counts).
    """
    torch = require("torch", "LiteScorer")
    options = options or TrainingOptions()
    mode = check_config(mode)
    dims = tuple(d for d in dimensions(mode) if d in labels)
    if not dims:
        raise ValueError(f"no {mode} dimension among the labels {sorted(labels)}")
    content_pass = mode == "archetype" and CONTENT_PASS in labels
    n = len(blueprints)
    score_m, pass_m = label_targets(labels, dims, content_pass, n, options.label_policy)
    x = feature_matrix(blueprints, mode)
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-6] = 1.0
    xn = torch.from_numpy((x - mean) / std)
    embedded = n_embedded(mode)

    rng = np.random.default_rng(options.seed)
    torch.manual_seed(options.seed)
    net = build_net(
        x.shape[1],
        dims,
        content_pass,
        options.hidden,
        options.dropout,
        embedded,
        options.context_components,
    )
    if embedded:
        net.context_basis.copy_(_whitening_basis(xn[:, -embedded:], options.context_components))
    opt = torch.optim.AdamW(net.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    net.train()
    with torch_threads(1):  # a small MLP: one thread beats several (thread start-up per op)
        run_epochs(net, opt, xn, score_m, pass_m, rng, options)
    net.eval()
    meta = {"n_train": n, **(info or {})}
    return LiteModel(mode, dims, content_pass, mean, std, state_arrays(net), options, meta)


def label_targets(
    labels: Mapping[str, Sequence[Sequence[Any]]],
    dims: Sequence[str],
    content_pass: bool,
    n: int,
    policy: str,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The training targets: ratings ``(n, dims, annotators)`` under the label policy ``policy``
    and Content Pass votes ``(n, annotators)`` (``None`` without ``content_pass``); NaN = no
    usable label. A dimension of ``dims`` absent from ``labels`` is all NaN."""
    for name, rows in labels.items():
        if len(rows) != n:
            raise ValueError(f"labels[{name!r}] has {len(rows)} rows for {n} clips")
    check_label_policy(policy)
    per_dim = [
        _label_matrix([apply_label_policy(r, d, policy) for r in labels.get(d, [[]] * n)], d)
        for d in dims
    ]
    width = max(m.shape[1] for m in per_dim)
    score_m = np.full((n, len(dims), width), np.nan)  # (n, dims, annotators)
    for j, m in enumerate(per_dim):
        score_m[:, j, : m.shape[1]] = m
    pass_m = _label_matrix(labels[CONTENT_PASS], CONTENT_PASS) if content_pass else None
    return score_m, pass_m


def _whitening_basis(x, k: int):
    """``(d, k)`` projection onto the top ``k`` principal directions of ``x`` (centred rows),
    scaled so that each projected component has unit variance on ``x``."""
    torch = require("torch", "LiteScorer")
    _, s, vt = torch.linalg.svd(x.double() - x.double().mean(0), full_matrices=False)
    r = min(k, len(s))  # fewer clips than components: the rest stay zero
    basis = torch.zeros(x.shape[1], k, dtype=torch.float64)
    basis[:, :r] = vt[:r].T / (s[:r] / max(len(x) - 1, 1) ** 0.5).clamp(min=1e-6)
    return basis.float()


def run_epochs(net, opt, xn, score_m, pass_m, rng, options: TrainingOptions, penalty=None) -> None:
    """``options.epochs`` epochs of label distribution learning; ``penalty()``, when given, is
    added to every step's loss (:mod:`.finetune`'s pull toward the initial weights)."""
    torch = require("torch", "LiteScorer")
    n, n_dims = score_m.shape[:2]
    for _ in range(options.epochs):
        order = rng.permutation(n)
        for start in range(0, n, options.batch_size):
            rows = order[start : start + options.batch_size]
            target = np.stack([_sample(score_m[:, j], rows, rng) for j in range(n_dims)], axis=1)
            mask = torch.from_numpy(~np.isnan(target))
            idx = torch.from_numpy(np.nan_to_num(target - SCORE_MIN).astype(np.int64))
            logits, pass_logit = net(xn[rows])
            logp = torch.log_softmax(logits, dim=-1).gather(-1, idx[..., None])[..., 0]
            loss = -(logp * mask).sum() / mask.sum().clamp(min=1)
            if pass_m is not None:
                votes = _sample(pass_m, rows, rng)
                ok = torch.from_numpy(~np.isnan(votes))
                if ok.any():
                    target_pass = torch.from_numpy(np.nan_to_num(votes).astype(np.float32))
                    loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(
                        pass_logit[ok], target_pass[ok]
                    )
            if penalty is not None:
                loss = loss + penalty()
            opt.zero_grad()
            loss.backward()
            opt.step()
