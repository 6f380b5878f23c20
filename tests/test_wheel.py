"""The built wheel works without the checkout: it carries the card templates (the checkout's
``model_card/``), the ``evaluate`` module, the prompt pool and the voice encoder weights (package
data), and so does the sdist.

``python -m build`` makes the sdist and the wheel from a copy of the package (the checkout gets
no ``build/`` or egg-info); the wheel is installed with ``pip install --target`` into a
temporary folder, and used by a Python started
with ``-I`` (no checkout on ``sys.path``) whose path starts with that folder. The dependencies
(``datasets``, ``huggingface_hub``, ...) come from the virtual environment as usual; every
``speech_drame`` module must come from the wheel. It builds the official samples into a
dataset folder (dataset card) and renders a model card from that folder's card.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import OFFICIAL_SAMPLES, REPO

from speech_drame.source_wheel import copy_source

pytestmark = pytest.mark.slow

METRIC_SCRIPT = "evaluate_metric/drame_metric/drame_metric.py"
SOURCE_NOTE = "Four official samples, built by tests/test_wheel.py."
# Runs in the fresh interpreter: argv = site folder, work folder, official samples.
CHILD = """
import json, sys
from pathlib import Path

site, work, samples = sys.argv[1:4]
sys.path.insert(0, site)

import speech_drame
from speech_drame.data.card import synthetic_label_note
from speech_drame.metric_module import metric_script
from speech_drame.hub.cards import read_data_card, render_model_card

dataset = Path(work) / "dataset"
speech_drame.build_dataset(samples, dataset, license_id="apache-2.0", source_note=sys.argv[4],
                           progress=False)
metrics = {
    "train": {"training_clips": 2, "training_pairs": 8, "skipped_no_valid_score": {}},
    "eval": {"test": {"content_pass_accuracy": 0.5, "audio_quality_pearson": 0.25,
                      "audio_quality_count": 2, "human_likeness_pearson": float("nan"),
                      "notes": {"human_likeness_pearson": "constant predictions"}}},
}
card = render_model_card(
    model_id="org/drame-eval-archetype", base_model="Qwen/Qwen2-Audio-7B-Instruct",
    config="archetype", dimensions=["content_pass", "audio_quality", "human_likeness"],
    metrics=metrics, dataset=dataset, train_split="test", recipe=[("method", "LoRA (PEFT)")],
    data_card=read_data_card(dataset), load_id="org/drame-eval-archetype",
)
(Path(work) / "evaluator").mkdir()
(Path(work) / "evaluator" / "README.md").write_text(card, encoding="utf-8")
print(json.dumps({
    "modules": {n: getattr(m, "__file__", None) for n, m in sys.modules.items()
                if n == "speech_drame" or n.startswith("speech_drame.")},
    "note": synthetic_label_note(dataset),
    "metric": str(metric_script()),
}))
"""


def build_and_install(source: Path, tmp: Path) -> Path:
    """``python -m build`` of ``source`` (the sdist, then the wheel built from that sdist, so
    both carry the run-time files); the wheel is installed without dependencies into
    ``tmp/site``."""
    dist, site = tmp / "dist", tmp / "site"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True, cwd=tmp, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = dist.glob("speech_drame-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install", "--no-deps",
         "--no-index", "--target", str(site), str(wheel)],
        check=True, cwd=tmp, capture_output=True, text=True,
    )  # fmt: skip
    return site


def run_from_wheel(site: Path, work: Path) -> subprocess.CompletedProcess:
    work.mkdir()
    return subprocess.run(
        [sys.executable, "-I", "-c", CHILD, str(site), str(work), str(OFFICIAL_SAMPLES), SOURCE_NOTE],
        cwd=work, capture_output=True, text=True,
    )  # fmt: skip


def test_the_wheel_carries_the_templates_and_renders_the_cards(tmp_path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard, ModelCard

    site = build_and_install(copy_source(REPO, tmp_path / "src"), tmp_path)
    shipped_cards = site / "speech_drame" / "templates" / "model_card"
    assert sorted(p.name for p in shipped_cards.glob("*.md")) == [
        "datasetcard.md",
        "lite_modelcard.md",
        "modelcard.md",
        "space_readme.md",
    ]
    for card in shipped_cards.iterdir():  # the checkout's model_card/, unchanged
        assert card.read_bytes() == (REPO / "model_card" / card.name).read_bytes(), card.name
    metric = site / "speech_drame" / "evaluate_metric" / "drame_metric" / "drame_metric.py"
    assert metric.read_bytes() == (REPO / METRIC_SCRIPT).read_bytes()
    resources = site / "speech_drame" / "resources"
    shipped = resources / "voice_encoder.safetensors"
    assert (
        shipped.read_bytes()
        == (REPO / "speech_drame/resources/voice_encoder.safetensors").read_bytes()
    )
    assert (resources / "voice_encoder.LICENSE.md").is_file()
    static = REPO / "speech_drame" / "campaign" / "static"
    for page in static.iterdir():  # the rating page and dashboard of `campaign serve`
        shipped_page = site / "speech_drame" / "campaign" / "static" / page.name
        assert shipped_page.read_bytes() == page.read_bytes(), page.name
    (sdist,) = (tmp_path / "dist").glob("speech_drame-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "setup.py", "LICENSE", "model_card/space_readme.md", METRIC_SCRIPT,
            "speech_drame/resources/voice_encoder.safetensors"} <= names  # fmt: skip
    pool = json.loads((site / "speech_drame" / "resources" / "instruction_pool.json").read_text())
    assert len(pool["realism"]["pitch_variation"]) == 30  # the training prompt pool ships too
    assert (site / "speech_drame" / "resources" / "prompt_profile.json").is_file()  # the default
    work = tmp_path / "work"
    done = run_from_wheel(site, work)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    outside = {n: f for n, f in result["modules"].items() if not Path(f).is_relative_to(site)}
    assert "speech_drame.data.card" in result["modules"] and not outside
    assert Path(result["metric"]) == metric  # install-metric registers the wheel's copy

    data_card = DatasetCard.load(work / "dataset" / "README.md")
    assert data_card.data.license == "apache-2.0"  # the samples' (SOURCE.md)
    assert [c["config_name"] for c in data_card.data.configs] == ["realism", "archetype"]
    assert f"> **Source.** {SOURCE_NOTE}" in data_card.text
    for heading in ("## Contents of this build", "## Fields", "## Licence"):
        assert f"\n{heading}\n" in data_card.text
    assert "| archetype | test | 2 |" in data_card.text
    assert load_dataset(str(work / "dataset"), "archetype", split="test").num_rows == 2
    assert result["note"] is None  # the note does not say the labels are synthetic

    text = (work / "evaluator" / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["library_name"] == "peft" and front["pipeline_tag"] == "audio-text-to-text"
    assert front["base_model"] == "Qwen/Qwen2-Audio-7B-Instruct"
    assert front["datasets"] == ["dataset"]
    (index,) = front["model-index"]
    assert index["name"] == "org/drame-eval-archetype"
    metrics = [m for r in index["results"] for m in r["metrics"]]
    assert [(m["config"], m["value"]) for m in metrics] == [
        ("content_pass", 0.5),
        ("audio_quality", 0.25),
    ]  # the undefined Pearson r is left out of the model-index
    card = ModelCard.load(work / "evaluator" / "README.md")
    assert card.data.library_name == "peft"
    for heading in ("Intended use", "Prompt format", "Decoding rule", "Training data",
                    "Training procedure", "Evaluation", "Limitations", "How to load"):  # fmt: skip
        assert f"\n## {heading}\n" in card.text
    assert "# org/drame-eval-archetype" in card.text
    assert f"> **Training data note.** {SOURCE_NOTE}" in card.text
    assert "Licence of the training data: **apache-2.0**" in card.text
    assert "| Pearson r | Human Likeness | undefined (constant predictions) |" in card.text
    assert (
        'from_pretrained("Qwen/Qwen2-Audio-7B-Instruct"), "org/drame-eval-archetype")' in card.text
    )
