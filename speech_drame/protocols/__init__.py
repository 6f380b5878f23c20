"""Evaluation protocols of neighbouring papers, each in its own subpackage.

- :mod:`.paraling`: SpeechParaling-Bench (candidate vs baseline, paralinguistic dimensions);
- :mod:`.trace`: TRACE (dimension-first pairwise judging over a textual blueprint);
- :mod:`.animescore`: AnimeScore pairwise preference ranking of voices;
- :mod:`.isdrama`: ISDrama objective metrics (single sentence and full drama).

Shared helpers: :mod:`.chat_answers` (verdicts of chat judges) and :mod:`.demo_audio` (demo
clips). Each subpackage exposes its entry points; this package itself exposes none.
"""

__all__: list[str] = []
