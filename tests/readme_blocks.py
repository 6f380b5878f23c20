"""The README's code blocks, as the README test runs them.

A fenced ``bash`` or ``python`` block runs unless the line just before its fence is an HTML
comment ``<!-- readme-test: skip: REASON -->``; ``<!-- readme-test: fresh-folder -->`` runs it
in a folder of its own (for a block that replaces what later blocks use);
``<!-- readme-test: rated-campaign -->`` has the raters the README invites rate every clip of its
campaign first (simulated, through the campaign store), for a block that uses the ratings. Inside a bash block,
a command whose comment says ``# needs a GPU``, ``# needs the Hub``, ``# needs network``,
``# needs trained weights`` or ``# runs until stopped`` is not run (it is still checked to exist
and to answer ``--help``). Placeholders (``clip.wav``, ``responses/``, ...) are real files the
test makes in the folder the blocks run in.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(
    r"<!--\s*readme-test:\s*(skip:\s*(?P<why>.+?)|(?P<fresh>fresh-folder)|(?P<rated>rated-campaign))"
    r"\s*-->"
)
NOT_RUN = re.compile(r"#\s*(needs (a GPU|the Hub|network|trained weights)|runs until stopped)\b")


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None  # the reason, for a block the test does not run
    fresh: bool = False  # runs in a folder of its own
    rated: bool = False  # its campaign's clips are rated first

    @property
    def name(self) -> str:
        return f"README.md:{self.line} ({self.lang})"


@dataclass(frozen=True)
class Command:
    line: int
    text: str  # one logical command: continuations joined, comment removed
    runs: bool  # False for a `# needs ...` command

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)


def blocks(readme: Path) -> list[Block]:
    lines = readme.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match or not match.group(1):
            i += 1
            continue
        start, lang = i, match.group(1)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        marker = MARKER.search(lines[start - 1]) if start else None
        code = "\n".join(lines[start + 1 : end]) + "\n"
        why = marker.group("why") if marker else None
        fresh, rated = (bool(marker and marker.group(g)) for g in ("fresh", "rated"))
        out.append(Block(start + 1, lang, code, why, fresh, rated))
        i = end + 1
    return out


def commands(block: Block) -> list[Command]:
    """The block's shell commands, one per logical line (``\\`` continuations joined)."""
    out: list[Command] = []
    pending: list[str] = []
    first = 0
    for offset, raw in enumerate(block.code.splitlines()):
        if not pending:
            first = block.line + 1 + offset
        body = raw.rstrip()
        if body.endswith("\\"):
            pending.append(body[:-1])
            continue
        pending.append(body)
        text = " ".join(part.strip() for part in pending)
        pending = []
        runs = not NOT_RUN.search(text)
        text = _strip_comment(text)
        if text:
            out.append(Command(first, text, runs))
    return out


def _strip_comment(text: str) -> str:
    """The command without its trailing ``# ...`` comment (``#`` inside quotes kept)."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].strip()
    return text.strip()
