"""Train the LiteScorer on a Hub-ready dataset folder and evaluate it on every test split.

``speech-drame train-lite`` (and ``make demo``) call :func:`train_and_evaluate`: every split is
streamed from its parquet shards (:class:`~speech_drame.data.examples.SplitStream`) through
feature extraction in bounded
batches (cached per clip), keeping only each clip's blueprint and labels, so memory does not
grow with the number of clips. One scorer per config is trained on ``train``, scored on each
other split through the scorer contract (:func:`.evaluation.evaluate_scorer`, the path every
scorer is evaluated by; its features are read back from the cache), handed to the caller
(``speech-drame train-lite`` prints a per-dimension table) and saved where ``speech-drame
score`` and the Space look by default; ``metrics.json`` beside the scorers is written last.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_json
from speech_drame.data.card import synthetic_label_note
from speech_drame.data.examples import SplitStream
from speech_drame.data.reader import (
    ATTACH_HINT,
    DatasetError,
    dataset_configs,
    dataset_splits,
    open_split,
    require_audio,
)
from speech_drame.errors import InputError, UsageError
from speech_drame.features.blueprint import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CACHE,
    Blueprint,
    CacheArg,
    iter_blueprints,
    resolve_cache,
)
from speech_drame.schema import (
    SPLITS,
    Config,
    check_config,
)
from speech_drame.scorers.evaluation import SplitReport, evaluate_scorer

from .features import check_blueprint
from .finetune import (
    DEFAULT_ANCHOR,
    DEFAULT_EPOCHS,
    ParentScorer,
    check_anchor,
    fine_tune_lite_model,
    load_parent,
)
from .fit import train_lite_model
from .model import LiteModel, TrainingOptions, default_scorer_dir
from .scorer import LiteScorer

METRICS_FILE = "metrics.json"  # written into the output folder after every scorer is saved
METRICS_FORMAT = 1


@dataclass
class ExtractedSplit:
    """The usable clips of a split (blueprints and labels, aligned), the failed ones and the
    ones the split has no audio for (not failures: there was nothing to extract)."""

    config: Config
    split: str
    ids: list[str]
    blueprints: list[Blueprint]
    labels: dict[str, list[list[Any]]]
    failures: dict[str, str]  # clip id -> reason
    no_audio: list[str] = field(default_factory=list)


def extract_split(
    dataset_dir: str | os.PathLike,
    config: Config,
    split: str,
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> ExtractedSplit:
    """Stream a split through feature extraction, ``batch_size`` clips at a time.

    Only each clip's blueprint and labels are kept; the encoded and decoded audio of a batch
    are released before the next batch is read.
    """
    stream = SplitStream(dataset_dir, config, split)
    pending: deque[tuple[str, dict[str, list[Any]]]] = deque()  # rows read, not yet extracted

    def clips() -> Iterator[tuple[bytes, dict[str, str]]]:
        for example in stream:
            pending.append((example.id, example.labels))
            yield example.source, example.contexts

    labels: dict[str, list[list[Any]]] = {k: [] for k in stream.label_keys}
    out = ExtractedSplit(stream.config, split, [], [], labels, {}, stream.no_audio)
    extracted = iter_blueprints(
        clips(), cache, progress=progress, batch_size=batch_size, total=stream.n_rows
    )
    for blueprint, error in extracted:
        clip_id, labels = pending.popleft()
        if blueprint is None:
            out.failures[clip_id] = str(error)
            continue
        try:
            check_blueprint(blueprint, stream.config)  # e.g. an undefined feature: listed
        except ValueError as exc:
            out.failures[clip_id] = str(exc)
            continue
        out.ids.append(clip_id)
        out.blueprints.append(blueprint)
        for k, v in labels.items():
            out.labels[k].append(v)
    return out


@dataclass
class TrainingReport:
    """What one config's scorer was trained on (also stored in the scorer's ``info``)."""

    dataset: str
    split: str
    labels_are_synthetic: bool
    label_note: str | None  # the dataset card's note that the labels are synthetic
    n_train: int
    failures: dict[str, str] = field(default_factory=dict)  # train clips left out
    no_audio: list[str] = field(default_factory=list)  # train clips without audio


MIN_CLIPS = 10  # usable train clips to train from scratch on (normalisation, projection)


def _train_one(
    dataset_dir: Path,
    config: Config,
    options: TrainingOptions,
    train: ExtractedSplit,
    parent: ParentScorer | None = None,
    anchor: float = DEFAULT_ANCHOR,
) -> tuple[LiteModel, TrainingReport]:
    """Train ``config``'s scorer on ``train``: from scratch, or fine-tuned from ``parent``
    (which needs one usable clip, not :data:`MIN_CLIPS`: it keeps the parent's normalisation)."""
    usable = len(train.blueprints)
    if usable < (1 if parent is not None else MIN_CLIPS):
        what = "nothing to fine-tune on" if parent is not None else "too few to train on"
        raise InputError(
            f"{dataset_dir} {config}/train: {usable} clip(s) usable, {what}; failures: "
            f"{train.failures or 'none'}"
            + (f"; without audio: {len(train.no_audio)}" if train.no_audio else "")
        )
    note = synthetic_label_note(dataset_dir)
    report = TrainingReport(
        str(dataset_dir), "train", note is not None, note, usable, train.failures,
        train.no_audio,
    )  # fmt: skip
    info = {
        "dataset": report.dataset,
        "split": report.split,
        "labels_are_synthetic": report.labels_are_synthetic,
        "label_note": report.label_note,
        "n_failed": len(train.failures),
        "n_no_audio": len(train.no_audio),
    }
    if parent is None:
        scorer = train_lite_model(train.blueprints, train.labels, config, options, info)
    else:
        try:
            scorer = fine_tune_lite_model(
                parent, train.blueprints, train.labels, options, anchor, info
            )
        except ValueError as exc:  # e.g. no usable rating: name the data
            raise InputError(f"{dataset_dir} {config}/train: {exc}") from None
    return scorer, report


@dataclass(frozen=True)
class ConfigRun:
    """One config of a :func:`train_and_evaluate` run: its evaluation reports, the training
    report, the splits not evaluated (split -> why), the reliability diagrams written and the
    folder the scorer was saved to; for a fine-tuned scorer, what it records of the fine-tuning
    and the parent's reports on the same splits."""

    config: Config
    reports: list[SplitReport]
    training: TrainingReport
    not_evaluated: dict[str, str]
    plots: list[Path]
    folder: Path
    init: dict[str, Any] | None = None  # a fine-tuned scorer's ``info["init"]``
    parent_reports: list[SplitReport] = field(default_factory=list)  # the parent, same splits


def _failure_list(failures: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"id": cid, "reason": why} for cid, why in failures.items()]


def _split_entry(r: SplitReport) -> dict[str, Any]:
    return {
        "clips_scored": r.n_scored,
        "clips_failed": len(r.failures),
        "failures": _failure_list(r.failures),
        "clips_without_audio": len(r.no_audio),
        "without_audio": r.no_audio,
        "table": r.table,
        "by_language": r.by_language,
        "language_mismatches": r.language_mismatches,
        **({"distribution_fit": r.distribution_fit} if r.distribution_fit else {}),
    }


def config_metrics(
    scorer_dir: Path,
    training: TrainingReport,
    options: TrainingOptions,
    reports: Sequence[SplitReport],
) -> dict[str, Any]:
    """The ``metrics.json`` entry of one config (see :func:`train_and_evaluate`)."""
    return {
        "scorer": str(scorer_dir),
        "training": {
            "dataset": training.dataset,
            "split": training.split,
            "labels_are_synthetic": training.labels_are_synthetic,
            "label_note": training.label_note,
            "clips_used": training.n_train,
            "clips_failed": len(training.failures),
            "failures": _failure_list(training.failures),
            "clips_without_audio": len(training.no_audio),
            "without_audio": training.no_audio,
            "options": asdict(options),
        },
        "splits": {r.split: _split_entry(r) for r in reports},
    }


def read_reports(scorer_dir: str | os.PathLike) -> dict[str, list[SplitReport]]:
    """The evaluation reports ``train-lite`` wrote to ``scorer_dir/metrics.json``, per config
    (for :func:`speech_drame.commands.lite_report.format_table`).

    Raises:
        FileNotFoundError: no ``metrics.json`` (training did not finish there).
    """
    path = Path(scorer_dir) / METRICS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no LiteScorer evaluation (run `speech-drame train-lite`)")
    document = json.loads(path.read_text(encoding="utf-8"))
    return {
        config: [
            SplitReport(
                split,
                entry["table"],
                entry["clips_scored"],
                {f["id"]: f["reason"] for f in entry["failures"]},
                by_language=entry.get("by_language", {}),
                language_mismatches=entry.get("language_mismatches", {}),
                distribution_fit=entry.get("distribution_fit"),
                no_audio=entry.get("without_audio", []),
            )
            for split, entry in metrics["splits"].items()
        ]
        for config, metrics in document["configs"].items()
    }


def train_and_evaluate(
    dataset_dir: str | os.PathLike,
    out_dir: str | os.PathLike | None = None,
    configs: Sequence[str] | None = None,
    options: TrainingOptions | None = None,
    cache: CacheArg = DEFAULT_CACHE,
    progress: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_config: Callable[[ConfigRun], None] | None = None,
    init: str | os.PathLike | None = None,
    anchor: float = DEFAULT_ANCHOR,
) -> dict[str, list[SplitReport]]:
    """Train one scorer per config (default: every config the dataset has) on ``train``,
    evaluate on the other splits it has, save them.

    With ``init`` (a LiteScorer folder or Hub ``ORG/NAME``), each config's scorer is
    fine-tuned from that scorer's (:mod:`.finetune`: warm start, ``anchor`` the pull toward its
    weights) instead, and the parent is evaluated on the same splits beside it. Every config
    trained must be in ``init`` with this installation's feature versions (checked before any
    work); one usable train clip is enough; ``options`` default to :data:`~.finetune.DEFAULT_EPOCHS`
    epochs. The output holds only the configs trained.

    Scorers go to ``out_dir/<config>`` (default :func:`default_scorer_dir`); their ``info``
    records the training data (``dataset``, ``split``, ``labels_are_synthetic``,
    ``label_note``, ``n_train``, ``n_failed``) and the ``evaluation`` per split. Splits are
    streamed ``batch_size`` clips at a time (see :func:`extract_split`).

    ``out_dir/metrics.json`` is removed first and written last, after every scorer is saved,
    so its presence means the run finished. It holds ``format_version``, ``dataset`` and,
    under ``configs.<config>``: ``scorer`` (its folder), ``training`` (``dataset``, ``split``,
    ``labels_are_synthetic``, ``label_note``, ``clips_used``, ``clips_failed``, ``failures``
    as ``[{"id", "reason"}]``, ``options``) and ``splits.<split>`` (``clips_scored``,
    ``clips_failed``, ``failures``, ``table``: the full
    :func:`~speech_drame.stats.alignment_table`, whose undefined values are ``null`` with
    the reason under ``table.notes``; ``by_language``: per language (the release's, else the
    identified one) its clip ``count`` and ``table`` (null below 3 clips, with the ``reason``); ``language_mismatches``:
    clip id -> ``{"release", "identified"}``; ``distribution_fit``: how well the scorer's
    distributions over 1..5 match the annotators'
    (:func:`~speech_drame.distribution_fit.distribution_fit`); ``clips_without_audio`` and
    ``without_audio``: the clips the dataset has no audio for, neither scored nor failed),
    ``not_evaluated``: split -> why (a split without any audio) and, for a fine-tuned scorer,
    ``init``: its ``info["init"]`` (``parent``: ``id``, ``source``, ``path``, ``dataset``,
    ``evaluation``, ``lineage``; ``anchor``, ``epochs``, ``dimensions`` updated/added/kept,
    ``content_pass``, ``kept_drift``, ``parent_evaluation``: the parent's headline figures
    here) and ``parent_splits``: the parent's entry of every evaluated split, as ``splits``.

    Before any work, a config whose ``train`` split has no audio at all stops the run
    (:class:`~speech_drame.data.reader.NoAudioError`, one line saying how to attach it).

    Returns the reports per config. ``on_config`` is called with each config's
    :class:`ConfigRun` once its scorer is saved (``speech-drame train-lite`` prints it); nothing
    is printed here.
    """
    dataset_dir = Path(dataset_dir)
    cache = resolve_cache(cache)  # one cache object: its counts cover the whole run
    out = Path(out_dir) if out_dir is not None else default_scorer_dir()
    options = options or TrainingOptions(**({"epochs": DEFAULT_EPOCHS} if init else {}))
    configs = [check_config(c) for c in configs] if configs else dataset_configs(dataset_dir)
    parents = {c: load_parent(init, c) for c in configs} if init is not None else {}
    check_anchor(anchor)
    for parent in parents.values():
        _check_out_is_not_parent(out, parent)
    unscored = _not_evaluated(dataset_dir, configs)
    (out / METRICS_FILE).unlink(missing_ok=True)  # stale until this run finishes
    results: dict[str, list[SplitReport]] = {}
    metrics: dict[str, Any] = {}
    for config in configs:
        parent = parents.get(config)
        splits = [s for s in SPLITS[config] if s != "train" and s not in unscored[config]]
        train = extract_split(dataset_dir, config, "train", cache, progress, batch_size)
        scorer, training = _train_one(dataset_dir, config, options, train, parent, anchor)
        del train  # the train blueprints are not needed for evaluation

        run = (dataset_dir, splits, cache, batch_size, progress, scorer.options.label_policy)
        reports = _evaluate(scorer, None, *run)
        scorer.info["evaluation"] = {r.split: r.alignment.headline() for r in reports}
        parent_reports = _evaluate(parent.model, parent.folder, *run) if parent else []
        if parent is not None:
            scorer.info["init"]["parent_evaluation"] = {
                r.split: r.alignment.headline() for r in parent_reports
            }
        scorer.save(out / config)
        plots = _reliability_plots(out / config, config, reports)
        results[config] = reports
        metrics[config] = config_metrics(out / config, training, scorer.options, reports)
        metrics[config]["not_evaluated"] = unscored[config]
        if parent is not None:
            metrics[config]["init"] = scorer.info["init"]
            metrics[config]["parent_splits"] = {r.split: _split_entry(r) for r in parent_reports}
        if on_config is not None:
            on_config(ConfigRun(config, reports, training, unscored[config], plots, out / config,
                                scorer.info.get("init"), parent_reports))  # fmt: skip
    document = {"format_version": METRICS_FORMAT, "dataset": str(dataset_dir), "configs": metrics}
    write_json(out / METRICS_FILE, document)
    return results


def _check_out_is_not_parent(out: Path, parent: ParentScorer) -> None:
    """Refuse an output folder that is the parent's, or holds it, or lies inside it: saving
    would replace the scorer its lineage names."""
    a, b = out.resolve(), Path(parent.folder).resolve()
    if a == b or a in b.parents or b in a.parents:
        raise UsageError(
            f"--out {out} would replace the initial scorer {parent.folder}: write the "
            "fine-tuned scorer to a folder of its own"
        )


def _evaluate(
    model: LiteModel,
    folder: Path | None,
    dataset_dir: Path,
    splits: Sequence[str],
    cache: Any,
    batch_size: int,
    progress: bool,
    label_policy: str,
) -> list[SplitReport]:
    """``model``'s reports on ``splits``, through the scorer contract."""
    evaluator = LiteScorer(model, folder, cache=cache, batch_size=batch_size)
    return [evaluate_scorer(evaluator, dataset_dir, s, progress, label_policy) for s in splits]


def _not_evaluated(dataset_dir: Path, configs: Sequence[Config]) -> dict[Config, dict[str, str]]:
    """Per config, the evaluation splits that cannot be scored (split -> why: not in the
    dataset, or without any audio), after checking that every config has a ``train`` split
    with some audio (``DatasetError``/``NoAudioError`` otherwise, before any work)."""
    out: dict[Config, dict[str, str]] = {}
    for config in configs:
        listed = dataset_splits(dataset_dir, config)
        if "train" not in listed:
            raise DatasetError(
                f"{dataset_dir} {config}: no train split to train on (the card lists "
                f"{listed or 'no split of this config'}); a campaign export gets one with "
                "`campaign export --test-share 0.2` (train and test) or `--split train`"
            )
        require_audio([open_split(dataset_dir, config, "train")], f"train-lite ({config})")
        out[config] = {}
        for split in (s for s in SPLITS[config] if s != "train"):
            if split not in listed:
                out[config][split] = "not in the dataset"
                continue
            data = open_split(dataset_dir, config, split)
            if not data.n_with_audio:
                out[config][split] = f"no audio ({data.n_rows} clips; {ATTACH_HINT})"
    return out


def _reliability_plots(folder: Path, config: Config, reports: Sequence[SplitReport]) -> list[Path]:
    """``reliability_{split}.png`` in ``folder`` for every split with a distribution fit."""
    from ...distribution_fit import reliability_plot

    return [
        reliability_plot(r.distribution_fit, folder / f"reliability_{r.split}.png",
                         title=f"LiteScorer {config}, {r.split}: scores 1..5 vs the annotators")
        for r in reports
        if r.distribution_fit
    ]  # fmt: skip
