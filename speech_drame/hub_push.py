"""Pushing a folder to a Hub model repo, shared by DRAME-Eval's ``train.py --push_to_hub`` and
``speech-drame train-lite --push-to-hub``: access checked before training, then the listing of
exactly what is uploaded (all a dry run does), then one commit of those files.

:func:`push_folder` is the one upload path; :func:`push_lite_scorer` feeds it a ``train-lite``
output folder with its model card (:func:`speech_drame.model_card.render_lite_model_card`),
:func:`speech_drame.training.hub.push_evaluator` an exported DRAME-Eval evaluator.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .training import SetupError


class HubAccessError(SetupError, ValueError):
    """The push cannot happen as configured (``train.py`` and the CLI both report it)."""


@dataclass(frozen=True)
class PushFlags:
    """The command-line options a push error message points to."""

    push: str
    dry_run: str
    token_hint: str  # how to give a token, e.g. "set HF_TOKEN or run `hf auth login`"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_push_access(repo_id: str, flags: PushFlags, token: str | None = None) -> str:
    """The token to push ``repo_id`` with, checked against the Hub (``whoami``) before training.

    ``token`` defaults to the one ``huggingface_hub`` finds (``HF_TOKEN``, ``hf auth login``).

    Raises:
        HubAccessError: offline mode, no token, a token the Hub rejects or that is read-only,
            a namespace that is neither the token's user nor one of its organisations, or an
            endpoint that cannot be reached.
    """
    import httpx2  # huggingface_hub 2's HTTP client: its transport errors
    from huggingface_hub import HfApi, constants, get_token
    from huggingface_hub.errors import HfHubHTTPError

    endpoint = constants.ENDPOINT
    if constants.HF_HUB_OFFLINE:
        raise HubAccessError(
            f"{flags.push} needs the network, but HF_HUB_OFFLINE is set: unset it, or use "
            f"{flags.dry_run} to list the files"
        )
    token = token or get_token()
    if not token:
        raise HubAccessError(
            f"{flags.push} needs a Hugging Face token with write access: {flags.token_hint} "
            f"(or use {flags.dry_run})"
        )
    try:
        me = HfApi(endpoint=endpoint, token=token).whoami()
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        if status == 401:
            raise HubAccessError(
                f"the Hugging Face token was rejected by {endpoint} (401): {flags.token_hint}"
            ) from None
        raise HubAccessError(f"cannot check the token at {endpoint}: {_first_line(exc)}") from None
    except httpx2.TransportError as exc:
        raise HubAccessError(
            f"cannot reach {endpoint} ({type(exc).__name__}: {_first_line(exc)}): check the "
            f"network or HF_ENDPOINT, or use {flags.dry_run}"
        ) from None
    user = me.get("name", "?")
    if me.get("auth", {}).get("accessToken", {}).get("role") == "read":
        raise HubAccessError(
            f"the Hugging Face token of {user} is read-only: {flags.push} needs write access"
        )
    namespace = repo_id.split("/")[0]
    owners = {user} | {org.get("name") for org in me.get("orgs", [])}
    if namespace not in owners:
        raise HubAccessError(
            f"{user} cannot push to {repo_id}: {namespace} is neither that user nor one of its "
            f"organisations ({', '.join(sorted(o for o in owners if o))})"
        )
    return token


def describe_push(
    folder: str | os.PathLike, files: Sequence[Path], repo_id: str, repo_type: str = "model"
) -> str:
    """The listing of a push: target repo, then one line per file with its size in bytes."""
    from huggingface_hub import constants

    root = Path(folder)
    sizes = [(f.as_posix(), (root / f).stat().st_size) for f in files]
    total = sum(s for _, s in sizes)
    url = f"{constants.ENDPOINT}/{'spaces/' if repo_type == 'space' else ''}{repo_id}"
    lines = [f"target: {url} ({repo_type} repo)"]
    lines.append(f"files: {len(sizes)}, {total} bytes")
    lines += [f"{size:>14d}  {name}" for name, size in sizes]
    return "\n".join(lines)


def push_folder(
    folder: str | os.PathLike,
    files: Sequence[Path],
    repo_id: str,
    *,
    dry_run: bool,
    commit_message: str,
    replace_under: Sequence[str] = (),
    private: bool | None = None,
    token: str | None = None,
    repo_type: str = "model",
    space_sdk: str | None = None,
) -> str | None:
    """Upload exactly ``files`` (relative to ``folder``) to the model repo ``repo_id`` in one
    commit.

    The repo is created if needed; files on the Hub under a folder of ``replace_under`` that
    this push does not have (left by an earlier run) are deleted in the same commit. With
    ``dry_run`` only :func:`describe_push` is printed and nothing is sent. Returns the commit
    URL (``None`` for a dry run). ``repo_type="space"`` (with its ``space_sdk``) pushes to a
    Space instead (``speech-drame push-metric``).
    """
    listing = describe_push(folder, files, repo_id, repo_type)
    print(("push dry run\n" if dry_run else "pushing\n") + listing)
    if dry_run:
        return None
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(token=token)
    api.create_repo(
        repo_id, repo_type=repo_type, private=private, exist_ok=True, space_sdk=space_sdk
    )
    names = [f.as_posix() for f in files]
    prefixes = tuple(f"{p.rstrip('/')}/" for p in replace_under)
    stale = [
        path
        for path in api.list_repo_files(repo_id, repo_type=repo_type)
        if prefixes and path.startswith(prefixes) and path not in names
    ]
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(Path(folder) / name))
        for name in names
    ] + [CommitOperationDelete(path_in_repo=path) for path in stale]
    commit = api.create_commit(
        repo_id, operations, commit_message=commit_message, repo_type=repo_type
    )
    print(f"pushed: {commit.commit_url}")
    return str(commit.commit_url)


LITE_COMMIT_MESSAGE = "Upload LiteScorer (speech-drame train-lite)"
LITE_FLAGS = PushFlags("--push-to-hub", "--dry-run", "set HF_TOKEN or run `hf auth login`")
LITE_CARD = "README.md"


def lite_push_files(out_dir: str | os.PathLike, model_id: str) -> list[Path]:
    """Write the model card ``README.md`` of a ``train-lite`` output folder; return the files
    a push uploads: the card, ``metrics.json`` and each trained config's scorer files.

    Raises:
        FileNotFoundError: no ``metrics.json`` (training did not finish) or a scorer file named
            in it is missing.
    """
    import json

    from .atomic_io import write_text
    from .model_card import lite_data_card, render_lite_model_card
    from .scorers.lite import CONFIG_FILE, WEIGHTS_FILE
    from .scorers.lite_training import METRICS_FILE

    out = Path(out_dir)
    if not (out / METRICS_FILE).is_file():
        raise FileNotFoundError(
            f"{out / METRICS_FILE}: no finished train-lite run to push (train it first)"
        )
    metrics = json.loads((out / METRICS_FILE).read_text(encoding="utf-8"))
    files = [Path(LITE_CARD), Path(METRICS_FILE)]
    versions = {}
    for config in metrics["configs"]:
        scorer = [Path(config, CONFIG_FILE), Path(config, WEIGHTS_FILE)]
        missing = [str(out / f) for f in scorer if not (out / f).is_file()]
        if missing:
            raise FileNotFoundError(f"cannot push {out}: missing {', '.join(missing)}")
        cfg = json.loads((out / scorer[0]).read_text(encoding="utf-8"))
        versions[config] = cfg["feature_versions"]
        files += scorer
    card = render_lite_model_card(
        model_id=model_id,
        metrics=metrics,
        feature_versions=versions,
        data_card=lite_data_card(metrics["dataset"]),
    )
    write_text(out / LITE_CARD, card)
    return files


def push_lite_scorer(
    out_dir: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Push a ``train-lite`` output folder (:func:`lite_push_files`) to ``repo_id`` in one
    commit; scorer folders an earlier push left and this one lacks are deleted. With
    ``dry_run`` the card is still written but only the listing is printed. Returns the commit
    URL."""
    from .schema import CONFIGS

    files = lite_push_files(out_dir, repo_id)
    return push_folder(
        out_dir,
        files,
        repo_id,
        dry_run=dry_run,
        commit_message=LITE_COMMIT_MESSAGE,
        replace_under=CONFIGS,
        private=private,
        token=token,
    )


def metric_space_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a metric Space folder (``evaluate_metric/drame_metric``) that
    ``speech-drame push-metric`` uploads, relative to it and sorted: every file but hidden ones
    and Python caches (``__pycache__``, ``*.pyc``).

    Raises:
        FileNotFoundError: ``folder`` is not a folder or lacks its ``app.py`` or ``README.md``.
    """
    root = Path(folder)
    missing = [name for name in ("README.md", "app.py") if not (root / name).is_file()]
    if not root.is_dir() or missing:
        raise FileNotFoundError(f"{root}: not a metric Space folder (needs README.md and app.py)")
    return sorted(
        path.relative_to(root)
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix != ".pyc"
        and not any(
            part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts
        )
    )


def metric_space_stage(folder: str | os.PathLike, target: str | os.PathLike) -> Path:
    """``target`` filled with the metric Space: the files of ``folder``
    (:func:`metric_space_files`) plus a wheel of this package, built from the checkout, that the
    Space's ``requirements.txt`` installs (a Space cannot see the repository).

    Raises:
        FileNotFoundError: the package is not installed from a source checkout, or
            ``requirements.txt`` names a wheel other than the one built.
        subprocess.CalledProcessError: the wheel build failed.
    """
    import shutil
    import subprocess
    import sys

    import speech_drame

    root, target = Path(folder), Path(target)
    for name in metric_space_files(root):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target / name)
    source = Path(speech_drame.__file__).resolve().parents[1]
    if not (source / "pyproject.toml").is_file():
        raise FileNotFoundError(
            f"{source}: no pyproject.toml; push-metric builds the package wheel from a source "
            "checkout (run it from an editable install of the repository)"
        )
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "wheel", "--no-deps",
         "--no-build-isolation", "--no-index", str(source), "-w", str(target)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    built = {p.name for p in target.glob("speech_drame-*.whl")}
    wanted = {
        line.strip()[2:]
        for line in (target / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("./speech_drame-")
    }
    if not wanted or wanted != built:
        raise FileNotFoundError(
            f"{root / 'requirements.txt'} installs {sorted(wanted) or 'no ./speech_drame-*.whl'}, "
            f"but the build made {sorted(built)}: update the wheel line to the package version"
        )
    return target
