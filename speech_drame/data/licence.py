"""The licence of a build: given with ``--license``, else read from the source release.

A release states its licence in the ``license:`` of its card's YAML front matter
(``README.md``; the public EvalBench on the Hub says ``cc-by-nc-4.0``), else in a
``LICENSE``-type file whose text names one known licence. When neither does, the licence is
asked for (``ask``, on an interactive terminal) or the build is refused.

``other`` is accepted only given explicitly, with the ``license_name`` id a Hub card needs for it
and a ``license_link``: a URL, or ``README.md`` (the card itself, whose Licence section then
quotes the source note).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

CARD = "README.md"
LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING")
LICENSE_ID = re.compile(r"[a-z0-9][a-z0-9.+-]*")
LICENSE_NAME = re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)*")
OTHER = "other"
HUB_LICENSES = "https://hf.co/docs/hub/repositories-licenses"
# Hub id -> a phrase its licence text carries (no phrase occurs in another's text)
KNOWN_TEXTS = (
    ("cc-by-nc-sa-4.0", r"Attribution-NonCommercial-ShareAlike 4\.0 International"),
    ("cc-by-nc-nd-4.0", r"Attribution-NonCommercial-NoDerivatives 4\.0 International"),
    ("cc-by-nc-4.0", r"Attribution-NonCommercial 4\.0 International"),
    ("cc-by-sa-4.0", r"Attribution-ShareAlike 4\.0 International"),
    ("cc-by-4.0", r"Attribution 4\.0 International"),
    ("cc0-1.0", r"CC0 1\.0 Universal"),
    ("apache-2.0", r"Apache License\s+Version 2\.0"),
    ("mit", r"^\s*MIT License|Permission is hereby granted, free of charge"),
    ("gpl-3.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 3"),
)


class LicenceError(InputError):
    """No usable licence: none given nor found, or an ``other`` without its name and link."""


@dataclass(frozen=True)
class Licence:
    """A Hub licence id (with ``name`` and ``link`` when ``other``) and where it came from:
    ``--license``, the release file it was read from, or ``prompt``."""

    id: str
    origin: str
    name: str | None = None
    link: str | None = None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _card_licence(path: Path) -> tuple[str | None, str]:
    """The ``license:`` of a card's front matter, or ``None`` with why it is not usable."""
    import yaml
    from huggingface_hub.repocard import metadata_load

    try:
        value = (metadata_load(path) or {}).get("license")
    except (ValueError, yaml.YAMLError) as exc:  # a broken card: say so, keep looking
        return None, f"{path}: unreadable front matter ({_first_line(exc)})"
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not value:
        return None, f"{path}: no license: in its front matter"
    if not isinstance(value, str) or not LICENSE_ID.fullmatch(value) or value == OTHER:
        return None, f"{path}: license: {value} names no single Hub licence id"
    return value, ""


def _file_licence(path: Path) -> tuple[str | None, str]:
    """The one known licence a ``LICENSE``-type file's text names, or ``None`` with why not."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = []
    for hub_id, phrase in KNOWN_TEXTS:
        if re.search(phrase, text, re.MULTILINE):
            found.append(hub_id)
    if len(found) == 1:
        return found[0], ""
    return None, f"{path}: " + (
        f"names several licences ({', '.join(found)})" if found else "no known licence text"
    )


def read_release_licence(release: str | Path) -> tuple[Licence | None, list[str]]:
    """The licence the release folder states (card front matter, then ``LICENSE``-type files),
    or ``None``; and why each of those files present gave nothing."""
    root = Path(release)
    notes = []
    for name, read in [(CARD, _card_licence)] + [(n, _file_licence) for n in LICENSE_FILES]:
        if (root / name).is_file():
            hub_id, why = read(root / name)
            if hub_id is not None:
                return Licence(hub_id, name), notes
            notes.append(why)
    return None, notes


def check_licence(licence: Licence, source_note: str | None) -> Licence:
    """``licence`` if a Hub card can carry it (``other`` gets ``link`` README.md by default).

    Raises:
        LicenceError: an id that is not a Hub licence id; ``other`` without ``name``, or
            without a ``link`` or a ``source_note``; ``name``/``link`` with another id.
    """
    if not LICENSE_ID.fullmatch(licence.id):
        raise LicenceError(
            f"--license {licence.id!r} ({licence.origin}): expected a Hub licence id such as "
            f"cc-by-nc-4.0 ({HUB_LICENSES})"
        )
    if licence.id != OTHER:
        if licence.name or licence.link:
            raise LicenceError("--license-name and --license-link go with --license other only")
        return licence
    if not licence.name or not LICENSE_NAME.fullmatch(licence.name):
        raise LicenceError(
            "--license other needs --license-name ID, the licence's id on the card "
            f"(lowercase, like my-license-1.0){f', not {licence.name!r}' if licence.name else ''}"
        )
    if licence.link:
        return licence
    if not source_note:
        raise LicenceError(
            "--license other needs --license-link URL (the licence terms) or --source-note "
            "TEXT (the terms, quoted in the card, which the licence link then points to)"
        )
    return Licence(licence.id, licence.origin, licence.name, CARD)


def resolve_licence(
    release: str | Path,
    license_id: str | None,
    *,
    license_name: str | None = None,
    license_link: str | None = None,
    source_note: str | None = None,
    ask: Callable[[str], str] | None = None,
) -> Licence:
    """The build's licence: ``license_id`` if given, else the release's
    (:func:`read_release_licence`), else ``ask(question)``'s answer when ``ask`` is given.

    Raises:
        LicenceError: none given, found or answered (naming ``--license`` and where it looked),
            or one a card cannot carry (:func:`check_licence`).
    """
    if license_id is not None:
        return check_licence(
            Licence(license_id, "--license", license_name, license_link), source_note
        )
    root = Path(release)
    found, notes = read_release_licence(root)
    if found is not None:
        if license_name or license_link:
            raise LicenceError("--license-name and --license-link go with --license other only")
        return found
    where = (
        f"looked for license: in the front matter of {root / CARD}, then for "
        f"{', '.join(LICENSE_FILES)} in {root}" + "".join(f"; {note}" for note in notes)
    )
    if ask is not None:
        answer = ask(
            f"The release states no licence ({where}).\n"
            f"Hub licence id for the card (e.g. cc-by-nc-4.0, see {HUB_LICENSES}): "
        ).strip()
        if answer:
            return check_licence(Licence(answer, "prompt", license_name, license_link), source_note)
    raise LicenceError(
        "no licence for the dataset card: pass --license ID (e.g. cc-by-nc-4.0, the public "
        f"EvalBench's); the release states none ({where})"
    )
