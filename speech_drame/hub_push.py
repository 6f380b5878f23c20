"""Pushing a folder to a Hub repo, shared by DRAME-Eval's ``train.py --push_to_hub``,
``speech-drame train-lite --push-to-hub``, ``build --push-to-hub``/``push-dataset`` and
``push-metric``: access checked before the long work, then the listing of exactly what is
uploaded (all a dry run does), then one commit of those files.

:func:`push_folder` is the one upload path; :func:`push_lite_scorer` feeds it a ``train-lite``
output folder with its model card (:func:`speech_drame.model_card.render_lite_model_card`),
:func:`push_dataset` a built dataset folder (to a dataset repo),
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


CLI_TOKEN_HINT = "set HF_TOKEN or run `hf auth login`"


def cli_push_token(repo_id: str, push: str, dry_run: bool) -> str | None:
    """For a CLI push named ``push`` (an option or a command): refuse a ``repo_id`` that is not
    ``ORG/NAME``; the checked token of a real push (:func:`check_push_access`), ``None`` for a
    dry run, which needs none."""
    from .scorers.drame_eval import HUB_ID

    if not HUB_ID.fullmatch(repo_id):
        raise ValueError(f"{push} needs a Hub id ORG/NAME, not {repo_id!r}")
    if dry_run:
        return None
    return check_push_access(repo_id, PushFlags(push, "--dry-run", CLI_TOKEN_HINT))


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
    prefix = {"space": "spaces/", "dataset": "datasets/"}.get(repo_type, "")
    url = f"{constants.ENDPOINT}/{prefix}{repo_id}"
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
    """Upload exactly ``files`` (relative to ``folder``) to the Hub repo ``repo_id`` in one
    commit.

    The repo is created if needed; files on the Hub under a folder of ``replace_under`` that
    this push does not have (left by an earlier run) are deleted in the same commit. With
    ``dry_run`` only :func:`describe_push` is printed and nothing is sent. Returns the commit
    URL (``None`` for a dry run). ``repo_type`` is ``"model"``, ``"dataset"`` (a built
    dataset) or ``"space"`` (with its ``space_sdk``: ``speech-drame push-metric``).
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


def push_lite_scorer(
    out_dir: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Push a ``train-lite`` output folder to ``repo_id`` in one commit, as
    :func:`~speech_drame.scorers.lite_publish.stage_lite_scorer` publishes it (model card, local
    paths reduced to names); scorer folders an earlier push left and this one lacks are
    deleted. The card is also written to ``out_dir/README.md``, dry run or not. Returns the
    commit URL (``None`` for a dry run)."""
    import tempfile

    from .atomic_io import write_bytes
    from .schema import CONFIGS
    from .scorers.lite_publish import CARD, stage_lite_scorer

    with tempfile.TemporaryDirectory(prefix="lite-push-") as stage:
        files = stage_lite_scorer(out_dir, stage, repo_id)
        write_bytes(Path(out_dir, CARD), Path(stage, CARD).read_bytes())
        return push_folder(
            stage,
            files,
            repo_id,
            dry_run=dry_run,
            commit_message=LITE_COMMIT_MESSAGE,
            replace_under=CONFIGS,
            private=private,
            token=token,
        )


DATASET_COMMIT_MESSAGE = "Upload Speech-DRAME dataset (speech-drame build)"
DATASET_CARD = "README.md"


def dataset_push_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a built dataset folder that a push uploads: the card ``README.md``,
    ``build_report.json`` and every parquet shard the card's configs list.

    Raises:
        FileNotFoundError: ``folder`` is not a complete build: no ``build_report.json`` or card,
            a card without configs, or a listed shard missing.
    """
    from huggingface_hub.repocard import metadata_load

    from .data.build import REPORT_FILE

    root = Path(folder)
    card = root / DATASET_CARD
    absent = [name for name in (REPORT_FILE, DATASET_CARD) if not (root / name).is_file()]
    if absent:
        raise FileNotFoundError(
            f"{root}: not a complete dataset build (no {' or '.join(absent)}); "
            "build it with `speech-drame build`"
        )
    shards = [
        Path(path)
        for config in (metadata_load(card) or {}).get("configs", [])
        for split in config.get("data_files", [])
        for path in split["path"]
    ]
    missing = [str(root / f) for f in shards if not (root / f).is_file()]
    if not shards or missing:
        raise FileNotFoundError(
            f"{root}: not a complete dataset build: "
            + (f"missing {', '.join(missing)}" if missing else f"{card} lists no parquet files")
        )
    return [Path(DATASET_CARD), Path(REPORT_FILE), *sorted(shards)]


def push_dataset(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Push a built dataset folder (:func:`dataset_push_files`) to the Hub dataset repo
    ``repo_id`` in one commit, after which ``load_dataset(repo_id, "realism")`` loads it; shards
    of an earlier push that this build lacks are deleted. Returns the commit URL (``None`` for
    a dry run)."""
    from .schema import CONFIGS

    return push_folder(
        folder,
        dataset_push_files(folder),
        repo_id,
        dry_run=dry_run,
        commit_message=DATASET_COMMIT_MESSAGE,
        replace_under=CONFIGS,
        private=private,
        token=token,
        repo_type="dataset",
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
        RuntimeError: the wheel build failed.
    """
    import shutil

    from .source_wheel import build_wheel

    root, target = Path(folder), Path(target)
    for name in metric_space_files(root):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target / name)
    build_wheel(target)
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
