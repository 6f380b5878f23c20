"""The one join of predictions to annotations (scorers.join), used by every evaluation."""

from __future__ import annotations

import pytest

from speech_drame.scorers.base import ClipScores
from speech_drame.scorers.join import clip_predictions, join
from speech_drame.stats import alignment_table


def test_join_matches_by_id_and_leaves_out_missing_dimensions_only() -> None:
    annotations = {
        "b": {"audio_quality": [2, 3], "content_pass": [False, False]},
        "a": {"audio_quality": [4, None], "content_pass": [True, True]},
        "c": {"audio_quality": [5], "content_pass": [True]},
    }
    pairs = [("a", {"audio_quality": 4.5, "content_pass": 0.9}), ("b", {"content_pass": 0.2}),
             ("c", {"audio_quality": 4.0, "content_pass": 0.7})]  # fmt: skip
    joined = join(pairs, annotations, ["audio_quality", "content_pass"])
    assert joined.ids == ["a", "b", "c"]
    assert joined.references == [[[4, None], [True, True]], [[], [False, False]], [[5], [True]]]
    assert joined.missing == {"audio_quality": 1, "content_pass": 0}
    table = alignment_table(joined.predictions, joined.references, joined.dimensions)
    assert table["audio_quality_count"] == 2 and table["content_pass_count"] == 3
    with pytest.raises(ValueError, match="clip 'x' has no annotations"):
        join([("x", {})], annotations, ["audio_quality"])


def test_clip_predictions_carry_the_content_pass_probability() -> None:
    result = ClipScores("a", scores={"audio_quality": 3.0}, content_pass=0.4)
    assert clip_predictions(result) == ("a", {"audio_quality": 3.0, "content_pass": 0.4})
