"""``LiteScorer``: the embedded default evaluator, small torch heads over a clip's blueprint.

The input is a fixed-length vector of the clip's offline features (DNSMOS, ASR confidence and
rate, the language the ASR identified, voice activity, prosody, transcript-context
similarities; archetype also the transcript and speaker embeddings), z-normalised with
statistics of the training set. Realism adds what its labels hinge on beyond the audio: the
multilingual sentence embeddings of the shown scene and profile
(projected onto their main training components), their similarity to fixed anchor sentences
(the arousal a scene calls for, the gender and age a profile presents) and products of those
cues with the acoustic arousal and pitch cues. A shared hidden layer feeds one head per rated
dimension, which outputs a distribution over the scores 1..5; the reported score is its
expectation. Training follows the paper's label distribution learning (Speech-DRAME Sec. 5.1,
App. L.3): at every step one annotator's label is sampled per example and dimension.
Archetype Content Pass is a sigmoid probability trained on sampled annotator votes.

A scorer is saved as ``model.safetensors`` + ``config.json`` (no pickle); the config records
the feature versions it was trained on, and loading it beside other versions is an error. The
config also records the SHA-256 of the weights, and a save replaces the folder whole (built
beside it, then swapped in), so a loaded scorer is always one save's config with its weights.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import replace_dir, staging_dir, write_bytes, write_json
from speech_drame.extras import require
from speech_drame.features import asr, prosody, text
from speech_drame.features.blueprint import FEATURE_VERSIONS, Blueprint
from speech_drame.features.common import torch_threads
from speech_drame.labels import DEFAULT_LABEL_POLICY, apply_label_policy, check_label_policy
from speech_drame.languages import LANGUAGES
from speech_drame.schema import (
    CONTENT_PASS,
    CONTEXTS,
    SCORE_MAX,
    SCORE_MIN,
    Config,
    check_config,
    dimensions,
)

from .base import ClipInput, ClipScores, ScorerError

FORMAT_VERSION = 2  # 2: config.json records weights_sha256
N_LEVELS = SCORE_MAX - SCORE_MIN + 1
LEVELS = np.arange(SCORE_MIN, SCORE_MAX + 1, dtype=np.float64)
CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.safetensors"
SCORER_ENV = "SPEECH_DRAME_LITE_SCORER"
HUB_REF = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<revision>[\w./-]+))?")
# clip embeddings that enter the vector as they are (realism overfits on them: 256 clips)
CLIP_EMBEDDINGS: dict[str, tuple[str, ...]] = {
    "archetype": ("transcript", "speaker"),
    "realism": (),
}
# contexts whose sentence embeddings enter the vector, projected onto training components
EMBEDDED_CONTEXTS: dict[str, tuple[str, ...]] = {"archetype": (), "realism": ("scene", "profile")}
# fixed anchor sentences; a context's similarity to each is a text cue
ANCHORS: dict[str, str] = {
    "calm": "A calm, quiet, peaceful and relaxed moment.",
    "excited": "A loud, urgent, frantic and emotional moment with shouting.",
    "child": "A young child.",
    "teen": "A teenager.",
    "old": "An elderly old person.",
    "man": "He is a man.",
    "woman": "She is a woman.",
}
# (context, anchor, acoustic feature): products of a text cue with the delivery's cue
CUE_PRODUCTS: tuple[tuple[str, str, str], ...] = (
    ("scene", "calm", "prosody.energy_mean_db"),
    ("scene", "excited", "prosody.energy_mean_db"),
    ("scene", "calm", "prosody.f0_std_st"),
    ("scene", "excited", "prosody.f0_std_st"),
    ("profile", "man", "prosody.f0_median_hz"),
    ("profile", "woman", "prosody.f0_median_hz"),
)
_SCALARS: tuple[tuple[str, str], ...] = (
    ("seconds", ""),
    ("quality", "sig"),
    ("quality", "bak"),
    ("quality", "ovrl"),
    ("quality", "p808"),
    ("transcript", "avg_logprob"),
    ("transcript", "no_speech_prob"),
    ("transcript", "n_words"),
    ("words_per_second", ""),
    *(
        ("voice_activity", k)
        for k in (
            "speech_ratio",
            "pause_ratio",
            "pauses_per_minute",
            "mean_pause_s",
            "leading_silence_s",
            "trailing_silence_s",
        )
    ),
    *(
        ("prosody", k)
        for k in (
            "f0_median_hz",
            "f0_mean_hz",
            "f0_std_st",
            "f0_range_st",
            "f0_slope_st",
            "voiced_ratio",
            "energy_mean_db",
            "energy_std_db",
            "energy_range_db",
            "energy_slope_db",
            "syllable_rate",
        )
    ),
)


def default_scorer_dir() -> Path:
    """``$SPEECH_DRAME_LITE_SCORER``, else ``artifacts/lite_scorer`` of the repository checkout
    the package runs from (where ``make demo`` trains it), else of the current folder (an
    installed package: where the README's ``train-lite`` command writes it)."""
    env = os.environ.get(SCORER_ENV)
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    root = checkout if (checkout / "pyproject.toml").is_file() else Path.cwd()
    return root / "artifacts" / "lite_scorer"


def _scalar_names() -> list[str]:
    return [f"{a}.{b}" if b else a for a, b in _SCALARS] + [f"language.{x}" for x in LANGUAGES]


def _scalar_values(bp: Blueprint) -> list[float]:
    """The blueprint's values at :data:`_SCALARS`, in order, then one indicator per language of
    :data:`~speech_drame.languages.LANGUAGES` (all 0 for a clip identified as neither)."""
    values = [float(getattr(getattr(bp, a), b) if b else getattr(bp, a)) for a, b in _SCALARS]
    return values + [float(bp.transcript.language == x) for x in LANGUAGES]


def feature_names(mode: Config) -> list[str]:
    """Names of the positions of :func:`feature_matrix` for ``mode``; the embedded contexts
    come last."""
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    names = _scalar_names()
    names += [f"context.{c}" for c in CONTEXTS[mode]]
    names += [f"{c}.anchor.{a}" for c in embedded for a in ANCHORS]
    names += [f"{c}.anchor.{a}*{f}" for c, a, f in CUE_PRODUCTS if c in embedded]
    if "transcript" in CLIP_EMBEDDINGS[mode]:
        names += [f"transcript.embedding.{i}" for i in range(asr.EMBEDDING_DIM)]
    if "speaker" in CLIP_EMBEDDINGS[mode]:
        names += [f"speaker.embedding.{i}" for i in range(256)]
    names += [f"{c}.embedding.{i}" for c in embedded for i in range(text.EMBEDDING_DIM)]
    return names


def check_blueprint(bp: Blueprint, mode: Config) -> None:
    """Refuse a blueprint the scorer cannot read: a context similarity or text the mode needs
    is missing, or a feature is undefined (e.g. the F0 slope of a clip without two consecutive
    voiced frames). Nothing is imputed: such a clip is not scored, and the error says why.

    Raises:
        ValueError: naming the clip, the field and the reason.
    """
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    for what, have, need in (
        ("similarity", bp.context, CONTEXTS[mode]),
        ("text", bp.context_texts, embedded),
    ):
        missing = [c for c in need if c not in have]
        if missing:
            raise ValueError(
                f"{bp.source}: blueprint lacks the {mode} context {what} for {', '.join(missing)}"
            )
    for name, value in zip(_scalar_names(), _scalar_values(bp), strict=True):
        if not np.isfinite(value):
            a, _, b = name.partition(".")
            why = prosody.UNDEFINED.get(b, "not finite") if a == prosody.NAME else "not finite"
            raise ValueError(
                f"{bp.source}: feature {name} is undefined ({why}); the LiteScorer does not "
                "score this clip"
            )


def feature_matrix(blueprints: Sequence[Blueprint], mode: Config) -> np.ndarray:
    """The blueprints as the scorer's fixed-length float vectors, ``(n, len(feature_names))``.

    Raises:
        ValueError: a blueprint fails :func:`check_blueprint`.
    """
    from speech_drame.features.text import embed_texts

    for bp in blueprints:
        check_blueprint(bp, mode)
    embedded = EMBEDDED_CONTEXTS[check_config(mode)]
    scalars = _scalar_names()
    rows = [_scalar_values(bp) + [bp.context[c] for c in CONTEXTS[mode]] for bp in blueprints]
    base = np.asarray(rows, dtype=np.float64).reshape(len(blueprints), -1)
    parts = [base]
    if embedded:
        emb = {
            c: embed_texts([bp.context_texts[c] for bp in blueprints]).astype(np.float64)
            for c in embedded
        }
        anchors = embed_texts(list(ANCHORS.values())).astype(np.float64)
        cues = {c: emb[c] @ anchors.T for c in embedded}
        names = list(ANCHORS)
        parts += [cues[c] for c in embedded]
        parts += [
            cues[c][:, names.index(a), None] * base[:, scalars.index(f), None]
            for c, a, f in CUE_PRODUCTS
            if c in embedded
        ]
    for name in CLIP_EMBEDDINGS[mode]:
        rows = [getattr(bp, name).embedding for bp in blueprints]
        parts.append(np.asarray(rows, dtype=np.float64).reshape(len(blueprints), -1))
    if embedded:
        parts += [emb[c] for c in embedded]
    return np.hstack(parts).astype(np.float32)


def feature_vector(bp: Blueprint, mode: Config) -> np.ndarray:
    """One blueprint's row of :func:`feature_matrix`."""
    return feature_matrix([bp], mode)[0]


def _build_net(
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


@dataclass
class TrainingOptions:
    """Hyper-parameters of :func:`train_lite_scorer`."""

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
class LiteScorer:
    """A trained scorer for one config (``archetype`` or ``realism``)."""

    mode: Config
    dimensions: tuple[str, ...]
    content_pass: bool
    mean: np.ndarray
    std: np.ndarray
    net: Any
    options: TrainingOptions = field(default_factory=TrainingOptions)
    info: dict[str, Any] = field(default_factory=dict)

    # --- inference ---------------------------------------------------------------------
    def predict(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Distributions ``(n, dims, 5)`` and pass probabilities ``(n,)`` for feature vectors."""
        torch = require("torch", "LiteScorer")
        x = (np.asarray(vectors, dtype=np.float32) - self.mean) / self.std
        self.net.eval()
        with torch.no_grad(), torch_threads(1):
            logits, pass_logit = self.net(torch.from_numpy(x))
            probs = torch.softmax(logits.double(), dim=-1).numpy()
            p = torch.sigmoid(pass_logit.double()).numpy() if pass_logit is not None else None
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
        from safetensors.torch import save

        state = {k: v.detach().contiguous() for k, v in self.net.state_dict().items()}
        weights = save(state, metadata={"format": "pt"})
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
    def load(cls, folder: str | os.PathLike) -> LiteScorer:
        """Read a saved scorer.

        Raises:
            ScorerError: missing files, an unknown format, weights that are not the ones the
                config was saved with, or feature versions that differ from the installed
                extractors (the scorer must be retrained).
        """
        from safetensors.torch import load

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
        if cfg["feature_versions"] != FEATURE_VERSIONS:
            diff = sorted(
                k
                for k in set(cfg["feature_versions"]) | set(FEATURE_VERSIONS)
                if cfg["feature_versions"].get(k) != FEATURE_VERSIONS.get(k)
            )
            raise ScorerError(
                f"{path}: trained on feature versions {cfg['feature_versions']}, but this "
                f"installation extracts {FEATURE_VERSIONS} (differ: {', '.join(diff)}); retrain it"
            )
        if cfg["feature_names"] != feature_names(mode):
            raise ScorerError(f"{cfg_path}: feature layout differs from this version's; retrain it")
        # Scorers saved before the label policy was recorded left null ratings out.
        options = TrainingOptions(**{"label_policy": "skip", **cfg["options"]})
        dims = tuple(cfg["dimensions"])
        net = _build_net(
            len(cfg["feature_names"]),
            dims,
            cfg["content_pass"],
            options.hidden,
            options.dropout,
            _n_embedded(mode),
            options.context_components,
        )
        net.load_state_dict(load(weights))
        net.eval()
        norm = cfg["normalisation"]
        return cls(
            mode=mode,
            dimensions=dims,
            content_pass=bool(cfg["content_pass"]),
            mean=np.asarray(norm["mean"], dtype=np.float32),
            std=np.asarray(norm["std"], dtype=np.float32),
            net=net,
            options=options,
            info=cfg.get("info", {}),
        )


def scorer_folder(mode: Config, path: str | os.PathLike | None = None) -> Path:
    """The folder of ``mode``'s scorer under ``path``: ``<path>/<mode>`` when it holds one,
    else ``path`` itself (default :func:`default_scorer_dir`)."""
    root = Path(path) if path is not None else default_scorer_dir()
    return root / mode if (root / mode / CONFIG_FILE).is_file() else root


def load_lite_scorer(mode: Config, path: str | os.PathLike | None = None) -> LiteScorer:
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
    scorer = LiteScorer.load(folder)
    if scorer.mode != mode:
        raise ScorerError(f"{folder}: a {scorer.mode} scorer, not {mode}")
    return scorer


def lite_scorer_id(scorer: LiteScorer) -> str:
    """``lite-<hash>`` of a LiteScorer's config and weights: results of another scorer never
    match."""
    h = hashlib.sha256(json.dumps(scorer.config(), sort_keys=True).encode())
    for name, tensor in sorted(scorer.net.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    return f"lite-{h.hexdigest()[:16]}"


def hub_scorer_dir(repo_id: str, revision: str | None = None) -> Path:
    """The local snapshot of the Hub LiteScorer repo ``repo_id`` at ``revision`` (default
    ``main``), by ``huggingface_hub.snapshot_download``: read from the Hub cache when there
    (the only source under ``HF_HUB_OFFLINE=1``), else downloaded.

    Raises:
        ScorerError: the repo or revision cannot be fetched (and is not cached).
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, revision=revision, repo_type="model"))
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ScorerError(
            f"cannot fetch the LiteScorer {repo_id}@{revision or 'main'} from the Hub "
            f"(nor find it in the Hub cache): {first}"
        ) from None


def resolve_scorer_path(target: str | None) -> Path | None:
    """Where the scorer ``lite:TARGET`` is: ``None`` (the default folder) for no target, the
    local path when it exists, else the Hub snapshot of ``ORG/NAME[@REVISION]``
    (:func:`hub_scorer_dir`); any other target stays a (missing) local path."""
    if not target:
        return None
    if Path(target).exists():
        return Path(target)
    ref = HUB_REF.fullmatch(target)
    if ref is None:
        return Path(target)
    try:
        return hub_scorer_dir(ref["repo"], ref["revision"])
    except ScorerError as exc:
        raise ScorerError(f"lite:{target}: no such local folder, and {exc}") from None


class LiteEvaluator:
    """A trained :class:`LiteScorer` as a :class:`~.base.Scorer` (``lite[:PATH]``).

    Each clip's blueprint is extracted (read from the feature cache ``cache`` when there,
    ``workers`` clips at once, ``batch_size`` clips decoded at a time) and scored. A clip the
    features cannot use (unreadable, no speech heard, an undefined feature) is a failure of kind
    ``"input"``; an extractor or network that crashes on it one of kind ``"model"``.
    """

    def __init__(
        self,
        model: LiteScorer,
        folder: str | os.PathLike | None = None,
        *,
        cache: Any = "default",
        workers: int | None = None,
        batch_size: int = 32,
    ):
        self.model, self.cache, self.workers, self.batch_size = model, cache, workers, batch_size
        self.config: Config = model.mode
        self.dimensions = model.dimensions
        self.content_pass = model.content_pass
        self.id = lite_scorer_id(model)
        where = f" {folder}" if folder is not None else ""
        self.description = f"LiteScorer{where} ({self.config})"
        self.training_data = model.info

    @classmethod
    def load(cls, path: str | os.PathLike | None, config: Config, **settings: Any) -> LiteEvaluator:
        """The scorer of ``config`` at ``path`` (see :func:`load_lite_scorer`)."""
        folder = scorer_folder(config, path)
        return cls(load_lite_scorer(config, folder), folder, **settings)

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]:
        from collections import deque

        from speech_drame.features.blueprint import iter_blueprints

        ids: deque[str] = deque()

        def sources():
            for clip in clips:
                ids.append(clip.id)
                yield clip.audio, clip.context

        total = len(clips) if isinstance(clips, Sized) else None
        stream = iter_blueprints(sources(), self.cache, self.workers, progress,
                                 batch_size=self.batch_size, total=total)  # fmt: skip
        out = []
        for blueprint, failure in stream:
            clip_id = ids.popleft()
            if blueprint is None:
                out.append(ClipScores.failure(clip_id, failure.reason, failure.kind))
                continue
            try:
                check_blueprint(blueprint, self.config)
            except ValueError as exc:
                out.append(ClipScores.failure(clip_id, str(exc), "input", blueprint.audio))
                continue
            try:
                (result,) = self.model.score_blueprints([blueprint])
            except RuntimeError as exc:
                why = f"{clip_id}: the LiteScorer failed ({type(exc).__name__}: {exc})"
                out.append(ClipScores.failure(clip_id, why, "model", blueprint.audio))
                continue
            result.id = clip_id
            out.append(result)
        return out


# --- training ----------------------------------------------------------------------------


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


def train_lite_scorer(
    blueprints: Sequence[Blueprint],
    labels: Mapping[str, Sequence[Sequence[Any]]],
    mode: Config,
    options: TrainingOptions | None = None,
    info: Mapping[str, Any] | None = None,
) -> LiteScorer:
    """Train a scorer by label distribution learning over annotators.

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
    for name, rows in labels.items():
        if len(rows) != n:
            raise ValueError(f"labels[{name!r}] has {len(rows)} rows for {n} clips")
    x = feature_matrix(blueprints, mode)
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-6] = 1.0
    xn = torch.from_numpy((x - mean) / std)
    n_embedded = _n_embedded(mode)
    check_label_policy(options.label_policy)
    score_m = np.stack(
        [
            _label_matrix([apply_label_policy(r, d, options.label_policy) for r in labels[d]], d)
            for d in dims
        ],
        axis=1,
    )  # (n, dims, ann)
    pass_m = _label_matrix(labels[CONTENT_PASS], CONTENT_PASS) if content_pass else None

    rng = np.random.default_rng(options.seed)
    torch.manual_seed(options.seed)
    net = _build_net(
        x.shape[1],
        dims,
        content_pass,
        options.hidden,
        options.dropout,
        n_embedded,
        options.context_components,
    )
    if n_embedded:
        net.context_basis.copy_(_whitening_basis(xn[:, -n_embedded:], options.context_components))
    opt = torch.optim.AdamW(net.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    net.train()
    with torch_threads(1):  # a small MLP: one thread beats several (thread start-up per op)
        _fit(net, opt, xn, score_m, pass_m, rng, options)
    net.eval()
    meta = {"n_train": n, **(info or {})}
    return LiteScorer(mode, dims, content_pass, mean, std, net, options, meta)


def _n_embedded(mode: Config) -> int:
    return text.EMBEDDING_DIM * len(EMBEDDED_CONTEXTS[mode])


def _whitening_basis(x, k: int):
    """``(d, k)`` projection onto the top ``k`` principal directions of ``x`` (centred rows),
    scaled so that each projected component has unit variance on ``x``."""
    torch = require("torch", "LiteScorer")
    _, s, vt = torch.linalg.svd(x.double() - x.double().mean(0), full_matrices=False)
    r = min(k, len(s))  # fewer clips than components: the rest stay zero
    basis = torch.zeros(x.shape[1], k, dtype=torch.float64)
    basis[:, :r] = vt[:r].T / (s[:r] / max(len(x) - 1, 1) ** 0.5).clamp(min=1e-6)
    return basis.float()


def _fit(net, opt, xn, score_m, pass_m, rng, options: TrainingOptions) -> None:
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
            opt.zero_grad()
            loss.backward()
            opt.step()
