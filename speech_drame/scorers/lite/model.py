"""The LiteScorer's network and its saved folder.

A shared hidden layer feeds one head per rated dimension, which outputs a distribution over the
scores 1..5; the reported score is its expectation. Archetype Content Pass is a sigmoid
probability. The trailing context embeddings of the input are projected onto fixed directions
(set from the training data).

The network is built and trained in torch (:func:`build_net`); a :class:`LiteModel` keeps its
weights as numpy arrays and scores with :func:`forward`, the same network in numpy (within 1e-6
of torch's probabilities), so scoring never imports torch.

A model is saved as ``model.safetensors`` + ``config.json`` (no pickle); the config records
the feature versions it was trained on, and loading it beside other versions is an error. The
config also records the SHA-256 of the weights, and a save replaces the folder whole (built
beside it, then swapped in), so a loaded model is always one save's config with its weights.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import replace_dir, staging_dir, write_bytes, write_json
from speech_drame.extras import require
from speech_drame.features.blueprint import FEATURE_VERSIONS, Blueprint
from speech_drame.labels import DEFAULT_LABEL_POLICY
from speech_drame.schema import SCORE_MAX, SCORE_MIN, Config, check_config
from speech_drame.scorers.base import ClipScores, ScorerError

from .features import feature_matrix, feature_names, n_embedded

FORMAT_VERSION = 2  # 2: config.json records weights_sha256
N_LEVELS = SCORE_MAX - SCORE_MIN + 1
LEVELS = np.arange(SCORE_MIN, SCORE_MAX + 1, dtype=np.float64)
CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.safetensors"
SCORER_ENV = "SPEECH_DRAME_LITE_SCORER"


def default_scorer_dir() -> Path:
    """``$SPEECH_DRAME_LITE_SCORER``, else ``artifacts/lite_scorer`` of the repository checkout
    the package runs from (where ``make demo`` trains it), else of the current folder (an
    installed package: where the README's ``train-lite`` command writes it)."""
    env = os.environ.get(SCORER_ENV)
    if env:
        return Path(env)
    import speech_drame

    checkout = Path(speech_drame.__file__).resolve().parents[1]
    root = checkout if (checkout / "pyproject.toml").is_file() else Path.cwd()
    return root / "artifacts" / "lite_scorer"


def build_net(
    n_in: int,
    dims: Sequence[str],
    content_pass: bool,
    hidden: int,
    dropout: float,
    n_embedded: int = 0,
    components: int = 0,
):
    """The network; the last ``n_embedded`` inputs (context embeddings) are projected onto
    ``components`` fixed directions (the ``context_basis`` buffer, set from training data)."""
    torch = require("torch", "LiteScorer")
    nn = torch.nn
    n_kept = n_in - n_embedded

    class LiteNet(nn.Module):
        """Shared hidden layer, one 5-way head per dimension, an optional pass logit."""

        def __init__(self) -> None:
            super().__init__()
            if n_embedded:
                self.register_buffer("context_basis", torch.zeros(n_embedded, components))
            self.trunk = nn.Sequential(
                nn.Dropout(dropout),
                nn.Linear(n_kept + (components if n_embedded else 0), hidden),
                nn.GELU(),
                nn.Dropout(dropout),
            )
            self.heads = nn.ModuleDict({d: nn.Linear(hidden, N_LEVELS) for d in dims})
            self.pass_head = nn.Linear(hidden, 1) if content_pass else None

        def forward(self, x):  # -> (logits (batch, dims, 5), pass logit (batch,) or None)
            if n_embedded:
                x = torch.cat([x[:, :n_kept], x[:, n_kept:] @ self.context_basis], dim=1)
            h = self.trunk(x)
            logits = torch.stack([self.heads[d](h) for d in dims], dim=1)
            return logits, (self.pass_head(h)[:, 0] if self.pass_head is not None else None)

    return LiteNet()


def state_arrays(net: Any) -> dict[str, np.ndarray]:
    """A trained torch network's state dict as float32 numpy arrays (a :class:`LiteModel`'s
    ``weights``)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def _embedding_shape(weights: Mapping[str, np.ndarray]) -> tuple[int, int]:
    """``(n_embedded, components)`` of the context projection, ``(0, 0)`` without one."""
    basis = weights.get("context_basis")
    return basis.shape if basis is not None else (0, 0)


def weight_shapes(
    n_in: int,
    dims: Sequence[str],
    content_pass: bool,
    hidden: int,
    n_embedded: int,
    components: int,
) -> dict[str, tuple[int, ...]]:
    """The state dict :func:`build_net` makes: each weight's name and shape."""
    trunk_in = n_in - n_embedded + (components if n_embedded else 0)
    shapes: dict[str, tuple[int, ...]] = {
        "trunk.1.weight": (hidden, trunk_in),
        "trunk.1.bias": (hidden,),
    }
    if n_embedded:
        shapes["context_basis"] = (n_embedded, components)
    widths = {f"heads.{d}": N_LEVELS for d in dims} | ({"pass_head": 1} if content_pass else {})
    for head, width in widths.items():
        shapes[f"{head}.weight"], shapes[f"{head}.bias"] = (width, hidden), (width,)
    return shapes


_erf = np.frompyfunc(math.erf, 1, 1)


def forward(
    weights: Mapping[str, np.ndarray], x: np.ndarray, dims: Sequence[str]
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`build_net`'s network in evaluation mode, in numpy: logits ``(batch, dims, 5)``
    and the pass logit ``(batch,)`` (``None`` without a pass head), float32 like torch's."""
    embedded, _ = _embedding_shape(weights)
    if embedded:
        kept = x.shape[1] - embedded
        x = np.concatenate([x[:, :kept], x[:, kept:] @ weights["context_basis"]], axis=1)
    z = (x @ weights["trunk.1.weight"].T + weights["trunk.1.bias"]).astype(np.float64)
    h = (0.5 * z * (1 + _erf(z / math.sqrt(2)).astype(np.float64))).astype(np.float32)  # GELU
    logits = np.stack(
        [h @ weights[f"heads.{d}.weight"].T + weights[f"heads.{d}.bias"] for d in dims], axis=1
    )
    if "pass_head.weight" not in weights:
        return logits, None
    return logits, (h @ weights["pass_head.weight"].T + weights["pass_head.bias"])[:, 0]


@dataclass
class TrainingOptions:
    """Hyper-parameters of :func:`~.fit.train_lite_model`."""

    hidden: int = 64
    dropout: float = 0.3
    epochs: int = 150
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 1e-2
    context_components: int = 32  # principal components kept of the embedded contexts
    seed: int = 0
    label_policy: str = DEFAULT_LABEL_POLICY  # what null ratings count as (speech_drame.labels)


@dataclass
class LiteModel:
    """A trained LiteScorer network for one config (``archetype`` or ``realism``) with its input
    normalisation; :class:`~.scorer.LiteScorer` is it as a Scorer."""

    mode: Config
    dimensions: tuple[str, ...]
    content_pass: bool
    mean: np.ndarray
    std: np.ndarray
    weights: dict[str, np.ndarray]  # the network's state dict (torch names), float32
    options: TrainingOptions = field(default_factory=TrainingOptions)
    info: dict[str, Any] = field(default_factory=dict)

    def torch_net(self) -> Any:
        """A new torch copy of the network, to train from this model (inference runs in numpy)."""
        torch = require("torch", "LiteScorer training")
        net = build_net(
            len(self.mean),
            self.dimensions,
            self.content_pass,
            self.options.hidden,
            self.options.dropout,
            *_embedding_shape(self.weights),
        )
        net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in self.weights.items()})
        return net.eval()

    # --- inference ---------------------------------------------------------------------
    def predict(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Distributions ``(n, dims, 5)`` and pass probabilities ``(n,)`` for feature vectors."""
        x = (np.asarray(vectors, dtype=np.float32) - self.mean) / self.std
        logits, pass_logit = forward(self.weights, x, self.dimensions)
        logits = logits.astype(np.float64)
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        p = 1 / (1 + np.exp(-pass_logit.astype(np.float64))) if pass_logit is not None else None
        return probs, p

    def score_blueprints(self, blueprints: Sequence[Blueprint]) -> list[ClipScores]:
        """Scores of clips whose blueprints carry this mode's context similarities and texts."""
        if not blueprints:
            return []
        probs, p = self.predict(feature_matrix(blueprints, self.mode))
        expected = probs @ LEVELS
        return [
            ClipScores(
                b.source,
                scores={d: float(expected[i, j]) for j, d in enumerate(self.dimensions)},
                distributions={d: probs[i, j].tolist() for j, d in enumerate(self.dimensions)},
                content_pass=float(p[i]) if p is not None else None,
                transcript=b.transcript.text,
                language=b.transcript.language,
                language_probability=b.transcript.language_probability,
                audio=b.audio,
            )
            for i, b in enumerate(blueprints)
        ]

    # --- persistence -------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "kind": "speech-drame-lite-scorer",
            "mode": self.mode,
            "dimensions": list(self.dimensions),
            "content_pass": self.content_pass,
            "feature_names": feature_names(self.mode),
            "feature_versions": dict(FEATURE_VERSIONS),
            "normalisation": {"mean": self.mean.tolist(), "std": self.std.tolist()},
            "options": vars(self.options),
            "info": self.info,
        }

    def save(self, folder: str | os.PathLike) -> Path:
        """Save as the folder ``folder``: ``model.safetensors`` and ``config.json`` (with the
        weights' SHA-256).

        The folder is built beside ``folder`` and swapped in whole (anything else in it is
        replaced too): after a kill or an error ``folder`` holds the previous scorer or this
        one, never one's config with the other's weights.
        """
        from safetensors.numpy import save

        weights = save(self.weights, metadata={"format": "pt"})
        config = {**self.config(), "weights_sha256": hashlib.sha256(weights).hexdigest()}
        out = Path(folder)
        stage = staging_dir(out)
        try:
            write_bytes(stage / WEIGHTS_FILE, weights)
            write_json(stage / CONFIG_FILE, config)
            replace_dir(stage, out)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        return out

    @classmethod
    def load(cls, folder: str | os.PathLike) -> LiteModel:
        """Read a saved scorer.

        Raises:
            ScorerError: missing files, an unknown format, weights that are not the ones the
                config was saved with, or feature versions that differ from the installed
                extractors (the scorer must be retrained).
        """
        from safetensors.numpy import load

        path = Path(folder)
        cfg_path = path / CONFIG_FILE
        if not cfg_path.is_file() or not (path / WEIGHTS_FILE).is_file():
            raise ScorerError(
                f"{path}: not a LiteScorer folder (needs {CONFIG_FILE} and {WEIGHTS_FILE})"
            )
        try:
            cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ScorerError(f"{cfg_path}: invalid JSON ({exc})") from None
        if (
            cfg.get("kind") != "speech-drame-lite-scorer"
            or cfg.get("format_version") != FORMAT_VERSION
        ):
            older = cfg.get("kind") == "speech-drame-lite-scorer" and cfg.get("format_version") == 1
            hint = "; saved by an older speech-drame: retrain it (speech-drame train-lite)"
            raise ScorerError(
                f"{cfg_path}: not a LiteScorer config of format {FORMAT_VERSION} "
                f"(kind={cfg.get('kind')!r}, format_version={cfg.get('format_version')!r})"
                + (hint if older else "")
            )
        weights = (path / WEIGHTS_FILE).read_bytes()
        digest = hashlib.sha256(weights).hexdigest()
        if digest != cfg.get("weights_sha256"):
            raise ScorerError(
                f"{path}: {WEIGHTS_FILE} does not belong to its {CONFIG_FILE} (weights SHA-256 "
                f"{digest[:12]}..., the config records {str(cfg.get('weights_sha256'))[:12]}...): "
                "the folder mixes two saves; save or train the scorer again"
            )
        mode = check_config(cfg["mode"])
        diff = differing_feature_versions(cfg["feature_versions"])
        if diff:
            raise ScorerError(
                f"{path}: trained on feature versions {cfg['feature_versions']}, but this "
                f"installation extracts {FEATURE_VERSIONS} (differ: {', '.join(diff)}); retrain it"
            )
        if cfg["feature_names"] != feature_names(mode):
            raise ScorerError(f"{cfg_path}: feature layout differs from this version's; retrain it")
        # Scorers saved before the label policy was recorded left null ratings out.
        options = TrainingOptions(**{"label_policy": "skip", **cfg["options"]})
        dims = tuple(cfg["dimensions"])
        arrays = load(weights)
        expected = weight_shapes(
            len(cfg["feature_names"]),
            dims,
            cfg["content_pass"],
            options.hidden,
            n_embedded(mode),
            options.context_components,
        )
        found = {k: tuple(v.shape) for k, v in arrays.items()}
        if found != expected:
            wrong = sorted(
                k for k in expected.keys() | found.keys() if found.get(k) != expected.get(k)
            )
            raise ScorerError(
                f"{path / WEIGHTS_FILE}: weights {', '.join(wrong)} are missing, extra or of "
                f"another shape than {CONFIG_FILE} describes"
            )
        norm = cfg["normalisation"]
        return cls(
            mode=mode,
            dimensions=dims,
            content_pass=bool(cfg["content_pass"]),
            mean=np.asarray(norm["mean"], dtype=np.float32),
            std=np.asarray(norm["std"], dtype=np.float32),
            weights=arrays,
            options=options,
            info=cfg.get("info", {}),
        )


def differing_feature_versions(recorded: Mapping[str, str]) -> list[str]:
    """The extractors whose version in ``recorded`` (a scorer's ``feature_versions``) is not
    the one this installation extracts, sorted."""
    names = set(recorded) | set(FEATURE_VERSIONS)
    return sorted(k for k in names if recorded.get(k) != FEATURE_VERSIONS.get(k))


def scorer_folder(mode: Config, path: str | os.PathLike | None = None) -> Path:
    """The folder of ``mode``'s scorer under ``path``: ``<path>/<mode>`` when it holds one,
    else ``path`` itself (default :func:`default_scorer_dir`)."""
    root = Path(path) if path is not None else default_scorer_dir()
    return root / mode if (root / mode / CONFIG_FILE).is_file() else root


def load_lite_model(mode: Config, path: str | os.PathLike | None = None) -> LiteModel:
    """The scorer for ``mode`` from ``path`` (a scorer folder, or a folder holding one per
    mode as ``<path>/<mode>``); default :func:`default_scorer_dir`."""
    root = Path(path) if path is not None else default_scorer_dir()
    folder = scorer_folder(mode, root)
    if not (folder / CONFIG_FILE).is_file():
        raise ScorerError(
            f"no trained {mode} LiteScorer at {root}: train one with `speech-drame train-lite "
            f"--dataset DATASET --out {root}` (DATASET: a folder written by `speech-drame build`), "
            f"or use a published one with --scorer lite:ORG/NAME or ${SCORER_ENV}"
        )
    scorer = LiteModel.load(folder)
    if scorer.mode != mode:
        raise ScorerError(f"{folder}: a {scorer.mode} scorer, not {mode}")
    return scorer


def lite_model_id(scorer: LiteModel) -> str:
    """``lite-<hash>`` of a LiteScorer's config and weights: results of another scorer never
    match."""
    h = hashlib.sha256(json.dumps(scorer.config(), sort_keys=True).encode())
    for name, array in sorted(scorer.weights.items()):
        h.update(name.encode())
        h.update(np.ascontiguousarray(array).tobytes())
    return f"lite-{h.hexdigest()[:16]}"
