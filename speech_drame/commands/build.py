"""`speech-drame build`: official-format release (folder or Hub dataset) -> Hub-ready dataset folder."""

from __future__ import annotations

import argparse
import sys

from .options import add_push_options, push_token


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        required=True,
        help="release folder with archetype_data/ and realism_data/, or a Hub dataset: "
        "ORG/NAME (when no such local path exists) or hf://datasets/ORG/NAME",
    )
    parser.add_argument(
        "--revision",
        help="branch, tag or commit of a Hub --source (default: the main branch; "
        "the commit it resolved to is recorded in build_report.json)",
    )
    parser.add_argument(
        "--out",
        help="output dataset folder (default: SOURCE-built in the current folder, named after the "
        "source; an earlier build of another source, such as the demo's speech-drame, is "
        "replaced only with --overwrite)",
    )
    parser.add_argument(
        "--audio-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder (archives inside are unpacked) holding audio kept apart from the release; "
        "a record's audio is looked up by the file name of its wav_path, then by its id (and id "
        "plus .wav/.flac/.ogg/.mp3); repeatable. Without audio a record is still a row (audio "
        "null)",
    )
    parser.add_argument(
        "--split-map",
        nargs="*",
        metavar="FILE=SPLIT",
        help="map JSONL file names to splits, e.g. dev.jsonl=test (default: the file name is the split)",
    )
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="drop invalid records (listed in build_report.json) instead of stopping at the first",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier build of another source in --out (a folder that is not an "
        "earlier build is never replaced)",
    )
    parser.add_argument(
        "--license",
        metavar="ID",
        help="Hub licence id for the dataset card, e.g. cc-by-nc-4.0 (default: the licence the "
        "release states: license: in its README.md card, else a LICENSE file; asked for on a "
        "terminal, else an error)",
    )
    parser.add_argument(
        "--license-name",
        metavar="ID",
        help="with --license other: the licence's id on the card, like my-license-1.0",
    )
    parser.add_argument(
        "--license-link",
        metavar="URL",
        help="with --license other: where its terms are (default: the card, which then needs "
        "--source-note stating them)",
    )
    parser.add_argument(
        "--source-note", help="a sentence about the source, shown at the top of the card"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_push_options(
        parser,
        "after the build, upload the folder (card, build_report.json, parquet shards) to this "
        "Hub dataset repo (token access is checked before the build)",
        "build, then list the files and sizes; upload nothing",
    )


def _ask(question: str) -> str:
    """The licence typed at the terminal ("" at end of input)."""
    try:
        return input(question)
    except EOFError:
        return ""


def run(args: argparse.Namespace) -> int:
    from ..data.build import build_dataset, default_output, summarize
    from ..data.release import parse_split_map

    token = push_token(args)
    report = build_dataset(
        args.source,
        args.out or default_output(args.source),
        split_map=parse_split_map(args.split_map),
        skip_invalid=args.skip_invalid,
        overwrite=args.overwrite,
        license_id=args.license,
        license_name=args.license_name,
        license_link=args.license_link,
        source_note=args.source_note,
        progress=not args.quiet,
        revision=args.revision,
        ask_license=_ask if sys.stdin.isatty() else None,
        audio_dirs=args.audio_dir,
    )
    for message in report.cleanup:
        print(message)
    if report.source_hub:
        hub = report.source_hub
        print(f"source: {hub['repo_id']} at {hub['revision']} (commit {hub['commit']})")
    print(f"built {report.output} in {report.seconds_elapsed:.1f} s")
    print(summarize(report))
    lic = report.license
    print(f"licence: {lic['name'] or lic['id']} (from {lic['origin']})")
    if args.push_to_hub is not None:
        from speech_drame.data.push import push_dataset

        push_dataset(
            report.output,
            args.push_to_hub,
            dry_run=args.dry_run,
            private=args.private or None,
            token=token,
        )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("build", help=__doc__.split(": ", 1)[1])
    add_arguments(parser)
    parser.set_defaults(func=run)
