"""The Space: scoring logic and limits, and the running app through gradio_client."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX

from speech_drame.features.blueprint import extract_blueprints
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS
from speech_drame.scorers.lite import TrainingOptions, train_lite_scorer
from speech_drame.space_app import InputError, build_app, check_upload, demo_examples, score_clip

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

SR = 16_000
QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"
PROFILE = "John Dashwood, a cautious, rather selfish gentleman"


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> dict:
    """Two LibriVox clips (clean, noisy), a tiny archetype scorer, and the app serving it."""
    if not LIBRIVOX.is_dir():
        pytest.skip("Debian package pocketsphinx-testdata is not installed")
    root = tmp_path_factory.mktemp("space")
    x = sf.read(sorted(LIBRIVOX.glob("*.wav"))[0], dtype="float32")[0]
    noise = 0.15 * np.random.default_rng(0).standard_normal(len(x)).astype(np.float32)
    clips = {"clean": root / "clean.wav", "noisy": root / "noisy.wav"}
    sf.write(clips["clean"], 0.9 * x / np.abs(x).max(), SR)
    sf.write(clips["noisy"], 0.9 * (x + noise) / np.abs(x + noise).max(), SR)
    paths = [str(clips["clean"]), str(clips["noisy"])]
    cache = tmp_path_factory.getbasetemp() / "librivox-features"  # shared with test_rolebench
    batch = extract_blueprints(paths, [{"question": QUESTION}] * 2, cache, progress=False)
    labels = {d: [[5, 5, 4], [1, 2, 1]] for d in ARCHETYPE_DIMENSIONS}
    labels[CONTENT_PASS] = [[True] * 3, [False] * 3]
    scorer = root / "scorer" / "archetype"
    train_lite_scorer(batch.blueprints, labels, "archetype", TrainingOptions(epochs=60)).save(
        scorer
    )
    before = os.environ.get("SPEECH_DRAME_CACHE")
    os.environ["SPEECH_DRAME_CACHE"] = str(cache)  # the app reads the clips' features
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = build_app(str(scorer.parent), examples_from=None)
    app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield {"root": root, "clips": clips, "scorer": str(scorer.parent),
           "url": f"http://127.0.0.1:{port}/"}  # fmt: skip
    app.close()
    if before is None:
        del os.environ["SPEECH_DRAME_CACHE"]
    else:
        os.environ["SPEECH_DRAME_CACHE"] = before


def test_gradio_client_call_returns_every_dimension(space) -> None:
    from gradio_client import Client, handle_file

    client = Client(space["url"], verbose=False)
    out = client.predict(handle_file(str(space["clips"]["clean"])), "archetype", QUESTION,
                         "", "", "", api_name="/score")  # fmt: skip
    table, _bars, content_pass, transcript, details = out
    assert tuple(details["scores"]) == ARCHETYPE_DIMENSIONS
    assert details["mode"] == "archetype" and details["scorer"] == "LiteScorer"
    for dim, score in details["scores"].items():
        assert 1.0 <= score <= 5.0
        assert sum(details["distributions"][dim]) == pytest.approx(1.0)
    assert float(content_pass) == pytest.approx(details[CONTENT_PASS], abs=1e-3)
    assert "dashwood" in transcript.lower()
    assert all(name in table for name in ("Audio Quality", "Human Likeness", "Appropriateness"))
    noisy = client.predict(handle_file(str(space["clips"]["noisy"])), "archetype", QUESTION,
                           "", "", "", api_name="/score")[4]  # fmt: skip
    assert noisy["scores"]["audio_quality"] < details["scores"]["audio_quality"] - 1
    with pytest.raises(Exception, match="realism mode needs the profile, scene, traits text"):
        client.predict(handle_file(str(space["clips"]["clean"])), "realism", "", "", "", "",
                       api_name="/score")  # fmt: skip


def test_limits_give_clear_messages(space, tmp_path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF not really audio")
    with pytest.raises(InputError, match="unreadable audio"):
        score_clip(bad, "archetype", QUESTION, scorer_path=space["scorer"])
    with pytest.raises(InputError, match="upload or record a clip first"):
        score_clip(None, "archetype", QUESTION, scorer_path=space["scorer"])
    with pytest.raises(InputError, match="no scorer for realism mode: no trained realism"):
        score_clip(space["clips"]["clean"], "realism", "", PROFILE, "a scene", "calm",
                   scorer_path=space["scorer"])  # fmt: skip
    with pytest.raises(InputError, match="archetype mode needs the question"):
        score_clip(space["clips"]["clean"], "archetype", "  ", scorer_path=space["scorer"])
    long = tmp_path / "long.wav"
    sf.write(long, np.zeros(int(40 * SR), np.float32) + 0.01, SR)
    assert check_upload(long) == ["the clip lasts 40.0 s: only its first 30 s are scored"]
    very_long = tmp_path / "very_long.wav"
    sf.write(very_long, np.full(int(601 * 8000), 0.01, np.float32), 8000)
    with pytest.raises(InputError, match="lasts 601 s; the limit is 600 s"):
        check_upload(very_long)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(SR, np.float32), SR)
    with pytest.raises(InputError, match="digital silence"):
        score_clip(silent, "archetype", QUESTION, scorer_path=space["scorer"])


def test_examples_come_from_a_release(official_samples_dir) -> None:
    rows = demo_examples(official_samples_dir, per_mode=1)
    assert [r[1] for r in rows] == ["archetype", "realism"]
    assert all(Path(r[0]).is_file() for r in rows)
    assert rows[0][2] and rows[1][3] and rows[1][4] and rows[1][5]


def test_real_browser_uploads_scores_and_reads_the_page(space, tmp_path) -> None:
    import shutil

    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian chromium is not installed (apt-get install chromium)")
    clip = space["clips"]["clean"]
    want = score_clip(clip, "archetype", QUESTION, scorer_path=space["scorer"])
    shot = tmp_path / "space_scored.png"
    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.goto(space["url"], timeout=60_000)
            page.locator("#clip input[type=file]").set_input_files(str(clip))
            page.locator("#question textarea").fill(QUESTION)
            page.locator("#clip audio, #clip .waveform-container, #clip button").first.wait_for(
                timeout=30_000
            )
            page.locator("#score-button").click()
            table = page.locator("#score-table")
            table.locator("table").wait_for(timeout=60_000)
            rows = table.locator("tbody tr").all_inner_texts()
            transcript = page.locator("#transcript textarea").input_value()
            passed = page.locator("#content-pass textarea").input_value()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    shown = {}
    for row in rows:
        name, score, *dist = row.split("\t")
        shown[name.strip()] = (float(score), [float(x) for x in dist])
    assert set(shown) == {"Audio Quality", "Human Likeness", "Appropriateness"}
    names = {"Audio Quality": "audio_quality", "Human Likeness": "human_likeness",
             "Appropriateness": "appropriateness"}  # fmt: skip
    for name, (score, dist) in shown.items():
        assert score == pytest.approx(want.scores[names[name]], abs=0.006)
        assert dist == pytest.approx(want.distributions[names[name]], abs=0.006)
    assert float(passed) == pytest.approx(want.content_pass, abs=1e-3)
    assert transcript == want.transcript
    assert shot.stat().st_size > 10_000


def test_an_adapter_named_by_the_env_var_scores_instead(tmp_path, monkeypatch) -> None:
    from conftest import tone
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer, EvaluatorInfo
    from speech_drame.space_app import ADAPTER_ENV

    folder = tmp_path / "adapter"
    model, processor = build_tiny(seed=1)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    dims = [CONTENT_PASS, *ARCHETYPE_DIMENSIONS]
    EvaluatorInfo("archetype", dims, "tiny", "float32", tiny_seed=1).save(folder)
    clip = tmp_path / "tone.wav"
    sf.write(clip, tone(1.0, seed=3), SR)
    monkeypatch.setenv(ADAPTER_ENV, str(folder))
    got = score_clip(clip, "archetype", QUESTION)
    direct = DrameEvalScorer.from_pretrained(folder).score_clips(
        [Clip("c", tone(1.0, seed=3), {"question": QUESTION})]
    )[0]
    assert got.scorer == f"DRAME-Eval ({folder})"
    assert tuple(got.scores) == ARCHETYPE_DIMENSIONS
    for dim in ARCHETYPE_DIMENSIONS:
        assert got.scores[dim] == pytest.approx(direct.scores[dim].expected, abs=1e-4)
    assert got.content_pass == pytest.approx(direct.scores[CONTENT_PASS].expected, abs=1e-4)
    with pytest.raises(InputError, match="scores archetype, not realism"):
        score_clip(clip, "realism", "", PROFILE, "a scene", "calm")
