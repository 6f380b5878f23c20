"""The campaign web server over real HTTP (uvicorn on 127.0.0.1, httpx): tokens, audio access,
request limits, answer validation, idempotent submission, the dashboard, the export, the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time

import httpx
import pytest
import soundfile as sf
from campaign_serving import free_port, make_campaign, serving

from speech_drame.campaign.forms import validate_answers
from speech_drame.campaign.server import MAX_BODY
from speech_drame.campaign.store import open_campaign
from speech_drame.cli import main
from speech_drame.schema import validate_record

ARCH = {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5}


@pytest.fixture
def arch(tmp_path):
    campaign, admin = make_campaign(tmp_path, "archetype", n=3, k=2, seconds=(40.0, 1.5))
    tokens = {name: campaign.add_rater(name) for name in ("alice", "bob")}
    with serving(campaign) as url:
        yield {"campaign": campaign, "admin": admin, "tokens": tokens, "url": url,
               "db": str(tmp_path / "archetype.db"),
               "http": httpx.Client(base_url=url, timeout=30)}  # fmt: skip
    campaign.close()


def _task(env, name) -> dict:
    r = env["http"].get(f"/api/r/{env['tokens'][name]}/task")
    assert r.status_code == 200, r.text
    return r.json()


def _post(env, name, body, **kw) -> httpx.Response:
    return env["http"].post(f"/api/r/{env['tokens'][name]}/rating", json=body, **kw)


def test_visitors_and_unknown_tokens_learn_nothing(arch) -> None:
    http = arch["http"]
    home = http.get("/")
    assert home.status_code == 200 and "personal link" in home.text
    assert "clip" not in home.text.split("campaign", 1)[1]  # no data on the home page
    wrong_url = http.get("/no/such/page")
    for path in ("/r/not-a-token", "/api/r/not-a-token/task", "/api/r/not-a-token/audio/1"):
        r = http.get(path)
        assert (r.status_code, r.content) == (wrong_url.status_code, wrong_url.content), path
    assert wrong_url.status_code == 404
    assert _post(arch, "alice", ARCH).status_code == 422  # known token, bad body
    r = http.post("/api/r/not-a-token/rating", json={"task_id": 1, "submission_id": "x",
                                                      "answers": ARCH})  # fmt: skip
    assert r.status_code == 404
    page = http.get(f"/r/{arch['tokens']['alice']}")
    assert page.status_code == 200 and "rate.js" in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    assert http.get("/static/rate.js").status_code == 200


def test_task_hides_kind_and_clip_and_serves_own_audio_only(arch) -> None:
    alice, bob = _task(arch, "alice"), _task(arch, "bob")
    assert _task(arch, "alice") == alice  # the open task is returned again (resume)
    task = alice["task"]
    assert set(task) == {"id", "number", "context", "audio"}
    assert alice["progress"] == {"clip": 1, "rated": 0}
    assert "archetype-clip" not in json.dumps(alice)  # the clip id is not shown
    text = json.dumps({k: v for k, v in alice.items() if k != "rubric"})  # the same for all
    assert not re.search(r"regular|repeat|gold|kind", text)
    assert task["context"][0]["text"].startswith("You are a lighthouse keeper")
    assert [d["key"] for d in alice["rubric"]["dimensions"]][0] == "content_pass"

    wav = arch["http"].get(task["audio"])
    assert wav.status_code == 200 and wav.headers["content-type"] == "audio/wav"
    info = sf.info(io.BytesIO(wav.content))
    assert info.subtype == "PCM_16" and info.channels == 1 and info.samplerate == 16_000
    assert info.duration == pytest.approx(30.0)  # the 40 s clip, cut to its first 30 s

    a, b = arch["tokens"]["alice"], arch["tokens"]["bob"]
    assert arch["http"].get(f"/api/r/{a}/audio/{bob['task']['id']}").status_code == 404
    assert arch["http"].get(f"/api/r/{b}/audio/{task['id']}").status_code == 404
    for bad in ("..%2F..%2Fetc%2Fpasswd", "%2e%2e", "1.wav", "-1", "1e3", " 1", "99999",
                "9" * 40, "..", "%00"):  # fmt: skip
        r = httpx.get(f"{arch['url']}/api/r/{a}/audio/{bad}")
        assert r.status_code == 404, bad
    r = httpx.get(f"{arch['url']}/api/r/{a}/audio/../../../etc/passwd")
    assert r.status_code == 404 and b"root:" not in r.content


def test_bad_requests_are_refused_naming_the_field(arch) -> None:
    task_id = _task(arch, "alice")["task"]["id"]
    url = f"/api/r/{arch['tokens']['alice']}/rating"
    http = arch["http"]

    def body(**answers):
        return {"task_id": task_id, "submission_id": "s-1", "answers": {**ARCH, **answers}}

    r = http.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    big = json.dumps({**body(), "pad": "x" * MAX_BODY}).encode()
    r = http.post(url, content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "64 KB" in r.json()["error"]

    def chunks():  # no content-length: the limit holds while reading
        for _ in range(20):
            yield b" " * 8192

    json_type = {"content-type": "application/json"}
    assert http.post(url, content=chunks(), headers=json_type).status_code == 413
    cases = [
        ([1, 2], None),
        ({**body(), "extra": 1}, "extra"),
        ({**body(), "task_id": "1"}, "task_id"),
        ({**body(), "submission_id": ""}, "submission_id"),
        ({**body(), "answers": []}, "answers"),
        (body(audio_quality=6), "answers.audio_quality"),
        (body(audio_quality="4"), "answers.audio_quality"),
        (body(human_likeness=None), "answers.human_likeness"),
        (body(content_pass="yes"), "answers.content_pass"),
        (body(content_pass=False), "answers.audio_quality"),  # quality after a failed pass
        (body(nonsense=1), "answers.nonsense"),
        (body(confidence=0), "answers.confidence"),
        (body(audio_quality_comment="x" * 2001), "answers.audio_quality_comment"),
    ]
    for obj, field in cases:
        r = http.post(url, json=obj)
        assert r.status_code == 422, (obj, r.text)
        assert r.json()["field"] == field
        if field:
            assert field.split(".")[-1] in r.json()["error"]
    assert arch["campaign"].ratings() == []  # nothing stored by any of them
    # a task of another rater
    bob_task = _task(arch, "bob")["task"]["id"]
    r = http.post(url, json={**body(), "task_id": bob_task})
    assert r.status_code == 409 and "this task is not open for you" in r.json()["error"]
    assert arch["campaign"].ratings() == []


def test_double_submit_is_idempotent_and_committed_before_the_reply(arch) -> None:
    first = _task(arch, "alice")["task"]
    body = {"task_id": first["id"], "submission_id": "uuid-1", "answers": ARCH}
    r = _post(arch, "alice", body)
    assert r.status_code == 200 and r.json()["status"] == "recorded"
    # committed: a separate connection sees it as soon as the reply arrived
    other = open_campaign(arch["db"])
    try:
        assert [x.answers.scores for x in other.ratings()] == [
            {"audio_quality": 4, "human_likeness": 3, "appropriateness": 5}
        ]
    finally:
        other.close()
    nxt = r.json()["next"]
    assert nxt["task"]["id"] != first["id"] and nxt["progress"] == {"clip": 2, "rated": 1}
    again = _post(arch, "alice", body)  # a retry of the same request
    assert again.json()["status"] == "already recorded"
    changed = {**body, "submission_id": "uuid-2", "answers": {**ARCH, "audio_quality": 1}}
    assert _post(arch, "alice", changed).json()["status"] == "already recorded"
    assert [x.answers.scores["audio_quality"] for x in arch["campaign"].ratings()] == [4]
    assert _task(arch, "alice")["task"]["id"] == nxt["task"]["id"]


def _rate_everything(env) -> None:
    for name in env["tokens"]:
        state = _task(env, name)
        n = 0
        while not state["done"]:
            n += 1
            answers = ARCH if n % 2 else {"content_pass": False}
            body = {"task_id": state["task"]["id"], "submission_id": f"{name}-{n}",
                    "answers": answers}  # fmt: skip
            r = _post(env, name, body)
            assert r.status_code == 200, r.text
            state = r.json()["next"]
        assert n == 3  # K=2 of 2 raters: every rater rates every clip
        assert _task(env, name) == {"done": True}


def test_dashboard_status_and_export_need_the_admin_token(arch, tmp_path) -> None:
    http, admin = arch["http"], arch["admin"]
    for path in ("/admin", "/api/admin/status", "/api/admin/export.tar.gz",
                 "/api/admin/plots/progress.png", "/admin?token=wrong"):  # fmt: skip
        assert http.get(path).status_code == 401, path
    wrong = {"Authorization": "Bearer " + arch["tokens"]["alice"]}  # a rater token is not admin
    assert http.get("/api/admin/status", headers=wrong).status_code == 401
    assert httpx.get(f"{arch['url']}/admin", cookies={"campaign_admin": "x"}).status_code == 401
    bearer = {"Authorization": f"Bearer {admin}"}
    assert http.get("/api/admin/export.tar.gz", headers=bearer).status_code == 409  # no ratings

    _rate_everything(arch)
    status = http.get("/api/admin/status", headers=bearer)
    assert status.status_code == 200
    report = status.json()
    assert report["progress"]["ratings"] == 6 and set(report["raters"]) == {"alice", "bob"}

    browser = httpx.Client(base_url=arch["url"], timeout=60, follow_redirects=True)
    login = browser.get(f"/admin?token={admin}")  # follows the redirect, keeps the cookie
    assert login.status_code == 200 and login.url.path == "/admin" and not login.url.query
    cookie = login.history[0].headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = login.text
    assert "Campaign dashboard" in page and "Audio Quality" in page and "alice" in page
    plots = re.findall(r'src="(api/admin/plots/[\w-]+\.png\?v=\d+)"', page)
    assert len(plots) >= 2
    for src in plots:
        png = browser.get("/" + src)
        assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert browser.get("/api/admin/plots/nope.png").status_code == 404
    assert http.get("/api/admin/plots/progress.png").status_code == 401  # no cookie, no token

    tarball = browser.get("/api/admin/export.tar.gz")
    assert tarball.status_code == 200 and tarball.headers["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(tarball.content), mode="r:gz") as tar:
        names = tar.getnames()
        lines = tar.extractfile("release/archetype_data/test.jsonl").read().decode().splitlines()
        campaign_json = json.load(tar.extractfile("release/CAMPAIGN.json"))
    assert {n for n in names if n.endswith(".wav")} == {
        f"release/archetype_data/archetype-clip-{i}.wav" for i in range(3)
    }
    assert campaign_json["records"] == 3 and campaign_json["raters"] == ["alice", "bob"]
    for line in lines:
        record = validate_record(json.loads(line), "archetype")
        assert record.n_annotators == 2


def test_links_work_under_a_reverse_proxy_prefix(tmp_path) -> None:
    campaign, admin = make_campaign(tmp_path, "realism", n=2, k=1)
    token = campaign.add_rater("carol")
    with serving(campaign, root_path="/rating") as url:  # the proxy strips /rating
        page = httpx.get(f"{url}/r/{token}")
        assert page.status_code == 200
        assert 'src="../static/rate.js"' in page.text  # relative: /rating/static/rate.js
        state = httpx.get(f"{url}/api/r/{token}/task").json()
        assert state["task"]["audio"].startswith(f"/rating/api/r/{token}/audio/")
        labels = [c["label"] for c in state["task"]["context"]]
        assert labels == ["Character profile", "Local scene", "Character traits", "Transcript"]
        audio = httpx.get(url + state["task"]["audio"].removeprefix("/rating"))
        assert audio.status_code == 200
        login = httpx.get(f"{url}/admin?token={admin}")
        assert login.status_code == 303 and login.headers["location"] == "admin"
        assert "path=/rating/" in login.headers["set-cookie"].lower()
    campaign.close()


def test_cli_invite_admin_status_and_serve(tmp_path, capsys) -> None:
    campaign, admin = make_campaign(tmp_path, "archetype", n=2, k=1)
    campaign.close()
    db = str(tmp_path / "archetype.db")
    assert main(["campaign", "invite", db, "--name", "dora",
                 "--base-url", "https://rate.example.org/c/"]) == 0  # fmt: skip
    line = capsys.readouterr().out.strip()
    m = re.fullmatch(r"dora: https://rate\.example\.org/c/r/(\S+)", line)
    assert m, line
    token = m.group(1)
    assert main(["campaign", "invite", db, "--name", "dora"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["campaign", "admin", db]) == 0
    new_admin = capsys.readouterr().out.split()[-1]
    with open_campaign(db) as c:
        assert c.check_admin(new_admin) and not c.check_admin(admin)
    assert main(["campaign", "status", db]) == 0
    assert "2 clips x 1 raters" in capsys.readouterr().out
    assert main(["campaign", "status", str(tmp_path / "missing.db")]) == 2
    assert "error:" in capsys.readouterr().err

    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "speech_drame.cli", "campaign", "serve", db, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in first
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/r/{token}/task", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["progress"] == {"clip": 1, "rated": 0}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_cli_create_and_export(tmp_path, capsys) -> None:
    from conftest import tone

    lines = []
    for i in range(2):
        sf.write(tmp_path / f"a{i}.wav", tone(1.0, seed=i), 16_000)
        lines.append(json.dumps({"id": f"c{i}", "audio": f"a{i}.wav",
                                 "question": f"You are a pilot {i}. You say:"}))  # fmt: skip
    (tmp_path / "clips.jsonl").write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "c.db")
    assert main(["campaign", "create", "--clips", str(tmp_path / "clips.jsonl"), "--config",
                 "archetype", "--raters-per-clip", "1", "--out", db]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "2 clips" in out and re.search(r"admin token .*: \S{20,}", out)
    assert main(["campaign", "create", "--clips", str(tmp_path / "clips.jsonl"), "--config",
                 "archetype", "--raters-per-clip", "1", "--out", db]) == 2  # fmt: skip
    assert "already exists" in capsys.readouterr().err
    with open_campaign(db) as campaign:
        campaign.add_rater("eve")
        for _ in range(2):
            task = campaign.current_task("eve")
            answers = validate_answers("archetype", ARCH)
            campaign.submit("eve", task.task_id, f"s{task.task_id}", answers)
    assert main(["campaign", "export", db, "--out", str(tmp_path / "release")]) == 0
    assert "wrote" in capsys.readouterr().out
    lines = (tmp_path / "release" / "archetype_data" / "test.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["c0", "c1"]
