"""The rating page in a real headless Chromium (playwright with Debian chromium): three raters
rate an archetype and a realism campaign (K=3) with the mouse and the keyboard, through the
Content Pass and emotion gating, a closed tab, a network error and a double click; the store
then holds exactly the answers given."""

from __future__ import annotations

import tempfile
from pathlib import Path

from campaign_serving import make_campaign, serving

from speech_drame.schema import REALISM_DIMENSIONS

INTENSITY, TRANSITION = "emotion_intensity_control", "dynamic_range"
# screenshots to look at, kept after the run (pytest's tmp folders are pruned)
SHOTS = Path(tempfile.gettempdir()) / "speech-drame-campaign-screenshots"


def _open(context, url: str):
    from playwright.sync_api import expect

    page = context.new_page()
    page.goto(url, timeout=60_000)
    expect(page.locator("#progress")).not_to_have_text("", timeout=30_000)
    return page


def _block(page, key: str):
    return page.locator(f'.dim[data-key="{key}"]')


def _click(page, key: str, value) -> None:
    value = str(value).lower() if isinstance(value, bool) else value
    _block(page, key).locator(f'label.choice[data-value="{value}"]').click()


def _disabled(page, key: str) -> bool:
    block = _block(page, key)
    inputs = block.locator("input")
    return "disabled" in (block.get_attribute("class") or "") and all(
        inputs.nth(i).is_disabled() for i in range(inputs.count())
    )


def _submit(page, rated: int, done: bool = False) -> None:
    from playwright.sync_api import expect

    page.locator("#submit").click()
    expected = "finished" if done else f"clip {rated + 1} · {rated} rated"
    expect(page.locator("#progress")).to_have_text(expected, timeout=30_000)


def _audio_plays(page) -> None:
    page.wait_for_function("document.getElementById('audio').duration > 0", timeout=30_000)


def _rate_archetype(page, answers: dict) -> None:
    for key in ("content_pass", "audio_quality", "human_likeness", "appropriateness",
                "confidence"):  # fmt: skip
        if answers.get(key) is not None:
            assert not page.locator("#submit").is_enabled() or key == "confidence"
            _click(page, key, answers[key])
    for key in ("audio_quality_comment", "human_likeness_comment", "appropriateness_comment"):
        if answers.get(key):
            page.locator(f'textarea[data-field="{key}"]').fill(answers[key])


def _keyboard_archetype(page, keys: str) -> None:
    """Rate by keys only: the first block has the focus; each key rates and moves on."""
    from playwright.sync_api import expect

    expect(_block(page, "content_pass")).to_be_focused()
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")


ARCH_ANSWERS = {
    "alice": [
        {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5,
         "confidence": 4, "audio_quality_comment": "a slight hiss"},
        {"content_pass": False},
        {"content_pass": True, "audio_quality": 2, "human_likeness": 2, "appropriateness": 1},
    ],
    "bob": [  # by keyboard: 1 = pass, then the three scales, then confidence
        {"content_pass": True, "audio_quality": 5, "human_likeness": 4, "appropriateness": 3,
         "confidence": 2},
        {"content_pass": False},
        {"content_pass": True, "audio_quality": 1, "human_likeness": 1, "appropriateness": 1,
         "confidence": 5},
    ],
    "carol": [
        {"content_pass": True, "audio_quality": 3, "human_likeness": 3, "appropriateness": 3},
        {"content_pass": True, "audio_quality": 4, "human_likeness": 5, "appropriateness": 4,
         "confidence": 3},
        {"content_pass": False},
    ],
}  # fmt: skip


def _realism(accuracy: int, intensity=None, transition=None, base: int = 4) -> dict:
    out = dict.fromkeys(REALISM_DIMENSIONS, base)
    out.update({"emotion_accuracy": accuracy, INTENSITY: intensity, TRANSITION: transition})
    return out


REAL_ANSWERS = {
    "alice": [_realism(2), _realism(3, 3, 3, base=3)],
    "bob": [_realism(4, 2), _realism(5, 5, 5, base=5)],
    "carol": [_realism(4, 4, 3), _realism(1, base=2)],
}


def _store_answers(campaign, rater: str) -> list[dict]:
    """The rater's stored answers in order of arrival, as the page would send them."""
    out = []
    for r in campaign.ratings(kinds=("regular", "repeat", "gold")):
        if r.rater != rater:
            continue
        a = r.answers
        got = {k: v for k, v in a.scores.items() if v is not None}
        if a.content_pass is not None:
            got["content_pass"] = a.content_pass
        if a.confidence is not None:
            got["confidence"] = a.confidence
        got.update({k: v for k, v in a.comments.items() if v})
        out.append(got)
    return out


def _wanted(answers: dict) -> dict:
    return {k: v for k, v in answers.items() if v is not None}


def test_three_raters_rate_an_archetype_campaign(browser, tmp_path) -> None:
    from playwright.sync_api import expect

    campaign, admin = make_campaign(tmp_path, "archetype", n=3, k=3, seconds=(2.0, 35.0))
    tokens = {name: campaign.add_rater(name) for name in ARCH_ANSWERS}
    SHOTS.mkdir(exist_ok=True)
    page_shot, dash_shot = SHOTS / "archetype_rating_page.png", SHOTS / "dashboard.png"
    with serving(campaign) as url:
        # alice: mouse; Content Pass failed on clip 2; closes the tab on clip 3 and comes back
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = _open(ctx, f"{url}/r/{tokens['alice']}")
        expect(page.locator("#progress")).to_have_text("clip 1 · 0 rated")
        _audio_plays(page)
        assert "lighthouse keeper" in page.locator("#context").inner_text()
        assert page.locator("#submit").is_disabled()
        first, second, third = ARCH_ANSWERS["alice"]
        _rate_archetype(page, first)
        expect(page.locator("#missing")).to_have_text("Ready to submit.")
        page.screenshot(path=str(page_shot), full_page=True)
        _submit(page, 1)
        _click(page, "content_pass", False)
        for key in ("audio_quality", "human_likeness", "appropriateness", "confidence"):
            assert _disabled(page, key), key
            assert "Content Pass failed" in _block(page, key).locator(".status").inner_text()
        _click(page, "content_pass", True)  # changing one's mind enables them again
        assert not _disabled(page, "audio_quality") and page.locator("#submit").is_disabled()
        _click(page, "audio_quality", 5)
        _click(page, "content_pass", False)  # ... and failing clears the quality answer
        assert page.locator("#submit").is_enabled()
        _submit(page, 2)
        _click(page, "content_pass", True)
        _click(page, "audio_quality", 2)
        page.close()  # mid-clip
        page = _open(ctx, f"{url}/r/{tokens['alice']}")
        expect(page.locator("#progress")).to_have_text("clip 3 · 2 rated")
        assert _block(page, "audio_quality").locator("input:checked").get_attribute("value") == "2"
        _click(page, "human_likeness", third["human_likeness"])
        _click(page, "appropriateness", third["appropriateness"])
        _submit(page, 3, done=True)
        expect(page.locator("#done")).to_be_visible()
        ctx.close()

        # bob: keyboard only; a fresh browser (no draft) resumes from the link too
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = _open(ctx, f"{url}/r/{tokens['bob']}")
        _keyboard_archetype(page, "15432")
        expect(page.locator("#progress")).to_have_text("clip 2 · 1 rated", timeout=30_000)
        page.keyboard.press("0")  # Content Pass failed: Enter submits right away
        assert _disabled(page, "audio_quality")
        page.keyboard.press("Enter")
        expect(page.locator("#progress")).to_have_text("clip 3 · 2 rated", timeout=30_000)
        page.keyboard.press("1")
        page.keyboard.press("Enter")  # incomplete: nothing is sent
        assert page.locator("#submit").is_disabled()
        page.keyboard.press("ArrowUp")
        expect(_block(page, "content_pass")).to_be_focused()
        page.keyboard.press("ArrowDown")
        expect(_block(page, "audio_quality")).to_be_focused()
        page.keyboard.type("1115")
        page.keyboard.press("Enter")
        expect(page.locator("#done")).to_be_visible(timeout=30_000)
        ctx.close()

        # carol: mouse, with a network error on clip 1 and a double click on clip 2
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = _open(ctx, f"{url}/r/{tokens['carol']}")
        _rate_archetype(page, ARCH_ANSWERS["carol"][0])
        page.route("**/rating", lambda route: route.abort())
        page.locator("#submit").click()
        expect(page.locator("#error")).to_be_visible()
        assert "answers are kept" in page.locator("#error-text").inner_text()
        assert _block(page, "human_likeness").locator("input:checked").get_attribute("value") == "3"
        page.unroute("**/rating")
        page.locator("#retry").click()
        expect(page.locator("#progress")).to_have_text("clip 2 · 1 rated", timeout=30_000)
        _rate_archetype(page, ARCH_ANSWERS["carol"][1])
        page.locator("#submit").dblclick()
        expect(page.locator("#progress")).to_have_text("clip 3 · 2 rated", timeout=30_000)
        _rate_archetype(page, ARCH_ANSWERS["carol"][2])
        _submit(page, 3, done=True)

        # the dashboard
        page.goto(f"{url}/admin?token={admin}", timeout=60_000)
        expect(page.locator("h1")).to_have_text("Campaign dashboard (archetype)")
        page.wait_for_function(
            "[...document.images].length >= 2 && [...document.images].every(i => i.naturalWidth)",
            timeout=30_000,
        )
        assert "Audio Quality" in page.locator("main").inner_text()
        page.screenshot(path=str(dash_shot), full_page=True)
        ctx.close()
    print(f"screenshots: {page_shot} {dash_shot}")
    for name, wanted in ARCH_ANSWERS.items():
        assert _store_answers(campaign, name) == [_wanted(a) for a in wanted], name
    assert len(campaign.ratings()) == 9
    campaign.close()


def test_realism_gating_in_the_browser(browser, tmp_path) -> None:
    from playwright.sync_api import expect

    campaign, _ = make_campaign(tmp_path, "realism", n=2, k=3)
    tokens = {name: campaign.add_rater(name) for name in REAL_ANSWERS}
    SHOTS.mkdir(exist_ok=True)
    shot, scrolled = SHOTS / "realism_rating_page.png", SHOTS / "realism_scrolled.png"
    with serving(campaign) as url:
        for name, clips in REAL_ANSWERS.items():
            ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
            page = _open(ctx, f"{url}/r/{tokens[name]}")
            assert "Transcript" in page.locator("#context").inner_text()
            for n, answers in enumerate(clips, 1):
                assert _disabled(page, INTENSITY) and _disabled(page, TRANSITION)
                for dim in REALISM_DIMENSIONS:
                    if answers[dim] is None:
                        continue
                    _click(page, dim, answers[dim])
                    if dim == "emotion_accuracy":
                        assert _disabled(page, INTENSITY) == (answers[dim] < 3)
                    if dim == INTENSITY:
                        assert _disabled(page, TRANSITION) == (answers[dim] < 3)
                for dim in (INTENSITY, TRANSITION):
                    if answers[dim] is None:
                        assert _disabled(page, dim)
                        assert "N/A" in _block(page, dim).locator(".status").inner_text()
                if name == "bob" and n == 1:
                    page.screenshot(path=str(shot), full_page=True)
                    _block(page, "local_story_fit").focus()  # the player stays in view
                    page.screenshot(path=str(scrolled))
                    assert page.locator("#audio").is_visible()
                    box = page.locator("#audio").bounding_box()
                    assert box is not None and box["y"] < 80
                    _click(page, "emotion_accuracy", 1)  # gates both; then back to 4
                    assert _disabled(page, INTENSITY) and _disabled(page, TRANSITION)
                    _click(page, "emotion_accuracy", 4)
                    _click(page, INTENSITY, 2)
                page.locator('textarea[data-field="comments"]').fill(f"{name} clip {n}")
                _submit(page, n, done=n == len(clips))
            expect(page.locator("#done")).to_be_visible()
            ctx.close()
    print(f"screenshots: {shot} {scrolled}")
    for name, clips in REAL_ANSWERS.items():
        wanted = [{**_wanted(a), "comments": f"{name} clip {n}"} for n, a in enumerate(clips, 1)]
        assert _store_answers(campaign, name) == wanted, name
        for r in campaign.ratings():
            if r.rater == name and r.answers.scores["emotion_accuracy"] < 3:
                assert r.answers.gated == {INTENSITY, TRANSITION}
    campaign.close()
