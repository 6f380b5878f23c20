"""Build the Hub-ready dataset folder from an official-format EvalBench release.

    python dataset_scripts/build_dataset.py --source DIR --out speech-drame

Same as `speech-drame build`; see `speech_drame.data.build.build_dataset`.
"""

import argparse
import sys

from speech_drame.commands.build import add_arguments, run

if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
