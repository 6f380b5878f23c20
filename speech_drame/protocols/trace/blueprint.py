"""TRACE's per-response blueprint: the feature-cache blueprint regrouped by judging dimension.

Content is the ASR transcript (with its confidence); voice quality is DNSMOS P.835 SIG/BAK/OVRL
plus the P.808 MOS, from the P.835 model the caller chose (:data:`DNSMOS_MODELS`: the
personalised model of the released TRACE, or the plain one the feature cache holds; the record
names it); paralinguistics gathers prosody descriptors in the spirit of eGeMAPS: F0 level and
spread, loudness level and dynamics, rate, pauses, and voice-quality proxies (voicing ratio,
frame-to-frame F0 change). The released blueprint also has emotion category scores and accent
scores; they come from a user-supplied model (:mod:`.affect`) or are listed under
``not_measured`` with the reason, in the record and in the judge's text. Every measurement
covers the clip's first 30 s; a longer clip carries an ``audio_note`` saying so. Every number
comes from :mod:`speech_drame.features`, so it is read from the feature cache when the clip
was seen before (the personalised DNSMOS scores too, under their own cache name). An undefined descriptor (the F0 change of
a clip without two consecutive voiced frames) is ``None`` with a ``*_note`` saying why, and the
judge's text reads "n/a (reason)".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speech_drame.audio import SCORED_SECONDS
from speech_drame.features import prosody
from speech_drame.features.quality import QualityScores, check_variant

from .affect import ABSENT, KINDS

if TYPE_CHECKING:  # the feature extractors are not needed to read the constants here
    from speech_drame.features.blueprint import Blueprint

DNSMOS_MODELS: dict[str, str] = {
    "personalised": "DNSMOS P.835 personalised model (SIG/BAK/OVRL) + P.808 MOS",
    "plain": "DNSMOS P.835 non-personalised model (SIG/BAK/OVRL) + P.808 MOS",
}
DNSMOS_DEFINITIONS: dict[str, str] = {
    "personalised": "released TRACE: the personalised P.835 model, which also scores "
    "interfering talkers as noise, plus P.808",
    "plain": "this package's earlier blueprint: the non-personalised P.835 model plus P.808, "
    "as stored in the feature cache",
}
RELEASED_DNSMOS = "personalised"
Cue = tuple[str, Mapping[str, float]]  # (model name, class scores)
Dnsmos = tuple[str, QualityScores]  # (variant, scores)


def _r(value: float, digits: int = 2) -> float:
    return round(float(value), digits)


def trace_blueprint(
    bp: Blueprint, cues: Mapping[str, Cue] | None = None, dnsmos: Dnsmos | None = None
) -> dict[str, Any]:
    """The blueprint as a JSON-ready dict with ``content``, ``voice_quality``, ``paralinguistics``.

    When the clip was extracted with a ``question`` context (the request), ``content`` also
    holds ``relevance``: the USE-multilingual cosine similarity between transcript and request.
    ``cues`` maps ``"emotion"``/``"accent"`` to ``(model name, class scores)``; a kind not given
    is listed under ``not_measured`` with the reason. ``dnsmos`` is ``(variant, scores)`` for
    voice quality; without it, the blueprint's own (plain) DNSMOS is used.
    """
    p, v = bp.prosody, bp.voice_activity
    variant, q = dnsmos if dnsmos is not None else ("plain", bp.quality)
    record = {
        "duration_s": _r(bp.seconds),
        "content": {
            "transcript": bp.transcript.text.strip(),
            "asr_avg_logprob": _r(bp.transcript.avg_logprob),
            "no_speech_prob": _r(bp.transcript.no_speech_prob),
        },
        "voice_quality": {
            "dnsmos_sig": _r(q.sig),
            "dnsmos_bak": _r(q.bak),
            "dnsmos_ovrl": _r(q.ovrl),
            "dnsmos_p808": _r(q.p808),
            "dnsmos_variant": check_variant(variant),
            "dnsmos_model": DNSMOS_MODELS[variant],
        },
        "paralinguistics": {
            "f0_median_hz": _r(p.f0_median_hz, 1),
            "f0_std_st": _r(p.f0_std_st),
            "f0_range_st": _r(p.f0_range_st),
            "loudness_mean_db": _r(p.energy_mean_db, 1),
            "loudness_std_db": _r(p.energy_std_db),
            "loudness_range_db": _r(p.energy_range_db),
            "syllables_per_s": _r(p.syllable_rate),
            "words_per_s": _r(bp.words_per_second),
            "pause_ratio": _r(v.pause_ratio),
            "pauses_per_min": _r(v.pauses_per_minute, 1),
            "mean_pause_s": _r(v.mean_pause_s),
            "voiced_ratio": _r(p.voiced_ratio),
            "f0_jitter_st": _r(p.f0_slope_st, 3),
        },
    }
    if not math.isfinite(p.f0_slope_st):
        record["paralinguistics"]["f0_jitter_st"] = None
        record["paralinguistics"]["f0_jitter_note"] = prosody.UNDEFINED["f0_slope_st"]
    if "question" in bp.context:
        record["content"]["relevance"] = _r(bp.context["question"], 3)
    cues = cues or {}
    for kind in KINDS:
        if kind in cues:
            model, scores = cues[kind]
            ranked = sorted(scores.items(), key=lambda kv: -kv[1])
            record["paralinguistics"][kind] = {
                "model": model,
                "scores": {k: _r(v, 3) for k, v in ranked},
            }
    absent = {kind: ABSENT[kind] for kind in KINDS if kind not in cues}
    if absent:
        record["not_measured"] = absent
    if bp.truncated:
        total = bp.audio.original_seconds if bp.audio is not None else None
        length = f"lasts {total:.1f} s" if total is not None else "is longer"
        record["audio_note"] = (
            f"the response {length}: every measurement here, the transcript included, "
            f"covers only its first {SCORED_SECONDS:.0f} s"
        )
    return record


def _scores_text(kind: str, cue: Mapping[str, Any]) -> str:
    listed = ", ".join(f"{k} {v}" for k, v in cue["scores"].items())
    return f"{kind} scores ({Path(cue['model']).name}): {listed}"


def render_text(record: dict[str, Any]) -> str:
    """A :func:`trace_blueprint` record as compact text, one line per dimension."""
    c, q, p = record["content"], record["voice_quality"], record["paralinguistics"]
    jitter = (
        f"{p['f0_jitter_st']} st/frame"
        if p["f0_jitter_st"] is not None
        else f"n/a ({p.get('f0_jitter_note', 'undefined')})"
    )
    extra = [_scores_text(kind, p[kind]) for kind in KINDS if kind in p]
    lines = [
        f'Content: transcript "{c["transcript"]}" (ASR avg logprob {c["asr_avg_logprob"]}, '
        f"no-speech prob {c['no_speech_prob']}"
        + (f", similarity to the request {c['relevance']}" if "relevance" in c else "")
        + f"); duration {record['duration_s']} s",
        f"Voice quality: {q['dnsmos_model']}: SIG {q['dnsmos_sig']}, BAK {q['dnsmos_bak']}, "
        f"OVRL {q['dnsmos_ovrl']}, P.808 {q['dnsmos_p808']} (1-5, higher is better)",
        f"Paralinguistics: F0 median {p['f0_median_hz']} Hz, spread {p['f0_std_st']} st "
        f"(5-95% range {p['f0_range_st']} st); loudness {p['loudness_mean_db']} dBFS, "
        f"std {p['loudness_std_db']} dB, range {p['loudness_range_db']} dB; "
        f"rate {p['syllables_per_s']} syll/s, {p['words_per_s']} words/s; "
        f"pauses {p['pauses_per_min']}/min, mean {p['mean_pause_s']} s, "
        f"pause ratio {p['pause_ratio']}; voiced ratio {p['voiced_ratio']}, "
        f"F0 jitter {jitter}" + "".join(f"; {e}" for e in extra),
    ]
    if record.get("not_measured"):
        kinds = " and ".join(f"{kind} scores" for kind in record["not_measured"])
        lines.append(f"Not measured: {kinds} (no model for them was run)")
    if "audio_note" in record:
        lines.append(f"Note: {record['audio_note']}")
    return "\n".join(lines)
