"""The AnimeScore-style ranker: frozen encoder -> BiLSTM -> mean pooling -> MLP -> score.

Training sees pairs only: for a pair (a, b) with the choice ``y`` (+1 = a), the loss is the
pairwise logistic loss ``-log sigmoid(y * (s(a) - s(b)))``. The encoder is frozen, so its frame
features are computed once per clip (and cached on disk); only the head learns.

**Configurations**: :mod:`.config` (``released`` by default, ``compact``).

**Checkpoint selection.** The release keeps the epoch with the lowest loss on its *test* pairs.
Here the kept epoch is the one with the lowest NLL on validation pairs: ``val_pairs`` when given,
else a seeded share (``val_fraction``) of the training pairs, all rows of the same two clips on
the same side. The test pairs never choose the model.

A trained ranker is a folder with ``model.safetensors`` (head weights, and the frame
standardisation when the config has it) and ``config.json`` (encoder, the full config with its
name, training summary).

Unreadable audio (:class:`~speech_drame.audio.AudioError`) does not stop a batch:
:meth:`Ranker.score_files` gives the reason per file, and training and evaluation leave out the
pairs of such a clip and report the clips and the count (``unreadable``, ``pairs_left_out``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import replace_dir, staging_dir, write_json
from speech_drame.features.blueprint import CacheArg, resolve_cache
from speech_drame.features.cache import FeatureCache
from speech_drame.protocols.animescore.config import (
    FORMAT_1_DEFAULTS,
    RankerConfig,
    config_from_mapping,
)
from speech_drame.protocols.animescore.encoders import (
    WHISPER,
    FrameEncoder,
    build_encoder,
    clip_frames,
)
from speech_drame.protocols.animescore.pairs import PairSet, pair_metrics, per_clip

FORMAT = "speech-drame-animescore-ranker"
FORMAT_VERSION = 2  # 2: the config has name, layer_norm and frame_standardise
WEIGHTS, CONFIG = "model.safetensors", "config.json"


def _head(input_dim: int, config: RankerConfig) -> Any:
    import torch
    from torch import nn

    width = 2 * config.lstm_hidden

    class RankerHead(nn.Module):
        """Frames -> BiLSTM -> masked mean over frames -> MLP -> one score."""

        def __init__(self) -> None:
            super().__init__()
            if config.frame_standardise:
                self.register_buffer("frame_mean", torch.zeros(input_dim))
                self.register_buffer("frame_std", torch.ones(input_dim))
            self.lstm = nn.LSTM(input_dim, config.lstm_hidden, batch_first=True, bidirectional=True)
            norm = [nn.LayerNorm(width), nn.Dropout(config.dropout)] if config.layer_norm else []
            self.mlp = nn.Sequential(
                *norm,
                nn.Linear(width, config.mlp_hidden),
                nn.GELU(),
                nn.Dropout(config.dropout),
                nn.Linear(config.mlp_hidden, 1),
            )

        def forward(self, frames: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            x = frames
            if config.frame_standardise:
                x = (frames - self.frame_mean) / self.frame_std
            packed = nn.utils.rnn.pack_padded_sequence(
                x, lengths.cpu(), batch_first=True, enforce_sorted=False
            )
            out, _ = self.lstm(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(
                out, batch_first=True, total_length=x.shape[1]
            )
            mask = (torch.arange(x.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
            pooled = (out * mask).sum(1) / lengths[:, None].clamp(min=1)
            return self.mlp(pooled).squeeze(-1)

    return RankerHead()


def pad_frames(clips: list[np.ndarray]) -> tuple[Any, Any]:
    """Zero-padded ``(batch, frames, dim)`` tensor and the frame counts."""
    import torch

    lengths = torch.tensor([len(c) for c in clips])
    batch = torch.zeros(len(clips), int(lengths.max()), clips[0].shape[1])
    for i, c in enumerate(clips):
        batch[i, : len(c)] = torch.from_numpy(c)
    return batch, lengths


def pairwise_logistic_loss(score_diff: Any, a_preferred: Any) -> Any:
    """Mean of ``-log sigmoid(y * (s_a - s_b))`` with ``y = +1`` when a is preferred, else -1."""
    import torch.nn.functional as F

    sign = a_preferred.float() * 2 - 1
    return F.softplus(-sign * score_diff).mean()


class Ranker:
    """A trained head over a frozen encoder; :meth:`score` maps clips to scalar scores."""

    def __init__(self, encoder: FrameEncoder, head: Any, config: RankerConfig, summary: dict):
        self.encoder, self.head, self.config, self.summary = encoder, head.eval(), config, summary

    def score_frames(self, clips: list[np.ndarray], batch_size: int = 32) -> np.ndarray:
        """Scores of clips given as frame features."""
        import torch

        out = []
        with torch.no_grad():
            for i in range(0, len(clips), batch_size):
                out.append(self.head(*pad_frames(clips[i : i + batch_size])).numpy())
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)

    def score(
        self, paths: list[str | os.PathLike], cache: CacheArg = "default", batch_size: int = 32
    ) -> np.ndarray:
        """Scores of audio files (higher = preferred); frame features go through ``cache``.

        Raises:
            AudioError: a file cannot be read (:meth:`score_files` goes on past it).
        """
        store = resolve_cache(cache)
        return self.score_frames([clip_frames(self.encoder, p, store) for p in paths], batch_size)

    def score_files(
        self, paths: list[str | os.PathLike], cache: CacheArg = "default", batch_size: int = 32
    ) -> tuple[dict[int, float], dict[int, str]]:
        """``(scores, errors)`` by position in ``paths``: every readable file is scored, an
        unreadable one gets the reason instead."""
        frames, errors = readable_frames(self.encoder, [str(p) for p in paths], cache)
        ok = [i for i, p in enumerate(paths) if str(p) in frames]
        values = self.score_frames([frames[str(paths[i])] for i in ok], batch_size)
        failed = {i: errors[str(p)] for i, p in enumerate(paths) if str(p) in errors}
        return dict(zip(ok, values.tolist(), strict=True)), failed

    def evaluate(
        self, pairs: PairSet, cache: CacheArg = "default", progress: bool = False
    ) -> dict[str, Any]:
        """Pair accuracy, NLL and ROC-AUC under the pair set's convention (:meth:`PairSet.metrics`),
        over the pairs whose clips are readable; ``unreadable`` and ``pairs_left_out`` say what
        was left out."""
        frames, errors = readable_frames(self.encoder, pairs.files, cache, progress)
        pairs = pairs.without(errors)
        files = pairs.files
        scores = dict(zip(files, self.score_frames([frames[f] for f in files]), strict=True))
        result = pairs.metrics([scores[p.file_a] - scores[p.file_b] for p in pairs.pairs])
        return {**result, "unreadable": pairs.unreadable, "pairs_left_out": pairs.left_out}

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Write ``model.safetensors`` and ``config.json`` into a staging folder and swap it in
        as ``out_dir`` (a kill leaves the old ranker or the new one, never a mix)."""
        from safetensors.torch import save_file

        out = Path(out_dir)
        staged = staging_dir(out)
        state = {k: v.detach().contiguous() for k, v in self.head.state_dict().items()}
        save_file(state, str(staged / WEIGHTS), metadata={"format": FORMAT})
        config = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "encoder": self.encoder.spec(),
            "input_dim": self.encoder.dim,
            "ranker": asdict(self.config),
            "training": self.summary,
        }
        write_json(staged / CONFIG, config)
        return replace_dir(staged, out)

    @classmethod
    def load(cls, model_dir: str | os.PathLike, encoder: FrameEncoder | None = None) -> Ranker:
        """Rebuild a saved ranker; ``encoder`` overrides the one named in ``config.json``."""
        from safetensors.torch import load_file

        model_dir = Path(model_dir)
        for name in (CONFIG, WEIGHTS):
            if not (model_dir / name).is_file():
                raise FileNotFoundError(f"{model_dir / name}: missing (not a saved ranker folder)")
        config = json.loads((model_dir / CONFIG).read_text(encoding="utf-8"))
        if config.get("format") != FORMAT:
            raise ValueError(
                f"{model_dir / CONFIG}: format is {config.get('format')!r}, not {FORMAT}"
            )
        encoder = encoder or build_encoder(config["encoder"])
        if encoder.dim != config["input_dim"]:
            raise ValueError(
                f"{model_dir}: trained on {config['input_dim']}-dim frames, "
                f"encoder gives {encoder.dim}"
            )
        settings = config["ranker"]
        if config.get("format_version", 1) == 1:
            settings = {**FORMAT_1_DEFAULTS, **settings}
        ranker_config = config_from_mapping(settings, str(model_dir / CONFIG))
        head = _head(config["input_dim"], ranker_config)
        head.load_state_dict(load_file(str(model_dir / WEIGHTS)))
        return cls(encoder, head, ranker_config, config.get("training", {}))


def readable_frames(
    encoder: FrameEncoder, files: list[str], cache: CacheArg = "default", progress: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Frame features of each readable file, and the reason for each unreadable one."""
    store = resolve_cache(cache)
    return per_clip(lambda f: clip_frames(encoder, f, store), files, progress)


def _split(pairs: PairSet, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (train, validation) row indices; all rows of the same two clips on one side."""
    keys = [frozenset((p.file_a, p.file_b)) for p in pairs.pairs]
    groups = list(dict.fromkeys(keys))
    if len(groups) < 4:
        raise ValueError(
            f"need at least 4 distinct clip pairs to train with a validation split, got "
            f"{len(groups)} (or give validation pairs)"
        )
    order = np.random.default_rng(seed).permutation(len(groups))
    n_val = min(len(groups) - 1, max(1, round(fraction * len(groups))))
    rows: dict[frozenset[str], list[int]] = {}
    for i, key in enumerate(keys):
        rows.setdefault(key, []).append(i)

    def take(chosen: np.ndarray) -> np.ndarray:
        return np.array([i for g in chosen for i in rows[groups[g]]], dtype=int)

    return take(order[n_val:]), take(order[:n_val])


def train_ranker(
    pairs: PairSet,
    encoder: FrameEncoder | str = WHISPER,
    config: RankerConfig | None = None,
    cache: CacheArg = "default",
    log: Callable[[str], None] | None = None,
    progress: bool = False,
    val_pairs: PairSet | None = None,
) -> Ranker:
    """Train the head on ``pairs`` with the pairwise logistic loss; keep the best epoch.

    Args:
        pairs: training pairs (their convention says whether repeated judgements were merged).
        encoder: a :class:`FrameEncoder`, or a name for :func:`build_encoder`.
        config: head and training settings (default: the ``released`` configuration).
        cache: frame-feature cache (``"default"``, a folder, a FeatureCache or ``None``).
        log: called with one line per epoch, e.g. ``print``.
        progress: a progress bar over the clips' feature extraction (stderr).
        val_pairs: pairs that choose the epoch; by default a seeded share of ``pairs``
            (``config.val_fraction``). Never the test pairs.

    Returns:
        The ranker of the epoch with the lowest validation NLL; ``ranker.summary`` holds the
        history, how the epoch was chosen (``selection``), the pair convention and the pairs
        left out because a clip is unreadable (``unreadable``, ``pairs_left_out``).
    """
    import torch

    config = config or RankerConfig()
    encoder = build_encoder(encoder) if isinstance(encoder, str) else encoder
    store: FeatureCache | None = resolve_cache(cache)
    start = time.perf_counter()
    wanted = pairs.files + (val_pairs.files if val_pairs is not None else [])
    frames, errors = readable_frames(encoder, wanted, store, progress)
    pairs = pairs.without(errors)
    if val_pairs is None:
        train, val = _split(pairs, config.val_fraction, config.seed)
        rows, val_convention = pairs.pairs, pairs.convention
        selection = (
            f"lowest validation NLL; validation = {len(val)} of the {len(pairs.pairs)} training "
            f"pairs (val_fraction {config.val_fraction}, seed {config.seed}, rows of the same "
            "two clips kept together)"
        )
    else:
        val_pairs = val_pairs.without(errors)
        if not val_pairs.pairs or not pairs.pairs:
            raise ValueError("no readable training or validation pairs left")
        rows, val_convention = pairs.pairs + val_pairs.pairs, val_pairs.convention
        train = np.arange(len(pairs.pairs))
        val = np.arange(len(pairs.pairs), len(rows))
        source = val_pairs.origin or "the validation pairs"
        selection = f"lowest validation NLL; validation = {len(val)} pairs of {source}"
    files = list(dict.fromkeys(f for p in rows for f in (p.file_a, p.file_b)))
    index = {f: i for i, f in enumerate(files)}
    clips = [frames[f] for f in files]
    feature_seconds = time.perf_counter() - start
    a_idx = np.array([index[p.file_a] for p in rows])
    b_idx = np.array([index[p.file_b] for p in rows])
    y = np.array([p.a_preferred for p in rows])

    with torch.random.fork_rng():
        torch.manual_seed(config.seed)
        head = _head(encoder.dim, config)
        if config.frame_standardise:
            used = np.unique(np.concatenate([a_idx[train], b_idx[train]]))
            stacked = torch.from_numpy(np.concatenate([clips[i] for i in used]))
            head.frame_mean.copy_(stacked.mean(0))
            head.frame_std.copy_(stacked.std(0).clamp(min=1e-5))
        optimizer = torch.optim.AdamW(
            head.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
        )
        rng = np.random.default_rng(config.seed)
        ranker = Ranker(encoder, head, config, {})
        best = (float("inf"), None, 0)
        history = []
        stale = 0
        train_start = time.perf_counter()
        for epoch in range(1, config.max_epochs + 1):
            head.train()
            order = rng.permutation(train)
            total = 0.0
            for i in range(0, len(order), config.batch_pairs):
                batch = order[i : i + config.batch_pairs]
                members, inverse = np.unique(
                    np.concatenate([a_idx[batch], b_idx[batch]]), return_inverse=True
                )
                scores = head(*pad_frames([clips[m] for m in members]))
                n = len(batch)
                diff = scores[inverse[:n]] - scores[inverse[n:]]
                loss = pairwise_logistic_loss(diff, torch.from_numpy(y[batch]))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * n
            head.eval()
            members, inverse = np.unique(
                np.concatenate([a_idx[val], b_idx[val]]), return_inverse=True
            )
            val_scores = ranker.score_frames([clips[m] for m in members])[inverse]
            n = len(val)
            val_metrics = pair_metrics(
                val_scores[:n] - val_scores[n:], y[val].astype(int), val_convention
            )
            history.append(
                {
                    "epoch": epoch,
                    "train_loss": total / len(train),
                    "val_nll": val_metrics["nll"],
                    "val_accuracy": val_metrics["accuracy"],
                }  # fmt: skip
            )
            if log is not None:
                log(
                    f"epoch {epoch}: train loss {total / len(train):.4f}, "
                    f"val NLL {val_metrics['nll']:.4f}, val accuracy {val_metrics['accuracy']:.3f}"
                )
            if val_metrics["nll"] < best[0]:
                state = {k: v.detach().clone() for k, v in head.state_dict().items()}
                best, stale = (val_metrics["nll"], state, epoch), 0
            else:
                stale += 1
                if config.patience and stale >= config.patience:
                    break
        head.load_state_dict(best[1])
        head.eval()
    ranker.summary = {
        "config_name": config.name,
        "pairs": len(pairs.pairs),
        "train_pairs": int(len(train)),
        "val_pairs": int(len(val)),
        "clips": len(files),
        "pair_convention": pairs.convention,
        "ties_excluded": len(pairs.ties),
        "unreadable": pairs.unreadable,
        "pairs_left_out": pairs.left_out,
        "pair_source": pairs.origin,
        "note": pairs.note,
        "selection": selection,
        "best_epoch": best[2],
        "best_val_nll": best[0],
        "epochs_run": len(history),
        "feature_seconds": round(feature_seconds, 3),
        "train_seconds": round(time.perf_counter() - train_start, 3),
        "history": history,
    }
    return ranker


def score(
    paths: list[str | os.PathLike], model_dir: str | os.PathLike, cache: CacheArg = "default"
) -> np.ndarray:
    """Batch reward-model API: scores of ``paths`` under the ranker saved in ``model_dir``."""
    return Ranker.load(model_dir).score(paths, cache)
