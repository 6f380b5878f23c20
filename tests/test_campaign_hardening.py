"""The campaign server under attack and mistakes: blind refusals, slow clients, malformed
bodies, admin sessions, security headers, plots of odd names, exports that cannot delete."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time

import httpx
import pytest
from campaign_serving import make_campaign, serving

from speech_drame.campaign.serving import Limits

ARCH = {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def camp(tmp_path):
    clock = Clock()
    campaign, admin = make_campaign(tmp_path, "archetype", n=3, k=1, repeat_every=2,
                                    lease_seconds=60, clock=clock)  # fmt: skip
    tokens = {name: campaign.add_rater(name) for name in ("alice", "bob")}
    with serving(campaign, limits=Limits(request_seconds=1.0)) as url:
        yield {"campaign": campaign, "admin": admin, "tokens": tokens, "clock": clock,
               "http": httpx.Client(base_url=url, timeout=30), "url": url,
               "db": tmp_path / "archetype.db"}  # fmt: skip
    campaign.close()


def _task(env, name) -> dict | None:
    return env["http"].get(f"/api/r/{env['tokens'][name]}/task").json().get("task")


def _post(env, name, body: dict | None = None, **kw) -> httpx.Response:
    return env["http"].post(f"/api/r/{env['tokens'][name]}/rating", json=body, **kw)


def _rate(env, name, submission: str) -> dict:
    task = _task(env, name)
    r = _post(env, name, {"task_id": task["id"], "submission_id": submission, "answers": ARCH})
    assert r.json()["status"] == "recorded", r.text
    return task


def _secrets(env) -> list[str]:
    """What no rater may learn from an error: clip ids, rater names, task kinds."""
    clips = [c.id for c in env["campaign"].clips()]
    return [*clips, *env["tokens"], "repeat", "gold"]


def test_no_rater_facing_error_names_a_clip_a_task_a_rater_or_a_kind(camp, caplog):
    caplog.set_level(logging.WARNING, logger="speech_drame.campaign.server")
    store = camp["campaign"]
    # a task held past its lease while another rater completes the clip: withdrawn
    held = _task(camp, "alice")
    held_clip = store.current_task("alice").clip.id
    camp["clock"].now += 3600
    assert store.current_task("bob").clip.id == held_clip  # the lapsed clip went to bob
    _rate(camp, "bob", "b-1")
    refusals = {"a withdrawn task": _post(camp, "alice", {"task_id": held["id"],
                                                          "submission_id": "a-0", "answers": ARCH})}  # fmt: skip
    _rate(camp, "alice", "a-1")
    bob = _task(camp, "bob")
    refusals |= {
        "another rater's task": _post(camp, "alice", {"task_id": bob["id"], "submission_id": "a-2",
                                                      "answers": ARCH}),
        "an unknown task": _post(camp, "alice", {"task_id": 999, "submission_id": "a-3",
                                                 "answers": ARCH}),
        "a used submission id": _post(camp, "bob", {"task_id": bob["id"], "submission_id": "a-1",
                                                    "answers": ARCH}),
        "another rater's audio": camp["http"].get(f"/api/r/{camp['tokens']['alice']}/audio/{bob['id']}"),
    }  # fmt: skip
    for what, response in refusals.items():
        assert response.status_code in (404, 409), (what, response.text)
        for secret in _secrets(camp):
            assert secret not in response.text, (what, secret, response.text)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "already used for task" in logged and "withdrawn" in logged  # the detail is logged
    assert held_clip in logged


@pytest.mark.parametrize("body,content_type,status,reason", [
    ("[" * 30_000 + "]" * 30_000, "application/json", 400, "nested too deeply"),
    ('{"task_id": ' + "9" * 5000 + "}", "application/json", 400, "(a number too long)"),
    ('{"task_id": 1180591620717411303424, "submission_id": "x", "answers": {}}',
     "application/json", 422, "task_id must be a task number"),
    (b"\xff\xfe{}", "application/json", 400, "not JSON"),
    ("[1, 2]", "application/json", 422, "must be a JSON object"),
    (json.dumps({"task_id": 1, "submission_id": "x", "answers": ARCH}), "text/plain", 415,
     "must be application/json"),
])  # fmt: skip
def test_malformed_bodies_get_a_one_line_4xx_never_a_500(camp, body, content_type, status, reason):
    r = camp["http"].post(f"/api/r/{camp['tokens']['alice']}/rating",
                          content=body.encode() if isinstance(body, str) else body,
                          headers={"content-type": content_type})  # fmt: skip
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert reason in error and "\n" not in error


def test_hundreds_of_half_requests_do_not_lock_raters_out(camp):
    host, port = camp["url"].removeprefix("http://").split(":")
    slow = []
    for _ in range(300):
        s = socket.create_connection((host, int(port)))
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        slow.append(s)
    # at once: open connections do not count against the requests in progress (how fast they
    # are answered is measured by benchmarks/bench_campaign.py --slow-clients)
    for _ in range(20):
        assert camp["http"].get("/").status_code == 200
    deadline = time.monotonic() + 5  # request_seconds=1 here; the cap closed most at once
    for s in slow:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        # closed while its bytes were unread, the socket is reset: closed as well
        with contextlib.suppress(ConnectionResetError):
            assert s.recv(1) == b"", "a half request got an answer"
        s.close()


def test_the_admin_session_is_a_random_id_secure_over_https_and_ends_with_the_token(camp):
    http = camp["http"]
    r = http.get(f"/admin?token={camp['admin']}", follow_redirects=False,
                 headers={"X-Forwarded-Proto": "https"})  # fmt: skip
    cookie = r.headers["set-cookie"]
    assert r.status_code == 303 and camp["admin"] not in cookie
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    session = cookie.split(";")[0].split("=", 1)[1]
    plain = http.get(f"/admin?token={camp['admin']}", follow_redirects=False)
    assert "Secure" not in plain.headers["set-cookie"]
    jar = {"campaign_admin": session}
    assert httpx.get(f"{camp['url']}/api/admin/status", cookies=jar).status_code == 200
    assert (
        httpx.get(
            f"{camp['url']}/api/admin/status", cookies={"campaign_admin": camp["admin"]}
        ).status_code
        == 401
    )
    camp["campaign"].rotate_admin_token()
    assert httpx.get(f"{camp['url']}/api/admin/status", cookies=jar).status_code == 401


def test_every_response_carries_the_security_headers(camp):
    from speech_drame.campaign.server import HEADERS

    for path in ("/static/campaign.css", "/static/rate.js", "/", "/no/such"):
        r = camp["http"].get(path)
        for name, value in HEADERS.items():
            if name != "Cache-Control":
                assert r.headers.get(name) == value, (path, name)


def test_dollar_signs_in_rater_names_plot_as_text(tmp_path):
    import numpy as np
    from campaign_standin import StandIn, make_clips, random_answers

    from speech_drame.campaign.stats import campaign_status, write_plots

    camp = StandIn("archetype", 2, make_clips("archetype", 4))
    rng = np.random.default_rng(0)
    for clip in camp.clips():
        for rater in ("$\\frac{a", "b $x$"):
            camp.rate(rater, clip.id, random_answers("archetype", rng, 3.0))
    paths = write_plots(campaign_status(camp, bootstrap=0), tmp_path)
    assert all(p.stat().st_size > 1000 for p in paths)


# --- exports that cannot delete -----------------------------------------------------------------


def _exported(env, out, *extra) -> int:
    from speech_drame.cli import main

    if _task(env, "alice") is not None:
        _rate(env, "alice", f"e-{time.monotonic_ns()}")
    return main(["campaign", "export", str(env["db"]), "--out", str(out), *extra])


def test_export_refuses_the_folder_of_its_database_the_current_folder_and_non_exports(
    camp, tmp_path, monkeypatch, capsys
):
    notes = camp["db"].parent / "notes.txt"
    notes.write_text("my notes")
    assert _exported(camp, camp["db"].parent, "--overwrite") == 2
    assert "holds the campaign database" in capsys.readouterr().err
    assert camp["db"].is_file() and notes.read_text() == "my notes"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("keep")
    assert _exported(camp, mine, "--overwrite") == 2
    assert "is not an earlier campaign export" in capsys.readouterr().err
    assert (mine / "keep.txt").is_file()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert _exported(camp, ".", "--overwrite") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is the current folder" in err


def test_export_through_a_symlink_replaces_the_folder_and_keeps_the_link(camp, tmp_path, capsys):
    real = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert _exported(camp, link) == 0
    assert _exported(camp, link) == 2  # an earlier export: only with --overwrite
    assert _exported(camp, link, "--overwrite") == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert (real / "CAMPAIGN.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left
    capsys.readouterr()
