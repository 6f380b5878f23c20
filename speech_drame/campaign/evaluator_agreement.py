"""How the attached scorers agree with the campaign's raters so far, beside the human ceiling.

For each scorer attached with ``campaign attach`` (:mod:`.attach`), over the clips that have
regular ratings and a score of it, :func:`evaluator_agreement` computes exactly what
``drame_metric`` reports on the export: the scores joined to the annotator lists the built
dataset holds (:func:`speech_drame.scorers.join.join`, :func:`.export.dataset_annotations`)
go through :func:`speech_drame.stats.grouped_alignment` (Pearson and Spearman with the mean
rating, their percentile bootstrap intervals, MAE, RMSE, Content Pass accuracy; per language
when Mandarin and English clips both occur: the clip's language from its id or text as the
dataset build reads it, else the one the scorer's ASR identified) and, for a scorer with 1..5
distributions, :func:`speech_drame.distribution_fit.distribution_fit` (NLL and JSD beside the
pooled-rating baseline). Failures are counted by kind and left out; nothing is put in their
place. :func:`agreement_curve` replays the ratings in order of arrival: each scorer's Pearson
and the human ceiling after every so many ratings (drawn by :func:`.stats.write_plots`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..distribution_fit import distribution_fit, fit_table
from ..languages import LANGUAGES, UNKNOWN
from ..schema import CONTENT_PASS, Config, context_columns, dimensions
from ..scorers.join import join
from ..stats import (
    MIN_GROUP_CLIPS,
    alignment_table,
    annotator_matrices,
    grouped_alignment,
    human_ceiling,
)
from .export import dataset_annotations, held_out, release_ratings
from .records import AttachedScorer, CampaignClip, StoredRating, StoredScore

CURVE_POINTS = 20  # rating counts the curve is computed at


def clip_language(clip: CampaignClip, result: Mapping[str, Any]) -> str:
    """The language a clip is grouped under: the release's hint (its id's tag, else the
    script of its transcript or context, as the dataset build reads it), else the language
    the scorer identified, else ``unknown``."""
    from ..data.features import release_language

    fields = {"id": clip.id, **context_columns(clip.context),
              "transcript": clip.extra.get("transcript", "")}  # fmt: skip
    return release_language(fields) or result.get("language") or UNKNOWN


def scored_clips(campaign: Any, test_share: float | None = None) -> list[CampaignClip]:
    """The clips a scorer's figures are computed over: every clip of the campaign, or with
    ``test_share`` those ``campaign export --test-share`` deals to ``test``
    (:func:`.export.held_out`), which a scorer trained on the export's ``train`` has not seen."""
    if test_share is not None and not 0 < test_share < 1:
        raise ValueError(f"test share {test_share}: expected a fraction between 0 and 1")
    clips = campaign.clips()
    return clips if test_share is None else [c for c in clips if held_out(c.id, test_share)]


def scored_names(config: Config, scorer: AttachedScorer) -> list[str]:
    """The statistics' dimensions of a scorer: its 1..5 dimensions in the config's order, then
    Content Pass when it gives one."""
    names = [d for d in dimensions(config) if d in scorer.dimensions]
    return names + ([CONTENT_PASS] if scorer.content_pass else [])


def annotations_by_clip(
    config: Config, by_clip: Mapping[str, list[StoredRating]]
) -> dict[str, dict[str, list[Any]]]:
    """Clip id -> its annotator lists as the built dataset holds them, for the rated clips."""
    return {clip_id: dataset_annotations(config, ratings) for clip_id, ratings in by_clip.items()}


def compared(
    config: Config,
    scorer: AttachedScorer,
    clips: Sequence[CampaignClip],
    annotations: Mapping[str, Mapping[str, list[Any]]],
    results: Mapping[str, StoredScore],
) -> tuple[list[CampaignClip], Any]:
    """The rated clips (those in ``annotations``, :func:`annotations_by_clip`) the scorer
    scored, by position, and their scores joined to their annotator lists (a
    :class:`~speech_drame.scorers.join.Joined`)."""
    use = [c for c in clips if c.id in annotations and c.id in results and results[c.id].ok]
    pairs = [
        (c.id, {**results[c.id].result.get("scores", {}),
                CONTENT_PASS: results[c.id].result.get(CONTENT_PASS)})
        for c in use
    ]  # fmt: skip
    return use, join(pairs, annotations, scored_names(config, scorer))


def _fit(use: list[CampaignClip], results: Mapping[str, StoredScore],
         annotations: Mapping[str, Mapping[str, list[Any]]], dims: list[str], policy: str) -> Any:  # fmt: skip
    """The distribution fit's flat keys and, per dimension, the clips it rests on; ``None``
    and ``{}`` for a scorer without distributions."""
    dists = [[results[c.id].result.get("distributions", {}).get(d) for d in dims] for c in use]
    if not any(p is not None for row in dists for p in row):
        return None, {}
    refs = [[annotations[c.id][d] for d in dims] for c in use]
    fit = distribution_fit(dists, refs, dims, label_policy=policy)
    return fit_table(fit), {d: e["samples"] for d, e in fit["dimensions"].items()}


def evaluator_agreement(
    campaign: Any,
    by_clip: Mapping[str, list[StoredRating]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    label_policy: str = "paper",
    test_share: float | None = None,
) -> dict[str, dict[str, Any]]:
    """Scorer name -> its agreement with the ratings ``by_clip`` (release ratings per clip):
    ``scorer_id``, ``spec``, ``description``; over every clip of the campaign ``clips``,
    ``scored``, ``failures`` (by kind) and ``not_scored`` (clips without any result yet: an
    attach still running or stopped); ``rated_not_compared`` (rated clips without a score);
    ``compared`` (rated and scored clips the statistics rest on); ``table``: the
    ``drame_metric`` result on those clips (``{dim}_pearson``, ``{dim}_pearson_ci``,
    ``{dim}_spearman``, ``{dim}_spearman_ci``, ``{dim}_count``, ...; with ``bootstrap``
    resamples and ``seed``); ``fit``: the distribution fit's flat keys (``{dim}_nll``,
    ``{dim}_nll_baseline``, ``{dim}_jsd``, ...) or ``None``; ``fit_clips``: dimension ->
    clips it rests on; ``by_language``: language -> ``{"count", "table", "reason"}`` when
    Mandarin and English clips both occur, else ``{}``. With ``test_share``, only the clips
    ``campaign export --test-share`` deals to ``test`` count (:func:`scored_clips`)."""
    config: Config = campaign.config
    every, clips = campaign.clips(), scored_clips(campaign, test_share)
    out: dict[str, dict[str, Any]] = {}
    annotations = annotations_by_clip(config, by_clip)
    for scorer in campaign.attached_scorers():
        results = campaign.scorer_results(scorer.scorer_id)
        failures = Counter(r.error_kind for r in results.values() if not r.ok)
        use, joined = compared(config, scorer, clips, annotations, results)
        rated = sum(c.id in by_clip for c in clips)
        entry: dict[str, Any] = {
            "scorer_id": scorer.scorer_id,
            "spec": scorer.spec,
            "description": scorer.description,
            "clips": len(every),
            "scored": sum(r.ok for r in results.values()),
            "failures": {kind: failures.get(kind, 0) for kind in ("input", "model")},
            "not_scored": sum(c.id not in results for c in every),
            "rated_not_compared": rated - len(use),
            "compared": len(use),
            "table": None,
            "fit": None,
            "fit_clips": {},
            "by_language": {},
        }
        out[scorer.name] = entry
        if not use:
            continue
        languages = [clip_language(c, results[c.id].result) for c in use]
        inputs = (joined.predictions, joined.references, joined.dimensions)
        options = {"bootstrap": bootstrap, "seed": seed, "label_policy": label_policy}
        if set(LANGUAGES) <= set(languages):
            tables = grouped_alignment(*inputs, languages, **options)
            entry["table"], entry["by_language"] = tables["overall"], tables["by_group"]
        else:
            entry["table"] = alignment_table(*inputs, **options)
        dims = [d for d in joined.dimensions if d != CONTENT_PASS]
        entry["fit"], entry["fit_clips"] = _fit(use, results, annotations, dims, label_policy)
    return out


def checkpoints(total: int, points: int = CURVE_POINTS) -> list[int]:
    """Up to ``points`` rating counts from about ``total / points`` to ``total``.

    >>> checkpoints(7, 4), checkpoints(0)
    ([2, 4, 5, 7], [])
    """
    return (
        sorted({max(1, round(total * k / points)) for k in range(1, points + 1)}) if total else []
    )


def agreement_curve(
    campaign: Any,
    ratings: Sequence[StoredRating],
    label_policy: str = "paper",
    test_share: float | None = None,
) -> dict[str, Any]:
    """Each attached scorer's Pearson and the human ceiling (leave-one-annotator-out Pearson)
    per dimension as the regular ratings (``ratings``: every stored one) arrived: ``ratings``:
    the counts of release ratings (the first per rater and clip, in order of arrival) it was
    computed at (:func:`checkpoints`); ``ceiling``: dimension -> values; ``scorers``: name ->
    dimension -> values (NaN where undefined or resting on fewer than
    :data:`~speech_drame.stats.MIN_GROUP_CLIPS` clips, where a correlation says nothing); the
    scorers over the clips of ``test_share`` only (:func:`scored_clips`), the ceiling over all."""
    config: Config = campaign.config
    clips = campaign.clips()
    compared_clips = scored_clips(campaign, test_share)
    release = sorted((r for rs in release_ratings(ratings).values() for r in rs),
                     key=lambda r: r.rating_id)  # fmt: skip
    scorers = campaign.attached_scorers()
    results = {s.name: campaign.scorer_results(s.scorer_id) for s in scorers}
    dims = list(dimensions(config))
    counts = checkpoints(len(release))
    curve: dict[str, Any] = {
        "ratings": counts,
        "ceiling": {d: [] for d in dims},
        "scorers": {s.name: {d: [] for d in scored_names(config, s) if d != CONTENT_PASS}
                    for s in scorers},
    }  # fmt: skip
    for n in counts:
        annotations = annotations_by_clip(config, release_ratings(release[:n]))
        rows = [annotations[c.id] for c in clips if c.id in annotations]
        mats = annotator_matrices(rows, dims, label_policy=label_policy)
        for d in dims:
            ceiling = human_ceiling(mats[d])
            enough = int(ceiling.counts.max(initial=0)) >= MIN_GROUP_CLIPS
            curve["ceiling"][d].append(ceiling.ceiling if enough else math.nan)
        for s in scorers:
            use, joined = compared(config, s, compared_clips, annotations, results[s.name])
            table = (
                alignment_table(joined.predictions, joined.references, joined.dimensions,
                                label_policy=label_policy) if use else {}
            )  # fmt: skip
            for d, values in curve["scorers"][s.name].items():
                enough = table.get(f"{d}_count", 0) >= MIN_GROUP_CLIPS
                values.append(table[f"{d}_pearson"] if enough else math.nan)
    return curve
