"""TRACE's per-response blueprint: the feature-cache blueprint regrouped by judging dimension.

Content is the ASR transcript (with its confidence); voice quality is DNSMOS SIG/BAK/OVRL;
paralinguistics gathers prosody and affect descriptors in the spirit of eGeMAPS: F0 level and
spread, loudness level and dynamics, rate, pauses, and voice-quality proxies (voicing ratio,
frame-to-frame F0 change). Every number comes from :mod:`speech_drame.features`, so it is
read from the feature cache when the clip was seen before. An undefined descriptor (the F0
change of a clip without two consecutive voiced frames) is ``None`` with a ``*_note`` saying
why, and the judge's text reads "n/a (reason)".
"""

from __future__ import annotations

import math
from typing import Any

from speech_drame.features import prosody
from speech_drame.features.blueprint import Blueprint


def _r(value: float, digits: int = 2) -> float:
    return round(float(value), digits)


def trace_blueprint(bp: Blueprint) -> dict[str, Any]:
    """The blueprint as a JSON-ready dict with ``content``, ``voice_quality``, ``paralinguistics``.

    When the clip was extracted with a ``question`` context (the request), ``content`` also
    holds ``relevance``: the USE-multilingual cosine similarity between transcript and request.
    """
    p, v = bp.prosody, bp.voice_activity
    record = {
        "duration_s": _r(bp.seconds),
        "content": {
            "transcript": bp.transcript.text.strip(),
            "asr_avg_logprob": _r(bp.transcript.avg_logprob),
            "no_speech_prob": _r(bp.transcript.no_speech_prob),
        },
        "voice_quality": {
            "dnsmos_sig": _r(bp.quality.sig),
            "dnsmos_bak": _r(bp.quality.bak),
            "dnsmos_ovrl": _r(bp.quality.ovrl),
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
    return record


def render_text(record: dict[str, Any]) -> str:
    """A :func:`trace_blueprint` record as compact text, one line per dimension."""
    c, q, p = record["content"], record["voice_quality"], record["paralinguistics"]
    jitter = (
        f"{p['f0_jitter_st']} st/frame"
        if p["f0_jitter_st"] is not None
        else f"n/a ({p.get('f0_jitter_note', 'undefined')})"
    )
    return "\n".join(
        [
            f'Content: transcript "{c["transcript"]}" (ASR avg logprob {c["asr_avg_logprob"]}, '
            f"no-speech prob {c['no_speech_prob']}"
            + (f", similarity to the request {c['relevance']}" if "relevance" in c else "")
            + f"); duration {record['duration_s']} s",
            f"Voice quality: DNSMOS SIG {q['dnsmos_sig']}, BAK {q['dnsmos_bak']}, "
            f"OVRL {q['dnsmos_ovrl']} (1-5, higher is better)",
            f"Paralinguistics: F0 median {p['f0_median_hz']} Hz, spread {p['f0_std_st']} st "
            f"(5-95% range {p['f0_range_st']} st); loudness {p['loudness_mean_db']} dBFS, "
            f"std {p['loudness_std_db']} dB, range {p['loudness_range_db']} dB; "
            f"rate {p['syllables_per_s']} syll/s, {p['words_per_s']} words/s; "
            f"pauses {p['pauses_per_min']}/min, mean {p['mean_pause_s']} s, "
            f"pause ratio {p['pause_ratio']}; voiced ratio {p['voiced_ratio']}, "
            f"F0 jitter {jitter}",
        ]
    )
