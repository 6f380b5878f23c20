"""DRAME-Eval: a LoRA-tuned Qwen2-Audio that scores a clip on every dimension of its config.

For each dimension the scorer reads the next-token distribution at the answer position,
restricted to the label tokens and renormalised: ``"1".."5"`` gives the expected score
(the paper's expectation decoding), ``"0"/"1"`` gives the Content Pass probability. With
``decoding="official"`` the logits first go through what ``generate`` would apply in the
official pipeline: the checkpoint's ``generation_config`` processors (a repetition penalty, if
set, on the whole prompt of the dimension), then its sampling filters (temperature 1, top-k 50,
top-p 0.95), and only the labels that survive are renormalised (:data:`DECODINGS`,
:mod:`.official_decoding`).

Scoring is batched over clips, and all dimensions of a clip share one encoding of the audio
(and, in the ``context_first`` prompt order, the context): the prefix is run once, its KV cache
is repeated for the dimensions, and only each dimension's suffix is run after it
(``shared_prefix=True``). ``shared_prefix=False``
runs one full forward per dimension, the reference the fast path is checked against.

Nothing is ever substituted for a score. A clip whose audio or context cannot be used comes
back with ``error`` set (kind ``"input"``) and no scores; one whose output is not finite, or
where no label of a dimension survives the decoding, or a batch the model fails on (out of
memory, a runtime error), with kind ``"model"``.

:class:`DrameEvalScorer` is a :class:`~.base.Scorer` (``drame-eval:PATH_OR_HUB_ID``): the
Content Pass probability is the renormalised probability of ``"1"``, and ``label_mass`` of
each dimension is the share of the full next-token distribution that fell on its labels (those
that survived, in official decoding) before they were renormalised.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic_io import write_json
from ..audio import SCORED_SECONDS, Audio, AudioError, AudioFacts, load_audio
from ..audio_llm.qwen2_audio import (
    LORA_SCOPES,
    LORA_TARGET_NAMES,
    LORA_TARGET_REGEX,
    LOSS_SPANS,
    PrefixInputs,
    PromptEncoder,
    pad,
    stack_audio,
)
from ..errors import UsageError
from ..hub.fetch import fetch_file
from ..hub.refs import is_repo_id
from ..labels import check_label_policy
from ..prompt_profile import PromptProfile, default_profile, load_profile
from ..prompts import rubric, scored_dimensions
from ..schema import CONTENT_PASS, Config, check_config, context_columns
from .base import ClipInput, ClipScores
from .official_decoding import OFFICIAL_TOP_K, OFFICIAL_TOP_P, describe_processors, official_scores

EVALUATOR_CONFIG = "drame_eval_config.json"
ADAPTER_CONFIG = "adapter_config.json"  # a plain PEFT adapter
MODEL_CONFIG = "config.json"  # a full model folder
PROFILE_OPTION = "--prompt-profile"
EVALUATOR_DIR = "evaluator"  # train.py exports the evaluator of a run to <output_dir>/evaluator


def locate_evaluator(spec: str | os.PathLike) -> Path | str:
    """The local folder ``spec`` names, or ``spec`` itself as a Hub id.

    A ``train.py`` output folder stands for its ``evaluator/`` export. Only a spec shaped like
    ``ORG/NAME`` (not ``./x``, ``../x``, ``/x``, ``~/x`` or ``a/b/c``) that is not a local
    folder is taken for a Hub id; anything else that does not exist raises
    ``FileNotFoundError("SPEC: no such folder")``.
    """
    text = str(spec)
    folder = Path(text).expanduser()
    if folder.is_dir():
        export = folder / EVALUATOR_DIR
        if not (folder / EVALUATOR_CONFIG).is_file() and (export / EVALUATOR_CONFIG).is_file():
            return export
        return folder
    if not is_repo_id(text):
        raise FileNotFoundError(f"{text}: no such folder")
    return text


@dataclass
class EvaluatorInfo:
    """What a trained evaluator folder needs besides the adapter: saved as ``drame_eval_config.json``.

    ``base_model`` is a Hub id or path, or ``"tiny"`` (rebuilt offline from ``tiny_seed``);
    ``dtype`` the torch dtype the base weights had in training (scoring uses it by default).
    ``training_data`` says what it learned from, with the keys a LiteScorer's ``info`` uses
    (``dataset``, ``split``, ``n_train``, ``labels_are_synthetic``, ``label_note``); ``None``
    for folders saved before it was recorded.

    The training choices follow (``train.py``'s options of the same names): ``prompt_order``
    (scoring uses the same), ``lora_scope``, ``loss_on``, ``prompt_variation`` and
    ``label_policy`` (``lora_scope`` is ``"custom"`` when ``--lora_target_modules`` chose the
    modules). Their defaults are what folders saved before they were recorded were
    trained with: context first, LoRA on the language model, loss on the label token, no
    prompt variation, null ratings left out. ``prompt_profile`` is the profile file the folder
    carries (``prompt_profile.json``) and ``prompt_profile_digest`` its digest; ``None`` for
    folders saved before profiles, which were trained with this package's default wording.
    """

    config: Config
    dimensions: list[str]
    base_model: str
    dtype: str = "float32"
    tiny_seed: int = 0
    format_version: int = 1
    training_data: dict[str, Any] | None = None
    prompt_order: str = "context_first"
    lora_scope: str = "language"
    loss_on: str = "label_token"
    prompt_variation: bool = False
    label_policy: str = "skip"
    prompt_profile: str | None = None
    prompt_profile_digest: str | None = None

    def save(self, folder: str | os.PathLike) -> Path:
        return write_json(Path(folder) / EVALUATOR_CONFIG, asdict(self), indent=2)

    @classmethod
    def load(cls, path_or_hub_id: str | os.PathLike) -> EvaluatorInfo:
        """Read it from a local folder, or from a Hub repo (through the local cache offline).

        Raises ``FileNotFoundError`` naming ``path_or_hub_id`` (see :func:`locate_evaluator`).
        """
        source = locate_evaluator(path_or_hub_id)
        if isinstance(source, Path):
            path = source / EVALUATOR_CONFIG
            if not path.is_file():
                raise FileNotFoundError(f"{source}: no {EVALUATOR_CONFIG}; not a DRAME-Eval folder")
        else:
            try:
                path = fetch_file(source, EVALUATOR_CONFIG)
            except FileNotFoundError as exc:
                raise FileNotFoundError(
                    f"{source}: no such folder, and no {EVALUATOR_CONFIG} from the Hub repo "
                    f"{source} ({exc})"
                ) from None
        data = json.loads(path.read_text(encoding="utf-8"))
        info = cls(**data)
        check_config(info.config)
        if info.dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"{path}: unsupported dtype {info.dtype!r}")
        try:
            if info.prompt_profile is None:  # else checked with the profile (:meth:`profile`)
                default_profile().check_order(info.prompt_order)
            check_label_policy(info.label_policy)
            for name, value, known in (
                ("lora_scope", info.lora_scope, {*LORA_SCOPES, "custom"}),
                ("loss_on", info.loss_on, LOSS_SPANS),
            ):
                if value not in known:
                    raise ValueError(f"unknown {name} {value!r}")
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        return info

    def profile(self, source: Path | str) -> PromptProfile:
        """The prompt profile the evaluator at ``source`` was trained with (the default profile
        for a folder saved before profiles); its prompt order checked against it.

        Raises ``ValueError`` naming the file if the profile's digest is not the recorded one.
        """
        if self.prompt_profile is None:
            profile = default_profile()
        else:
            path = (
                source / self.prompt_profile
                if isinstance(source, Path)
                else fetch_file(source, self.prompt_profile)
            )
            profile = load_profile(path)
            if self.prompt_profile_digest not in (None, profile.digest):
                raise ValueError(
                    f"{source}/{self.prompt_profile}: digest {profile.digest}, but "
                    f"{EVALUATOR_CONFIG} records {self.prompt_profile_digest}"
                )
        try:
            profile.check_order(self.prompt_order)
        except ValueError as exc:
            raise ValueError(f"{source}/{EVALUATOR_CONFIG}: {exc}") from None
        return profile


def checkpoint_kind(source: Path | str) -> str:
    """What ``source`` (a local folder or a Hub id) holds: ``"evaluator"`` (this package's
    export), ``"adapter"`` (a plain PEFT adapter) or ``"model"`` (a full model folder).

    Raises ``FileNotFoundError`` if it holds none of their config files.
    """
    names = {"evaluator": EVALUATOR_CONFIG, "adapter": ADAPTER_CONFIG, "model": MODEL_CONFIG}
    reasons = []
    for kind, name in names.items():
        try:
            _config_file(source, name)
            return kind
        except FileNotFoundError as exc:
            reasons.append(str(exc))
    files = f"{EVALUATOR_CONFIG}, {ADAPTER_CONFIG} or {MODEL_CONFIG}"
    if isinstance(source, Path):
        raise FileNotFoundError(
            f"{source}: no {files}; not a DRAME-Eval folder, a PEFT adapter or a model folder"
        )
    raise FileNotFoundError(
        f"{source}: no such folder, and no {files} from the Hub repo {source} ({reasons[0]})"
    )


def _config_file(source: Path | str, name: str) -> Path:
    """``name`` in the local folder or Hub repo ``source``; ``FileNotFoundError`` if absent."""
    if isinstance(source, Path):
        if not (source / name).is_file():
            raise FileNotFoundError(f"{source / name}: no such file")
        return source / name
    return fetch_file(source, name)


def lora_scope_of(target_modules: Any) -> str:
    """The :data:`~speech_drame.audio_llm.qwen2_audio.LORA_SCOPES` key of a PEFT
    ``target_modules``, or ``"custom"``."""
    if target_modules == LORA_TARGET_REGEX:
        return "language"
    if isinstance(target_modules, list | set | tuple) and set(target_modules) == set(
        LORA_TARGET_NAMES
    ):
        return "all"
    return "custom"


@dataclass(frozen=True)
class Clip:
    """One clip to score: 16 kHz mono samples (first 30 s), its context columns and what
    reading it measured and did (``audio``: the cut, peak and gain), when known."""

    id: str
    samples: np.ndarray
    fields: Mapping[str, Any]
    audio: AudioFacts | None = None


def clip_from_row(row: Mapping[str, Any]) -> Clip:
    """A :class:`Clip` from a dataset row whose ``audio`` column is decoded by ``datasets``.

    Raises :class:`~speech_drame.audio.AudioError` naming the clip id.
    """
    decoded = row["audio"].get_all_samples()
    try:
        audio = load_audio(
            (decoded.data[0].numpy(), int(decoded.sample_rate)), max_seconds=SCORED_SECONDS
        )
    except AudioError as exc:
        raise AudioError(f"clip {row['id']!r}", exc.reason) from None
    fields = {k: v for k, v in row.items() if isinstance(v, str)}
    return Clip(str(row["id"]), audio.samples, fields, audio.facts)


def clip_from_input(clip: ClipInput) -> Clip:
    """A :class:`Clip` from a scorer input (its audio read, first 30 s, unless already loaded;
    its context texts under their dataset columns); raises ``AudioError`` naming the file."""
    audio = (
        clip.audio
        if isinstance(clip.audio, Audio)
        else load_audio(clip.audio, max_seconds=SCORED_SECONDS)
    )
    return Clip(clip.id, audio.samples, context_columns(clip.context), audio.facts)


def _clip_or_failure(clip_id: Any, load: Callable[..., Clip], *args: Any) -> Clip | ClipScores:
    """``load(*args)``, or the failure (with its reason) if the audio cannot be used."""
    try:
        return load(*args)
    except AudioError as exc:
        return ClipScores.failure(str(clip_id), str(exc), "input")


def _length(items: Iterable[Any]) -> int | None:
    return len(items) if isinstance(items, Sized) else None


def _modules(model: Any) -> tuple[Any, Any]:
    """(multimodal trunk, lm_head) of a Qwen2-Audio model, PEFT-wrapped or not."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base.model, base.lm_head


# How a dimension's score is read from the next-token distribution at the answer position.
DECODINGS = {
    "expectation": "expectation over every label, renormalised (the paper's decoding)",
    "official": "what generate applies in the official pipeline: the checkpoint's "
    "generation_config logits processors (e.g. a repetition penalty), then its sampling filters "
    f"(temperature 1, top-k {OFFICIAL_TOP_K}, top-p {OFFICIAL_TOP_P}) on the whole vocabulary; "
    "then the expectation over the surviving labels, renormalised",
}


def _load_foreign(
    source: Path | str, kind: str, base_model: str | None, dtype: Any
) -> tuple[Any, Any, dict[str, str]]:
    """``(model, processor, settings)`` of a plain PEFT adapter or a full model folder;
    ``settings`` holds ``base`` and the ``lora_scope``."""
    from peft import PeftModel
    from transformers import AutoProcessor

    from ..audio_llm.qwen2_audio import load_base

    if kind == "model":
        model, processor = load_base(str(source), dtype=dtype)
        return model, processor, {"base": base_model or str(source), "lora_scope": "no adapter"}
    adapter = json.loads(_config_file(source, ADAPTER_CONFIG).read_text(encoding="utf-8"))
    base = base_model or adapter.get("base_model_name_or_path")
    if not base:
        raise UsageError(
            f"{source}/{ADAPTER_CONFIG}: no base_model_name_or_path; name the base model"
        )
    model, processor = load_base(base, dtype=dtype)
    try:  # a processor saved with the adapter wins over the base's
        _config_file(source, "tokenizer_config.json")
        own_processor = True
    except FileNotFoundError:
        own_processor = False
    if own_processor:
        processor = AutoProcessor.from_pretrained(str(source))
    model = PeftModel.from_pretrained(model, str(source))
    scope = lora_scope_of(adapter.get("target_modules"))
    return model, processor, {"base": base, "lora_scope": scope}


class DrameEvalScorer:
    """Scores clips of one config on all its dimensions with a Qwen2-Audio judge.

    Args:
        model: ``Qwen2AudioForConditionalGeneration``, optionally with a PEFT adapter.
        processor: its ``Qwen2AudioProcessor``.
        config: ``"archetype"`` or ``"realism"``.
        dimensions: which to score (default: every dimension of the config the prompt profile
            instructs, Content Pass first for archetype).
        batch_size: clips per forward.
        decoding: how a dimension's score is read from the next-token distribution at the
            answer position, a key of :data:`DECODINGS` (``"expectation"`` or ``"official"``).
        prompt_order: the query layout, an order of the profile (``instruction_first`` or
            ``context_first`` in the default one, see
            :mod:`speech_drame.audio_llm.qwen2_audio`); default: the one ``info`` records
            (the one the evaluator was trained with), else the profile's default order.
        info: the evaluator folder's record (:class:`EvaluatorInfo`), when loaded from one.
        source: the folder or Hub id it was loaded from, for :attr:`description`.
        profile: the prompt profile (:mod:`speech_drame.prompt_profile`; default: this
            package's).
        settings: what the checkpoint was trained with, when known otherwise than from
            ``info`` (``lora_scope``, ``label_policy``): see :attr:`settings`.
    """

    name = "drame-eval"

    def __init__(
        self,
        model: Any,
        processor: Any,
        config: Config,
        *,
        dimensions: Sequence[str] | None = None,
        batch_size: int = 4,
        decoding: str = "expectation",
        prompt_order: str | None = None,
        info: EvaluatorInfo | None = None,
        source: str = "",
        profile: PromptProfile | None = None,
        settings: Mapping[str, str] | None = None,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {', '.join(DECODINGS)}, got {decoding!r}")
        self.decoding = decoding
        self.model, self.processor = model, processor
        self.config = check_config(config)
        self.profile = profile = profile or default_profile()
        default_dims = [d for d in scored_dimensions(config) if d in profile.dimensions(config)]
        self.scored = tuple(dimensions or default_dims)  # Content Pass first
        self.dimensions = tuple(d for d in self.scored if d != CONTENT_PASS)
        self.content_pass = CONTENT_PASS in self.scored
        self.batch_size = batch_size
        if prompt_order is None and info is not None:
            prompt_order = info.prompt_order
        self.encoder = PromptEncoder(processor, config, self.scored, prompt_order, profile)
        self.prompt_order = self.encoder.order
        self.training_data = info.training_data if info is not None else None
        self._base = (
            info.base_model
            if info is not None
            else (settings or {}).get("base", "an in-memory model")
        )
        self.settings = self._settings(info, settings or {})
        shown = {k: v for k, v in self.settings.items() if k != "decoding"}
        # official decoding: the logits processors generate builds from the model's config
        self.processors = describe_processors(model) if decoding == "official" else []
        steps = f" [{', '.join(self.processors)}]" if self.processors else ""
        self.description = (
            f"DRAME-Eval {source or 'evaluator'} ({self.config}, base {self._base}, "
            f"{decoding} decoding{steps}) with " + ", ".join(f"{k} {v}" for k, v in shown.items())
        )
        self._id: str | None = None

    def _settings(self, info: EvaluatorInfo | None, given: Mapping[str, str]) -> dict[str, str]:
        """Every setting scoring uses or the checkpoint was trained with, by name: the prompt
        profile (``NAME@DIGEST``), the prompt order, the LoRA scope, the label policy, the
        dtype and the decoding. A setting nobody recorded says so; none is assumed."""
        dtype = str(next(self.model.parameters()).dtype).removeprefix("torch.")
        peft = getattr(self.model, "peft_config", None) or {}
        scope = (
            info.lora_scope
            if info is not None
            else lora_scope_of(next(iter(peft.values())).target_modules)
            if peft
            else "no adapter"
        )
        return {
            "prompt profile": self.profile.label,
            "prompt order": self.prompt_order,
            "lora scope": given.get("lora_scope", scope),
            "label policy": given.get(
                "label_policy", info.label_policy if info is not None else "not recorded"
            ),
            "dtype": dtype,
            "decoding": self.decoding,
        }

    @property
    def id(self) -> str:
        """``drame-eval-<hash>`` of the config, the scored dimensions, the base model, the
        :attr:`settings` (decoding, prompt profile and order, ...; with official decoding, the
        logits processors it applies) and the adapter (LoRA) weights, or every weight of a model
        without an adapter: another adapter, training step, decoding, profile or order never
        matches."""
        if self._id is None:
            settings = [self.config, self.scored, self._base, self.decoding, self.prompt_order,
                        sorted(self.settings.items())]  # fmt: skip
            settings += [self.processors] if self.processors else []
            h = hashlib.sha256(json.dumps(settings).encode())
            params = sorted(self.model.named_parameters())
            for name, param in [p for p in params if "lora_" in p[0]] or params:
                h.update(name.encode())
                h.update(param.detach().float().cpu().numpy().tobytes())
            self._id = f"drame-eval-{h.hexdigest()[:16]}"
        return self._id

    @classmethod
    def from_pretrained(
        cls,
        path_or_hub_id: str | os.PathLike,
        *,
        config: Config | None = None,
        prompt_profile: str | os.PathLike | PromptProfile | None = None,
        base_model: str | None = None,
        device: str | None = None,
        dtype: Any = None,
        batch_size: int = 4,
        decoding: str = "expectation",
        announce: bool = True,
    ) -> DrameEvalScorer:
        """Load an evaluator from one folder or Hub repo: this package's export (base model +
        LoRA adapter + processor + ``drame_eval_config.json`` + its prompt profile), a plain
        PEFT adapter (``adapter_config.json``; base from its ``base_model_name_or_path``,
        ``tiny`` for the tiny random model) or a full model folder.

        ``path_or_hub_id`` is a folder, a ``train.py`` output folder (its ``evaluator/``) or a
        Hub id ``ORG/NAME`` (see :func:`locate_evaluator`). A checkpoint without
        ``drame_eval_config.json`` records neither its config nor its wording: ``config`` and
        ``prompt_profile`` (a profile file or :class:`PromptProfile`) are then required;
        ``prompt_profile`` also replaces an export's own profile.

        ``base_model`` overrides the base (e.g. a local copy of Qwen2-Audio-7B-Instruct);
        ``dtype`` (a torch dtype) overrides the training dtype (a foreign checkpoint: its own);
        ``decoding`` is a key of :data:`DECODINGS`. With ``announce``, every setting in use is
        printed once to stderr.

        Raises:
            UsageError: a checkpoint without ``drame_eval_config.json`` and no
                ``prompt_profile`` (naming ``--prompt-profile``) or no ``config``.
            FileNotFoundError: a folder that holds no checkpoint.
        """
        import torch
        from peft import PeftModel
        from transformers import AutoProcessor

        from ..audio_llm.qwen2_audio import load_base

        located = locate_evaluator(path_or_hub_id)
        source = str(located)
        profile = (
            load_profile(prompt_profile)
            if isinstance(prompt_profile, str | os.PathLike)
            else prompt_profile
        )
        kind = checkpoint_kind(located)
        if kind == "evaluator":
            info = EvaluatorInfo.load(source)
            profile = profile or info.profile(located)
            model, _ = load_base(
                base_model or info.base_model,
                dtype=dtype if dtype is not None else getattr(torch, info.dtype),
                seed=info.tiny_seed,
            )
            processor = AutoProcessor.from_pretrained(source)
            model = PeftModel.from_pretrained(model, source)
            scorer_config, dims, settings = info.config, info.dimensions, {}
        else:
            if profile is None:
                raise UsageError(
                    f"{source}: a {'PEFT adapter' if kind == 'adapter' else 'model folder'} "
                    f"without {EVALUATOR_CONFIG} records no prompt wording; give the one it was "
                    f"trained with: {PROFILE_OPTION} FILE"
                )
            if config is None:
                raise UsageError(f"{source}: without {EVALUATOR_CONFIG}, name the config to score")
            info, dims = None, None
            scorer_config = check_config(config)
            model, processor, settings = _load_foreign(located, kind, base_model, dtype)
        if device is not None:
            model = model.to(device)
        scorer = cls(model.eval(), processor, scorer_config, dimensions=dims,
                     batch_size=batch_size, decoding=decoding, info=info, source=source,
                     profile=profile, settings=settings)  # fmt: skip
        if announce:
            print(f"{scorer.name} {source}: " + "; ".join(
                f"{k} {v}" for k, v in scorer.settings.items()), file=sys.stderr)  # fmt: skip
        return scorer

    # -- public API ------------------------------------------------------------------------

    def score(self, clips: Iterable[ClipInput], *, progress: bool = False) -> list[ClipScores]:
        """Score :class:`~.base.ClipInput` items (the :class:`~.base.Scorer` contract), reading
        ``batch_size`` clips at a time; unusable audio is a failure of kind ``"input"``."""
        loaded = (_clip_or_failure(c.id, clip_from_input, c) for c in clips)
        return self._score_stream(loaded, True, progress, _length(clips))

    def score_clips(
        self, clips: Iterable[Clip], *, shared_prefix: bool = True, progress: bool = False
    ) -> list[ClipScores]:
        """Score every clip on every dimension, in batches of ``batch_size`` clips.

        ``clips`` is read lazily: give a generator and at most ``batch_size`` clips are held.
        """
        return self._score_stream(clips, shared_prefix, progress, _length(clips))

    def score_rows(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        shared_prefix: bool = True,
        progress: bool = False,
    ) -> list[ClipScores]:
        """Score dataset rows, decoding ``batch_size`` clips at a time (memory stays flat).

        A row whose audio cannot be used is recorded as a failure with its reason.
        """
        clips = (_clip_or_failure(row["id"], clip_from_row, row) for row in rows)
        return self._score_stream(clips, shared_prefix, progress, _length(rows))

    # -- internals -------------------------------------------------------------------------

    def _score_stream(
        self,
        clips: Iterable[Clip | ClipScores],
        shared_prefix: bool,
        progress: bool,
        total: int | None,
    ) -> list[ClipScores]:
        """Results in input order; a :class:`ClipScores` in the input is a failure already
        recorded (unusable audio). Only the current batch of clips is held."""
        from tqdm.auto import tqdm

        results: list[ClipScores] = []
        batch: list[tuple[int, Clip]] = []
        bar = tqdm(total=total, desc="scoring", unit="clip", disable=not progress)

        def flush() -> None:
            scored = self._score_batch([clip for _, clip in batch], shared_prefix)
            for (i, _), result in zip(batch, scored, strict=True):
                results[i] = result
            bar.update(len(batch))
            batch.clear()

        try:
            for item in clips:
                if isinstance(item, ClipScores):
                    results.append(item)
                    bar.update(1)
                    continue
                batch.append((len(results), item))
                results.append(ClipScores(item.id))  # replaced when its batch is scored
                if len(batch) == self.batch_size:
                    flush()
            if batch:
                flush()
        finally:
            bar.close()
        return results

    def _score_batch(self, clips: Sequence[Clip], shared_prefix: bool) -> list[ClipScores]:
        import torch

        results = [ClipScores(c.id, audio=c.audio) for c in clips]
        encoded: list[tuple[int, PrefixInputs]] = []
        for i, clip in enumerate(clips):
            try:
                encoded.append((i, self.encoder.encode_prefix(clip.samples, clip.fields)))
            except (KeyError, ValueError) as exc:
                results[i] = ClipScores.failure(
                    clip.id, f"cannot encode clip {clip.id!r}: {exc}", "input", clip.audio
                )
        if not encoded:
            return results
        prefixes = [p for _, p in encoded]
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                logprobs = (
                    self._shared_prefix_logprobs(prefixes)
                    if shared_prefix
                    else self._full_forward_logprobs(prefixes)
                )
        except (RuntimeError, MemoryError) as exc:  # out of memory, a device error: retryable
            why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            for i, _ in encoded:
                results[i] = ClipScores.failure(
                    clips[i].id, f"{clips[i].id}: the model failed ({why})", "model", clips[i].audio
                )
            return results
        finally:
            self.model.train(was_training)
        for (i, _), clip_logprobs in zip(encoded, logprobs, strict=True):
            self._fill(results[i], clip_logprobs)
        return results

    def _device(self) -> Any:
        return next(self.model.parameters()).device

    def _shared_prefix_logprobs(self, prefixes: Sequence[PrefixInputs]) -> Any:
        """Label log-probs (clips, dims, labels): prefix once per clip, suffixes on its KV cache.

        The prefix is what every dimension of a clip shares in the prompt order (with
        ``instruction_first`` the system turn, audio and preamble; the context is in each
        suffix), so the same code serves both orders.
        """
        import torch

        trunk, head = _modules(self.model)
        device, n_dims = self._device(), len(self.scored)
        ids, mask = pad([p.input_ids for p in prefixes], self.encoder.pad_id, "left")
        ids, mask = ids.to(device), mask.to(device)
        audio = {k: v.to(device) for k, v in stack_audio(prefixes).items()}
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = trunk(
            input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, **audio
        )
        cache = out.past_key_values
        cache.batch_repeat_interleave(n_dims)  # rows: clip 0 dim 0..D-1, clip 1 dim 0..D-1, ...

        suffixes = [p.suffix_ids[d] for p in prefixes for d in self.scored]
        sids, smask = pad(suffixes, self.encoder.pad_id, "right")
        sids, smask = sids.to(device), smask.to(device)
        lengths = mask.sum(-1).repeat_interleave(n_dims)
        spositions = lengths[:, None] + torch.arange(sids.shape[1], device=device)[None, :]
        full_mask = torch.cat([mask.repeat_interleave(n_dims, dim=0), smask], dim=1)
        hidden = trunk(
            input_ids=sids,
            attention_mask=full_mask,
            position_ids=spositions,
            past_key_values=cache,
            use_cache=True,
        ).last_hidden_state
        last = smask.sum(-1) - 1
        answer_hidden = hidden[torch.arange(hidden.shape[0], device=device), last]
        return self._label_logprobs(head(answer_hidden), prefixes)

    def _full_forward_logprobs(self, prefixes: Sequence[PrefixInputs]) -> Any:
        """Label log-probs (clips, dims, labels) from one unpadded full forward per dimension."""
        import torch

        device = self._device()
        rows = []
        for prefix in prefixes:
            audio = {k: v.to(device) for k, v in stack_audio([prefix]).items()}
            for d in self.scored:
                ids = torch.tensor([prefix.input_ids + prefix.suffix_ids[d]], device=device)
                logits = self.model(
                    input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False, **audio
                ).logits[0, -1]
                rows.append(logits)
        return self._label_logprobs(torch.stack(rows), prefixes)

    def _label_logprobs(self, logits: Any, prefixes: Sequence[PrefixInputs]) -> Any:
        """(clips * dims, vocab) logits -> (clips, dims, labels) log-probabilities.

        Log-probabilities are under the full next-token softmax; ``official`` decoding first
        applies the checkpoint's generation-config processors, given each dimension's whole
        prompt (prefix and suffix, as ``generate`` sees it), and a label its sampling filters
        prune is ``-inf`` (:func:`~.official_decoding.official_scores`). The padding of
        dimensions with fewer labels (Content Pass) is ``-inf`` too.
        """
        import torch

        width = max(len(ids) for ids in self.encoder.label_ids.values())
        index = torch.zeros((len(self.scored), width), dtype=torch.long)
        valid = torch.zeros((len(self.scored), width), dtype=torch.bool)
        for i, d in enumerate(self.scored):
            ids = self.encoder.label_ids[d]
            index[i, : len(ids)] = torch.tensor(ids)
            valid[i, : len(ids)] = True
        n_clips = logits.shape[0] // len(self.scored)
        index = index.to(logits.device).repeat(n_clips, 1)
        valid = valid.to(logits.device).repeat(n_clips, 1)
        logits = logits.float()
        if self.decoding == "official":
            prompts = [p.input_ids + p.suffix_ids[d] for p in prefixes for d in self.scored]
            rows = [
                official_scores(self.model, torch.tensor([ids], device=logits.device), row)
                for ids, row in zip(prompts, logits, strict=True)
            ]
            logits = torch.stack([reshaped for reshaped, _ in rows])
            kept = torch.stack([scores != float("-inf") for _, scores in rows])
            logp = torch.log_softmax(logits, dim=-1).masked_fill(~kept, float("-inf"))
        else:
            logp = torch.log_softmax(logits, dim=-1)
        logp = logp.gather(1, index)
        return logp.masked_fill(~valid, float("-inf")).view(n_clips, len(self.scored), width)

    def _fill(self, result: ClipScores, clip_logprobs: Any) -> None:
        """Scores from one clip's label log-probabilities (dims, labels); ``label_mass`` is
        the probability of the labels kept (all of them, or those ``official`` decoding let
        through) before they are renormalised. A dimension that cannot be scored fails the clip
        (kind ``"model"``) with no score at all."""
        import torch

        result.decoding = self.decoding
        for dim, row in zip(self.scored, clip_logprobs, strict=True):
            r = rubric(self.config, dim)
            logp = row[: len(r.labels)]
            kept = logp != float("-inf")
            why = None
            if not bool(torch.isfinite(logp[kept]).all()):
                why = f"non-finite model output for {dim} of clip {result.id!r}"
            elif not bool(kept.any()):
                why = f"no label of {dim} survives {self.decoding} decoding for clip {result.id!r}"
            if why is not None:
                result.scores, result.distributions, result.label_mass = {}, {}, {}
                result.content_pass, result.error, result.error_kind = None, why, "model"
                return
            probs = torch.softmax(logp, dim=-1).tolist()
            expected = float(sum(v * p for v, p in zip(r.values, probs, strict=True)))
            result.label_mass[dim] = float(torch.logsumexp(logp, dim=-1).exp())
            if dim == CONTENT_PASS:
                result.content_pass = expected
            else:
                result.scores[dim] = expected
                result.distributions[dim] = probs
