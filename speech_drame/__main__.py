"""``python -m speech_drame``: the ``speech-drame`` command line."""

import sys

from speech_drame.cli import main

sys.exit(main())
