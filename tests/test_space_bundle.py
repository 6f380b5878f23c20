"""The Space bundle and the package wheel, tested from the outside.

``speech-drame space bundle`` writes a Space folder around the demo LiteScorer (``make test``
trains it first) from the checkout's ``space/``, whose rendered files must match their template. A fresh virtual environment is made from nothing but the bundle's
``requirements.txt`` (plain ``pip install -r``, from the package index the Makefile uses), and
in it, with no checkout on the path:

- the bundle's ``app.py`` serves the page; ``gradio_client`` scores a clip and headless
  Chromium loads the page and scores a clip in realism mode, whose table keeps every number on
  one line (screenshots in the test's tmp folder);
- the installed ``speech-drame`` works from an empty folder: ``--help``, ``build`` of the
  official samples, ``score`` with the bundled scorer by path (the same numbers as the
  checkout's), the LiteScorer model card, and ``score`` without a scorer says how to get one.

The bundle is made with ``--torch-index ''``: torch then comes from this machine's own package
files (its CPU build) instead of download.pytorch.org; that line is the only difference from the
default bundle (checked below).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import LIBRIVOX, OFFICIAL_SAMPLES, REPO, TEXT_LINES_JS, free_port

from speech_drame.cli import main

pytestmark = pytest.mark.slow

SCORER = REPO / "artifacts" / "lite_scorer"
QUESTION = "You are a tired night-shift nurse. A patient asks you for a glass of water."
CLIP = LIBRIVOX / "sense_and_sensibility_01_austen_64kb-0870.wav"
REALISM = {"#profile": "John Dashwood, a cautious, rather selfish gentleman",
           "#scene": "He talks his wife out of helping his stepmother.", "#traits": "calm"}  # fmt: skip


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of the fresh venv's processes: no checkout, no test venv on any path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", **extra}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    if not (SCORER / "metrics.json").is_file():
        pytest.fail(f"{SCORER} is missing: run `make demo-scorer` (make test does it first)")
    out = tmp_path_factory.mktemp("bundle") / "space"
    status = main(["space", "bundle", "--out", str(out), "--scorer", f"lite:{SCORER}",
                   "--torch-index", ""])  # fmt: skip
    assert status == 0
    return out


@pytest.fixture(scope="module")
def venv(bundle, tmp_path_factory) -> dict:
    """A fresh venv holding only what ``pip install -r requirements.txt`` gives."""
    root = tmp_path_factory.mktemp("venv")
    # pip's wheel cache in the test's folder, not the user's
    env = _clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_CACHE_DIR=str(root / "pip-cache"))
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, env=env)
    python = root / "venv" / "bin" / "python"
    started = time.monotonic()
    done = subprocess.run(
        # --no-compile: the same packages, modules compiled when first imported (saves time)
        [str(python), "-m", "pip", "install", "-q", "--no-compile", "-r", "requirements.txt"],
        cwd=bundle, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if done.returncode:
        pytest.fail(f"pip install -r requirements.txt failed:\n{done.stderr[-3000:]}")
    print(f"fresh venv from the bundle's requirements: {time.monotonic() - started:.0f} s")
    empty = root / "empty"
    empty.mkdir()
    models = root / "models"  # the Whisper weights are assembled again from the venv's wheels
    return {"python": python, "bin": python.parent, "empty": empty,
            "env": _clean_env(SPEECH_DRAME_MODELS=str(models))}  # fmt: skip


def _run(venv: dict, *args: str, cwd: Path | None = None, **env: str):
    return subprocess.run(
        [str(venv["bin"] / "speech-drame"), *args],
        cwd=cwd or venv["empty"], env={**venv["env"], **env},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def test_bundle_is_a_complete_space(bundle) -> None:
    names = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert {"app.py", "README.md", "requirements.txt", "packages.txt", "scorer.txt",
            "examples/SOURCE.md", "scorer/README.md",
            "scorer/metrics.json", "scorer/archetype/config.json",
            "scorer/archetype/model.safetensors", "scorer/realism/model.safetensors"} <= names  # fmt: skip
    (wheel,) = bundle.glob("speech_drame-*.whl")
    requirements = (bundle / "requirements.txt").read_text().splitlines()
    assert f"./{wheel.name}[features,space]" in requirements
    assert not any("--no-deps" in line or "resemblyzer" in line for line in requirements)
    assert (bundle / "packages.txt").read_text().split() == ["ffmpeg"]
    front = yaml.safe_load((bundle / "README.md").read_text().split("---\n")[1])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert f"gradio=={front['sdk_version']}" in requirements
    card = " ".join((bundle / "README.md").read_text().split())
    assert "synthetic proxy labels" in card and "scaled by one gain into [-1, 1]" in card
    assert "deleted 15 minutes after the upload" in card and "at most 16 waiting requests" in card
    # published files carry no path of this machine
    metrics = json.loads((bundle / "scorer" / "metrics.json").read_text())
    assert metrics["dataset"] == "speech-drame"
    for name in names - {n for n in names if n.endswith((".whl", ".safetensors"))}:
        assert str(REPO).encode() not in (bundle / name).read_bytes(), name
    assert (
        "`lite:scorer`" in card
        and 'load_scorer("lite:scorer"' in (bundle / "scorer/README.md").read_text()
    )


def test_the_bundle_is_the_space_folder_plus_what_is_particular_to_it(bundle) -> None:
    """One source: app.py, packages.txt and examples/ are space/'s bytes; README.md and
    requirements.txt are space/'s rendered for the bundle (the wheel, its scorer)."""
    space = REPO / "space"
    copied = sorted(p.relative_to(space) for p in space.rglob("*") if p.is_file()
                    and p.name not in ("README.md", "requirements.txt"))  # fmt: skip
    assert {"app.py", "packages.txt"} <= {p.as_posix() for p in copied}
    for rel in copied:
        assert (bundle / rel).read_bytes() == (space / rel).read_bytes(), rel
    assert (bundle / "scorer.txt").read_text() == "lite:scorer\n"
    (wheel,) = bundle.glob("speech_drame-*.whl")
    bundled = (bundle / "requirements.txt").read_text().splitlines()
    checked_in = (space / "requirements.txt").read_text().splitlines()
    assert [line for line in checked_in if line not in bundled] == [
        "# The Space's environment (speech-drame space bundle): the package from the checkout "
        "(run pip in space/)",
        "--extra-index-url https://download.pytorch.org/whl/cpu",  # the bundle: --torch-index ''
        "..[features,space]",
    ]
    assert f"./{wheel.name}[features,space]" in bundled
    card = (bundle / "README.md").read_text()
    assert "assembled this folder from the\nrepository's `space/`" in card


def test_the_checked_in_space_folder_is_what_its_template_renders() -> None:
    """space/README.md and space/requirements.txt are the bundle's files rendered for the
    checkout (model_card/space_readme.md, the repository's pins): edit the template or the pins,
    then write them again (speech_drame.space_bundle.write_checked_in)."""
    from speech_drame.space_bundle import DEBIAN_PACKAGES, checked_in_files

    for name, text in checked_in_files(REPO).items():
        assert (REPO / "space" / name).read_text(encoding="utf-8") == text, (
            f"space/{name} drifted from its template: python -c 'from speech_drame.space_bundle "
            "import write_checked_in; write_checked_in()'"
        )
    front = yaml.safe_load((REPO / "space" / "README.md").read_text().split("---\n")[1])
    pins = (REPO / "requirements.txt").read_text().splitlines()
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert f"gradio=={front['sdk_version']}" in pins and front["license"] == "apache-2.0"
    for line in (REPO / "space" / "requirements.txt").read_text().splitlines():
        assert line.startswith(("#", "--extra-index-url ", "..[")) or line in pins, line
    assert (REPO / "space" / "packages.txt").read_text().split() == list(DEBIAN_PACKAGES)


def test_the_space_examples_are_small_licensed_clips_of_both_modes() -> None:
    from speech_drame.audio import load_audio
    from speech_drame.space_app import demo_examples

    folder = REPO / "space" / "examples"
    rows = demo_examples(folder)
    assert [r[1] for r in rows] == ["archetype", "realism"]
    assert rows[0][2] and all(rows[1][3:6])  # the question; profile, scene, traits
    for row in rows:
        assert Path(row[0]).is_relative_to(folder)
        assert 5 < load_audio(row[0]).seconds <= 30
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= 300_000
    source = (folder / "SOURCE.md").read_text()
    assert "Apache-2.0" in source and "Anuttacon/speech_drame" in source


def test_a_space_folder_names_its_scorer(tmp_path, monkeypatch) -> None:
    from speech_drame.space_app import SCORER_ENV, folder_scorer

    monkeypatch.delenv(SCORER_ENV, raising=False)
    assert folder_scorer(tmp_path) is None  # the checkout's space/: scorer_spec's `lite`
    (tmp_path / "scorer").mkdir()
    (tmp_path / "scorer.txt").write_text("lite:scorer\n")
    assert folder_scorer(tmp_path) == f"lite:{tmp_path / 'scorer'}"  # beside app.py
    (tmp_path / "scorer.txt").write_text("drame-eval:org/name\n")
    assert folder_scorer(tmp_path) == "drame-eval:org/name"
    monkeypatch.setenv(SCORER_ENV, "judge:gpt-4o-audio@http://127.0.0.1:9/v1")
    assert (
        folder_scorer(tmp_path) == "judge:gpt-4o-audio@http://127.0.0.1:9/v1"
    )  # the Space variable wins


def test_default_bundle_takes_torch_from_the_cpu_index(tmp_path) -> None:
    out = tmp_path / "space"
    assert main(["space", "bundle", "--out", str(out), "--scorer", f"lite:{SCORER}"]) == 0
    default = (out / "requirements.txt").read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in default
    assert main(["space", "bundle", "--out", str(out), "--scorer", f"lite:{SCORER}"]) == 2
    assert main(["space", "bundle", "--out", str(out), "--scorer", f"lite:{SCORER}",
                 "--torch-index", "", "--overwrite"]) == 0  # fmt: skip
    plain = (out / "requirements.txt").read_text().splitlines()
    assert [line for line in default if line not in plain] == [
        "--extra-index-url https://download.pytorch.org/whl/cpu"
    ]


def test_space_push_dry_run_lists_the_bundle(bundle, capsys) -> None:
    assert main(["space", "push", str(bundle), "someone/drame-space", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "(space repo)" in out and "scorer/archetype/model.safetensors" in out
    assert main(["space", "push", str(bundle / "scorer"), "someone/x", "--dry-run"]) == 2


def test_fresh_venv_serves_the_bundle_to_gradio_client_and_chromium(
    bundle, venv, browser, tmp_path
):
    from gradio_client import Client, handle_file

    from speech_drame.space_app import score_clip

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = (tmp_path / "app.log").open("w")
    app = subprocess.Popen(
        [str(venv["python"]), "app.py"], cwd=bundle, stdout=log, stderr=subprocess.STDOUT,
        env={**venv["env"], "GRADIO_SERVER_PORT": str(port)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if app.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"app.py did not start:\n{(tmp_path / 'app.log').read_text()}")
                time.sleep(1)
        client = Client(url, verbose=False)
        *_, details = client.predict(
            handle_file(str(CLIP)), "archetype", QUESTION, "", "", "", api_name="/score"
        )
        shot, realism_shot = tmp_path / "bundle_page.png", tmp_path / "bundle_realism.png"
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        try:
            page.goto(url, timeout=60_000)
            info = page.locator("#scorer-info")
            info.get_by_text("synthetic proxy labels").wait_for(timeout=60_000)
            provenance = info.inner_text()
            page.screenshot(path=str(shot), full_page=True)
            # realism mode: ten dimensions, the longest names; every number stays on one line
            page.get_by_label("realism").check()
            page.locator("#profile").wait_for(state="visible", timeout=30_000)
            page.locator("#clip input[type=file]").set_input_files(str(CLIP))
            for field, text in REALISM.items():
                page.locator(f"{field} textarea").fill(text)
            page.locator("#clip audio, #clip .waveform-container, #clip button").first.wait_for(
                timeout=30_000
            )
            page.locator("#score-button").click()
            table = page.locator("#score-table")
            table.locator("tbody tr").nth(9).wait_for(timeout=120_000)
            realism_rows = table.locator("tbody tr").count()
            lines = table.locator("tbody td:not(:first-child)").evaluate_all(TEXT_LINES_JS)
            page.screenshot(path=str(realism_shot), full_page=True)
        finally:
            page.close()
        print(f"screenshots: {shot} {realism_shot}")
    finally:
        app.terminate()
        app.wait(timeout=30)
        log.close()
    # the Space scores as the checkout does with the same scorer
    want = score_clip(CLIP, "archetype", QUESTION, scorer=f"lite:{SCORER}")
    assert details["scores"] == pytest.approx(want.scores, abs=1e-4)
    assert details["content_pass"] == pytest.approx(want.content_pass, abs=1e-4)
    assert details["transcript"] == want.transcript and details["language"] == "en"
    assert "LiteScorer" in provenance and shot.stat().st_size > 10_000
    assert realism_rows == 10 and lines == [1] * 60, lines  # 10 x (score + p1..p5)


def test_installed_package_works_from_an_empty_folder(bundle, venv) -> None:
    help_ = _run(venv, "--help")
    assert help_.returncode == 0 and "space" in help_.stdout and "build" in help_.stdout
    built = _run(venv, "build", "--source", str(OFFICIAL_SAMPLES), "--out", "dataset",
                 "--license", "cc-by-nc-4.0")  # fmt: skip
    assert built.returncode == 0, built.stderr
    report = json.loads((venv["empty"] / "dataset" / "build_report.json").read_text())
    assert report["languages"]["archetype"] == {"test": {"zh": 2}}
    scored = _run(venv, "score", str(CLIP), "--config", "archetype", "--question", QUESTION,
                  "--scorer", f"lite:{bundle / 'scorer'}", "--json")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    (row,) = json.loads(scored.stdout)
    assert set(row["scores"]) == {"audio_quality", "human_likeness", "appropriateness"}
    assert all(1 <= v <= 5 for v in row["scores"].values())
    card = subprocess.run(
        [str(venv["python"]), "-c",
         "import sys; from speech_drame.scorers.lite.publish import stage_lite_scorer; "
         "print(stage_lite_scorer(sys.argv[1], sys.argv[2], 'org/lite'))",
         str(bundle / "scorer"), "card"],
        cwd=venv["empty"], env=venv["env"], capture_output=True, text=True,
    )  # fmt: skip
    assert card.returncode == 0, card.stderr
    front = yaml.safe_load((venv["empty"] / "card" / "README.md").read_text().split("---\n")[1])
    assert front["library_name"] == "speech-drame" and front["model-index"]
    missing = _run(venv, "score", str(CLIP), "--config", "archetype", "--question", QUESTION)
    assert missing.returncode == 2
    (line,) = missing.stderr.strip().splitlines()
    assert "no trained archetype LiteScorer" in line and "speech-drame train-lite" in line
    assert str(venv["empty"] / "artifacts" / "lite_scorer") in line
