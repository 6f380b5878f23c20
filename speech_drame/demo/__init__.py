"""Generator of the offline demo corpus: a raw release in the official EvalBench format.

The demo release pairs real human speech shipped by Debian packages (LibriVox clips and test
utterances of ``pocketsphinx-testdata``, the voice clips of ``alsa-utils``) and the official
sample clip with renderings of original role-play texts by offline TTS engines (piper, flite,
espeak-ng). Delivery, content, degradation and context mismatch are varied with known severity.
Like EvalBench it is bilingual: Mandarin texts, written in Chinese, are spoken by espeak-ng's
``cmn-latn-pinyin`` voices from tone-numbered pinyin.

**Its labels are synthetic proxy labels, not human ratings**: simulated annotators score each
clip from its construction parameters through a documented latent-score model
(:mod:`speech_drame.demo.raters`) plus per-rater bias and noise. Numbers measured on the demo
corpus show that code works end to end; they say nothing about alignment with human judgement.

Modules: :mod:`~speech_drame.demo.tts` (engine wrappers, run as subprocesses),
:mod:`~speech_drame.demo.real_speech` (the real clips), :mod:`~speech_drame.demo.scenarios`
and :mod:`~speech_drame.demo.scenarios_zh` (texts), :mod:`~speech_drame.demo.pinyin`
(Chinese to pinyin), :mod:`~speech_drame.demo.delivery` and
:mod:`~speech_drame.demo.degrade` (signal transforms), :mod:`~speech_drame.demo.plan` (what to
render), :mod:`~speech_drame.demo.raters` (labels) and :mod:`~speech_drame.demo.release`
(orchestration).
"""

from .._lazy import lazy_attributes

__all__ = ["PROXY_LABEL_NOTE", "make_release"]
__getattr__, __dir__ = lazy_attributes(__name__, {"make_release": ".release"})

PROXY_LABEL_NOTE = (
    "These labels are synthetic proxy labels: simulated annotators derive them from the known "
    "construction parameters of each clip (voice, delivery, content, degradation, context "
    "mismatch) plus per-rater bias and noise. They are not human ratings."
)
