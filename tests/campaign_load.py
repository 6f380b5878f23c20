"""Simulated raters over loopback HTTP, shared by tests/test_campaign_load.py and
benchmarks/bench_campaign.py (which puts tests/ on ``sys.path``).

- :func:`write_campaign`: a campaign of real 1 s WAV clips (seeded tones and noise) with invited
  raters, through the store API;
- :class:`ServerProcess`: ``speech-drame campaign serve`` as a subprocess on a free 127.0.0.1
  port (stop, or ``kill -9`` and restart on the same port);
- :class:`Driver`: raters as threads with httpx, each looping GET task -> GET its audio -> POST
  a random valid rating (the page's rules: Content Pass, then the scales and the gates), some
  sending the same task twice and some sending invalid answers first (which must be refused
  with a 4xx). A lost connection is retried with the same submission id, as the page's Retry
  button does; after it, the rater's open task must come back unchanged;
- :func:`check_store`: what the store holds against what the server acknowledged;
- :func:`in_process`: the same submits straight through the store API (the benchmark's baseline).

Nothing here asserts: the figures go back to the caller.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from campaign_standin import context
from conftest import free_port

from speech_drame.campaign.forms import validate_answers
from speech_drame.campaign.records import TASK_KINDS, CampaignClip
from speech_drame.campaign.store import create_campaign, open_campaign
from speech_drame.schema import EMOTION_GATE_THRESHOLD, EMOTION_GATES, dimensions

SR = 16_000
GATES = dict(EMOTION_GATES)  # gated dimension -> its gate


# --- the campaign ---------------------------------------------------------------------------
def write_clips(folder: Path, config: str, n: int, seconds: float = 1.0) -> list[CampaignClip]:
    """``n`` clips, each a real WAV file of ``seconds``: a seeded tone, or noise every 4th."""
    folder.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * SR)) / SR
    clips = []
    for i in range(n):
        rng = np.random.default_rng(i)
        x = 0.05 * rng.standard_normal(t.size)
        if i % 4:
            x += 0.3 * np.sin(2 * np.pi * rng.uniform(120, 400) * t)
        path = folder / f"{config}_{i:04d}.wav"
        sf.write(path, x.astype("float32"), SR, subtype="PCM_16")
        extra = {"transcript": f"Storm {i} ahead, hold on."} if config == "realism" else {}
        clips.append(CampaignClip(f"{config}-{i:04d}", i, str(path), context(config, i), extra))
    return clips


def write_campaign(target: str, folder: Path, config: str, clips: int, k: int, raters: int,
                   seconds: float = 1.0, **options: Any) -> tuple[dict[str, str], str]:  # fmt: skip
    """Create the campaign at ``target`` and invite ``raters``; returns name -> link token and
    the admin token."""
    campaign, admin = create_campaign(
        target, config, write_clips(folder, config, clips, seconds), [], k, **options
    )
    with campaign:
        tokens = {f"rater{j:02d}": campaign.add_rater(f"rater{j:02d}") for j in range(raters)}
    return tokens, admin


# --- the server -----------------------------------------------------------------------------
class ServerProcess:
    """``speech-drame campaign serve TARGET`` on 127.0.0.1; its output goes to ``log``."""

    def __init__(self, target: str, log: Path, port: int | None = None, timeout: float = 60.0):
        self.target, self.log, self.timeout = target, Path(log), timeout
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> ServerProcess:
        import httpx

        cmd = [sys.executable, "-m", "speech_drame.cli", "campaign", "serve", self.target,
               "--port", str(self.port), "--bootstrap", "20"]  # fmt: skip
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the campaign server exited ({self.proc.returncode}):\n"
                                   f"{self.log.read_text(errors='replace')[-3000:]}")  # fmt: skip
            try:
                if httpx.get(self.url + "/", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the campaign server did not answer in {self.timeout:g} s")
            time.sleep(0.1)

    def kill9(self) -> None:
        """SIGKILL: no shutdown, no flushing beyond what each commit already did."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- answers --------------------------------------------------------------------------------
def valid_answers(config: str, rng: np.random.Generator) -> dict[str, Any]:
    """What the page sends: Content Pass, then every scale that is asked (gates respected)."""
    out: dict[str, Any] = {}
    if config == "archetype":
        out["content_pass"] = bool(rng.random() > 0.15)
        if not out["content_pass"]:
            return out
    for dim in dimensions(config):
        gate = GATES.get(dim)
        if gate and out.get(gate, 0) < EMOTION_GATE_THRESHOLD:
            continue
        out[dim] = int(rng.integers(1, 6))
    if rng.random() < 0.7:
        out["confidence"] = int(rng.integers(1, 6))
    if rng.random() < 0.3:
        key = "human_likeness_comment" if config == "archetype" else "comments"
        out[key] = f"note {int(rng.integers(1000))}"
    return out


def invalid_bodies(config: str, task_id: int, rng: np.random.Generator) -> list[Any]:
    """Request bodies the server must refuse with a 4xx (bytes: sent as they are)."""
    ok = valid_answers(config, rng)
    first = next(d for d in dimensions(config) if d not in GATES)
    answers = [
        {**ok, "loudness": 3},
        {**ok, "confidence": 0},
        {**ok, ("human_likeness_comment" if config == "archetype" else "comments"): "x" * 2001},
    ]
    full = {d: 3 for d in dimensions(config) if d not in GATES}
    if config == "archetype":
        answers += [
            {"content_pass": "yes"},
            {"content_pass": False, "audio_quality": 3},
            {"content_pass": True, **full, "audio_quality": 6},
            {"content_pass": True, **full, "human_likeness": "4"},
            {"content_pass": True, "audio_quality": 3},  # scales missing
        ]
    else:
        answers += [
            {**full, "emotion_accuracy": 2, "emotion_intensity_control": 3},  # gated, answered
            {**full, "emotion_accuracy": 4},  # asked, missing
            {**full, "emotion_accuracy": 4, "emotion_intensity_control": 2, "dynamic_range": 4},
            {**full, first: 3.5},
            {**full, first: 0},
        ]
    sid = lambda: str(uuid.uuid4())  # noqa: E731
    bodies: list[Any] = [
        {"task_id": task_id, "submission_id": sid(), "answers": a} for a in answers
    ]
    bodies += [
        {"task_id": str(task_id), "submission_id": sid(), "answers": ok},
        {"task_id": task_id, "answers": ok},
        {"task_id": task_id + 10**7, "submission_id": sid(), "answers": ok},  # not the rater's
        {"task_id": task_id, "submission_id": sid(), "answers": ok, "extra": 1},
        b"{not json",
        json.dumps({"task_id": task_id, "submission_id": sid(),
                    "answers": {**ok, "comments": "x" * 70_000}}).encode(),  # over 64 KB
    ]  # fmt: skip
    return bodies


# --- the driver -----------------------------------------------------------------------------
@dataclass
class Ack:
    """A rating the server acknowledged (HTTP 200)."""

    rater: str
    task_id: int
    answers: dict[str, Any]
    status: str


@dataclass
class Driver:
    """R simulated raters against ``url``; stops at ``deadline`` (monotonic) or ``max_ratings``.

    ``double_share``: share of tasks sent twice (the second time with other answers and a new
    submission id: must be "already recorded", the first answers kept); ``invalid_share``:
    share of tasks preceded by an invalid request (must be a 4xx). ``on_ack(n)`` runs after
    each acknowledged rating (n: how many so far), e.g. to kill the server.
    """

    url: str
    config: str
    tokens: dict[str, str]
    deadline: float
    max_ratings: int | None = None
    double_share: float = 0.1
    invalid_share: float = 0.1
    seed: int = 0
    on_ack: Any = None
    acks: list[Ack] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)  # status -> count (expected refusals)
    problems: list[str] = field(default_factory=list)  # anything unexpected
    doubles: int = 0
    retries: int = 0
    resumes: int = 0  # open tasks checked after a lost connection
    finished: set[str] = field(default_factory=set)
    started: float = 0.0
    elapsed: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()

    # each request retried on transport errors (a dead server) until the deadline
    def _request(self, client: Any, method: str, path: str, **kw: Any) -> Any:
        import httpx

        lost = False
        while True:
            try:
                response = client.request(method, self.url + path, **kw)
                return response, lost
            except httpx.TransportError:
                lost = True
                with self._lock:
                    self.retries += 1
                if time.monotonic() > self.deadline:
                    raise TimeoutError(f"{method} {path}: no server before the deadline") from None
                time.sleep(0.1)

    def _problem(self, text: str) -> None:
        with self._lock:
            self.problems.append(text)

    def _rater(self, name: str, token: str, seed: int) -> None:
        import httpx

        rng = np.random.default_rng(seed)
        api = f"/api/r/{token}"
        with httpx.Client(timeout=30) as client:
            r, _ = self._request(client, "GET", api + "/task")
            payload = r.json()
            while not payload["done"] and not self._stop.is_set():
                if time.monotonic() > self.deadline:
                    return
                task = payload["task"]
                audio, lost = self._request(client, "GET", task["audio"])
                if audio.status_code != 200 or audio.content[:4] != b"RIFF":
                    self._problem(f"{name}: audio of task {task['id']}: {audio.status_code}")
                if lost:
                    self._check_resume(client, api, name, task["id"])
                if rng.random() < self.invalid_share:
                    self._post_invalid(client, api, name, task["id"], rng)
                answers = valid_answers(self.config, rng)
                body = {"task_id": task["id"], "submission_id": str(uuid.uuid4()),
                        "answers": answers}  # fmt: skip
                t0 = time.perf_counter()
                r, lost = self._request(client, "POST", api + "/rating", json=body)
                latency = time.perf_counter() - t0
                if r.status_code != 200:
                    self._problem(f"{name}: task {task['id']}: HTTP {r.status_code} {r.text}")
                    return
                reply = r.json()
                if reply["status"] != "recorded" and not lost:
                    self._problem(f"{name}: task {task['id']}: {reply['status']} at first send")
                with self._lock:
                    self.acks.append(Ack(name, task["id"], answers, reply["status"]))
                    self.latencies.append(latency)
                    n = len(self.acks)
                    if self.max_ratings is not None and n >= self.max_ratings:
                        self._stop.set()
                if self.on_ack is not None:
                    self.on_ack(n)
                if rng.random() < self.double_share:
                    self._post_again(client, api, name, task["id"], rng)
                payload = reply["next"]
        with self._lock:
            if payload["done"]:
                self.finished.add(name)

    def _check_resume(self, client: Any, api: str, name: str, task_id: int) -> None:
        """After a lost connection, the rater's open task is the one they held."""
        r, _ = self._request(client, "GET", api + "/task")
        got = r.json()
        with self._lock:
            self.resumes += 1
        if got.get("done") or got["task"]["id"] != task_id:
            self._problem(f"{name}: held task {task_id}, the server gave back {got}")

    def _post_invalid(self, client: Any, api: str, name: str, task_id: int, rng: Any) -> None:
        bodies = invalid_bodies(self.config, task_id, rng)
        body = bodies[int(rng.integers(len(bodies)))]
        kw = {"content": body, "headers": {"content-type": "application/json"}}
        r, _ = self._request(client, "POST", api + "/rating", **(kw if isinstance(
            body, bytes) else {"json": body}))  # fmt: skip
        if 400 <= r.status_code < 500 and "error" in r.json():
            with self._lock:
                self.refused[r.status_code] += 1
        else:
            self._problem(f"{name}: invalid body accepted ({r.status_code}): {str(body)[:200]}")

    def _post_again(self, client: Any, api: str, name: str, task_id: int, rng: Any) -> None:
        body = {"task_id": task_id, "submission_id": str(uuid.uuid4()),
                "answers": valid_answers(self.config, rng)}  # fmt: skip
        r, _ = self._request(client, "POST", api + "/rating", json=body)
        with self._lock:
            self.doubles += 1
        if r.status_code != 200 or r.json()["status"] != "already recorded":
            self._problem(f"{name}: second send of task {task_id}: {r.status_code} {r.text}")

    def run(self) -> Driver:
        """Run every rater in its own thread until all are done, the cap or the deadline."""
        threads = [
            threading.Thread(
                target=self._guard, args=(name, token, self.seed * 1000 + j), daemon=True
            )  # fmt: skip
            for j, (name, token) in enumerate(sorted(self.tokens.items()))
        ]
        self.started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, self.deadline - time.monotonic()) + 30)
        self.elapsed = time.perf_counter() - self.started
        if any(t.is_alive() for t in threads):
            self._problem("a rater thread was still running after the deadline")
        return self

    def _guard(self, name: str, token: str, seed: int) -> None:
        try:
            self._rater(name, token, seed)
        except Exception as exc:  # noqa: BLE001 - reported, the other raters go on
            self._problem(f"{name}: {type(exc).__name__}: {exc}")


# --- the checks -----------------------------------------------------------------------------
def _canonical(answers: Any) -> str:
    return json.dumps(answers.to_json(), sort_keys=True)


def check_store(target: str, acks: list[Ack]) -> dict[str, Any]:
    """What the store holds against the acknowledgements: ``lost`` (acknowledged, not stored
    with the answers first sent), ``duplicated`` (a second rating of one task, or of one clip by
    one rater as regular ratings), ``clips_complete`` and ``clips_short`` (fewer than K distinct
    raters), ``stored`` and ``unacknowledged`` (stored, never acknowledged)."""
    with open_campaign(target) as campaign:
        config, k = campaign.config, campaign.raters_per_clip
        clip_of_path = {c.audio_path: c.id for c in campaign.clips() + campaign.gold_clips()}
        stored = campaign.ratings(kinds=TASK_KINDS)
        clip_of_task = {
            a.task_id: clip_of_path[campaign.audio_path_for(a.rater, a.task_id)] for a in acks
        }
        n_clips = len(campaign.clips())
    per_task = Counter((r.rater, r.clip_id, r.kind) for r in stored)
    regular = Counter((r.rater, r.clip_id) for r in stored if r.kind == "regular")
    duplicated = sum(n - 1 for n in per_task.values() if n > 1)
    duplicated += sum(n - 1 for n in regular.values() if n > 1)
    have = Counter((r.rater, r.clip_id, _canonical(r.answers)) for r in stored)
    lost = 0
    for a in acks:
        key = (a.rater, clip_of_task[a.task_id], _canonical(validate_answers(config, a.answers)))
        if have[key] > 0:
            have[key] -= 1
        else:
            lost += 1
    raters = defaultdict(set)
    for r in stored:
        if r.kind == "regular":
            raters[r.clip_id].add(r.rater)
    complete = sum(len(v) >= k for v in raters.values())
    return {
        "stored": len(stored),
        "acknowledged": len(acks),
        "unacknowledged": sum(have.values()),
        "lost": lost,
        "duplicated": duplicated,
        "clips": n_clips,
        "clips_complete": complete,
        "clips_short": n_clips - complete,
        "max_raters_per_clip": max((len(v) for v in raters.values()), default=0),
    }


def latency_figures(latencies: list[float]) -> dict[str, float]:
    if not latencies:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "max_ms": float("nan")}
    ms = np.asarray(latencies) * 1000
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "max_ms": float(ms.max()),
    }


def in_process(target: str, config: str, raters: list[str], deadline: float,
               max_ratings: int | None = None, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """The baseline: each rater a thread submitting and claiming the next task through the store
    API, as one POST does (latency: submit + next claim)."""
    acks: list[Ack] = []
    latencies: list[float] = []
    lock = threading.Lock()
    stop = threading.Event()
    with open_campaign(target) as campaign:

        def rate(name: str, j: int) -> None:
            rng = np.random.default_rng(seed * 1000 + j)
            task = campaign.current_task(name)
            while task is not None and not stop.is_set() and time.monotonic() < deadline:
                answers = valid_answers(config, rng)
                t0 = time.perf_counter()
                status = campaign.submit(
                    name, task.task_id, str(uuid.uuid4()), validate_answers(config, answers)
                )
                done, task = task, campaign.current_task(name)
                with lock:
                    latencies.append(time.perf_counter() - t0)
                    acks.append(Ack(name, done.task_id, answers, status))
                    if max_ratings is not None and len(acks) >= max_ratings:
                        stop.set()

        threads = [threading.Thread(target=rate, args=(n, j)) for j, n in enumerate(raters)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
    return {"acks": acks, "latencies": latencies, "elapsed": elapsed}
