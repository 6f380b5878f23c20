"""Generate the offline demo release in the official EvalBench raw format.

    python dataset_scripts/make_demo_release.py --out build/demo_release [--seed 0] [--workers 2]

Real speech from Debian packages plus offline TTS renderings in English and Mandarin (Chinese
texts spoken by espeak-ng's pinyin voice; pypinyin converts them), labelled by simulated
annotators: synthetic proxy labels, not human ratings. See `speech_drame.demo`.
"""

import argparse
import json
import sys
from pathlib import Path

from speech_drame.cli import guarded
from speech_drame.demo.release import make_release

OFFICIAL_SAMPLES = Path(__file__).resolve().parents[1] / "official_samples"  # the repository's copy


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything (default 0)")
    parser.add_argument("--workers", type=int, default=2, help="rendering processes (default 2)")
    parser.add_argument(
        "--limit", type=int, default=None, help="at most this many records per config/split"
    )
    parser.add_argument(
        "--official-samples",
        type=Path,
        default=OFFICIAL_SAMPLES,
        help="official samples folder whose realism clip joins the real speech "
        "(default: the repository's official_samples/)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args()
    summary = make_release(
        args.out,
        args.seed,
        args.workers,
        args.limit,
        args.official_samples,
        progress=not args.no_progress,
    )
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))  # a missing package or clip: one error line, exit 2
