"""`speech-drame summary`: counts of a built dataset, and the note when its labels are synthetic."""

from __future__ import annotations

import json

from speech_drame.cli import main


def test_summary_counts_rows_and_says_the_demo_labels_are_synthetic(demo_dataset_dir, capsys):
    from datasets import load_dataset

    assert main(["summary", "--dataset", str(demo_dataset_dir)]) == 0
    text = capsys.readouterr().out
    assert "synthetic proxy labels" in text.lower() and "not human ratings" in text
    assert main(["summary", "--dataset", str(demo_dataset_dir), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["synthetic_labels"] is True
    test = load_dataset(str(demo_dataset_dir), "archetype", split="test").remove_columns("audio")
    entry = doc["configs"]["archetype"]["test"]
    assert entry["rows"] == test.num_rows
    votes = [v for a in test["annotations"] for v in a["content_pass"]]
    assert entry["content_pass_rate"] == sum(votes) / len(votes)
    assert sum(entry["labels"]["audio_quality"].values()) == len(votes)


def test_summary_of_human_labels_has_no_synthetic_note(official_dataset_dir, capsys):
    assert main(["summary", "--dataset", str(official_dataset_dir)]) == 0
    assert "synthetic" not in capsys.readouterr().out.lower()
    assert main(["summary", "--dataset", str(official_dataset_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["synthetic_labels"] is False
