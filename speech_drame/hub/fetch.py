"""Reading from the Hub: snapshots of a dataset or a LiteScorer repo, and single files (a
DRAME-Eval checkpoint's config).

Everything goes through ``huggingface_hub``'s cache: a repo already there is read from it (the
only source under ``HF_HUB_OFFLINE=1``), anything else is downloaded (resumed and reused).
"""

from __future__ import annotations

import os
from pathlib import Path

from .refs import HubRef

DEFAULT_REVISION = "main"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def fetch_dataset(
    repo_id: str,
    revision: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    *,
    not_cached_hint: str = "",
) -> Path:
    """The snapshot folder (resolved; its name is the commit) of the Hub dataset ``repo_id`` at
    ``revision`` (default: the main branch).

    Raises:
        FileNotFoundError: no such revision, no such (or no visible) repo, or a repo neither
            cached nor reachable (the message then ends with ``not_cached_hint``).
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    requested = revision or DEFAULT_REVISION
    what = f"Hub dataset {repo_id} (revision {requested})"
    try:
        folder = snapshot_download(
            repo_id, repo_type="dataset", revision=requested, cache_dir=cache_dir
        )
    except RevisionNotFoundError:
        raise FileNotFoundError(f"{what}: no such revision on the Hub") from None
    except RepositoryNotFoundError:
        raise FileNotFoundError(
            f"{what}: not found on the Hub (or private/gated: log in with `hf auth login`)"
        ) from None
    except LocalEntryNotFoundError as exc:  # offline or unreachable, and not (fully) cached
        raise FileNotFoundError(
            f"{what}: not in the Hub cache and the Hub cannot be reached ({exc}){not_cached_hint}"
        ) from None
    return Path(folder).resolve()


def fetch_lite_scorer(ref: HubRef) -> Path:
    """The local snapshot of the Hub LiteScorer repo ``ref`` (revision default ``main``).

    Raises:
        FileNotFoundError: the repo or revision cannot be fetched (and is not cached).
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(ref.repo_id, revision=ref.revision, repo_type="model"))
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as exc:
        raise FileNotFoundError(
            f"cannot fetch the LiteScorer {ref.repo_id}@{ref.revision or DEFAULT_REVISION} "
            f"from the Hub (nor find it in the Hub cache): {_first_line(exc)}"
        ) from None


def fetch_file(repo_id: str, filename: str) -> Path:
    """The local copy of ``filename`` of the model repo ``repo_id`` (main branch).

    Raises:
        FileNotFoundError: it cannot be fetched (and is not cached), with the first line of
            the reason.
    """
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id, filename))
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(_first_line(exc)) from None
