"""The demo corpus through a whole campaign, in a real headless Chromium: ``campaign create`` from
a few demo release clips, three raters on the real page giving the demo annotators' ratings
(rater j = annotator j, by mouse and by keyboard, gated dimensions left N/A), ``campaign
export`` -> ``speech-drame build`` -> the built annotations are the demo annotators' and
``speech-drame agreement`` equals ``campaign status``."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from campaign_load import ServerProcess
from conftest import DEMO_RELEASE

from speech_drame.schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    DATA_DIRS,
    EMOTION_GATES,
    REALISM_DIMENSIONS,
)

pytestmark = pytest.mark.slow

RATERS = 3
ARCH_COMMENTS = tuple(f"{d}_comment" for d in ARCHETYPE_DIMENSIONS)
GATES = dict(EMOTION_GATES)  # gated dimension -> its gate
# what the page collects, by release field: the other realism fields are exported as null
COLLECTED = {
    "archetype": (CONTENT_PASS, *ARCHETYPE_DIMENSIONS, "confidence", *ARCH_COMMENTS),
    "realism": (*REALISM_DIMENSIONS, "annotator_confidence_rating", "comments"),
}
CONTEXT_KEY = {"archetype": "question", "realism": "local_scene"}  # tells the rater the clip


def cli(*args: str, timeout: float = 300) -> str:
    proc = subprocess.run([sys.executable, "-m", "speech_drame.cli", *args], capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip
    assert proc.returncode == 0, f"{args[:2]}: {proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _score(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5


def _page_can_give(config: str, a: dict) -> bool:
    """Whether the page can give this annotator's answers exactly (one annotator's values)."""
    comments = [a[k] for k in (ARCH_COMMENTS if config == "archetype" else ("comments",))]
    if not all(isinstance(c, str) and c == c.strip() for c in comments):
        return False
    confidence = a["confidence" if config == "archetype" else "annotator_confidence_rating"]
    if confidence is not None and not _score(confidence):
        return False
    if config == "archetype":
        if a[CONTENT_PASS] is False:
            return all(a[d] is None for d in ARCHETYPE_DIMENSIONS) and confidence is None and (
                not any(comments))  # fmt: skip
        return a[CONTENT_PASS] is True and all(_score(a[d]) for d in ARCHETYPE_DIMENSIONS)
    for dim in REALISM_DIMENSIONS:
        gate = GATES.get(dim)
        asked = gate is None or (_score(a[gate]) and a[gate] >= 3)
        if not (_score(a[dim]) if asked else a[dim] == "N/A"):
            return False
    return True


def _annotator(record: dict, j: int) -> dict:
    return {k: v[j] for k, v in record["annotations"].items()}


def pick_clips(config: str, n: int) -> list[dict]:
    """The first ``n`` demo clips whose annotators 0..2 the page can reproduce, one per context
    (the rater recognises the clip by its context), with at least one failed Content Pass or
    gated N/A among them."""
    path = DEMO_RELEASE / DATA_DIRS[config] / "test.jsonl"
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `make demo-data` (make test does it first)")
    picked, seen = [], set()
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        context = record[CONTEXT_KEY[config]]
        if context in seen or len(next(iter(record["annotations"].values()))) < RATERS:
            continue
        if all(_page_can_give(config, _annotator(record, j)) for j in range(RATERS)):
            picked.append(record)
            seen.add(context)
        if len(picked) == n:
            break
    special = [_annotator(r, j) for r in picked for j in range(RATERS)]
    if config == "archetype":
        assert any(a[CONTENT_PASS] is False for a in special)
    else:
        assert any(a["emotion_intensity_control"] == "N/A" for a in special)
        assert any(a["dynamic_range"] == "N/A" and a["emotion_intensity_control"] != "N/A"
                   for a in special)  # fmt: skip
    return picked


def write_subset(records: list[dict], folder: Path) -> Path:
    """The records as a clips JSONL whose ``audio`` is the demo release's file."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "clips.jsonl"
    lines = []
    for r in records:
        row = {k: v for k, v in r.items() if k != "wav_path"}
        wav = DEMO_RELEASE / Path(r["wav_path"]).parts[-2] / Path(r["wav_path"]).name
        assert wav.is_file(), wav
        lines.append(json.dumps({**row, "audio": str(wav)}, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


# --- a rater on the page --------------------------------------------------------------------
def page_answers(config: str, a: dict) -> dict:
    """The demo annotator's values as the page's fields (gated and unasked ones left out)."""
    text = {*ARCH_COMMENTS, "comments"}
    out = {
        k: a[k]
        for k in COLLECTED[config]
        if (a[k] != "" if k in text else a[k] is not None and a[k] != "N/A")
    }
    if config == "realism" and "annotator_confidence_rating" in out:
        out["confidence"] = out.pop("annotator_confidence_rating")
    return out


def _block(page, key: str):
    return page.locator(f'.dim[data-key="{key}"]')


def _order(config: str) -> list[str]:
    dims = ARCHETYPE_DIMENSIONS if config == "archetype" else REALISM_DIMENSIONS
    return [*((CONTENT_PASS,) if config == "archetype" else ()), *dims, "confidence"]


def rate_with_mouse(page, config: str, answers: dict, shot: Path | None = None) -> None:
    for key in _order(config):
        if key in answers:
            value = str(answers[key]).lower()  # true/false for Content Pass, else the score
            _block(page, key).locator(f'label.choice[data-value="{value}"]').click()
        elif key in GATES:
            assert "N/A" in _block(page, key).locator(".status").inner_text(), key
    _comments(page, answers)
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    page.locator("#submit").click()


def rate_with_keys(page, config: str, answers: dict) -> None:
    """Keys only: each key rates the focused dimension and moves to the next open one; a
    skipped (optional) confidence is left with Enter."""
    from playwright.sync_api import expect

    _comments(page, answers)  # typed first: the keys then go to the dimensions
    _block(page, _order(config)[0]).focus()
    for key in _order(config):
        if key not in answers:
            if key in GATES:
                assert "N/A" in _block(page, key).locator(".status").inner_text(), key
            continue
        expect(_block(page, key)).to_be_focused()
        value = answers[key]
        page.keyboard.press(("0", "1")[value] if isinstance(value, bool) else str(value))
    page.keyboard.press("Enter")


def _comments(page, answers: dict) -> None:
    for key, text in answers.items():
        if key.endswith("_comment") or key == "comments":
            page.locator(f'textarea[data-field="{key}"]').fill(text)


# --- the campaign ---------------------------------------------------------------------------
def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)
    return a == b


def _tuples(config: str, annotations: dict, na: dict | None, count: int) -> Counter:
    """Per annotator: the page-collected fields, N/A as ``"N/A"`` (a built dataset: null plus
    its ``not_applicable`` flag)."""
    out = Counter()
    for j in range(count):
        row = []
        for k in COLLECTED[config]:
            v = annotations[k][j]
            if na is not None and k in na and na[k][j]:
                assert v is None, k
                v = "N/A"
            row.append(v)
        out[tuple(row)] += 1
    return out


@pytest.mark.parametrize(("config", "n"), [("archetype", 5), ("realism", 3)])
def test_demo_campaign_in_the_browser(browser, tmp_path, config, n):
    from datasets import load_dataset
    from playwright.sync_api import expect

    records = pick_clips(config, n)
    by_context = {r[CONTEXT_KEY[config]]: r for r in records}
    db = str(tmp_path / "c.db")
    out = cli("campaign", "create", "--clips", str(write_subset(records, tmp_path / "clips")),
              "--config", config, "--raters-per-clip", "3", "--out", db)  # fmt: skip
    assert f"{n} clips" in out
    server = ServerProcess(db, tmp_path / "server.log")
    links = []
    for j in range(RATERS):
        line = cli("campaign", "invite", db, "--name", f"annotator{j}", "--base-url", server.url)
        links.append(re.search(r"(http://\S+/r/\S+)", line).group(1))
    shot = tmp_path / f"{config}_page.png"
    given = Counter()
    with server:
        contexts = [browser.new_context(viewport={"width": 1280, "height": 1000})
                    for _ in range(RATERS)]  # fmt: skip
        try:
            pages = [c.new_page() for c in contexts]
            for page, link in zip(pages, links, strict=True):
                page.goto(link, timeout=60_000)
                expect(page.locator("#progress")).to_have_text("clip 1 · 0 rated", timeout=30_000)
            for step in range(n):  # the raters take turns: arrival order interleaves them
                for j, page in enumerate(pages):
                    page.wait_for_function(
                        "document.getElementById('audio').duration > 0", timeout=30_000
                    )
                    shown = page.locator("#context").inner_text()
                    record = next(r for c, r in by_context.items() if c in shown)
                    answers = page_answers(config, _annotator(record, j))
                    given[(record["id"], j)] += 1
                    if (step + j) % 2:
                        rate_with_keys(page, config, answers)
                    else:
                        rate_with_mouse(
                            page, config, answers, shot if (step, j) == (1, 1) else None
                        )
                    done = step == n - 1
                    expect(page.locator("#progress")).to_have_text(
                        "finished" if done else f"clip {step + 2} · {step + 1} rated",
                        timeout=30_000,
                    )
            for page in pages:
                expect(page.locator("#done")).to_be_visible()
        finally:
            for c in contexts:
                c.close()
    print(f"screenshot: {shot}")
    assert set(given.values()) == {1} and len(given) == n * RATERS

    release, built = tmp_path / "release", tmp_path / "built"
    cli("campaign", "export", db, "--out", str(release))
    cli("build", "--source", str(release), "--out", str(built), "--license", "apache-2.0",
        "--quiet")  # fmt: skip
    ds = load_dataset(str(built), config, split="test")
    assert sorted(ds["id"]) == sorted(r["id"] for r in records)
    demo = {r["id"]: r for r in records}
    for row in ds:
        got = _tuples(config, row["annotations"], row["not_applicable"], RATERS)
        assert len(next(iter(row["annotations"].values()))) == RATERS
        assert got == _tuples(config, demo[row["id"]]["annotations"], None, RATERS), row["id"]
        for key, values in row["annotations"].items():
            if key not in COLLECTED[config]:
                assert values == [None] * RATERS, key

    agreement = json.loads(cli("agreement", "--dataset", str(built), "--config", config, "--json"))
    status = json.loads(cli("campaign", "status", db, "--json", "--bootstrap", "50"))
    assert status["samples"] == agreement["samples"] == n
    assert list(status["dimensions"]) == list(agreement["dimensions"])
    assert any(isinstance(e["agreement"], float) for e in agreement["dimensions"].values())
    for dim, e in agreement["dimensions"].items():
        for key in ("agreement", "ceiling", "samples_used"):
            got, want = status["dimensions"][dim][key], e[key]
            assert _same(got, want) or (got is None and want is None), (dim, key, got, want)
