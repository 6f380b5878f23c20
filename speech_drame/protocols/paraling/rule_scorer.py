"""Blueprint rule features as 0-3 aspect ratings: the offline comparator's scorer.

- content: reading tasks, ``3 * (1 - CER)`` of the transcript against the sentence to read;
  situational adaptation, the USE-multilingual similarity of the reply to the user's utterance
  mapped from [0.1, 0.6] to [0, 3];
- fluency: DNSMOS OVRL mapped from [1.5, 2.5] to [0, 3] (WORLD-vocoded piper speech scores
  2.0-2.8, the same speech in 5 dB noise 1.5-1.8);
- paralinguistics: for the verdict unit's target (the mean over its targets when a unit has
  several), a directional check on one prosodic descriptor, mapped linearly to [0, 3] between
  a floor and a ceiling (table :data:`CUES`); a change within the utterance (dynamic
  variation) is rated by the F0 and loudness ranges; a target without a rule is rated by
  overall expressiveness (F0 spread).

These are coarse heuristics for a single piper voice (absolute pitch and rate thresholds),
meant to make the protocol run offline; swap in a trained scorer for real measurements.
"""

from __future__ import annotations

from collections.abc import Callable

from speech_drame.features.blueprint import Blueprint
from speech_drame.text_metrics import character_error_rate

from .queries import Query

Feature = Callable[[Blueprint], float]
FEATURES: dict[str, Feature] = {
    "rate": lambda bp: bp.words_per_second,
    "loudness": lambda bp: bp.prosody.energy_mean_db,
    "pitch": lambda bp: bp.prosody.f0_median_hz,
    "expressive": lambda bp: bp.prosody.f0_std_st,
    "pauses": lambda bp: bp.voice_activity.pauses_per_minute,
    "variation": lambda bp: bp.prosody.f0_range_st + bp.prosody.energy_range_db / 2,
}
# target word -> (feature, value rated 0, value rated 3); a falling scale when 0 > 3
CUES: dict[str, tuple[str, float, float]] = {
    "fast": ("rate", 2.5, 4.0), "quick": ("rate", 2.5, 4.0),
    "slow": ("rate", 3.0, 1.8), "slowly": ("rate", 3.0, 1.8),
    "loud": ("loudness", -32.0, -22.0), "shouting": ("loudness", -32.0, -20.0),
    "soft": ("loudness", -24.0, -34.0), "whisper": ("loudness", -24.0, -36.0),
    "quiet": ("loudness", -24.0, -34.0),
    "high": ("pitch", 130.0, 200.0), "low": ("pitch", 170.0, 100.0),
    "happy": ("expressive", 1.5, 5.0), "excited": ("expressive", 1.5, 5.0),
    "lively": ("expressive", 1.5, 5.0), "angry": ("expressive", 1.5, 5.0),
    "surprised": ("expressive", 1.5, 5.0), "cheerful": ("expressive", 1.5, 5.0),
    "sad": ("expressive", 4.0, 1.0), "calm": ("expressive", 4.0, 1.0),
    "tired": ("expressive", 4.0, 1.0), "bored": ("expressive", 4.0, 1.0),
    "pause": ("pauses", 0.0, 30.0), "pauses": ("pauses", 0.0, 30.0),
}  # fmt: skip
VARIATION = ("variation", 10.0, 35.0)
DEFAULT_CUE = ("expressive", 1.0, 4.0)


def scale(value: float, zero: float, three: float) -> float:
    """``value`` mapped linearly so that ``zero`` -> 0 and ``three`` -> 3, clipped to [0, 3]."""
    return 3.0 * min(1.0, max(0.0, (value - zero) / (three - zero)))


def cue_for(target: str, dynamic: bool) -> tuple[str, float, float]:
    """The rule rating one target phrase (e.g. ``"fast"``, ``"happy -> sad"``)."""
    if dynamic:
        return VARIATION
    for word in target.lower().replace(",", " ").split():
        if word in CUES:
            return CUES[word]
    return DEFAULT_CUE


def rule_aspect_scores(query: Query, unit: tuple[str, ...], bp: Blueprint) -> dict[str, float]:
    """Content, fluency and paralinguistics ratings (0-3) of one response's blueprint for the
    verdict ``unit`` (dimensions) of ``query``.

    Raises:
        ValueError: a situational query whose blueprint lacks the ``question`` similarity
            (extract it with the query text as context).
    """
    if query.task == "situational_adaptation":
        if "question" not in bp.context:
            raise ValueError(f"{bp.source}: blueprint lacks the similarity to the query")
        content = scale(bp.context["question"], 0.1, 0.6)
    else:
        content = 3.0 * max(0.0, 1.0 - character_error_rate(query.sentence, bp.transcript.text))
    fluency = scale(bp.quality.ovrl, 1.5, 2.5)
    dynamic = query.task == "dynamic_variation"
    targets = [query.targets[d] for d in unit if d in query.targets]
    cues = [cue_for(t, dynamic) for t in targets] or [VARIATION if dynamic else DEFAULT_CUE]
    para = sum(scale(FEATURES[f](bp), lo, hi) for f, lo, hi in cues) / len(cues)
    return {"content": content, "fluency": fluency, "paralinguistics": para}
