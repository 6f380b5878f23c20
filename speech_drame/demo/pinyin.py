"""Chinese text to tone-numbered pinyin, the input of espeak-ng's ``cmn-latn-pinyin`` voice.

espeak-ng's Debian ``cmn`` voice has no Hanzi dictionary, but ``cmn-latn-pinyin`` reads pinyin
syllables with tone digits. :func:`to_pinyin` converts with ``pypinyin`` (imported at build time
only): ``Style.TONE3`` (``hao3``, ``lv4`` for 绿), neutral tone as ``5``, spoken tone sandhi
(你好 -> ``ni2 hao3``, 不是 -> ``bu2 shi4``, 一个 -> ``yi2 ge4``). Chinese punctuation becomes the
ASCII pause marks espeak-ng honours: ``,`` for clause breaks, ``.``/``?``/``!`` for sentence
ends. Digits or Latin letters in the text raise :class:`ValueError`: write numbers in Hanzi.
"""

from __future__ import annotations

import re

SYLLABLE = re.compile(r"^[a-z]+[1-5]$")
CLAUSE_MARKS = frozenset("，、；：,;:—")
SENTENCE_MARKS = {
    "。": ".",
    "．": ".",
    ".": ".",
    "…": ".",
    "！": "!",
    "!": "!",
    "？": "?",
    "?": "?",
}
SILENT_MARKS = frozenset("“”‘’「」『』《》（）()\"' \u3000")


def to_pinyin(text: str) -> str:
    """``text`` (Chinese) as space-separated tone-numbered syllables with ASCII pause marks."""
    try:
        from pypinyin import Style, lazy_pinyin
    except ImportError:
        raise ImportError(
            "Mandarin demo clips need pypinyin: pip install pypinyin==0.55.0"
        ) from None
    tokens = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True, tone_sandhi=True)
    words: list[str] = []
    for token in tokens:
        if SYLLABLE.match(token):
            words.append(token)
            continue
        for ch in token:
            if ch in SILENT_MARKS:
                continue
            if ch in SENTENCE_MARKS:
                mark = SENTENCE_MARKS[ch]
            elif ch in CLAUSE_MARKS:
                mark = ","
            else:
                raise ValueError(f"cannot convert {ch!r} to pinyin in {text!r}: write it in Hanzi")
            if not words:
                continue
            if words[-1][-1] in ",.?!":
                if words[-1][-1] == "," and mark != ",":  # a sentence end outweighs a clause break
                    words[-1] = words[-1][:-1] + mark
            else:
                words[-1] += mark
    if not words:
        raise ValueError(f"no Chinese syllables to speak in {text!r}")
    return " ".join(words)
