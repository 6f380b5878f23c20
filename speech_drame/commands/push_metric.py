"""`speech-drame push-metric`: upload the drame_metric folder to a Hub metric Space.

The folder's files go up with a wheel of this package, built from the checkout, which the
Space's ``requirements.txt`` installs.
"""

from __future__ import annotations

import argparse
import tempfile

from .options import add_upload_options

METRIC_FOLDER = "evaluate_metric/drame_metric"
COMMIT_MESSAGE = "Upload drame_metric Space (speech-drame push-metric)"


def run(args: argparse.Namespace) -> int:
    from speech_drame.hub.access import cli_push_token
    from speech_drame.hub.push import metric_space_files, metric_space_stage, push_folder

    metric_space_files(args.folder)  # a missing folder is refused before any request
    token = cli_push_token(args.repo_id, "push-metric", args.dry_run)
    with tempfile.TemporaryDirectory(prefix="drame-metric-space-") as tmp:
        stage = metric_space_stage(args.folder, tmp)
        push_folder(
            stage,
            metric_space_files(stage),
            args.repo_id,
            dry_run=args.dry_run,
            commit_message=COMMIT_MESSAGE,
            private=args.private or None,
            token=token,
            repo_type="space",
            space_sdk="gradio",
        )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("push-metric", help=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("repo_id", metavar="ORG/NAME", help="the Hub Space to create or update")
    parser.add_argument(
        "--folder",
        default=METRIC_FOLDER,
        help="the metric Space folder whose files are uploaded (run from the repository root)",
    )
    add_upload_options(
        parser,
        "Space",
        "build the wheel, list the files and their sizes; send nothing (no token needed)",
    )
    parser.set_defaults(func=run)
