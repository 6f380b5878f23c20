"""The Hub push of an exported evaluator (:mod:`speech_drame.hub` with ``train.py``'s
options): access checked before training, then the listing of exactly what is uploaded, then
one commit of those files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..hub.access import PushFlags
from ..hub.access import check_push_access as _check_push_access
from ..hub.push import push_folder
from .export import PREDICTIONS_DIR

COMMIT_MESSAGE = "Upload DRAME-Eval evaluator (speech-drame train.py)"
FLAGS = PushFlags(
    "--push_to_hub", "--push_dry_run", "set HF_TOKEN, run `hf auth login` or pass --hub_token"
)


def check_push_access(repo_id: str, token: str | None = None) -> str:
    """The token to push ``repo_id`` with (see :func:`speech_drame.hub.access.check_push_access`).

    Raises:
        SetupError: the push cannot happen (the message names ``train.py``'s options).
    """
    return _check_push_access(repo_id, FLAGS, token)


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

    Files under ``predictions/`` on the Hub that this export does not have (splits of an
    earlier run) are deleted in the same commit; ``dry_run`` only lists the files. Returns the
    commit URL.
    """
    return push_folder(
        folder,
        files,
        repo_id,
        dry_run=dry_run,
        commit_message=COMMIT_MESSAGE,
        replace_under=(PREDICTIONS_DIR,),
        private=private,
        token=token,
    )
