"""Build the Hub-ready dataset folder from an official-format EvalBench release.

    python dataset_scripts/build_dataset.py --source DIR --out speech-drame

The command `speech-drame build` itself (same options, output, one-line errors and exit status);
see `speech_drame.data.build.build_dataset`.
"""

import sys

from speech_drame.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", *sys.argv[1:]]))
