"""The Space: scoring logic and limits, and the running app through gradio_client."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import LIBRIVOX, TEXT_LINES_JS

from speech_drame.features.blueprint import extract_blueprints
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS
from speech_drame.scorers.lite import TrainingOptions, train_lite_model
from speech_drame.space_app import (
    MAX_QUEUE,
    PAGE_CSS,
    PRIVACY_NOTE,
    TEMP_FILES,
    InputError,
    build_app,
    check_upload,
    demo_examples,
    describe_training,
    score_clip,
    scorer_card,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

SR = 16_000
QUESTION = "You narrate a Regency novel about the Dashwood family. You say:"
PROFILE = "John Dashwood, a cautious, rather selfish gentleman"
LABEL_NOTE = "Its labels are SIMULATED annotators: synthetic proxy labels, not human ratings."


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> dict:
    """Two LibriVox clips (clean, noisy), a tiny archetype scorer (trained on "synthetic proxy
    labels"), and the app serving it with an empty feature cache that must stay empty."""
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
    info = {"dataset": "demo-corpus", "split": "train", "labels_are_synthetic": True,
            "label_note": LABEL_NOTE}  # fmt: skip
    opts = TrainingOptions(epochs=60)
    train_lite_model(batch.blueprints, labels, "archetype", opts, info).save(scorer)
    app_cache = root / "app-feature-cache"  # where the app would cache features: must stay empty
    before = os.environ.get("SPEECH_DRAME_CACHE")
    os.environ["SPEECH_DRAME_CACHE"] = str(app_cache)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = build_app(str(scorer.parent), examples_from=None)
    app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
               css=PAGE_CSS)  # fmt: skip
    yield {"root": root, "clips": clips, "scorer": str(scorer.parent), "app": app,
           "app_cache": app_cache, "url": f"http://127.0.0.1:{port}/"}  # fmt: skip
    app.close()
    if before is None:
        del os.environ["SPEECH_DRAME_CACHE"]
    else:
        os.environ["SPEECH_DRAME_CACHE"] = before


def _predict(client, clip, *context: str, mode: str = "archetype"):
    from gradio_client import handle_file

    texts = (*context, "", "", "", "")[:4]
    return client.predict(handle_file(str(clip)), mode, *texts, api_name="/score")


def test_gradio_client_call_returns_every_dimension(space) -> None:
    from gradio_client import Client

    client = Client(space["url"], verbose=False)
    scorer_md, table, _bars, content_pass, transcript, details = _predict(
        client, space["clips"]["clean"], QUESTION
    )
    assert tuple(details["scores"]) == ARCHETYPE_DIMENSIONS
    assert details["mode"] == "archetype" and details["scorer"].startswith("LiteScorer ")
    assert space["scorer"] not in details["scorer"]  # no server path on the page
    assert (
        details["scorer_id"].startswith("lite-")
        and details["id"] == Path(space["clips"]["clean"]).name
    )
    for dim, score in details["scores"].items():
        assert 1.0 <= score <= 5.0
        assert sum(details["distributions"][dim]) == pytest.approx(1.0)
    assert float(content_pass) == pytest.approx(details[CONTENT_PASS], abs=1e-3)
    assert "dashwood" in transcript.lower()
    assert all(name in table for name in ("Audio Quality", "Human Likeness", "Appropriateness"))
    assert details["audio"]["gain"] == 1.0 and not details["audio"]["truncated"]
    # which scorer, and what it was trained on, next to the scores
    assert "LiteScorer" in scorer_md and "demo-corpus" in scorer_md
    assert "synthetic proxy labels" in scorer_md and LABEL_NOTE in scorer_md
    noisy = _predict(client, space["clips"]["noisy"], QUESTION)[5]
    assert noisy["scores"]["audio_quality"] < details["scores"]["audio_quality"] - 1
    with pytest.raises(Exception, match="realism mode needs the profile, scene, traits text"):
        _predict(client, space["clips"]["clean"], mode="realism")


def test_uploads_and_their_features_are_not_kept(space) -> None:
    """Scoring an upload writes nothing to the feature cache; the page says what is kept;
    Gradio deletes its temporary copies; the queue is bounded."""
    from gradio_client import Client

    client = Client(space["url"], verbose=False)
    details = _predict(client, space["clips"]["noisy"], QUESTION)[5]
    assert details["scores"]
    cache = space["app_cache"]
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]
    app = space["app"]
    assert app.delete_cache == TEMP_FILES
    assert app._queue.max_size == MAX_QUEUE
    assert "not stored" in PRIVACY_NOTE and f"{TEMP_FILES[1] // 60} minutes" in PRIVACY_NOTE
    import httpx

    page_config = httpx.get(space["url"] + "config", timeout=30).text
    assert json.dumps(PRIVACY_NOTE)[1:-1] in page_config


def test_errors_name_the_file_not_the_server_path(space, tmp_path) -> None:
    from gradio_client import Client

    bad = tmp_path / "broken_take.flac"
    bad.write_bytes(b"fLaC this is not a FLAC stream" * 20)
    client = Client(space["url"], verbose=False)
    with pytest.raises(Exception) as err:
        _predict(client, bad, QUESTION)
    message = str(err.value)
    assert "broken_take.flac: unreadable audio" in message
    assert "/" not in message and "gradio" not in message.lower()


def test_training_provenance_is_read_defensively() -> None:
    assert describe_training({}) == "training data: not recorded"
    old = describe_training({"n_train": 284, "dataset": "speech-drame", "split": "train"})
    assert "speech-drame" in old and "284 clips" in old
    assert "human or synthetic: not recorded" in old
    human = describe_training({"dataset": "evalbench", "labels_are_synthetic": False})
    assert "synthetic proxy labels" not in human and "the dataset's annotators" in human


def test_limits_give_clear_messages(space, tmp_path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF not really audio")
    with pytest.raises(InputError, match=r"^bad\.wav: unreadable audio"):
        score_clip(bad, "archetype", QUESTION, scorer=space["scorer"])
    with pytest.raises(InputError, match="upload or record a clip first"):
        score_clip(None, "archetype", QUESTION, scorer=space["scorer"])
    with pytest.raises(InputError, match="no scorer for realism mode: no trained realism"):
        score_clip(space["clips"]["clean"], "realism", "", PROFILE, "a scene", "calm",
                   scorer=space["scorer"])  # fmt: skip
    with pytest.raises(InputError, match="archetype mode needs the question"):
        score_clip(space["clips"]["clean"], "archetype", "  ", scorer=space["scorer"])
    long = tmp_path / "long.wav"
    sf.write(long, np.zeros(int(40 * SR), np.float32) + 0.01, SR)
    check_upload(long)  # within the limits: scored (its first 30 s; see test_audio)
    very_long = tmp_path / "very_long.wav"
    sf.write(very_long, np.full(int(601 * 8000), 0.01, np.float32), 8000)
    with pytest.raises(InputError, match="lasts 601 s; the limit is 600 s"):
        check_upload(very_long)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(SR, np.float32), SR)
    with pytest.raises(InputError, match=r"^silent\.wav: digital silence"):
        score_clip(silent, "archetype", QUESTION, scorer=space["scorer"])


def test_examples_come_from_a_release(official_samples_dir) -> None:
    rows = demo_examples(official_samples_dir, per_mode=1)
    assert [r[1] for r in rows] == ["archetype", "realism"]
    assert all(Path(r[0]).is_file() for r in rows)
    assert rows[0][2] and rows[1][3] and rows[1][4] and rows[1][5]


def test_real_browser_uploads_scores_and_reads_the_page(space, browser, tmp_path) -> None:
    clip = space["clips"]["clean"]
    want = score_clip(clip, "archetype", QUESTION, scorer=space["scorer"])
    shot = tmp_path / "space_scored.png"
    realism_fields = ("#profile", "#scene", "#traits")
    page = browser.new_page(viewport={"width": 1280, "height": 1100})
    try:
        page.goto(space["url"], timeout=60_000)
        page.get_by_text("Privacy:").wait_for(timeout=30_000)
        page.locator("#scorer-info").get_by_text("synthetic proxy labels").wait_for(timeout=30_000)
        # archetype mode: the question and Content Pass, no realism fields
        assert page.locator("#question").is_visible()
        assert page.locator("#content-pass").is_visible()
        assert not any(page.locator(f).is_visible() for f in realism_fields)
        page.get_by_label("realism").check()
        page.locator("#profile").wait_for(state="visible", timeout=30_000)
        assert all(page.locator(f).is_visible() for f in realism_fields)
        page.locator("#question").wait_for(state="hidden", timeout=30_000)
        page.locator("#content-pass").wait_for(state="hidden", timeout=30_000)
        page.get_by_label("archetype").check()
        page.locator("#question").wait_for(state="visible", timeout=30_000)
        assert not any(page.locator(f).is_visible() for f in realism_fields)

        page.locator("#clip input[type=file]").set_input_files(str(clip))
        page.locator("#question textarea").fill(QUESTION)
        page.locator("#clip audio, #clip .waveform-container, #clip button").first.wait_for(
            timeout=30_000
        )
        page.locator("#score-button").click()
        table = page.locator("#score-table")
        table.locator("table").wait_for(timeout=60_000)
        page.locator("#score-bars img").wait_for(timeout=30_000)
        rows = table.locator("tbody tr").all_inner_texts()
        transcript = page.locator("#transcript textarea").input_value()
        passed = page.locator("#content-pass textarea").input_value()
        provenance = page.locator("#scorer-info").inner_text()
        page.screenshot(path=str(shot), full_page=True)
        lines = {}  # every number of the table on one line, also in a narrower window
        for width in (1280, 900):
            page.set_viewport_size({"width": width, "height": 1100})
            lines[width] = table.locator("tbody td:not(:first-child)").evaluate_all(TEXT_LINES_JS)
    finally:
        page.close()
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
    assert "LiteScorer" in provenance and "synthetic proxy labels" in provenance
    assert shot.stat().st_size > 10_000
    assert lines == {1280: [1] * 18, 900: [1] * 18}, lines  # 3 dimensions x (score + p1..p5)


def test_score_chart_is_horizontal_on_a_fixed_1_to_5_scale() -> None:
    from speech_drame.schema import REALISM_DIMENSIONS, RUBRIC_NAMES
    from speech_drame.space_app import score_figure

    scores = {d: 1.0 + 0.4 * i for i, d in enumerate(REALISM_DIMENSIONS)}
    fig = score_figure(scores)
    (ax,) = fig.axes
    assert ax.get_xlim() == (1.0, 5.0)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        RUBRIC_NAMES[d] for d in REALISM_DIMENSIONS
    ]
    assert [float(t) for t in ax.get_xticks()] == [1.0, 2.0, 3.0, 4.0, 5.0]
    bars = ax.patches
    assert [b.get_x() + b.get_width() for b in bars] == pytest.approx(list(scores.values()))
    # every label fits in the figure (none cut off or drawn over another) as rendered
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    boxes = [t.get_window_extent() for t in ax.get_yticklabels()]
    assert all(b.x0 >= 0 for b in boxes)
    assert all(a.y1 <= b.y0 or b.y1 <= a.y0 for a, b in zip(boxes, boxes[1:], strict=False))


def test_an_adapter_named_by_the_env_var_scores_instead(tmp_path, monkeypatch) -> None:
    from conftest import tone
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer, EvaluatorInfo
    from speech_drame.space_app import SCORER_ENV

    folder = tmp_path / "adapter"
    model, processor = build_tiny(seed=1)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    dims = [CONTENT_PASS, *ARCHETYPE_DIMENSIONS]
    trained_on = {"dataset": "speech-drame", "split": "train", "n_train": 284,
                  "labels_are_synthetic": True, "label_note": None}  # fmt: skip
    EvaluatorInfo("archetype", dims, "tiny", "float32", tiny_seed=1, training_data=trained_on).save(
        folder
    )
    clip = tmp_path / "tone.wav"
    sf.write(clip, tone(1.0, seed=3), SR)
    monkeypatch.setenv(SCORER_ENV, f"drame-eval:{folder}")
    got = score_clip(clip, "archetype", QUESTION)
    direct = DrameEvalScorer.from_pretrained(folder).score_clips(
        [Clip("c", tone(1.0, seed=3), {"question": QUESTION})]
    )[0]
    assert got.id == "tone.wav" and got.audio is not None
    card = scorer_card("archetype")
    assert (
        "**Scorer:** DRAME-Eval adapter (archetype, base tiny, expectation decoding)" in card
    )  # no server path
    assert "trained on `speech-drame` (train split, 284 clips)" in card
    assert "**synthetic proxy labels**" in card
    assert tuple(got.scores) == ARCHETYPE_DIMENSIONS
    for dim in ARCHETYPE_DIMENSIONS:
        assert got.scores[dim] == pytest.approx(direct.scores[dim], abs=1e-4)
    assert got.content_pass == pytest.approx(direct.content_pass, abs=1e-4)
    with pytest.raises(InputError, match="evaluator for archetype, not realism"):
        score_clip(clip, "realism", "", PROFILE, "a scene", "calm")


def test_a_sigterm_deletes_the_uploads_as_ctrl_c_does(space, tmp_path) -> None:
    """`speech-drame serve` stopped by SIGTERM (a `kill`, a container stop) leaves none of its
    uploads in Gradio's upload folder."""
    import signal
    import subprocess
    import sys
    import time

    import httpx

    uploads = tmp_path / "gradio-uploads"
    port = _free_port()
    env = {**os.environ, "GRADIO_TEMP_DIR": str(uploads), "HF_HUB_OFFLINE": "1",
           "GRADIO_ANALYTICS_ENABLED": "False"}  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "speech_drame", "serve", "--port", str(port),
                             "--scorer", space["scorer"]], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.5)
        clip = space["clips"]["clean"].read_bytes()
        files = [("files", (f"clip{i}.wav", clip, "audio/wav")) for i in range(12)]
        stored = httpx.post(f"{url}/gradio_api/upload", files=files, timeout=60).json()
        assert len(stored) == 12 and all(Path(p).is_file() for p in stored)
        assert all(Path(p).is_relative_to(uploads) for p in stored)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert not [p for p in uploads.rglob("*") if p.is_file()]


def test_a_new_instance_sweeps_leftovers_older_than_the_retention(tmp_path) -> None:
    from speech_drame.space_app import sweep_uploads

    old, young = tmp_path / "a1" / "old.wav", tmp_path / "b2" / "young.wav"
    for path in (old, young):
        path.parent.mkdir()
        path.write_bytes(b"RIFF")
    stale = time.time() - TEMP_FILES[1] - 60
    os.utime(old, (stale, stale))
    assert sweep_uploads(folder=tmp_path) == 1
    assert not old.exists() and not old.parent.exists() and young.is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_warm_up_loads_every_mode_once_and_leaves_a_missing_scorer_to_the_page(
    space, monkeypatch
) -> None:
    """`serve` loads its scorers while the page starts; the fixture has no realism scorer,
    which the warm-up leaves for the page to explain (nothing raised in its thread)."""
    import threading

    from speech_drame import space_app
    from speech_drame.scorers import specs

    loads: list[str] = []
    real = specs.load_scorer

    def counting(spec, mode, **kwargs):
        loads.append(mode)
        return real(spec, mode, **kwargs)

    raised: list[BaseException] = []
    monkeypatch.setattr(specs, "load_scorer", counting)
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    space_app._scorer.cache_clear()
    thread = space_app.warm_up(space["scorer"])
    thread.join(timeout=300)
    assert not thread.is_alive() and not raised
    assert sorted(loads) == ["archetype", "realism"]
    assert space_app._load(space["scorer"], "archetype").config == "archetype"
    assert loads.count("archetype") == 1  # the page's request takes the warmed-up scorer
    with pytest.raises(InputError, match="no scorer for realism mode"):
        space_app._load(space["scorer"], "realism")
    assert "realism" in scorer_card("realism", space["scorer"])
