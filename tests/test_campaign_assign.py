"""The assignment rules' priorities (speech_drame.campaign.assign) against scipy and numpy, and
``campaign create --assign`` (the dealing itself: tests/test_campaign_store.py's
check_assignment_rules on SQLite and PostgreSQL, tests/test_campaign_load.py under load)."""

from __future__ import annotations

import numpy as np
import pytest
from campaign_scorers import distribution
from campaign_standin import random_answers
from scipy import stats

from speech_drame.campaign.assign import (
    disagreement,
    distribution_width,
    mean_ratings,
    priority,
    uncertainty,
)
from speech_drame.campaign.forms import validate_answers
from speech_drame.labels import apply_label_policy
from speech_drame.schema import dimensions


def test_distribution_width_is_the_standard_deviation_over_the_widest():
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(5))
        want = stats.rv_discrete(values=(np.arange(1, 6), p)).std() / 2
        assert distribution_width(p.tolist()) == pytest.approx(want, abs=1e-12)


def test_uncertainty_takes_the_wider_of_width_and_missing_label_mass():
    wide, narrow = distribution(3.0, 1.8).tolist(), distribution(4.0, 0.4).tolist()
    results = [
        {"scores": {"audio_quality": 3.0, "human_likeness": 4.0},
         "distributions": {"audio_quality": wide, "human_likeness": narrow},
         "label_mass": {"audio_quality": 0.95, "human_likeness": 0.2}},
        {"scores": {"audio_quality": 2.0}},  # neither: no term
    ]  # fmt: skip
    want = np.mean([max(distribution_width(wide), 0.05), max(distribution_width(narrow), 0.8)])
    assert uncertainty(results) == pytest.approx(want, abs=1e-12)
    assert uncertainty([]) == 0.0 and priority("balanced", "archetype", results, []) is None


@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_disagreement_is_spread_plus_distance_from_the_raters(config):
    rng = np.random.default_rng(1)
    dims = dimensions(config)
    results = [{"scores": {d: float(rng.uniform(1, 5)) for d in dims[: 2 + k]}} for k in range(3)]
    ratings = [validate_answers(config, random_answers(config, rng, 3.0)) for _ in range(4)]
    terms = []
    for d in dims:
        scores = np.array([r["scores"][d] for r in results if d in r["scores"]])
        if not scores.size:
            continue
        values = [v for v in apply_label_policy([a.release_value(d) for a in ratings], d, "paper")
                  if v is not None]  # fmt: skip
        gap = np.abs(scores - np.mean(values)).mean() if values else 0.0
        if scores.size > 1 or values:
            terms.append(np.std(scores) + gap)
    assert disagreement(config, results, ratings) == pytest.approx(np.mean(terms), abs=1e-12)
    assert set(mean_ratings(config, ratings)) == set(dims)  # the paper's policy: all counted
    alone = disagreement(config, results[:1])
    assert alone == 0.0  # one scorer and no rating: nothing to disagree with
    assert priority("disagreement", config, results, ratings) == disagreement(config, results,
                                                                                  ratings)  # fmt: skip


def test_create_takes_the_rule_and_refuses_others(tmp_path, capsys):
    from campaign_load import write_clips

    from speech_drame.campaign.store import CampaignError, create_campaign, open_campaign
    from speech_drame.cli import main

    clips = write_clips(tmp_path / "audio", "archetype", 3)
    lines = "".join(
        f'{{"id": "{c.id}", "audio": "{c.audio_path}", "question": "{c.context["question"]}"}}\n'
        for c in clips
    )
    (tmp_path / "clips.jsonl").write_text(lines, encoding="utf-8")
    target = tmp_path / "c.db"
    assert main(["campaign", "create", "--clips", str(tmp_path / "clips.jsonl"), "--config",
                 "archetype", "--raters-per-clip", "2", "--assign", "uncertain", "--out",
                 str(target)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "dealt uncertain" in out and "attach scorers before the raters start" in out
    with open_campaign(str(target)) as campaign:
        assert campaign.assign == "uncertain"
    with pytest.raises(SystemExit):
        main(["campaign", "create", "--clips", "x", "--config", "archetype",
              "--raters-per-clip", "2", "--assign", "random", "--out", "y.db"])  # fmt: skip
    assert "invalid choice: 'random'" in capsys.readouterr().err
    with pytest.raises(CampaignError, match="unknown assignment rule 'loudest'"):
        create_campaign(str(tmp_path / "d.db"), "archetype", clips, [], 1, assign="loudest")
