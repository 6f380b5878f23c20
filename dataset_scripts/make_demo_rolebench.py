"""Render the demo RoleBench (offline TTS systems over the demo scenarios) and benchmark them.

Prints the leaderboard and the paths of the reports and plots (`speech-drame bench`).
Needs the trained default LiteScorer (`make demo` trains it) or --scorer SPEC (any scorer,
e.g. drame-eval:FOLDER).
"""

from __future__ import annotations

import argparse
import sys

from speech_drame.cli import guarded
from speech_drame.cli import main as cli_main
from speech_drame.rolebench.demo import render_demo_rolebench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/demo_rolebench", help="output folder")
    parser.add_argument("--scenarios", type=int, default=12, help="archetype scenarios to use")
    parser.add_argument(
        "--scorer", metavar="SPEC", help="scorer spec or LiteScorer folder (default: lite)"
    )
    parser.add_argument("--workers", type=int, default=2, help="clips analysed in parallel")
    args = parser.parse_args()
    scenario_file, systems = render_demo_rolebench(args.out, args.scenarios)
    argv = ["bench", "--scenarios", str(scenario_file), "--out", f"{args.out}/run",
            "--workers", str(args.workers)]  # fmt: skip
    for name, folder in systems.items():
        argv += ["--system", f"{name}={folder}"]
    if args.scorer:
        argv += ["--scorer", args.scorer]
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(guarded(main))
