"""Publishing a LiteScorer: ``train-lite --push-to-hub`` against a fake Hub on 127.0.0.1
(tests/fake_hub.py), its model card, the dry run, and ``--scorer lite:ORG/NAME[@REVISION]``
read offline from a Hub cache laid out under tmp_path. The scorers are trained in seconds on
made-up blueprints (no audio, no feature extractor)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import populate_hub_cache

from speech_drame.cli import main
from speech_drame.features import asr, prosody, quality, speaker, text, vad
from speech_drame.features.blueprint import FEATURE_VERSIONS, Blueprint
from speech_drame.scorers.base import ScorerError
from speech_drame.scorers.evaluation import SplitReport
from speech_drame.scorers.lite import training as lite_training
from speech_drame.scorers.lite.fit import train_lite_model
from speech_drame.scorers.lite.model import LiteModel, TrainingOptions
from speech_drame.scorers.lite.publish import (
    LITE_COMMIT_MESSAGE,
    push_lite_scorer,
    stage_lite_scorer,
)
from speech_drame.scorers.lite.training import TrainingReport, config_metrics
from speech_drame.scorers.specs import load_scorer

REPO_ID = "someone/lite-scorer-tiny"
NOTE = "Simulated annotators: synthetic proxy labels made by the demo builder."
N = 24
EXPECTED_FILES = [
    "README.md",
    "archetype/config.json",
    "archetype/model.safetensors",
    "metrics.json",
    "realism/config.json",
    "realism/model.safetensors",
]


def _fake_embeddings(texts, cache=None) -> np.ndarray:
    """Deterministic stand-in for the sentence encoder (the realism features embed texts)."""
    rows = [
        np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(
            text.EMBEDDING_DIM
        )
        for t in texts
    ]
    return np.asarray(rows, dtype=np.float32)


def _blueprint(k: int, mode: str) -> Blueprint:
    """A made-up clip whose loudness and DNSMOS grow with ``k % 5``."""
    rng = np.random.default_rng(k)
    level = k % 5
    transcript = asr.Transcript(
        text="the ship is sinking, everyone to the boats",
        n_tokens=9,
        avg_logprob=-0.1 - 0.1 * rng.random(),
        no_speech_prob=0.05 * rng.random(),
        embedding=rng.standard_normal(asr.EMBEDDING_DIM).tolist(),
        language=("en", "zh")[k % 2],
        language_probability=0.95,
        detected_language=("en", "zh")[k % 2],
        detected_probability=0.95,
    )
    contexts = (
        {"question": "You are a captain. The ship is sinking. You say:"}
        if mode == "archetype"
        else {
            "profile": ("A gentle old librarian.", "A young sailor who shouts orders.")[k % 2],
            "scene": ("A quiet evening by the fire.", "A storm hits the ship at night.")[k % 2],
            "traits": "Calm",
        }
    )
    return Blueprint(
        source=f"clip-{k}",
        sha256=f"{k:064x}",
        seconds=3.0 + rng.random(),
        truncated=False,
        transcript=transcript,
        quality=quality.QualityScores(*(1.0 + level + 0.1 * rng.random(4))),
        speaker=speaker.SpeakerEmbedding(rng.standard_normal(256).tolist()),
        voice_activity=vad.VoiceActivity([(0.2, 2.8)], 2.6, 0.8, 0.1, 6.0, 0.3, 0.2, 0.2),
        prosody=prosody.Prosody(
            *(100.0 + 10 * rng.random(6)), -30.0 + 4 * level, *rng.random(4), 12
        ),
        context={c: 0.1 * level for c in contexts},
        context_texts=contexts if mode == "realism" else {},
    )


def _scorer(mode: str, seed: int = 0) -> tuple[LiteModel, list[Blueprint]]:
    clips = [_blueprint(k, mode) for k in range(N)]
    levels = [k % 5 for k in range(N)]
    labels = (
        {
            "audio_quality": [[1 + lv, 1 + lv, min(5, 2 + lv)] for lv in levels],
            "human_likeness": [[4, 5, 4] for _ in levels],
            "content_pass": [[lv > 1, lv > 1, lv > 2] for lv in levels],
        }
        if mode == "archetype"
        else {"local_story_fit": [[1 + 3 * (k % 2)] * 3 for k in range(N)]}
    )
    info = {"dataset": "demo", "labels_are_synthetic": True, "label_note": NOTE}
    return train_lite_model(clips, labels, mode, TrainingOptions(epochs=5, seed=seed), info), clips


def _table(dims: dict[str, float | None], accuracy: float | None) -> dict:
    table = {f"{d}_pearson": v for d, v in dims.items()}
    table |= {f"{d}_count": 5 for d in dims}
    notes = {f"{d}_pearson": "constant reference" for d, v in dims.items() if v is None}
    if accuracy is not None:
        table["content_pass_accuracy"] = accuracy
    finite = [v for v in dims.values() if v is not None]
    return table | {
        "avg_pearson": sum(finite) / len(finite),
        "label_policy": "paper",
        "label_policy_rule": "null ratings count as 1",
        "notes": notes,
    }


def _by_language(table: dict) -> dict:
    return {
        "en": {"count": 3, "table": table, "reason": None},
        "zh": {"count": 2, "table": None, "reason": "2 clips: fewer than 3"},
    }


def _write_run(out: Path, dataset: Path, synthetic: bool) -> dict:
    """A finished ``train-lite`` output folder: both scorers and their ``metrics.json``."""
    tables = {
        "archetype": _table({"audio_quality": 0.912345, "human_likeness": None}, 0.8),
        "realism": _table({"local_story_fit": 0.6789012}, None),
    }
    metrics = {}
    for mode, table in tables.items():
        _, scorer = SCORERS[mode]
        scorer.save(out / mode)
        training = TrainingReport(str(dataset), "train", synthetic, NOTE if synthetic else None, N)
        report = SplitReport("test", table, 5, {}, by_language=_by_language(table))
        metrics[mode] = config_metrics(out / mode, training, TrainingOptions(), [report])
    document = {"format_version": 1, "dataset": str(dataset), "configs": metrics}
    (out / lite_training.METRICS_FILE).write_text(json.dumps(document), encoding="utf-8")
    return document


SCORERS: dict[str, tuple[list[Blueprint], LiteModel]] = {}


@pytest.fixture(scope="module", autouse=True)
def scorers() -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text, "embed_texts", _fake_embeddings)
        for mode in ("archetype", "realism"):
            scorer, clips = _scorer(mode)
            SCORERS[mode] = (clips, scorer)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A dataset folder whose card states the licence and that the labels are synthetic."""
    folder = tmp_path / "speech-drame"
    folder.mkdir()
    (folder / "README.md").write_text(
        f"---\nlicense: cc-by-nc-4.0\n---\n\n# demo\n\n> **Source.** {NOTE}\n", encoding="utf-8"
    )
    return folder


def _front_matter(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def _named(document: dict, dataset: Path) -> dict:
    """``document`` (metrics.json or a config.json) with the dataset and scorer paths replaced
    by their names, as the push publishes it."""
    text = json.dumps(document)
    for config in ("archetype", "realism"):
        text = text.replace(json.dumps(str(dataset.parent / "run" / config)), json.dumps(config))
    return json.loads(text.replace(str(dataset), dataset.name))


def test_push_uploads_exactly_the_scorers_metrics_and_card(dataset, hub, tmp_path):
    out = tmp_path / "run"
    metrics = _write_run(out, dataset, synthetic=True)
    hub.repos[REPO_ID] = {".gitattributes": b"", "realism/old.bin": b"x", "notes.txt": b"kept"}

    url = push_lite_scorer(out, REPO_ID, dry_run=False)

    (commit,) = hub.commits
    assert url and url.startswith(f"{hub.url}/{REPO_ID}/commit/")
    assert commit["summary"] == LITE_COMMIT_MESSAGE
    assert sorted(commit["added"]) == EXPECTED_FILES
    assert commit["deleted"] == ["realism/old.bin"]  # left by an earlier push
    remote = hub.repos[REPO_ID]
    for name in EXPECTED_FILES:
        if name.endswith(".safetensors") or name == "README.md":
            assert remote[name] == (out / name).read_bytes(), name
        else:  # the same, with the dataset named by its folder, not this machine's path
            pushed = json.loads(remote[name])
            assert str(tmp_path) not in remote[name].decode(), name
            assert pushed == _named(json.loads((out / name).read_text()), dataset), name
    assert remote["notes.txt"] == b"kept"

    card = remote["README.md"].decode()
    assert "Warning: synthetic labels" in card and NOTE in card
    assert "**cc-by-nc-4.0**" in card
    assert "Label policy `paper`" in card
    for name, version in FEATURE_VERSIONS.items():
        assert f"| archetype | {name} | `{version}` |" in card
    assert "| archetype | test | en | 3 | 0.9123 |" in card
    assert "| archetype | test | zh | 2 | undefined (2 clips: fewer than 3) |" in card
    front = _front_matter(card)
    assert front["language"] == ["zh", "en"] and "synthetic-labels" in front["tags"]
    (index,) = front["model-index"]
    measured = {
        (r["dataset"]["config"], r["dataset"]["split"], m["config"]): m["value"]
        for r in index["results"]
        for m in r["metrics"]
    }
    table = {c: metrics["configs"][c]["splits"]["test"]["table"] for c in ("archetype", "realism")}
    assert measured == {
        ("archetype", "test", "content_pass"): table["archetype"]["content_pass_accuracy"],
        ("archetype", "test", "audio_quality"): round(
            table["archetype"]["audio_quality_pearson"], 4
        ),
        ("realism", "test", "local_story_fit"): round(
            table["realism"]["local_story_fit_pearson"], 4
        ),
    }  # human likeness is undefined (null in metrics.json): not in the model-index


def test_card_of_human_labels_has_no_warning_and_an_unrecorded_licence(tmp_path):
    out = tmp_path / "run"
    _write_run(out, tmp_path / "gone", synthetic=False)
    push_lite_scorer(out, REPO_ID, dry_run=True)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "synthetic" not in card.lower()
    assert "Licence of the training data: **not recorded**" in card


def test_dry_run_lists_files_and_sizes_and_uploads_nothing(dataset, hub, tmp_path, capsys):
    out = tmp_path / "run"
    _write_run(out, dataset, synthetic=True)
    assert push_lite_scorer(out, REPO_ID, dry_run=True) is None
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == ["push dry run", f"target: {hub.url}/{REPO_ID} (model repo)"]
    listed = {line.split()[1]: int(line.split()[0]) for line in printed[3:]}
    staged = tmp_path / "as-published"
    stage_lite_scorer(out, staged, REPO_ID)
    assert listed == {name: (staged / name).stat().st_size for name in EXPECTED_FILES}
    assert hub.requests == [] and hub.repos == {}


def test_cli_checks_access_before_training_and_pushes_after(dataset, hub, tmp_path, monkeypatch):
    out = tmp_path / "run"
    trained = []

    def fake_training(dataset_dir, out_dir, **kwargs):
        trained.append(out_dir)
        _write_run(Path(out_dir), Path(dataset_dir), synthetic=True)

    monkeypatch.setattr(lite_training, "train_and_evaluate", fake_training)
    args = ["train-lite", "--dataset", str(dataset), "--out", str(out), "--no-feature-cache"]
    args += ["--push-to-hub", REPO_ID]

    hub.role = "read"
    assert main(args) == 2
    assert trained == [] and hub.uploads() == []

    hub.role = "write"
    assert main([*args, "--private"]) == 0
    assert trained == [str(out)]
    assert sorted(hub.commits[0]["added"]) == EXPECTED_FILES

    assert main(["train-lite", "--out", str(out), "--dry-run"]) == 2  # no repo to push to


def test_push_lite_uploads_a_trained_folder_as_train_lite_would(dataset, hub, tmp_path, capsys):
    out = tmp_path / "run"
    _write_run(out, dataset, synthetic=True)
    assert main(["push-lite", str(out), REPO_ID, "--dry-run"]) == 0
    assert hub.requests == [] and "push dry run" in capsys.readouterr().out
    assert main(["push-lite", str(out), REPO_ID]) == 0
    assert sorted(hub.commits[0]["added"]) == EXPECTED_FILES
    (out / "metrics.json").unlink()  # an unfinished run: refused before any request
    requests = len(hub.requests)
    assert main(["push-lite", str(out), REPO_ID]) == 2
    assert "no LiteScorer evaluation" in capsys.readouterr().err and len(hub.requests) == requests


MAIN_SHA, OLD_SHA = "c0ffee" * 6 + "c0ff", "0dd" * 13 + "0"


@pytest.mark.parametrize(
    ("revision", "expected"),
    [("", "main"), ("@main", "main"), (f"@{MAIN_SHA}", "main"), (f"@{OLD_SHA}", "old")],
)
def test_lite_hub_id_loads_offline_from_the_cache_like_the_folder(
    revision, expected, offline_cache, dataset, tmp_path
):
    """``main`` points at one push, an older commit holds another scorer: each revision loads
    its own snapshot and scores exactly as that folder loaded directly."""
    folders = {"main": tmp_path / "run", "old": tmp_path / "old-run"}
    _write_run(folders["main"], dataset, synthetic=True)
    shutil.copytree(folders["main"], folders["old"])
    _scorer("archetype", seed=1)[0].save(folders["old"] / "archetype")
    for name, sha in (("old", OLD_SHA), ("main", MAIN_SHA)):  # refs/main: MAIN_SHA
        staged = tmp_path / f"pushed-{name}"  # as uploaded
        pushed = [f.as_posix() for f in stage_lite_scorer(folders[name], staged, REPO_ID)]
        populate_hub_cache(offline_cache, REPO_ID, staged, sha, pushed)
    clips, _ = SCORERS["archetype"]

    from_hub = load_scorer(f"lite:{REPO_ID}{revision}", "archetype")
    local = {name: load_scorer(f"lite:{path}", "archetype") for name, path in folders.items()}

    assert local["main"].id != local["old"].id
    assert from_hub.id == local[expected].id
    assert offline_cache in Path(from_hub.description.split()[1]).parents
    assert from_hub.model.score_blueprints(clips) == local[expected].model.score_blueprints(clips)


def test_a_local_folder_wins_over_the_hub_id_it_spells(
    offline_cache, dataset, tmp_path, monkeypatch
):
    _write_run(tmp_path / "run", dataset, synthetic=True)
    monkeypatch.chdir(tmp_path)
    shutil.copytree(tmp_path / "run", tmp_path / REPO_ID)  # ./someone/lite-scorer-tiny
    scorer = load_scorer(f"lite:{REPO_ID}", "archetype")  # the cache is empty: no Hub read
    assert scorer.description == f"LiteScorer {REPO_ID}/archetype (archetype)"


def test_an_uncached_hub_id_offline_is_an_error_naming_it(offline_cache):
    with pytest.raises(
        ScorerError, match=f"no such local folder, and cannot fetch the LiteScorer {REPO_ID}@v2 "
    ):
        load_scorer(f"lite:{REPO_ID}@v2", "archetype")
