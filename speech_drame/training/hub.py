"""The Hub push of an exported evaluator: access checked before training, then the listing of
exactly what is uploaded, then one commit of those files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from . import SetupError
from .export import PREDICTIONS_DIR

COMMIT_MESSAGE = "Upload DRAME-Eval evaluator (speech-drame train.py)"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_push_access(repo_id: str, token: str | None = None) -> str:
    """The token to push ``repo_id`` with, checked against the Hub (``whoami``) before training.

    ``token`` defaults to the one ``huggingface_hub`` finds (``HF_TOKEN``, ``hf auth login``).

    Raises:
        SetupError: offline mode, no token, a token the Hub rejects or that is read-only, a
            namespace that is neither the token's user nor one of its organisations, or an
            endpoint that cannot be reached.
    """
    import httpx2  # huggingface_hub 2's HTTP client: its transport errors
    from huggingface_hub import HfApi, constants, get_token
    from huggingface_hub.errors import HfHubHTTPError

    endpoint = constants.ENDPOINT
    if constants.HF_HUB_OFFLINE:
        raise SetupError(
            "--push_to_hub needs the network, but HF_HUB_OFFLINE is set: unset it, or use "
            "--push_dry_run to list the files"
        )
    token = token or get_token()
    if not token:
        raise SetupError(
            "--push_to_hub needs a Hugging Face token with write access: set HF_TOKEN, run "
            "`hf auth login` or pass --hub_token (or use --push_dry_run)"
        )
    try:
        me = HfApi(endpoint=endpoint, token=token).whoami()
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        if status == 401:
            raise SetupError(
                f"the Hugging Face token was rejected by {endpoint} (401): set a valid HF_TOKEN "
                "or --hub_token"
            ) from None
        raise SetupError(f"cannot check the token at {endpoint}: {_first_line(exc)}") from None
    except httpx2.TransportError as exc:
        raise SetupError(
            f"cannot reach {endpoint} ({type(exc).__name__}: {_first_line(exc)}): check the "
            "network or HF_ENDPOINT, or use --push_dry_run"
        ) from None
    user = me.get("name", "?")
    if me.get("auth", {}).get("accessToken", {}).get("role") == "read":
        raise SetupError(
            f"the Hugging Face token of {user} is read-only: --push_to_hub needs write access"
        )
    namespace = repo_id.split("/")[0]
    owners = {user} | {org.get("name") for org in me.get("orgs", [])}
    if namespace not in owners:
        raise SetupError(
            f"{user} cannot push to {repo_id}: {namespace} is neither that user nor one of its "
            f"organisations ({', '.join(sorted(o for o in owners if o))})"
        )
    return token


def describe_push(folder: str | os.PathLike, files: Sequence[Path], repo_id: str) -> str:
    """The listing of a push: target repo, then one line per file with its size in bytes."""
    from huggingface_hub import constants

    root = Path(folder)
    sizes = [(f.as_posix(), (root / f).stat().st_size) for f in files]
    total = sum(s for _, s in sizes)
    lines = [f"target: {constants.ENDPOINT}/{repo_id} (model repo)"]
    lines.append(f"files: {len(sizes)}, {total} bytes")
    lines += [f"{size:>14d}  {name}" for name, size in sizes]
    return "\n".join(lines)


def push_evaluator(
    folder: str | os.PathLike,
    files: Sequence[Path],
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Upload exactly ``files`` of ``folder`` to the model repo ``repo_id`` in one commit.

    The repo is created if needed; files under ``predictions/`` on the Hub that this export
    does not have (splits of an earlier run) are deleted in the same commit. With ``dry_run``
    only :func:`describe_push` is printed and nothing is sent. Returns the commit URL.
    """
    print(("push dry run\n" if dry_run else "pushing\n") + describe_push(folder, files, repo_id))
    if dry_run:
        return None
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    names = [f.as_posix() for f in files]
    stale = [
        path
        for path in api.list_repo_files(repo_id, repo_type="model")
        if path.startswith(f"{PREDICTIONS_DIR}/") and path not in names
    ]
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(Path(folder) / name))
        for name in names
    ] + [CommitOperationDelete(path_in_repo=path) for path in stale]
    commit = api.create_commit(
        repo_id, operations, commit_message=COMMIT_MESSAGE, repo_type="model"
    )
    print(f"pushed: {commit.commit_url}")
    return str(commit.commit_url)
