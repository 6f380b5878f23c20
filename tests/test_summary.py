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


def test_summary_counts_clips_per_release_language(official_dataset_dir, capsys):
    from collections import Counter

    from datasets import load_dataset

    assert main(["summary", "--dataset", str(official_dataset_dir), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = json.loads((official_dataset_dir / "build_report.json").read_text())
    for config, splits in doc["configs"].items():
        for split, entry in splits.items():
            column = load_dataset(str(official_dataset_dir), config, split=split)["language"]
            assert entry["languages"] == dict(
                sorted(Counter(v or "unstated" for v in column).items())
            )
            assert entry["languages"] == report["languages"][config][split]
            assert sum(entry["languages"].values()) == entry["rows"]
    assert main(["summary", "--dataset", str(official_dataset_dir)]) == 0
    text = capsys.readouterr().out
    counts = doc["configs"]["archetype"]["test"]["languages"]
    assert "  languages: " + ", ".join(f"{k} {v}" for k, v in counts.items()) in text


def test_a_dataset_built_before_the_language_column_still_summarises(
    official_dataset_dir, tmp_path, capsys
):
    import shutil

    import pyarrow.parquet as pq

    old = tmp_path / "old-build"
    shutil.copytree(official_dataset_dir, old)
    for path in old.rglob("*.parquet"):
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["language"]), path)
    card = (old / "README.md").read_text(encoding="utf-8")
    (old / "README.md").write_text(card.replace("  - name: language\n    dtype: string\n", ""))
    report = json.loads((old / "build_report.json").read_text())
    del report["languages"]
    (old / "build_report.json").write_text(json.dumps(report))

    assert main(["summary", "--dataset", str(old), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(e["languages"] is None for s in doc["configs"].values() for e in s.values())
    assert doc["configs"]["archetype"]["test"]["rows"] >= 1
    assert main(["summary", "--dataset", str(old)]) == 0
    assert "languages: not recorded" in capsys.readouterr().out
