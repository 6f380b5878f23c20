"""Statistics of human alignment: the numbers behind every Speech-DRAME protocol.

Pure functions over numpy arrays, one module per idea:

- :mod:`.alignment`: :func:`alignment` (a typed :class:`AlignmentTable`) and
  :func:`alignment_table` (its flat dict, what ``evaluate_metric/drame_metric`` reports): how
  well an evaluator's scores follow human ratings, per dimension (Pearson, the paper's
  headline, with Spearman, Kendall tau-b, MAE, RMSE and counts beside it), Content Pass
  accuracy / F1 / ROC-AUC, optional emotion gating and bootstrap intervals;
  :func:`grouped_alignment`: the same overall and per group of clips (e.g. per language).
- :mod:`.table`: :class:`AlignmentTable` and its rows.
- :mod:`.ratings`: the dataset's ``annotations`` column as per-dimension annotator matrices
  (:func:`annotator_matrices`, :class:`AnnotatorRatings`), the input of everything below.
- :mod:`.agreement`: inter-annotator :func:`agreement` exactly as the paper's Appendix K
  defines it; :func:`human_ceiling`, the bar an evaluator is held to.
- :mod:`.correlation`, :mod:`.bootstrap`, :mod:`.inputs` (checking), :mod:`.kernels`
  (compiled passes).
- :mod:`.ranking`, :mod:`.categorical`, :mod:`.preference`: the statistics of RoleBench,
  judge comparisons and AnimeScore-style preference models.

Missing ratings are ``None`` in Python lists and NaN in float arrays; a NaN inside a Python
list, a non-numeric value or a score outside the scale raises :class:`ValueError` naming it.
A correlation that is undefined (constant input, fewer than two samples) is NaN, with the
reason under ``notes``.
"""

from speech_drame.stats.agreement import Agreement, HumanCeiling, agreement, human_ceiling
from speech_drame.stats.alignment import (
    MIN_GROUP_CLIPS,
    alignment,
    alignment_table,
    grouped_alignment,
)
from speech_drame.stats.bootstrap import percentile_interval, resample_counts
from speech_drame.stats.categorical import cohen_kappa, mcnemar
from speech_drame.stats.correlation import kendall_tau, pearson, roc_auc, spearman
from speech_drame.stats.inputs import (
    KNOWN_DIMENSIONS,
    PASS_THRESHOLD,
    SCORED_DIMENSIONS,
    booleans_as_numbers,
    check_boolean_positions,
)
from speech_drame.stats.preference import pairwise_preference
from speech_drame.stats.ranking import (
    check_human_scores,
    human_ranking_agreement,
    system_ranking_agreement,
)
from speech_drame.stats.ratings import (
    AnnotatorRatings,
    annotator_matrices,
    majority_vote,
    reference_scores,
)
from speech_drame.stats.table import (
    AVERAGE,
    AlignmentTable,
    ContentPassRow,
    DimensionRow,
    headline_statistic,
    stat_key,
)

__all__ = [
    "AVERAGE",
    "KNOWN_DIMENSIONS",
    "MIN_GROUP_CLIPS",
    "PASS_THRESHOLD",
    "SCORED_DIMENSIONS",
    "Agreement",
    "AlignmentTable",
    "AnnotatorRatings",
    "ContentPassRow",
    "DimensionRow",
    "HumanCeiling",
    "agreement",
    "alignment",
    "alignment_table",
    "annotator_matrices",
    "booleans_as_numbers",
    "check_boolean_positions",
    "check_human_scores",
    "cohen_kappa",
    "grouped_alignment",
    "headline_statistic",
    "human_ceiling",
    "human_ranking_agreement",
    "kendall_tau",
    "majority_vote",
    "mcnemar",
    "pairwise_preference",
    "pearson",
    "percentile_interval",
    "reference_scores",
    "resample_counts",
    "roc_auc",
    "spearman",
    "stat_key",
    "system_ranking_agreement",
]
