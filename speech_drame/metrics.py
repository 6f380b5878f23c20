"""The stable import path of the alignment statistics: a re-export of :mod:`speech_drame.stats`.

``evaluate_metric/drame_metric/drame_metric.py`` and users import from here; the code lives in
the :mod:`speech_drame.stats` package.
"""

from speech_drame.stats import *  # noqa: F403
from speech_drame.stats import __all__  # noqa: F401
