"""Shared fixtures: official samples, the demo dataset, and small releases made in code."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

# The tests never write into the user's caches: `datasets`, the Hub and `evaluate` keep theirs
# under a Hugging Face home of the test session's own, and the feature cache is a private copy
# of the user's (hard links: an entry the tests add or replace never reaches the original). All
# of it is removed at exit.
os.environ["SPEECH_DRAME_TEST_HOME"] = tempfile.mkdtemp(prefix="speech-drame-tests-")
os.environ["HF_HOME"] = os.path.join(os.environ["SPEECH_DRAME_TEST_HOME"], "hf")
os.environ["HF_DATASETS_CACHE"] = os.path.join(os.environ["HF_HOME"], "datasets")

if "PYTEST_XDIST_WORKER" in os.environ:
    # `make test`'s two workers share the cores: one math thread each (set before numpy and
    # torch load) keeps OpenMP/BLAS pools from spinning against each other
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np
import pytest
import soundfile as sf

from speech_drame.demo.real_speech import POCKETSPHINX_DIR
from speech_drame.features.cache import CACHE_ENV, default_cache_dir


def _private_copy(source: Path, target: Path) -> Path:
    """``target`` holding ``source``'s files as hard links (copies across file systems)."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    if source.is_dir():
        shutil.copytree(source, target, copy_function=link, dirs_exist_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    return target


_TEST_HOME = Path(os.environ["SPEECH_DRAME_TEST_HOME"])
atexit.register(shutil.rmtree, _TEST_HOME, ignore_errors=True)
# the features `make demo` extracted stay usable (the README's blocks read them)
os.environ[CACHE_ENV] = str(_private_copy(default_cache_dir(), _TEST_HOME / "features"))

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# the multilingual Whisper weights are assembled here (as `make` does), not under ~/.cache
os.environ.setdefault("SPEECH_DRAME_MODELS", str(REPO / ".cache" / "models"))
OFFICIAL_SAMPLES = REPO / "official_samples"  # the repository's copy (see its SOURCE.md)
DEMO_DATASET = REPO / "speech-drame"
DEMO_RELEASE = REPO / "build" / "demo_release"
LIBRIVOX = POCKETSPHINX_DIR / "librivox"  # real read speech with transcripts (Debian package)
PREFIX = "speech_drame/finetuning/data"


@pytest.fixture(scope="session")
def official_samples_dir() -> Path:
    if not (OFFICIAL_SAMPLES / "realism_data" / "test.jsonl").is_file():
        pytest.fail(f"official samples not found at {OFFICIAL_SAMPLES} (part of the repository)")
    return OFFICIAL_SAMPLES


@pytest.fixture(scope="session")
def official_dataset_dir(official_samples_dir, tmp_path_factory) -> Path:
    """The four official samples built into a temporary Hub-ready folder (Apache-2.0, as their
    SOURCE.md says; the folder has no card stating it)."""
    from speech_drame.data.build import build_dataset

    out = tmp_path_factory.mktemp("official") / "speech-drame"
    build_dataset(official_samples_dir, out, license_id="apache-2.0", progress=False)
    return out


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium driven by Playwright, one per test module."""
    import shutil

    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian chromium is not installed (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def server():
    """A small OpenAI-compatible chat server on 127.0.0.1 (``tests/judge_server.py``)."""
    from judge_server import running

    with running() as srv:
        yield srv


@pytest.fixture
def hub(monkeypatch):
    """The fake Hub on 127.0.0.1 (:mod:`fake_hub`) as huggingface_hub's endpoint, with its write
    token in ``HF_TOKEN``."""
    from fake_hub import FakeHub
    from huggingface_hub import constants

    server = FakeHub()
    monkeypatch.setenv("HF_TOKEN", server.token)
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield server
    server.close()


@pytest.fixture(scope="session")
def demo_dataset_dir() -> Path:
    """The demo dataset that `make demo` / `make test` build at the repository root."""
    if not (DEMO_DATASET / "build_report.json").is_file():
        pytest.fail(f"{DEMO_DATASET} is missing: run `make demo-data` (make test does it first)")
    return DEMO_DATASET


def kill_bench_after_first_rows(args: list[str], results: Path, timeout: float) -> None:
    """Run ``speech-drame ARGS`` in a subprocess and SIGKILL it once ``results`` holds a row;
    fails if the run ends (or ``timeout`` seconds pass) before that."""
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    proc = subprocess.Popen([sys.executable, "-m", "speech_drame.cli", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.stat().st_size:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished (or failed) before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


# for Playwright's evaluate_all: how many lines the text of each element takes on the page
TEXT_LINES_JS = """cells => cells.map(cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
})"""


def populate_hub_cache(cache: Path, repo_id: str, folder: Path, sha: str, files: list[str]) -> None:
    """``folder``'s ``files`` in a Hub cache as ``snapshot_download`` leaves them, at ``sha``
    (also ``refs/main``), for loading a Hub id offline."""
    import hashlib

    repo = cache / f"models--{repo_id.replace('/', '--')}"
    for name in files:
        data = (folder / name).read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = repo / "snapshots" / sha / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path(*[".."] * (len(Path(name).parts) + 1), "blobs", blob.name))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(sha)


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    """An empty Hub cache under ``tmp_path``, read offline."""
    from huggingface_hub import constants

    cache = tmp_path / "hub-cache"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def save_tiny_evaluator(folder: Path) -> Path:
    """An untrained archetype DRAME-Eval folder in ``folder``: the tiny base from seed 1, a fresh
    LoRA adapter on the language model, its processor and the evaluator record."""
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.audio_llm.tiny import build_tiny
    from speech_drame.schema import CONTENT_PASS, dimensions
    from speech_drame.scorers.drame_eval import EvaluatorInfo

    model, processor = build_tiny(seed=1)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    dims = [CONTENT_PASS, *dimensions("archetype")]
    EvaluatorInfo("archetype", dims, "tiny", "float32", tiny_seed=1).save(folder)
    return folder


def free_port() -> int:
    """A TCP port nobody listens on at the moment, on 127.0.0.1."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tone(seconds: float = 1.0, sr: int = 16_000, freq: float = 220.0, seed: int = 0) -> np.ndarray:
    """A seeded tone with a little noise, float32 mono."""
    t = np.arange(int(seconds * sr)) / sr
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * freq * t) + 0.01 * rng.standard_normal(t.size)).astype(
        "float32"
    )


def archetype_record(rid: str, **overrides) -> dict:
    record = {
        "id": rid,
        "question": "You are a firefighter. Smoke fills the hall and you find a trapped child. You say:",
        "annotations": {
            "content_pass": [True, True, False],
            "audio_quality": [4, 5, None],
            "human_likeness": [3, 4, None],
            "appropriateness": [4, 4, None],
            "confidence": [2, 3, None],
            "audio_quality_comment": ["", "N/A", ""],
            "human_likeness_comment": ["stiff", "N/A", ""],
            "appropriateness_comment": ["urgent", "fits", ""],
        },
        "wav_path": f"{PREFIX}/archetype_data/{rid}.wav",
    }
    record.update(overrides)
    return record


def realism_record(rid: str, **overrides) -> dict:
    dims = {
        "pitch_variation": [4, 3, 5],
        "rhythmic_naturalness": [4, 4, 4],
        "stress_and_emphasis": [3, 4, 4],
        "emotion_accuracy": [4, 2, 3],
        "emotion_intensity_control": [3, "N/A", 2],
        "dynamic_range": [4, "N/A", "N/A"],
        "voice_identity_matching": [5, 4, 4],
        "trait_embodiment": [4, 4, 3],
        "local_story_fit": [4, 3, 4],
        "global_story_coherence": [4, 4, 4],
    }
    record = {
        "id": rid,
        "local_scene": "Ann calms her brother after a storm knocked the power out.",
        "char_age": "Adult",
        "char_style": "Calm, Warm",
        "char_profile": "Ann is a patient older sister who speaks softly and never rushes.",
        "transcript": "It's alright, the lights will come back soon.",
        "annotations": {
            **dims,
            "annotator_confidence_rating": [4, 3, 5],
            "comments": ["", "", "soft"],
            "multi-speaker_influence": [False, False, False],
            "observed_character_style_dimensions": ["Calm, Warm", "Calm", "Warm"],
            "sufficient": [True, True, True],
            "contradictory": [False, False, False],
            "prmopt_quality": ["valid", "valid", "valid"],
        },
        "wav_path": f"{PREFIX}/realism_data/{rid}.wav",
        "data_source": "unit-test",
    }
    record.update(overrides)
    return record


def write_release(
    root: Path,
    files: dict[str, list[dict]],
    audio: dict[str, np.ndarray] | None = None,
    license_id: str | None = "apache-2.0",
) -> Path:
    """Write ``{"realism_data/test.jsonl": [records]}`` plus a wav per record (or ``audio[id]``),
    and a ``README.md`` card whose front matter states ``license_id`` (none if ``None``)."""
    audio = audio or {}
    if license_id is not None:
        root.mkdir(parents=True, exist_ok=True)
        (root / "README.md").write_text(f"---\nlicense: {license_id}\n---\n", encoding="utf-8")
    for rel, records in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
        for i, record in enumerate(records):
            rid = record.get("id")
            if not isinstance(rid, str):
                continue
            samples = audio.get(rid, tone(1.0, seed=i))
            if samples is not None:
                sf.write(path.parent / f"{rid}.wav", samples, 16_000)
    return root


def write_json_release(
    root: Path, files: dict[str, list[dict]], license_id: str = "cc-by-nc-4.0"
) -> Path:
    """A release shaped like the public EvalBench on the Hub: JSON-array record files
    (``{"realism_data/test.json": [records]}``), a card stating ``license_id``, no audio."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(
        f"---\nlicense: {license_id}\n---\n# EvalBench (annotation records)\n", encoding="utf-8"
    )
    for rel, records in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    return root
