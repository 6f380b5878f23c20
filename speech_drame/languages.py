"""The languages this package scores, and the hints a release gives about a clip's language.

EvalBench is bilingual: Mandarin (``zh``) and English (``en``). The spoken language of a clip
is *measured* by the ASR model's language identification (:mod:`speech_drame.features.asr`);
the release only *hints* at it, through ids such as ``250814_zh_SocialIdentity_...`` or the
script of its context text. Reports compare the two and count mismatches.
"""

from __future__ import annotations

import re
import unicodedata

LANGUAGES: tuple[str, ...] = ("zh", "en")
LANGUAGE_NAMES = {"zh": "Mandarin", "en": "English"}
UNKNOWN = "unknown"  # the recogniser could not tell which of LANGUAGES was spoken
OTHER = "other"  # identified, but as a language outside LANGUAGES
ALL_LABELS: tuple[str, ...] = (*LANGUAGES, OTHER, UNKNOWN)

_ID_TAG = re.compile(r"(?:^|[_\-.])(zh|en)(?=$|[_\-.])", re.IGNORECASE)
MIN_SCRIPT_SHARE = 0.3  # share of CJK characters among letters that makes a text Mandarin


def is_cjk(ch: str) -> bool:
    """True for a CJK ideograph (the unified blocks, extensions and compatibility forms)."""
    code = ord(ch)
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
    )


def check_language(language: str) -> str:
    """``language`` if it is one of :data:`LANGUAGES`, else ValueError naming the choices."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    return language


def language_from_id(clip_id: str) -> str | None:
    """The language tag an id carries (``250814_zh_...`` -> ``zh``), or None."""
    match = _ID_TAG.search(clip_id)
    return match.group(1).lower() if match else None


def language_from_script(text: str) -> str | None:
    """``zh`` when CJK ideographs make up at least 30% of the letters, ``en`` for Latin-only
    letters, None for text without letters or in another script."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return None
    cjk = sum(is_cjk(ch) for ch in letters)
    if cjk / len(letters) >= MIN_SCRIPT_SHARE:
        return "zh"
    if all("LATIN" in unicodedata.name(ch, "") for ch in letters if not is_cjk(ch)):
        return "en"
    return None


def language_hint(clip_id: str, context: str = "") -> str | None:
    """What the release says about a clip's language: the id's tag, else the context's script."""
    return language_from_id(clip_id) or language_from_script(context)


def language_mismatch(hint: str | None, identified: str | None) -> bool:
    """Whether an identified language contradicts the release's hint: both known and different
    (``other`` contradicts a hint; ``unknown`` or no identification never does).

    >>> language_mismatch("zh", "en"), language_mismatch("zh", "other")
    (True, True)
    >>> language_mismatch(None, "en"), language_mismatch("zh", "unknown"), language_mismatch("zh", None)
    (False, False, False)
    """
    return hint is not None and identified not in (None, UNKNOWN) and identified != hint


def describe_language(language: str, probability: float | None = None) -> str:
    """A reader's line for an identified language: ``Mandarin (zh, p=0.93)``,
    ``not identified as zh or en``, ``another language than zh/en``."""
    p = f", p={probability:.2f}" if probability is not None else ""
    if language in LANGUAGE_NAMES:
        return f"{LANGUAGE_NAMES[language]} ({language}{p})"
    if language == OTHER:
        return f"another language than {'/'.join(LANGUAGES)}{f' ({p[2:]})' if p else ''}"
    return f"not identified as {' or '.join(LANGUAGES)}{f' ({p[2:]})' if p else ''}"
