"""speech-drame: human-aligned evaluation of spoken role-play (Speech-DRAME and neighbours).

The entry points below are imported on first use (PEP 562), so ``import speech_drame`` loads
neither ``torch`` nor ``datasets``:

- :func:`build_dataset`: an official-format release folder -> a Hub-ready dataset folder
  (:mod:`speech_drame.data.build`);
- :func:`iter_release`: the records of a release folder, file by file
  (:mod:`speech_drame.data.release`);
- :func:`summarize_dataset`: rows, hours and label distributions of a built dataset
  (:mod:`speech_drame.data.summary`);
- :func:`load_scorer`: a scorer from its command-line spec (:mod:`speech_drame.scorers.specs`);
- :func:`alignment_table`: per-dimension agreement of predictions with human ratings
  (:mod:`speech_drame.metrics`).

Subpackages: :mod:`~speech_drame.data` (release -> Hub dataset), :mod:`~speech_drame.features`,
:mod:`~speech_drame.scorers`, :mod:`~speech_drame.training` and :mod:`~speech_drame.audio_llm`
(DRAME-Eval), :mod:`~speech_drame.judges`, :mod:`~speech_drame.protocols` (neighbouring papers),
:mod:`~speech_drame.demo` (the offline demo corpus), :mod:`~speech_drame.templates` (card
templates) and :mod:`~speech_drame.commands` (the ``speech-drame`` command line).
"""

from ._lazy import lazy_attributes

__version__ = "0.1.0"

__all__ = [
    "alignment_table",
    "build_dataset",
    "iter_release",
    "load_scorer",
    "summarize_dataset",
]
_LAZY = {
    "alignment_table": "speech_drame.metrics",
    "build_dataset": "speech_drame.data.build",
    "iter_release": "speech_drame.data.release",
    "load_scorer": "speech_drame.scorers.specs",
    "summarize_dataset": "speech_drame.data.summary",
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
