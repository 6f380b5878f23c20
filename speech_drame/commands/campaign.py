"""`speech-drame campaign`: run a human rating campaign (create, invite, admin, attach, serve, status, export).

``create`` stores the clips and the assignment settings in a campaign database (a SQLite file or
a SQLAlchemy URL) and prints the admin token; ``invite`` adds a rater and prints their personal
link; ``admin`` replaces the admin token; ``attach`` scores every clip with a scorer, whose
agreement with the ratings the status then shows; ``serve`` runs the rating pages and the
dashboard; ``status`` prints progress, agreement, human ceiling, rater checks and the attached
scorers' agreement; ``export`` writes the ratings as an EvalBench release that
``speech-drame build`` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .options import (
    add_config_option,
    add_label_policy_option,
    add_scorer_options,
    scorer_from_args,
)

_LISTED = 5  # clips left out that the terminal names (the count covers them all)
INVITE_BASE = "http://127.0.0.1:8000"  # `campaign serve` with its default --host and --port


def _open(target: str):
    from ..campaign.store import open_campaign

    return open_campaign(target)


def _check_url(url: str, option: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{option} must start with http:// or https://, got {url!r}")
    return url.rstrip("/")


def run_create(args: argparse.Namespace) -> int:
    from ..campaign.intake import is_dataset_folder, read_clips, read_gold
    from ..campaign.store import create_campaign

    missing: list[str] = []
    audio_out = args.audio_out or (
        None if "://" in args.out else str(Path(args.out).with_name(Path(args.out).name + ".audio"))
    )
    if is_dataset_folder(args.clips) and audio_out is None:
        raise ValueError("--audio-out DIR is needed for a dataset's clips with a database URL")
    clips = read_clips(
        args.clips, args.config, contexts=args.contexts, missing=missing, split=args.split,
        audio_out=audio_out,
    )  # fmt: skip
    for message in missing[:_LISTED]:
        print(f"left out {message}", file=sys.stderr)
    if len(missing) > _LISTED:
        print(f"... and {len(missing) - _LISTED} more left out", file=sys.stderr)
    gold = read_gold(args.gold, args.config) if args.gold else []
    _, token = create_campaign(
        args.out, args.config, clips, gold, args.raters_per_clip, args.repeat_every,
        args.gold_every if gold else 0, args.seed, assign=args.assign,
    )  # fmt: skip
    print(f"created {args.out}: {args.config}, {len(clips)} clips, {len(gold)} gold clips, "
          f"{args.raters_per_clip} raters per clip, dealt {args.assign}; {len(missing)} clip(s) "
          "without audio left out")  # fmt: skip
    if args.assign != "balanced":
        print(f"attach scorers before the raters start (campaign attach {args.out} --scorer "
              f"SPEC): until one is attached, {args.assign} deals as balanced does")  # fmt: skip
    print(f"admin token (shown once; `campaign admin` makes a new one): {token}")
    return 0


def run_invite(args: argparse.Namespace) -> int:
    base = _check_url(args.base_url, "--base-url")
    token = _open(args.campaign).add_rater(args.name)
    print(f"{args.name}: {base}/r/{token}")
    return 0


def run_admin(args: argparse.Namespace) -> int:
    token = _open(args.campaign).rotate_admin_token()
    print(f"admin token (the old one no longer works): {token}")
    return 0


def run_attach(args: argparse.Namespace) -> int:
    from ..campaign.attach import attach_scorer

    campaign = _open(args.campaign)
    scorer = scorer_from_args(args, campaign.config, on_retry=lambda m: print(m, file=sys.stderr))
    report = attach_scorer(
        campaign, scorer, args.scorer, args.name, chunk=args.chunk,
        retry_failed=args.retry_failed, progress=not args.quiet,
    )  # fmt: skip
    entry = report.scorer
    failed_now = ", ".join(f"{k} {n}" for k, n in sorted(report.failed_now.items())) or "none"
    print(f"{entry.name} [{entry.scorer_id}]: {entry.description}")
    print(f"{report.clips} clips: {report.scored_now} scored now (failed: {failed_now}), "
          f"{report.cached} already stored for this scorer id")  # fmt: skip
    failures = sum(report.failures.values())
    print(f"stored: {report.scored} scored, {failures} failed"
          + (" (" + ", ".join(f"{k} {n}" for k, n in sorted(report.failures.items())) + ")"
             if failures else ""))  # fmt: skip
    if report.failures.get("model"):
        print("model failures are scored again by the next `campaign attach` of this scorer",
              file=sys.stderr)  # fmt: skip
    if report.failures.get("input"):
        print("input failures (unreadable audio, no speech, missing context) are kept; "
              "--retry-failed scores them again", file=sys.stderr)  # fmt: skip
    print(f"its agreement with the ratings: speech-drame campaign status {args.campaign}")
    return 1 if failures else 0


def run_serve(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1-65535, got {args.port}")
    root = args.root_path.rstrip("/")
    if root and not root.startswith("/"):
        raise ValueError(f"--root-path must start with '/', got {args.root_path!r}")
    from ..campaign.server import make_app
    from ..campaign.serving import serve

    app = make_app(_open(args.campaign), bootstrap=args.bootstrap, test_share=args.test_share)
    here = f"http://{args.host}:{args.port}{root}"
    print(f"serving {args.campaign} on {here}/ (raters: their `campaign invite` links; "
          f"dashboard: {root}/admin?token=ADMIN_TOKEN)", flush=True)  # fmt: skip
    if here != INVITE_BASE:
        print(f"note: `campaign invite` makes links to {INVITE_BASE} unless told otherwise; for "
              f"this server: campaign invite {args.campaign} --name NAME --base-url {here} "
              "(the public URL, behind a proxy)", flush=True)  # fmt: skip
    serve(app, args.host, args.port, root)
    return 0


def run_status(args: argparse.Namespace) -> int:
    from ..atomic_io import strict_json
    from ..campaign.stats import campaign_status, format_status, write_plots

    report = campaign_status(_open(args.campaign), bootstrap=args.bootstrap, seed=args.seed,
                             label_policy=args.label_policy, test_share=args.test_share)  # fmt: skip
    if args.json:
        print(json.dumps(strict_json(report), indent=2))
    else:
        print(format_status(report))
    if args.plots:
        for path in write_plots(report, args.plots):
            print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ..campaign.export import export_release

    report = export_release(_open(args.campaign), args.out, args.split, args.overwrite,
                            args.test_share)  # fmt: skip
    splits = ", ".join(f"{name} {n}" for name, n in report["splits"].items())
    print(f"wrote {report['out']}: {report['records']} clips ({splits}) rated by "
          f"{len(report['raters'])} raters ({report['ratings']} ratings; "
          f"{report['clips_without_ratings']} clips without ratings left out, "
          f"{report['clips_under_target']} under {report['raters_per_clip']} ratings)")  # fmt: skip
    print(f"build it: speech-drame build --source {report['out']} --out {report['out']}-built "
          "--license ID (the licence your raters' ratings and the clips are under)")  # fmt: skip
    if "train" not in report["splits"]:
        print("to train a scorer on these ratings, export with --test-share 0.2 (train and "
              "test) or --split train")  # fmt: skip
    return 0


def add_test_share_option(parser, where: str = "") -> None:
    """``--test-share F`` of ``status`` and ``serve``: the scorers' figures over the export's
    test clips."""
    parser.add_argument(
        "--test-share",
        type=float,
        metavar="F",
        help=f"{where}the attached scorers' figures over the clips `campaign export --test-share "
        "F` puts in test only (those a scorer trained on the export's train split has not seen)",
    )


def register(subparsers) -> None:
    from ..campaign.assign import ASSIGN_RULES, DEFAULT_RULE

    parser = subparsers.add_parser("campaign", help=__doc__.split("\n")[0].split(": ", 1)[1])
    sub = parser.add_subparsers(dest="campaign_command", required=True, metavar="ACTION")
    target = "campaign database: a SQLite file or a SQLAlchemy URL (postgresql+psycopg://...)"

    create = sub.add_parser("create", help="create a campaign from clips; prints the admin token")
    create.add_argument(
        "--clips",
        required=True,
        metavar="DIR|JSONL|DATASET",
        help="a folder of audio files (with --contexts), a JSONL of clips (an official "
        "release record file, .jsonl or a .json array, is accepted as is), or a built dataset "
        "folder (its --split; clips without audio are left out and counted)",
    )
    create.add_argument("--split", default="test", help="with a dataset folder: the split rated")
    create.add_argument(
        "--audio-out",
        metavar="DIR",
        help="with a dataset folder: where its clips' audio is written (default: C.db.audio "
        "beside a SQLite file)",
    )
    create.add_argument(
        "--contexts",
        metavar="SCENARIOS.jsonl",
        help="with a folder: scenario file (id + context); a file's scenario is its stem",
    )
    add_config_option(create)
    create.add_argument(
        "--raters-per-clip", type=int, required=True, metavar="K", help="ratings wanted per clip"
    )
    create.add_argument(
        "--gold", metavar="GOLD.jsonl", help="attention-check clips with their expected answers"
    )
    create.add_argument(
        "--repeat-every",
        type=int,
        default=10,
        metavar="N",
        help="every N-th task is a hidden repeat of a clip the rater rated (0: never)",
    )
    create.add_argument(
        "--gold-every",
        type=int,
        default=15,
        metavar="M",
        help="with --gold: every M-th task is a gold clip",
    )
    create.add_argument("--seed", type=int, default=0, help="seed of the repeat draws")
    create.add_argument(
        "--assign",
        choices=tuple(ASSIGN_RULES),
        default=DEFAULT_RULE,
        help="which clip a rater gets next, among the least-rated ones (every rule keeps K "
        "raters per clip, the repeats and gold checks, and never shows a score): "
        + "; ".join(f"{k}: {v}" for k, v in ASSIGN_RULES.items()),
    )
    create.add_argument("--out", required=True, metavar="C.db", help=f"the new {target}")
    create.set_defaults(func=run_create)

    invite = sub.add_parser("invite", help="add a rater; prints their personal link")
    invite.add_argument("campaign", metavar="C.db", help=target)
    invite.add_argument("--name", required=True, help="the rater's name (unique)")
    invite.add_argument(
        "--base-url",
        default=INVITE_BASE,
        help="where raters reach the server: `campaign serve`'s --host and --port, or the "
        "public URL with the reverse proxy's prefix",
    )
    invite.set_defaults(func=run_invite)

    admin = sub.add_parser("admin", help="print a new admin token (the old one stops working)")
    admin.add_argument("campaign", metavar="C.db", help=target)
    admin.set_defaults(func=run_admin)

    attach = sub.add_parser(
        "attach",
        help="score every clip with a scorer (resumable; kept by scorer id) to compare it with "
        "the ratings",
    )
    attach.add_argument("campaign", metavar="C.db", help=target)
    attach.add_argument(
        "--name",
        help="its name in the campaign (default: the spec's kind and last path part, e.g. "
        "drame-eval:evaluator)",
    )
    add_scorer_options(attach)
    attach.add_argument(
        "--chunk",
        type=int,
        metavar="N",
        help="clips per scorer call, committed together (default: the scorer's batch size)",
    )
    attach.add_argument(
        "--retry-failed",
        action="store_true",
        help="score input failures again too (model failures always are)",
    )
    attach.add_argument("--quiet", action="store_true", help="no progress bar")
    attach.set_defaults(func=run_attach)

    serve = sub.add_parser("serve", help="serve the rating pages and the dashboard")
    serve.add_argument("campaign", metavar="C.db", help=target)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--root-path",
        default="",
        metavar="/PREFIX",
        help="the URL prefix a reverse proxy serves the campaign under (uvicorn root_path)",
    )
    serve.add_argument(
        "--bootstrap", type=int, default=1000, help="dashboard: bootstrap resamples of intervals"
    )
    add_test_share_option(serve, "dashboard: ")
    serve.set_defaults(func=run_serve)

    status = sub.add_parser("status", help="progress, agreement, ceiling and rater checks")
    status.add_argument("campaign", metavar="C.db", help=target)
    status.add_argument("--json", action="store_true", help="print the report as JSON")
    status.add_argument("--plots", metavar="DIR", help="also write the PNG plots here")
    status.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    status.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    add_label_policy_option(status, "in the statistics")
    add_test_share_option(status)
    status.set_defaults(func=run_status)

    export = sub.add_parser("export", help="write the ratings as an EvalBench release")
    export.add_argument("campaign", metavar="C.db", help=target)
    export.add_argument("--out", required=True, metavar="RELEASE", help="the release folder")
    export.add_argument("--split", default="test", help="the split written")
    export.add_argument(
        "--test-share",
        type=float,
        metavar="F",
        help="deal the clips to train and test instead, a share F in test, by a hash of the clip "
        "id (stable as the campaign grows)",
    )
    export.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    export.set_defaults(func=run_export)
