"""Build sources: a local release folder, or a release published as a Hub dataset.

A source names the Hub when it is ``hf://datasets/ORG/NAME``, or when it is ``ORG/NAME`` and
no such local path exists. A Hub release is fetched by :mod:`speech_drame.hub.fetch`
(``huggingface_hub.snapshot_download``) into the Hub cache (resumed and reused across builds; offline with ``HF_HUB_OFFLINE=1`` when
already cached) and built from the cached snapshot, whose files link to the cache's blobs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..hub.fetch import DEFAULT_REVISION, fetch_dataset
from ..hub.refs import is_repo_id, parse_url

HF_PREFIX = "hf://datasets/"
FORMS = "a release folder, ORG/NAME or hf://datasets/ORG/NAME"


@dataclass(frozen=True)
class ReleaseSource:
    """A release folder ready to read.

    ``boundary`` is the folder its audio must resolve into (the release folder, or the Hub cache
    folder of the repository, which holds the blobs the snapshot links to); ``hub`` is
    ``{"repo_id", "revision" (requested), "commit" (resolved sha)}`` for a Hub source.
    """

    path: Path
    boundary: Path
    hub: dict[str, str] | None = None


def hub_repo_id(source: str | os.PathLike) -> str | None:
    """The Hub dataset id that ``source`` names, or ``None`` for a local path."""
    text = os.fspath(source)
    if text.startswith(HF_PREFIX):
        ref = parse_url(text)
        if ref is None or ref.revision is not None:
            raise ValueError(f"source {text!r}: expected hf://datasets/ORG/NAME")
        return ref.repo_id
    if Path(text).exists() or not is_repo_id(text):
        return None
    return text


def open_source(
    source: str | os.PathLike,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> ReleaseSource:
    """Resolve ``source`` to a release folder, downloading it first when it names the Hub.

    Raises:
        FileNotFoundError: neither an existing folder nor an available Hub dataset.
        ValueError: ``revision`` given for a local folder.
    """
    repo_id = hub_repo_id(source)
    if repo_id is not None:
        return download_release(repo_id, revision, cache_dir)
    path = Path(source).resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"release folder not found: {source} (expected {FORMS})")
    if revision is not None:
        raise ValueError(f"--revision {revision}: {source} is a local folder, not a Hub dataset")
    return ReleaseSource(path, path)


def download_release(
    repo_id: str, revision: str | None = None, cache_dir: str | os.PathLike | None = None
) -> ReleaseSource:
    """Download (or find in the Hub cache) the dataset repository ``repo_id`` at ``revision``
    (default: the main branch) and return its snapshot folder with the commit it resolved to
    (:func:`speech_drame.hub.fetch.fetch_dataset`)."""
    hint = f"; no local folder {repo_id} either (expected {FORMS})"
    snapshot = fetch_dataset(repo_id, revision, cache_dir, not_cached_hint=hint)
    hub = {"repo_id": repo_id, "revision": revision or DEFAULT_REVISION, "commit": snapshot.name}
    return ReleaseSource(snapshot, snapshot.parents[1], hub)
