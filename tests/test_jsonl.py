"""speech_drame.jsonl: the reader behind every JSONL input file."""

from __future__ import annotations

import json

import pytest

from speech_drame.jsonl import read_objects, repeated


def test_objects_with_their_line_and_blank_lines_skipped(tmp_path):
    path = tmp_path / "in.jsonl"
    rows = [{"id": "a"}, {"id": "b", "text": "line\u2028separator"}]
    path.write_text(
        "\n".join([json.dumps(rows[0]), "  ", json.dumps(rows[1], ensure_ascii=False)]) + "\n",
        encoding="utf-8",
    )
    assert read_objects(path) == [(f"{path}:1", rows[0]), (f"{path}:3", rows[1])]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"id": "a"}\n{"id": \n', r"in\.jsonl:2: invalid JSON \(Expecting value\)"),
        ('{"id": "a"}\n[1, 2]\n', r"in\.jsonl:2: expected a JSON object, got list"),
    ],
)
def test_bad_lines_are_named(tmp_path, text, match):
    path = tmp_path / "in.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        read_objects(path)


def test_repeated_ids_sorted_once_each():
    assert repeated(["b", "a", "c", "b", "a", "b"]) == ["a", "b"]
    assert repeated(["a", "b"]) == []
