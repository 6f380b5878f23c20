"""`speech-drame push-lite`: upload a trained LiteScorer folder to a Hub model repo.

The folder ``train-lite --out`` wrote (``archetype/``, ``realism/``, ``metrics.json``) goes up
with its model card in one commit, as ``train-lite --push-to-hub`` does right after training.
"""

from __future__ import annotations

import argparse

from .options import add_folder_push_command


def run(args: argparse.Namespace) -> int:
    from speech_drame.hub.access import cli_push_token
    from speech_drame.scorers.lite.publish import push_lite_scorer
    from speech_drame.scorers.lite.training import read_reports

    read_reports(args.folder)  # an unfinished training run is refused before any request
    token = cli_push_token(args.repo_id, "push-lite", args.dry_run)
    push_lite_scorer(
        args.folder, args.repo_id, dry_run=args.dry_run, private=args.private or None, token=token
    )
    return 0


def register(subparsers) -> None:
    add_folder_push_command(
        subparsers,
        "push-lite",
        __doc__,
        "a folder `speech-drame train-lite --out` wrote",
        "model repo",
        run,
    )
