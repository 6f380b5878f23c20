"""The drame_metric Space (evaluate_metric/drame_metric): its front matter, its app (built,
then served on 127.0.0.1 and called through gradio_client), the load paths of the metric, and
``speech-drame push-metric`` (dry run, and a push to a fake Hub on 127.0.0.1)."""

from __future__ import annotations

import importlib.util
import io
import re
import socket
import sys
import zipfile
from pathlib import Path

import fake_hub
import pytest
import yaml
from fake_hub import FakeHub
from huggingface_hub import HfApi, constants

from speech_drame.cli import main
from speech_drame.hub.push import metric_space_files

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "evaluate_metric" / "drame_metric"
REPO_ID = "someone/drame_metric"
EXPECTED_FILES = ["README.md", "app.py", "drame_metric.py", "requirements.txt"]
WHEEL = "speech_drame-0.1.0-py3-none-any.whl"  # built by push-metric, installed by requirements.txt


def _folder_files() -> list[str]:
    """What the folder holds, by a walk independent of metric_space_files."""
    return sorted(
        p.relative_to(METRIC_DIR).as_posix()
        for p in METRIC_DIR.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    )


def _front_matter() -> dict:
    text = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "README.md has no front matter"
    return yaml.safe_load(match[1])


@pytest.fixture(scope="module")
def app():
    sys.dont_write_bytecode = True  # keep __pycache__ out of the Space folder
    try:
        spec = importlib.util.spec_from_file_location("drame_metric_app", METRIC_DIR / "app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = False
    return module


@pytest.fixture
def hub(monkeypatch):
    """The fake Hub, also answering the Space routes (``/api/spaces/...``); records the
    ``create_repo`` calls."""
    route = r"^/api/(?:models|spaces)/([^/]+/[^/]+)/(preupload|tree|commit)/([^/]+)(?:/.*)?$"
    monkeypatch.setattr(fake_hub, "REPO_ROUTE", re.compile(route))
    server = FakeHub()
    server.created = []
    create_repo = HfApi.create_repo

    def spy(self, repo_id, **kwargs):
        server.created.append((repo_id, kwargs))
        return create_repo(self, repo_id, **kwargs)

    monkeypatch.setattr(HfApi, "create_repo", spy)
    monkeypatch.setenv("HF_TOKEN", server.token)
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield server
    server.close()


def test_front_matter_is_a_gradio_metric_space():
    meta = _front_matter()
    assert meta["title"] == "drame_metric"
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert str(meta["sdk_version"]).startswith("6.")
    assert {"evaluate", "metric"} <= set(meta["tags"])
    assert (METRIC_DIR / meta["app_file"]).is_file()


def test_requirements_install_the_package_not_the_repository():
    lines = [
        line.strip()
        for line in (METRIC_DIR / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert f"./{WHEEL}" in lines
    assert not any(line.startswith("-e") or line in (".", "..") for line in lines)
    # the metric imports nothing of the repository but the speech_drame package
    source = (METRIC_DIR / "drame_metric.py").read_text(encoding="utf-8")
    imported = set(re.findall(r"^(?:from|import) (\w+)", source, re.M))
    assert imported <= {"datasets", "evaluate", "speech_drame"}


def test_metric_space_files_are_exactly_the_folder():
    files = [f.as_posix() for f in metric_space_files(METRIC_DIR)]
    assert files == _folder_files() == EXPECTED_FILES


def test_dry_run_lists_files_and_sizes_and_sends_nothing(hub, capsys):
    assert main(["push-metric", REPO_ID, "--folder", str(METRIC_DIR), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("push dry run\n")
    assert f"{hub.url}/spaces/{REPO_ID} (space repo)" in out
    for name in EXPECTED_FILES:
        size = (METRIC_DIR / name).stat().st_size
        assert re.search(rf"^\s+{size}  {re.escape(name)}$", out, re.M), name
    assert re.search(rf"^\s+\d+  {re.escape(WHEEL)}$", out, re.M)
    assert f"files: {len(EXPECTED_FILES) + 1}," in out
    assert hub.requests == [] and hub.created == []


def test_push_uploads_exactly_the_folder_files_to_a_gradio_space(hub, capsys):
    assert main(["push-metric", REPO_ID, "--folder", str(METRIC_DIR), "--private"]) == 0
    assert "pushed: " in capsys.readouterr().out
    assert hub.created == [
        (REPO_ID, {"repo_type": "space", "private": True, "exist_ok": True, "space_sdk": "gradio"})
    ]
    (commit,) = hub.commits
    assert sorted(commit["added"]) == sorted([*EXPECTED_FILES, WHEEL]) and commit["deleted"] == []
    files = hub.repos[REPO_ID]
    assert sorted(files) == sorted([".gitattributes", *EXPECTED_FILES, WHEEL])
    for name in EXPECTED_FILES:
        assert files[name] == (METRIC_DIR / name).read_bytes(), name
    with zipfile.ZipFile(io.BytesIO(files[WHEEL])) as wheel:  # the package the metric imports
        assert {"speech_drame/metrics.py", "speech_drame/labels.py"} <= set(wheel.namelist())
    assert all("/api/models/" not in path for _, path in hub.requests)


def test_push_refuses_bad_input_before_any_request(hub, tmp_path, capsys):
    assert main(["push-metric", "not-a-hub-id", "--folder", str(METRIC_DIR)]) == 2
    assert main(["push-metric", REPO_ID, "--folder", str(tmp_path)]) == 2
    assert "not a metric Space folder" in capsys.readouterr().err
    assert hub.requests == []


def test_load_paths_from_the_repository_root(monkeypatch):
    import evaluate

    monkeypatch.chdir(REPO)
    assert evaluate.load("evaluate_metric/drame_metric").name == "drame_metric"
    with pytest.raises(FileNotFoundError):
        evaluate.load("drame_metric")  # only from inside evaluate_metric/
    monkeypatch.chdir(REPO / "evaluate_metric")
    assert evaluate.load("drame_metric").name == "drame_metric"


def test_app_builds_and_computes_the_example(app):
    import gradio as gr

    assert isinstance(app.demo, gr.Blocks)
    example = app.EXAMPLE
    result = app.compute_from_json(
        *(app.json.dumps(example[k]) for k in ("predictions", "references")),
        ", ".join(example["dimensions"]),
    )
    assert result["audio_quality_pearson"] == pytest.approx(0.9937, abs=1e-4)
    assert result["avg_pearson"] == pytest.approx(0.8627, abs=1e-4)
    with pytest.raises(ValueError, match="predictions: not valid JSON"):
        app.compute_from_json("[1,", "[]", "audio_quality")
    with pytest.raises(ValueError, match="references: expected a non-empty JSON list"):
        app.compute_from_json("[[4]]", "{}", "audio_quality")
    constant = app.compute_from_json("[[3], [3], [3]]", "[[4], [2], [5]]", '["audio_quality"]')
    assert constant["audio_quality_pearson"] is None  # NaN given as null, reason in notes
    assert constant["notes"]["audio_quality_pearson"]


def test_app_served_on_localhost_computes_through_gradio_client(app):
    from gradio_client import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app.demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        example = app.EXAMPLE
        result = client.predict(
            app.json.dumps(example["predictions"]),
            app.json.dumps(example["references"]),
            "audio_quality, human_likeness",
            "paper",
            False,
            api_name="/compute",
        )
    finally:
        app.demo.close()
    assert result["audio_quality_pearson"] == pytest.approx(0.9937, abs=1e-4)
    assert result["label_policy"] == "paper"
