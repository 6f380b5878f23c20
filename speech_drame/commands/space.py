"""`speech-drame space`: assemble the Gradio Space as a deployable folder, and push it to the Hub.

``space bundle --out DIR [--scorer SPEC]`` writes a complete Space (app, card, requirements,
Debian packages, the package wheel, the scorer; :mod:`speech_drame.space_bundle`);
``space push DIR ORG/NAME`` uploads it in one commit (``--dry-run`` lists the files only).
"""

from __future__ import annotations

import argparse

from ..scorers.specs import SPEC_HELP, parse_spec
from ..space_bundle import TORCH_CPU_INDEX
from .options import add_upload_options


def run_bundle(args: argparse.Namespace) -> int:
    from speech_drame.space_bundle import bundle_space

    parse_spec(args.scorer)  # a malformed spec stops here
    files = bundle_space(
        args.out, args.scorer, torch_index=args.torch_index, overwrite=args.overwrite
    )
    print(f"Space bundle: {args.out} ({len(files)} files)")
    for name in files:
        print(f"  {name.as_posix()}")
    print(f"try it: cd {args.out} && pip install -r requirements.txt && python app.py")
    print(f"deploy it: speech-drame space push {args.out} ORG/NAME")
    return 0


def run_push(args: argparse.Namespace) -> int:
    from speech_drame.hub.access import cli_push_token
    from speech_drame.hub.push import push_folder
    from speech_drame.space_bundle import SCORER_FOLDER, bundle_files

    files = bundle_files(args.folder)  # not a bundle: refused before any request
    token = cli_push_token(args.repo_id, "space push", args.dry_run)
    push_folder(
        args.folder,
        files,
        args.repo_id,
        dry_run=args.dry_run,
        commit_message="Upload Speech-DRAME Space (speech-drame space push)",
        replace_under=(SCORER_FOLDER,),
        private=args.private or None,
        token=token,
        repo_type="space",
        space_sdk="gradio",
    )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("space", help=__doc__.split("\n")[0].split(": ", 1)[1])
    sub = parser.add_subparsers(dest="space_command", required=True, metavar="ACTION")

    bundle = sub.add_parser("bundle", help="write a complete, deployable Space folder")
    bundle.add_argument("--out", required=True, help="the Space folder to write")
    bundle.add_argument(
        "--scorer", default="lite", metavar="SPEC", help=f"the Space's scorer: {SPEC_HELP}"
    )
    bundle.add_argument(
        "--torch-index",
        default=TORCH_CPU_INDEX,
        metavar="URL",
        help="package index of torch's CPU build, written to requirements.txt; '' for none "
        "(torch from the default index, e.g. a machine whose pip already finds a CPU build)",
    )
    bundle.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    bundle.set_defaults(func=run_bundle)

    push = sub.add_parser("push", help="upload a Space bundle to a Hub Space in one commit")
    push.add_argument("folder", metavar="DIR", help="a folder written by `space bundle`")
    push.add_argument("repo_id", metavar="ORG/NAME", help="the Hub Space to create or update")
    add_upload_options(push, "Space", "list the files and sizes; send nothing")
    push.set_defaults(func=run_push)
