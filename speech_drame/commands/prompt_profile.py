"""`speech-drame prompt-profile`: print the default prompt profile, or check a profile file.

``show`` prints the default profile (a starting point for a checkpoint's own), or a given
file, with its paraphrases inline: a file that stands alone; ``check FILE`` validates a file and prints its name
and digest, or refuses naming the field at fault (exit 2).
"""

from __future__ import annotations

import argparse
import json


def show(args: argparse.Namespace) -> int:
    from ..prompt_profile import default_profile, load_profile

    profile = default_profile() if args.file is None else load_profile(args.file)
    print(json.dumps(profile.to_dict(), indent=2, ensure_ascii=False))
    return 0


def check(args: argparse.Namespace) -> int:
    from ..prompt_profile import load_profile

    profile = load_profile(args.file)
    dims = "; ".join(f"{c}: {len(profile.dimensions(c))} dimensions" for c in profile.configs())
    print(
        f"{args.file}: prompt profile {profile.label} is usable ({dims}; orders "
        f"{', '.join(profile.orders)}, default {profile.default_order})"
    )
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("prompt-profile", help=__doc__.split("\n")[0].split(": ", 1)[1])
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("show", help="print the default prompt profile (or FILE, checked)")
    p.add_argument("file", nargs="?", metavar="FILE", help="a profile file (default: the default)")
    p.set_defaults(func=show)
    p = sub.add_parser("check", help="validate a prompt profile file; errors name the field")
    p.add_argument("file", metavar="FILE", help="the profile file (.json, .yaml or .yml)")
    p.set_defaults(func=check)
