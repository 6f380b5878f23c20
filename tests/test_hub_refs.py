"""The one Hub reference parser (speech_drame.hub.refs), the deprecated LiteEvaluator name and
the error kind of a push that cannot happen."""

from __future__ import annotations

import warnings

import pytest

from speech_drame.errors import HubAccessError, SetupError
from speech_drame.hub.refs import HubRef, is_repo_id, parse_ref, parse_url


@pytest.mark.parametrize("text", ["org/name", "Org-1/na.me_2", "o/n"])
def test_repo_ids(text: str) -> None:
    assert is_repo_id(text)
    assert parse_ref(text) == HubRef(text)


@pytest.mark.parametrize(
    "text", ["name", "./org/name", "/org/name", "~/org/name", "a/b/c", "-org/name", "org/"]
)
def test_not_repo_ids(text: str) -> None:
    assert not is_repo_id(text)
    assert parse_ref(text) is None


def test_revision_and_type() -> None:
    ref = parse_ref("org/name@v1.0/x", "dataset")
    assert ref == HubRef("org/name", "v1.0/x", "dataset")
    assert str(ref) == "org/name@v1.0/x" and str(HubRef("org/name")) == "org/name"
    assert ref.url_path == "datasets/org/name"
    assert HubRef("o/n", repo_type="space").url_path == "spaces/o/n"
    assert HubRef("o/n").url_path == "o/n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hf://datasets/org/name", HubRef("org/name", None, "dataset")),
        ("hf://datasets/org/name/", HubRef("org/name", None, "dataset")),
        ("hf://models/org/name@abc123", HubRef("org/name", "abc123", "model")),
        ("hf://spaces/org/name", HubRef("org/name", None, "space")),
        ("hf://buckets/org/name", None),
        ("hf://datasets/org", None),
        ("hf://datasets/a/b/c", None),
        ("org/name", None),
    ],
)
def test_urls(text: str, expected: HubRef | None) -> None:
    assert parse_url(text) == expected


def test_hub_source_uses_the_parser() -> None:
    from speech_drame.data.hub_source import hub_repo_id

    assert hub_repo_id("hf://datasets/org/name/") == "org/name"
    with pytest.raises(ValueError, match="expected hf://datasets/ORG/NAME"):
        hub_repo_id("hf://datasets/org/name@v1")  # the revision is --revision's


def test_hub_access_error_is_a_setup_error_and_a_value_error() -> None:
    assert issubclass(HubAccessError, SetupError) and issubclass(HubAccessError, ValueError)
    assert HubAccessError("x").kind == "setup"


def test_lite_evaluator_is_a_deprecated_alias_of_the_scorer() -> None:
    import speech_drame.scorers.lite
    from speech_drame.scorers.lite import LiteScorer

    for _ in range(2):  # every use warns, not only the first
        with pytest.warns(DeprecationWarning, match="LiteEvaluator is deprecated") as seen:
            assert speech_drame.scorers.lite.LiteEvaluator is LiteScorer
        assert seen[0].filename == __file__
    with pytest.warns(DeprecationWarning):
        from speech_drame.scorers.lite.scorer import LiteEvaluator
    assert LiteEvaluator is LiteScorer
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert speech_drame.scorers.lite.LiteScorer is LiteScorer  # the new name never warns
