"""Scorers attached to a campaign (speech_drame.campaign.attach, .evaluator_agreement): the demo
LiteScorer and the tiny DRAME-Eval score every clip once, resume after an interruption and a
``kill -9``, count their failures by kind and never fill them; the live figures of
``campaign status`` equal ``drame_metric`` on the campaign's export (both configs, both label
policies); the dashboard shows two attached scorers in Chromium."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from campaign_scorers import PlantedScorer, hashed_truth
from campaign_serving import serving
from campaign_standin import context, make_clips, random_answers
from conftest import LIBRIVOX, REPO, save_tiny_evaluator, tone

from speech_drame.audio_llm.tiny import build_tiny
from speech_drame.campaign.attach import attach_scorer
from speech_drame.campaign.export import export_release, held_out
from speech_drame.campaign.forms import validate_answers
from speech_drame.campaign.records import CampaignClip
from speech_drame.campaign.stats import campaign_status, format_status, write_plots
from speech_drame.campaign.store import create_campaign, open_campaign
from speech_drame.cli import main
from speech_drame.data.build import build_dataset
from speech_drame.data.reader import open_split
from speech_drame.schema import CONTENT_PASS, dimensions
from speech_drame.scorers.base import ClipInput
from speech_drame.scorers.drame_eval import DrameEvalScorer

SHOTS = Path(os.environ.get("TMPDIR", "/tmp")) / "speech-drame-campaign-screenshots"
BOOTSTRAP, SEED = 200, 3


def _inputs(campaign) -> list[ClipInput]:
    return [ClipInput(c.id, c.audio_path, c.context) for c in campaign.clips()]


def _same_results(campaign, scorer, direct, tol) -> None:
    """The stored results of ``scorer`` are what it returns for the clips."""
    stored = campaign.scorer_results(scorer.id)
    assert sorted(stored) == sorted(r.id for r in direct)
    for r in direct:
        got = stored[r.id]
        assert got.ok == r.ok, (r.id, got.result)
        if not r.ok:
            assert got.result["error"] == r.error and got.error_kind == r.error_kind
            continue
        assert got.result["scores"] == pytest.approx(r.scores, abs=tol)
        for dim, p in r.distributions.items():
            assert got.result["distributions"][dim] == pytest.approx(p, abs=tol)


# --- attach: resume and failures ------------------------------------------------------------
def test_the_lite_scorer_resumes_after_an_interruption_and_counts_input_failures(tmp_path):
    from speech_drame.scorers.specs import load_scorer

    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    clips = [CampaignClip(f"read{i}", i, str(w), context("archetype", i))
             for i, w in enumerate(sorted(LIBRIVOX.glob("*.wav"))[:3])]  # fmt: skip
    corrupt, silent = tmp_path / "corrupt.wav", tmp_path / "silent.wav"
    corrupt.write_bytes(b"RIFF but nothing a decoder reads")
    sf.write(silent, np.zeros(16_000, "float32"), 16_000)
    clips += [CampaignClip(p.stem, 3 + k, str(p), context("archetype", 3 + k))
              for k, p in enumerate((corrupt, silent))]  # fmt: skip
    campaign, _ = create_campaign(str(tmp_path / "c.db"), "archetype", clips, [], 2)
    scorer = load_scorer("lite", "archetype")
    assert scorer.id.startswith("lite-")

    def interrupt(done: int, pending: int) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C after the first chunk was committed

    with pytest.raises(KeyboardInterrupt):
        attach_scorer(campaign, scorer, "lite", chunk=2, on_chunk=interrupt)
    assert sorted(campaign.scorer_results(scorer.id)) == ["read0", "read1"]
    report = attach_scorer(campaign, scorer, "lite", chunk=2)
    assert (report.cached, report.scored_now, report.scored) == (2, 3, 3)
    assert report.failures == {"input": 2} and report.failed_now == {"input": 2}
    stored = campaign.scorer_results(scorer.id)
    assert "unreadable audio" in stored["corrupt"].result["error"]
    assert str(corrupt) in stored["corrupt"].result["error"]
    assert "silence" in stored["silent"].result["error"]
    assert "scores" not in stored["silent"].result  # a failure holds no score
    again = attach_scorer(campaign, scorer, "lite")
    assert (again.cached, again.scored_now) == (5, 0)  # input failures are settled
    _same_results(campaign, scorer, scorer.score(_inputs(campaign)), 1e-9)
    entry = campaign_status(campaign, bootstrap=0)["scorers"]["lite"]
    assert entry["failures"] == {"input": 2, "model": 0} and entry["scored"] == 3
    assert entry["table"] is None and entry["compared"] == 0  # nobody rated yet
    campaign.close()


def test_a_non_finite_score_is_stored_as_a_model_failure_never_as_a_score():
    from speech_drame.campaign.attach import stored_result
    from speech_drame.scorers.base import ClipScores

    nan = float("nan")
    row, kind = stored_result(ClipScores("c1", {"audio_quality": nan}))
    assert kind == "model" and "non-finite" in row["error"] and "scores" not in row
    row, kind = stored_result(ClipScores("c1", {"audio_quality": 3.0},
                                         {"audio_quality": [0.2, 0.2, 0.2, 0.2, nan]}))  # fmt: skip
    assert kind == "model"
    row, kind = stored_result(ClipScores("c1", {"audio_quality": 3.0}, language="en",
                                         language_probability=nan))  # fmt: skip
    assert kind is None and row["language_probability"] is None  # JSON holds no NaN
    json.dumps(row, allow_nan=False)


def _tones(folder: Path, config: str, n: int, corrupt: bool = False) -> list[CampaignClip]:
    folder.mkdir(parents=True, exist_ok=True)
    clips = []
    for i in range(n):
        path = folder / f"t{i}.wav"
        if corrupt and i == n - 1:
            path.write_bytes(b"not audio")
        else:
            sf.write(path, tone(1.0 + 0.5 * (i % 3), freq=150 + 45 * i, seed=i), 16_000)
        clips.append(CampaignClip(f"t{i}", i, str(path), context(config, i)))
    return clips


def test_the_tiny_drame_eval_retries_model_failures_and_keeps_input_failures(tmp_path):
    campaign, _ = create_campaign(str(tmp_path / "c.db"), "archetype",
                                  _tones(tmp_path / "audio", "archetype", 3, corrupt=True), [], 3)  # fmt: skip
    model, processor = build_tiny(seed=0)
    scorer = DrameEvalScorer(model, processor, "archetype", batch_size=2)
    scorer_id = scorer.id
    saved = model.lm_head.weight[0, 0].item()
    with torch.no_grad():
        model.lm_head.weight[0, 0] = float("nan")  # the model fails on every clip it reads
    broken = attach_scorer(campaign, scorer, "drame-eval:tiny")
    assert broken.failures == {"model": 2, "input": 1} and broken.scored == 0
    stored = campaign.scorer_results(scorer_id)
    assert "non-finite model output" in stored["t0"].result["error"]
    assert "t2.wav" in stored["t2"].result["error"] and stored["t2"].error_kind == "input"
    assert campaign_status(campaign, bootstrap=0)["scorers"]["drame-eval:tiny"]["failures"] == {
        "input": 1, "model": 2}  # fmt: skip
    with torch.no_grad():
        model.lm_head.weight[0, 0] = saved  # the model works again (same scorer id)
    fixed = attach_scorer(campaign, scorer, "drame-eval:tiny")
    assert (fixed.cached, fixed.scored_now, fixed.scored) == (1, 2, 2)
    assert fixed.failures == {"input": 1} and not fixed.failed_now
    _same_results(campaign, scorer, scorer.score(_inputs(campaign)), 1e-6)
    retried = attach_scorer(campaign, scorer, "drame-eval:tiny", retry_failed=True)
    assert retried.scored_now == 1 and retried.failures == {"input": 1}
    campaign.close()


def test_a_chat_judge_attaches_and_its_unusable_answers_are_retried(tmp_path, server):
    from judge_server import chat_body, reply

    from speech_drame.scorers.judge import JudgeOptions
    from speech_drame.scorers.specs import load_scorer

    campaign, _ = create_campaign(str(tmp_path / "c.db"), "archetype",
                                  _tones(tmp_path / "audio", "archetype", 3), [], 3)  # fmt: skip
    good = {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5}
    answers = [chat_body(json.dumps(good)), chat_body("I cannot rate this."), chat_body(
        json.dumps({**good, "audio_quality": 2}))]  # fmt: skip
    server.routes["judge"] = lambda payload, n: reply(answers[n] if n < 3 else answers[0])
    spec = f"judge:judge@{server.url}"
    scorer = load_scorer(spec, "archetype", judge_options=JudgeOptions(runs=1, max_retries=0))
    first = attach_scorer(campaign, scorer, spec)
    assert first.scorer.name == "judge:judge" and first.failures == {"model": 1}
    stored = campaign.scorer_results(scorer.id)
    assert stored["t0"].result["scores"]["audio_quality"] == 4.0
    assert stored["t2"].result["scores"]["audio_quality"] == 2.0
    assert stored["t2"].result["content_pass"] == 1.0 and not stored["t1"].ok
    assert "scores" not in stored["t1"].result and server.count("judge") == 3
    again = attach_scorer(campaign, scorer, spec)  # the unusable answer is asked again
    assert (again.cached, again.scored_now, again.scored) == (2, 1, 3)
    assert server.count("judge") == 4
    campaign.close()


@pytest.fixture(scope="module")
def evaluator_folder(tmp_path_factory) -> Path:
    """A tiny DRAME-Eval evaluator folder (archetype): base from seed 1, a fresh LoRA adapter."""
    return save_tiny_evaluator(tmp_path_factory.mktemp("drame_eval"))


def test_campaign_attach_survives_kill_9(tmp_path, evaluator_folder, capsys):
    target = str(tmp_path / "c.db")
    clips = _tones(tmp_path / "audio", "archetype", 4)
    create_campaign(target, "archetype", clips, [], 3)[0].close()
    spec = f"drame-eval:{evaluator_folder}"
    cmd = [sys.executable, "-m", "speech_drame.cli", "campaign", "attach", target,
           "--scorer", spec, "--chunk", "1", "--quiet"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    stored = 0
    with open_campaign(target) as campaign:
        while time.monotonic() < deadline and proc.poll() is None and not stored:
            stored = sum(len(campaign.scorer_results(s.scorer_id))
                         for s in campaign.attached_scorers())  # fmt: skip
            time.sleep(0.02)
    assert proc.poll() is None and stored, "the attach finished (or failed) before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert main(["campaign", "attach", target, "--scorer", spec, "--quiet"]) == 0
    out = capsys.readouterr().out
    with open_campaign(target) as campaign:
        (entry,) = campaign.attached_scorers()
        results = campaign.scorer_results(entry.scorer_id)
    assert entry.name == "drame-eval:" + evaluator_folder.name and len(results) == 4
    assert all(r.ok for r in results.values())
    done_before = int(out.split(" scored now")[0].split(": ")[-1])
    assert done_before < 4 and f"{4 - done_before} already stored" in out
    assert "stored: 4 scored, 0 failed" in out


# --- the live figures are drame_metric's on the export --------------------------------------
LANG = ("zh", "en")


@pytest.fixture(scope="module", params=["archetype", "realism"])
def rated(request, tmp_path_factory):
    """A campaign of 8 clips (half with ids tagged zh, half en), rated in part by 4 raters
    (K=3), with the tiny DRAME-Eval and a planted scorer attached."""
    config = request.param
    root = tmp_path_factory.mktemp(f"rated-{config}")
    clips = [dataclasses.replace(c, id=f"{c.id}_{LANG[i % 2]}")
             for i, c in enumerate(make_clips(config, 8, root / "audio"))]  # fmt: skip
    campaign, admin = create_campaign(
        str(root / "c.db"), config, clips, [], 3, assign="disagreement"
    )
    model, processor = build_tiny(seed=0)
    attach_scorer(
        campaign, DrameEvalScorer(model, processor, config, batch_size=4), "drame-eval:tiny"
    )
    truth = hashed_truth(config, [c.id for c in clips])
    planted = PlantedScorer(config, truth, failures=frozenset({clips[2].id, clips[7].id}))
    attach_scorer(campaign, planted, "planted", "planted")
    rng = np.random.default_rng(5)
    names = [f"rater{j}" for j in range(4)]
    for name in names:
        campaign.add_rater(name)
    for step in range(20):  # of 24 wanted
        name = names[step % 4]
        task = campaign.current_task(name)
        if task is None:
            continue
        answers = random_answers(config, rng, truth[task.clip.id][dimensions(config)[0]])
        campaign.submit(name, task.task_id, uuid.uuid4().hex, validate_answers(config, answers))
    yield campaign, admin, root
    campaign.close()


def _close(got, want, where: str) -> None:
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), where
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for k, (a, b) in enumerate(zip(got, want, strict=True)):
            _close(a, b, f"{where}[{k}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, abs=1e-9, rel=0), where
    else:
        assert got == want, where


@pytest.mark.parametrize("policy", ["paper", "skip"])
def test_live_figures_equal_drame_metric_on_the_export(rated, policy, tmp_path):
    import evaluate

    campaign, _, _ = rated
    config = campaign.config
    report = campaign_status(campaign, bootstrap=BOOTSTRAP, seed=SEED, label_policy=policy)
    export_release(campaign, tmp_path / "release")
    built = tmp_path / "built"
    build_dataset(tmp_path / "release", built, license_id="cc-by-4.0", progress=False)
    rows = list(open_split(built, config, "test").rows(["id", "annotations", "language"]))
    assert len(rows) == report["samples"] == 8 and {r["language"] for r in rows} == set(LANG)
    drame = evaluate.load(str(REPO / "evaluate_metric" / "drame_metric"))
    assert list(report["scorers"]) == ["drame-eval:tiny", "planted"]
    for name, entry in report["scorers"].items():
        results = campaign.scorer_results(entry["scorer_id"])
        attached = next(s for s in campaign.attached_scorers() if s.name == name)
        dims = [d for d in dimensions(config) if d in attached.dimensions]
        names = dims + ([CONTENT_PASS] if attached.content_pass else [])
        scored = [r for r in rows if results[r["id"]].ok]
        preds = [[results[r["id"]].result["scores"].get(d, results[r["id"]].result.get(d))
                  for d in names] for r in scored]  # fmt: skip
        refs = [[r["annotations"][d] for d in names] for r in scored]
        dists = [[results[r["id"]].result["distributions"].get(d) for d in names]
                 for r in scored]  # fmt: skip
        want = drame.compute(predictions=preds, references=refs, dimensions=names,
                             bootstrap=BOOTSTRAP, seed=SEED, label_policy=policy,
                             groups=[r["language"] for r in scored], distributions=dists)  # fmt: skip
        assert entry["compared"] == len(scored) == 8
        table, fit = entry["table"], entry["fit"]
        assert set(table) | set(fit) | {"by_group"} == set(want)
        for key in (*table, *fit):
            _close((table | fit)[key], want[key], f"{name} {key}")
        assert set(entry["by_language"]) == set(LANG) == set(want["by_group"])
        for lang, group in entry["by_language"].items():
            assert group["count"] == want["by_group"][lang]["count"] == 4
            for key, value in want["by_group"][lang]["table"].items():
                _close(group["table"][key], value, f"{name} {lang} {key}")
        rated_under_policy = {  # clips with a rating left once the policy read its nulls
            d: sum(policy == "paper" or any(v is not None for v in r["annotations"][d])
                   for r in scored)
            for d in dims
        }  # fmt: skip
        assert entry["fit_clips"] == rated_under_policy
        curve = report["evaluator_curve"]
        assert curve["ratings"][-1] == 20
        for d in dims:  # the curve ends at the figures of the table
            _close(curve["scorers"][name][d][-1], table[f"{d}_pearson"], f"curve {d}")
    for d, human in report["dimensions"].items():
        _close(curve["ceiling"][d][-1], human["ceiling"], f"ceiling curve {d}")
    text = format_status(report)
    assert "drame-eval:tiny [drame-eval-" in text and "planted [planted-" in text
    assert "8 of 8 clips scored (failed: input 0, model 0" in text
    assert "NLL (base)" in text and "  zh (4 clips):" in text and "  en (4 clips):" in text
    plots = write_plots(report, tmp_path / "plots")
    assert [p.name for p in plots][-1] == "evaluators.png"


def test_status_command_prints_the_attached_scorers(rated, tmp_path, capsys):
    campaign, _, root = rated
    target = str(root / "c.db")
    assert main(["campaign", "status", target, "--json", "--bootstrap", str(BOOTSTRAP),
                 "--seed", str(SEED), "--label-policy", "skip"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    want = campaign_status(campaign, bootstrap=BOOTSTRAP, seed=SEED, label_policy="skip")
    assert printed["scorers"].keys() == want["scorers"].keys()
    for name, entry in printed["scorers"].items():
        assert entry["table"]["avg_pearson"] == pytest.approx(want["scorers"][name]["table"][
            "avg_pearson"], abs=1e-12)  # fmt: skip
    assert printed["assign"] == "disagreement"
    assert main(["campaign", "status", target, "--json", "--bootstrap", "0", "--test-share",
                 "0.5"]) == 0  # fmt: skip
    held = json.loads(capsys.readouterr().out)
    test_clips = [c.id for c in campaign.clips() if held_out(c.id, 0.5)]
    assert 0 < len(test_clips) < 8 and held["scorers_test_share"] == 0.5
    for entry in held["scorers"].values():
        assert entry["compared"] == len(test_clips) and entry["clips"] == 8
    assert held["samples"] == printed["samples"]  # the human figures keep every clip
    assert main(["campaign", "status", target, "--bootstrap", "20", "--plots",
                 str(tmp_path / "plots")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "attached scorers: agreement with the mean rating" in out
    assert f"wrote {tmp_path / 'plots' / 'evaluators.png'}" in out


# --- the dashboard --------------------------------------------------------------------------
def test_the_dashboard_shows_two_attached_scorers_in_chromium(rated, browser):
    from playwright.sync_api import expect

    campaign, admin, _ = rated
    config = campaign.config
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"dashboard-evaluators-{config}.png"
    with serving(campaign) as url:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.goto(f"{url}/admin?token={admin}", timeout=60_000)
        expect(page.locator("h1")).to_have_text(f"Campaign dashboard ({config})")
        page.wait_for_function(
            "[...document.images].length >= 4 && [...document.images].every(i => i.naturalWidth)",
            timeout=60_000,
        )
        for name in ("drame-eval:tiny", "planted"):
            expect(page.locator("h3", has_text=name)).to_be_visible()
        main_text = page.locator("main").inner_text()
        assert "human ceiling" in main_text
        assert ("Content Pass (raters' majority)" in main_text) == (config == "archetype")
        page.locator("summary", has_text="per language").first.click()
        expect(page.locator("h4", has_text="Mandarin (zh), 4 clips").first).to_be_visible()
        assert "dealt disagreement" in main_text
        assert page.locator("img[alt=evaluators]").count() == 1
        token = campaign.add_rater(f"late-{config}")  # what a rater is sent: no score at all
        payload = page.request.get(f"{url}/api/r/{token}/task").json()
        assert set(payload) == {"done", "task", "rubric", "progress"}
        assert set(payload["task"]) == {"id", "number", "context", "audio"}
        sent = json.dumps(payload)
        for s in campaign.attached_scorers():
            assert s.scorer_id not in sent and s.name not in sent
        page.screenshot(path=str(shot), full_page=True)
        ctx.close()
    print(f"screenshot: {shot}")
