"""A small real campaign (WAV files, SQLite store) served by uvicorn on 127.0.0.1 in a thread,
for the server and browser tests."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path

import soundfile as sf
from campaign_standin import context
from conftest import free_port, tone

from speech_drame.campaign.records import CampaignClip
from speech_drame.campaign.server import make_app
from speech_drame.campaign.serving import DEFAULT_LIMITS, Limits, server_config
from speech_drame.campaign.store import create_campaign

SR = 16_000


def make_campaign(root: Path, config: str, n: int = 3, k: int = 3, seconds=(1.5,), **kw):
    """A campaign of ``n`` real WAV clips (clip i lasts ``seconds[i % len(seconds)]``)."""
    audio = root / "audio"
    audio.mkdir(parents=True, exist_ok=True)
    clips = []
    for i in range(n):
        path = audio / f"{config}_{i}.wav"
        sf.write(path, tone(seconds[i % len(seconds)], SR, 180.0 + 40 * i, seed=i), SR)
        extra = {"transcript": f"Storm {i} is coming, stay in the harbour."}
        extra = extra if config == "realism" else {}
        clips.append(CampaignClip(f"{config}-clip-{i}", i, str(path), context(config, i), extra))
    campaign, admin = create_campaign(str(root / f"{config}.db"), config, clips, [], k, **kw)
    return campaign, admin


@contextmanager
def serving(campaign, root_path: str = "", bootstrap: int = 50, limits: Limits = DEFAULT_LIMITS):
    """Serve ``campaign`` on a free loopback port as `campaign serve` does (the same uvicorn
    configuration, its limits on slow clients included); yields the base URL."""
    import uvicorn

    port = free_port()
    app = make_app(campaign, bootstrap=bootstrap)
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, root_path, limits))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
