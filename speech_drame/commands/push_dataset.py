"""`speech-drame push-dataset`: upload a built dataset folder to a Hub dataset repo.

The card ``README.md``, ``build_report.json`` and the parquet shards go up in one commit, after
which ``load_dataset("ORG/NAME", "realism")`` loads it. ``build --push-to-hub`` does the same
right after a build.
"""

from __future__ import annotations

import argparse

from .options import add_folder_push_command


def run(args: argparse.Namespace) -> int:
    from speech_drame.data.push import dataset_push_files, push_dataset
    from speech_drame.hub.access import cli_push_token

    dataset_push_files(args.folder)  # an incomplete build is refused before any request
    token = cli_push_token(args.repo_id, "push-dataset", args.dry_run)
    push_dataset(
        args.folder, args.repo_id, dry_run=args.dry_run, private=args.private or None, token=token
    )
    return 0


def register(subparsers) -> None:
    add_folder_push_command(
        subparsers,
        "push-dataset",
        __doc__,
        "a folder built by `speech-drame build`",
        "dataset repo",
        run,
    )
