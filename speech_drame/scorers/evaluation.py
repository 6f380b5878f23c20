"""Any scorer against a split's annotators: the statistics ``drame_metric`` reports.

:func:`evaluate_scorer` streams a split of a Hub-ready dataset folder through a
:class:`~.base.Scorer` (the audio stays encoded until the scorer reads it, a batch at a time)
and compares its scores with every annotator's ratings
(:func:`speech_drame.stats.alignment_table`). Clips the scorer could not score are left out
of the statistics and listed with their reasons; nothing is put in their place. Scores whose
label mass is below the threshold stay in the statistics and are listed as unreliable.
Beside the totals, every statistic is also given per language
(:func:`speech_drame.stats.grouped_alignment`): the release's (the dataset's ``language``
column), or, where the release says nothing, the one the scorer's ASR identified; clips whose
identified language contradicts the release's are counted. When the scorer returns its
distributions over the scores 1..5, their fit to the annotators' own distribution is reported
too (:func:`speech_drame.distribution_fit.distribution_fit`). Clips the dataset has no audio
for are neither scored nor failures: they are listed apart (``no_audio``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..labels import DEFAULT_LABEL_POLICY
from ..languages import UNKNOWN, language_mismatch
from ..schema import CONTENT_PASS
from .base import MIN_LABEL_MASS, ClipInput, Scorer, check_min_label_mass
from .join import clip_predictions, join

if TYPE_CHECKING:
    from ..stats import AlignmentTable


@dataclass
class SplitReport:
    """Alignment of one scorer on one split, the clips it could not score, and (for a scorer
    with label mass) each scored clip's label mass and the dimensions flagged unreliable, whose
    mass is below ``min_label_mass``.

    ``by_language``: per language (``zh``, ``en``, ``other``, ``unknown``) the scored clips'
    count and alignment table (``None`` with the reason for too few clips); a clip's language
    is the release's, else the one the scorer identified. ``language_mismatches``: clip id ->
    ``{"release": ..., "identified": ...}`` where the identified language contradicts the
    release's (:func:`~speech_drame.languages.language_mismatch`). ``distribution_fit``: for
    a scorer that returns distributions over 1..5, how well they match the annotators' own
    (:func:`~speech_drame.distribution_fit.distribution_fit`: NLL, Jensen-Shannon divergence,
    ECE and reliability bins per dimension, each beside the pooled-rating baseline), else
    ``None``. ``no_audio``: the ids of the split's clips without audio (not scored, not
    failures).
    """

    split: str
    table: dict[str, Any]
    n_scored: int
    failures: dict[str, str]  # clip id -> reason
    label_mass: dict[str, dict[str, float]] = field(default_factory=dict)  # clip id -> dim -> mass
    unreliable: dict[str, list[str]] = field(default_factory=dict)  # clip id -> flagged dims
    min_label_mass: float = MIN_LABEL_MASS
    by_language: dict[str, dict[str, Any]] = field(default_factory=dict)
    language_mismatches: dict[str, dict[str, str]] = field(default_factory=dict)
    distribution_fit: dict[str, Any] | None = None
    no_audio: list[str] = field(default_factory=list)

    @property
    def alignment(self) -> AlignmentTable:
        """``table`` as a typed :class:`~speech_drame.stats.AlignmentTable`."""
        from ..stats import AlignmentTable

        return AlignmentTable.from_flat(self.table)

    @property
    def n_unreliable(self) -> int:
        """(clip, dimension) scores flagged unreliable."""
        return sum(len(dims) for dims in self.unreliable.values())


def evaluate_scorer(
    scorer: Scorer,
    dataset_dir: str | os.PathLike,
    split: str,
    progress: bool = False,
    label_policy: str = DEFAULT_LABEL_POLICY,
    min_label_mass: float = MIN_LABEL_MASS,
) -> SplitReport:
    """Score every clip of ``split`` (of ``scorer.config``) and compare with its annotators,
    whose null ratings count as ``label_policy`` says (:mod:`speech_drame.labels`). Scores with
    label mass below ``min_label_mass`` are kept and listed in ``unreliable``.

    Raises:
        NoAudioError: no clip of the split has audio (before any scoring).
        ValueError: the split does not exist, no clip of it could be scored, or
            ``min_label_mass`` is not in [0, 1].
    """
    from ..data.examples import SplitStream
    from ..data.reader import require_audio
    from ..distribution_fit import distribution_fit
    from ..stats import grouped_alignment

    check_min_label_mass(min_label_mass)
    stream = SplitStream(dataset_dir, scorer.config, split)
    require_audio([stream.split_data], f"scoring {stream.where}")
    labels: dict[str, dict[str, list[Any]]] = {}
    release: dict[str, str | None] = {}

    def inputs():
        for example in stream:
            labels[example.id] = example.labels
            release[example.id] = example.language
            yield ClipInput(example.id, example.source, example.contexts)

    results = scorer.score(inputs(), progress=progress)
    ok = [r for r in results if r.ok]
    failures = {r.id: str(r.error) for r in results if not r.ok}
    if not ok:
        raise ValueError(f"{stream.where}: no clip could be scored ({len(failures)} failed)")
    dims = [d for d in scorer.dimensions if d in stream.label_keys]
    with_pass = scorer.content_pass and CONTENT_PASS in stream.label_keys
    names = dims + ([CONTENT_PASS] if with_pass else [])
    joined = join(map(clip_predictions, ok), labels, names)
    languages = [release[r.id] or r.language or UNKNOWN for r in ok]
    tables = grouped_alignment(
        joined.predictions, joined.references, names, languages, label_policy=label_policy
    )
    fit = None
    if any(r.distributions.get(d) is not None for r in ok for d in dims):
        fit = distribution_fit(
            [[r.distributions.get(d) for d in dims] for r in ok],
            [[labels[r.id][d] for d in dims] for r in ok],
            dims,
            label_policy=label_policy,
        )
    mass = {r.id: r.label_mass for r in ok if r.label_mass}
    flagged = {r.id: dims for r in ok if (dims := r.unreliable(min_label_mass))}
    mismatches = {
        r.id: {"release": release[r.id], "identified": r.language}
        for r in ok
        if language_mismatch(release[r.id], r.language)
    }
    return SplitReport(
        split,
        tables["overall"],
        len(ok),
        failures,
        mass,
        flagged,
        min_label_mass,
        tables["by_group"],
        mismatches,
        fit,
        stream.no_audio,
    )
