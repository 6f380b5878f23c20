"""drame_metric: human alignment of a spoken role-play evaluator (Speech-DRAME).

A thin `evaluate` wrapper over :func:`speech_drame.metrics.alignment_table`; the library, this
module and the ``speech-drame`` command line give the same numbers.
"""

import datasets
import evaluate

from speech_drame.distribution_fit import distribution_fit, fit_table
from speech_drame.labels import DEFAULT_LABEL_POLICY
from speech_drame.metrics import (
    alignment_table,
    booleans_as_numbers,
    check_boolean_positions,
    grouped_alignment,
)
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS, REALISM_DIMENSIONS

_CITATION = """\
@article{shi2025speechdrame,
  title   = {Speech-DRAME: A Framework for Human-Aligned Benchmarks in Speech Role-Play},
  author  = {Shi, Jiatong and Han, Jionghao and Lu, Yichen and Pascual, Santiago and Wu, Pengfei
             and Cui, Chenye and Watanabe, Shinji and Weng, Chao and Zhou, Cong},
  journal = {arXiv preprint arXiv:2511.01261},
  year    = {2025}
}
"""

_DESCRIPTION = """\
How closely an automatic evaluator of spoken role-play follows human ratings, per rubric
dimension: the Pearson correlation with the mean human rating that the Speech-DRAME paper reports
(and its average over dimensions), Content Pass accuracy, and beside them Spearman, Kendall tau-b,
MAE, RMSE, Content Pass F1 / ROC-AUC and optional bootstrap confidence intervals. Given the
evaluator's 5-way score distributions, also how well they match the raters' own distribution
(NLL of the ratings, Jensen-Shannon divergence, calibration error, each beside a baseline).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): per sample, the evaluator's score for each of
        `dimensions` (1..5; for `content_pass` a decision, True/False or 1/0, or a pass
        probability).
    references (`list` of `list`): per sample, for each dimension either one reference score
        (`None` when there is none, never changed) or the list of annotator ratings (`None` = a
        null rating, treated by `label_policy` and counted; scores are averaged, Content Pass
        votes True/False or 1/0 decided by majority, null votes and ties left out and
        counted). A dataset's `annotations` give these lists as they are.
    dimensions (`list` of `str`): the dimension of each position. Optional with the configs
        `"archetype"` (content_pass, audio_quality, human_likeness, appropriateness) and
        `"realism"` (the ten realism dimensions).
    emotion_gating (`bool`, default False): score `emotion_intensity_control` only where the
        reference `emotion_accuracy` >= 3 and `dynamic_range` only where the reference
        intensity >= 3, as the rubric gates them.
    bootstrap (`int`, default 0): number of resamples for percentile confidence intervals.
    seed (`int`, optional): seed of the resampling.
    confidence (`float`, default 0.95): level of the intervals.
    label_policy (`str`, default `"paper"`): what a null rating in an annotator list of a
        1..5 dimension counts as. `"paper"`: 1, as the Speech-DRAME paper and its official code
        count gated "N/A" ratings and the quality ratings of an annotator who failed the clip
        on Content Pass; `"skip"`: left out. Either way `{dim}_null_ratings` counts them.
    groups (`list` of `str`, optional): one label per sample, e.g. its language (`"zh"`,
        `"en"`; `None` is grouped as `"unknown"`), to report every group beside the totals.
    distributions (`list` of `list`, optional): per sample, for each dimension the
        evaluator's probabilities of the scores 1..5 (5 non-negative numbers summing to 1
        within 1e-3), or `None` where it has none (always for `content_pass`). Needs the
        annotator lists as references. Adds how well the predicted distribution matches the
        raters' own (see Returns); `emotion_gating` and `groups` do not apply to it.

Returns:
    `{dim}_pearson` for every scored dimension, `avg_pearson`, `content_pass_accuracy` (the
    paper's numbers); `{dim}_spearman`, `{dim}_kendall`, `{dim}_mae`, `{dim}_rmse`,
    `{dim}_count`, `{dim}_missing`, `{dim}_null_ratings`, `{dim}_gated` (with gating);
    `content_pass_f1`, `content_pass_roc_auc` (probabilities only), `content_pass_count`,
    `content_pass_missing`, `content_pass_ties`; with `bootstrap`, `{statistic}_ci` = [low, high]
    for every statistic but Kendall tau; `label_policy` and `label_policy_rule`: the policy
    applied; `notes`: why a statistic is NaN (e.g. a constant input). With `groups`, also
    `by_group`: label -> `{"count": samples, "table": the same keys over the group's samples,
    "reason": None}`; a group of fewer than 3 samples has `"table": None` and the reason.
    With `distributions`, per dimension that has them, over the samples with at least one
    rating after `label_policy`: `{dim}_nll` (mean over every individual rating of
    -ln p(rating), p floored at `nll_epsilon` = 1e-6 and renormalised), `{dim}_jsd` (mean over
    samples of the Jensen-Shannon divergence, base 2, in [0, 1], between the predicted and the
    raters' empirical distribution), `{dim}_nll_baseline` and `{dim}_jsd_baseline` (the same
    for always predicting the dimension's pooled rating distribution over these samples: lower
    than the baseline means the evaluator knows something about each clip), `{dim}_ece` (the
    expected calibration error over every (sample, score) pair in 10 equal probability bins);
    `avg_nll`, `avg_jsd`, `avg_nll_baseline`, `avg_jsd_baseline`, `avg_ece` over those
    dimensions (`speech_drame.distribution_fit` gives the reliability bins and the plot).

Examples:
    >>> import evaluate
    >>> drame = evaluate.load("evaluate_metric/drame_metric")
    >>> result = drame.compute(
    ...     predictions=[[4.2, 3.9], [2.1, 2.8], [3.0, 3.4], [4.8, 4.1]],
    ...     references=[[[4, 5, 4], [4, None, 4]], [[2, 2, 3], [3, 2, 3]],
    ...                 [[3, 4, 3], [3, 3, 4]], [[5, 5, 4], [4, 5, 5]]],
    ...     dimensions=["audio_quality", "human_likeness"],
    ... )
    >>> round(result["audio_quality_pearson"], 3), round(result["avg_pearson"], 3)
    (0.994, 0.863)
    >>> result["human_likeness_null_ratings"], result["label_policy"]
    (1, 'paper')

    The label policy: emotion intensity is "N/A" (null) where an annotator rated emotion
    accuracy below 3. Under `"paper"` the reference means are 10/3 ([4, 1, 5]), 1 ([1, 1, 1]),
    2 ([2, 1, 3]), 4.5 ([5, 4]: a shorter list is not padded with 1s) and 1 ([1, 1, 1]);
    under `"skip"` they are 4.5, none (the sample is left out), 2.5, 4.5 and 1:

    >>> preds = [[4.0], [1.5], [3.0], [4.5], [2.0]]
    >>> refs = [[[4, None, 5]], [[None, None, None]], [[2, None, 3]], [[5, 4]], [[None, 1, None]]]
    >>> for policy in ("paper", "skip"):
    ...     r = drame.compute(predictions=preds, references=refs,
    ...                       dimensions=["emotion_intensity_control"], label_policy=policy)
    ...     print(policy, round(r["emotion_intensity_control_pearson"], 4),
    ...           round(r["emotion_intensity_control_mae"], 4),
    ...           r["emotion_intensity_control_count"], r["emotion_intensity_control_null_ratings"])
    paper 0.9725 0.6333 5 7
    skip 0.9828 0.5 4 7

    Content Pass takes booleans, as the datasets store the votes (stored as 1.0/0.0):

    >>> result = drame.compute(
    ...     predictions=[[True, 4.2], [False, 2.1], [True, 3.0]],
    ...     references=[[[True, True, False], [4, 5]], [[False, False, True], [2, 2]],
    ...                 [[True, None, True], [3, 4]]],
    ...     dimensions=["content_pass", "audio_quality"],
    ... )
    >>> result["content_pass_accuracy"], round(result["audio_quality_pearson"], 3)
    (1.0, 0.981)

    Per language beside the totals (too few English samples for statistics here):

    >>> result = drame.compute(
    ...     predictions=[[4.2], [2.1], [3.0], [4.8]],
    ...     references=[[[4, 5, 4]], [[2, 2, 3]], [[3, 4, 3]], [[5, 5, 4]]],
    ...     dimensions=["audio_quality"],
    ...     groups=["zh", "zh", "zh", "en"],
    ... )
    >>> round(result["by_group"]["zh"]["table"]["audio_quality_pearson"], 3)
    0.997
    >>> result["by_group"]["en"]
    {'count': 1, 'table': None, 'reason': '1 clip(s); per-group statistics need at least 3'}

    The fit of predicted 5-way distributions (scores 1..5) to the raters' own, beside
    agreement; Content Pass has no such distribution (`None`):

    >>> result = drame.compute(
    ...     predictions=[[True, 3.2], [False, 4.5], [True, 2.1]],
    ...     references=[[[True, True], [3, 3, 4]], [[False, True, False], [5, 4, 5]],
    ...                 [[True], [2, 1, 3]]],
    ...     dimensions=["content_pass", "audio_quality"],
    ...     distributions=[[None, [0.05, 0.15, 0.45, 0.3, 0.05]],
    ...                    [None, [0.0, 0.0, 0.1, 0.3, 0.6]],
    ...                    [None, [0.3, 0.4, 0.2, 0.1, 0.0]]],
    ... )
    >>> round(result["audio_quality_nll"], 3), round(result["audio_quality_nll_baseline"], 3)
    (0.973, 1.523)
    >>> round(result["audio_quality_jsd"], 3), round(result["audio_quality_jsd_baseline"], 3)
    (0.086, 0.316)
    >>> round(result["audio_quality_ece"], 3), result["avg_nll"] == result["audio_quality_nll"]
    (0.06, True)
"""

_DEFAULT_DIMENSIONS = {
    "archetype": (CONTENT_PASS, *ARCHETYPE_DIMENSIONS),
    "realism": REALISM_DIMENSIONS,
}

_SCORES = datasets.List(datasets.Value("float64"))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DrameMetric(evaluate.Metric):
    """Speech-DRAME human-alignment metric."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": _SCORES, "references": _SCORES}),
                datasets.Features({"predictions": _SCORES, "references": datasets.List(_SCORES)}),
            ],
            reference_urls=["https://arxiv.org/abs/2511.01261"],
        )

    # The features hold floats: booleans (Content Pass votes and decisions) are stored as
    # 1.0/0.0, and _compute checks that only Content Pass positions held them.
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._boolean_positions = {"predictions": set(), "references": set()}

    def _numbers(self, name, rows):
        rows, positions = booleans_as_numbers(rows)
        self._boolean_positions[name] |= positions
        return rows

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (booleans stored as 1.0/0.0).\n"""
        if predictions is not None:
            predictions = self._numbers("predictions", predictions)
        if references is not None:
            references = self._numbers("references", references)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and reference (booleans stored as 1.0/0.0).\n"""
        if prediction is not None:
            prediction = self._numbers("predictions", [prediction])[0]
        if reference is not None:
            reference = self._numbers("references", [reference])[0]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        dimensions=None,
        emotion_gating=False,
        bootstrap=0,
        seed=None,
        confidence=0.95,
        label_policy=DEFAULT_LABEL_POLICY,
        groups=None,
        distributions=None,
    ):
        if dimensions is None:
            if self.config_name not in _DEFAULT_DIMENSIONS:
                raise ValueError(
                    "dimensions is required (the name of each score position), or load the "
                    "'archetype' or 'realism' config for its default dimensions"
                )
            dimensions = _DEFAULT_DIMENSIONS[self.config_name]
        positions = self._boolean_positions
        self._boolean_positions = {"predictions": set(), "references": set()}
        for name, found in positions.items():
            check_boolean_positions(frozenset(found), dimensions, name)
        options = {
            "emotion_gating": emotion_gating,
            "bootstrap": bootstrap,
            "seed": seed,
            "confidence": confidence,
            "label_policy": label_policy,
        }
        if groups is None:
            out = alignment_table(predictions, references, dimensions, **options)
        else:
            grouped = grouped_alignment(predictions, references, dimensions, groups, **options)
            out = {**grouped["overall"], "by_group": grouped["by_group"]}
        if distributions is not None:
            if len(distributions) != len(predictions):
                raise ValueError(
                    f"predictions has {len(predictions)} samples but distributions has "
                    f"{len(distributions)}"
                )
            fit = distribution_fit(distributions, references, dimensions, label_policy=label_policy)
            out.update(fit_table(fit))
            out["notes"].update(fit["notes"])
        return out
