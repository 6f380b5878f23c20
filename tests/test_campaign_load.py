"""A campaign under load over loopback: ``speech-drame campaign serve`` as a subprocess, simulated
raters as threads (tests/campaign_load.py, shared with benchmarks/bench_campaign.py). Every
acknowledged rating is stored once with the answers first sent, invalid requests are refused
with a 4xx, every clip ends with K distinct raters, under each assignment rule (two scorers
attached); and the same after a ``kill -9`` of the server mid-campaign and a restart on the
same database, the rater who held a task getting it back."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from campaign_load import Driver, ServerProcess, check_store, write_campaign
from campaign_scorers import PlantedScorer, hashed_truth

from speech_drame.campaign.assign import disagreement
from speech_drame.campaign.attach import attach_scorer
from speech_drame.campaign.export import release_ratings
from speech_drame.campaign.store import open_campaign

pytestmark = pytest.mark.slow


def attach_two(target: str) -> None:
    """Two scorers that disagree on every fifth clip, one unsure on every seventh."""
    with open_campaign(target) as campaign:
        ids = [c.id for c in campaign.clips()]
        truth = hashed_truth(campaign.config, ids)
        for name, kw in (("planted", {"failures": frozenset(ids[::5])}),
                         ("unsure", {"wide": frozenset(ids[::7]), "seed": 1})):  # fmt: skip
            attach_scorer(campaign, PlantedScorer(campaign.config, truth, name=name, **kw), name,
                          name)  # fmt: skip


@pytest.mark.parametrize(
    ("config", "clips", "options"),
    [
        ("archetype", 30, {}),
        ("realism", 15, {"repeat_every": 4, "assign": "disagreement"}),
        ("archetype", 30, {"assign": "uncertain"}),
    ],
)
def test_concurrent_raters(tmp_path, config, clips, options):
    target = str(tmp_path / "c.db")
    tokens, _ = write_campaign(target, tmp_path / "audio", config, clips, k=3, raters=8, **options)
    if "assign" in options:
        attach_two(target)
    with ServerProcess(target, tmp_path / "server.log") as server:
        assert httpx.get(f"{server.url}/api/r/not-a-token/task", timeout=10).status_code == 404
        driver = Driver(server.url, config, tokens, time.monotonic() + 240, double_share=0.2,
                        invalid_share=0.3, seed=1).run()  # fmt: skip
    assert driver.problems == []
    assert driver.finished == set(tokens)
    assert sum(driver.refused.values()) > 0 and driver.doubles > 0
    got = check_store(target, driver.acks)
    assert got["lost"] == 0 and got["duplicated"] == 0, got
    assert got["clips_short"] == 0 and got["max_raters_per_clip"] == 3, got
    assert got["unacknowledged"] == 0 and got["stored"] == got["acknowledged"], got
    extra = clips * 3 // 4 if "repeat_every" in options else 0  # hidden repeats: every 4th task
    assert clips * 3 <= got["stored"] <= clips * 3 + extra


def test_kill_9_mid_campaign(tmp_path):
    target = str(tmp_path / "c.db")
    tokens, _ = write_campaign(target, tmp_path / "audio", "archetype", 30, k=3, raters=7,
                               assign="disagreement")  # fmt: skip
    attach_two(target)  # each rating updates its clip's priority in the same transaction
    mid = tokens.pop("rater06")  # holds one task across the crash
    log = tmp_path / "server.log"
    killed_at = threading.Event()
    server = ServerProcess(target, log).start()
    restarted = None
    try:
        held = httpx.get(f"{server.url}/api/r/{mid}/task", timeout=10).json()["task"]
        driver = Driver(server.url, "archetype", tokens, time.monotonic() + 240,
                        on_ack=lambda n: n >= 25 and killed_at.set(), seed=2)  # fmt: skip
        runner = threading.Thread(target=driver.run, daemon=True)
        runner.start()
        assert killed_at.wait(120), driver.problems
        server.kill9()
        acked_before = len(driver.acks)
        time.sleep(0.5)  # raters find the server gone
        restarted = ServerProcess(target, log, port=server.port).start()
        again = httpx.get(f"{server.url}/api/r/{mid}/task", timeout=10).json()["task"]
        assert again == held  # the same open task, number and audio link
        runner.join(300)
        assert not runner.is_alive()
        # the held clip waits for its holder: the others are done without it
        assert driver.finished == set(tokens), driver.problems
        rest = Driver(server.url, "archetype", {"rater06": mid}, time.monotonic() + 60).run()
        assert rest.acks[0].task_id == held["id"] and "rater06" in rest.finished
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()
    assert driver.problems == [] and rest.problems == []
    assert driver.retries > 0  # requests met the dead server and were retried
    assert 25 <= acked_before < 90
    got = check_store(target, driver.acks + rest.acks)
    assert got["lost"] == 0 and got["duplicated"] == 0, got
    assert got["clips_short"] == 0 and got["max_raters_per_clip"] == 3, got
    assert got["stored"] == 90 and got["unacknowledged"] == 0, got
    with open_campaign(target) as campaign:  # every clip's priority saw each of its ratings
        by_clip = release_ratings(campaign.ratings())
        results = [campaign.scorer_results(s.scorer_id) for s in campaign.attached_scorers()]
        stored = campaign.priorities()
        for clip in campaign.clips():
            want = disagreement("archetype", [r[clip.id].result for r in results],
                                [r.answers for r in by_clip[clip.id]])  # fmt: skip
            assert stored[clip.id] == pytest.approx(want, abs=1e-12), clip.id
