"""Identifiers that become file names: scenario ids, query ids, system names.

An identifier names one file inside a folder (``<folder>/<id><suffix>``), so it must be a plain
name: not empty, not ``.`` or ``..``, without a path separator (``/``, ``\\``) or a NUL byte.
Anything else (``../x``, ``/etc/passwd``, ``a/b``) would read or write outside the folder or in a
subfolder, and is refused with an error naming it. Refusing rather than encoding keeps the file
a user put there findable under its own name; the official ids are plain names
(``role-eval_v1_0001``, ``250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["id_path", "safe_name"]


def safe_name(identifier: str, what: str = "id") -> str:
    """``identifier`` if it is usable as one file name, else ``ValueError`` naming it.

    >>> safe_name("role-eval_v1_0001")
    'role-eval_v1_0001'
    >>> safe_name("../x")
    Traceback (most recent call last):
    ...
    ValueError: id '../x' cannot be a file name: it contains a path separator
    """
    if not isinstance(identifier, str) or not identifier:
        reason = "it is empty" if identifier == "" else "it is not a string"
    elif identifier in (".", ".."):
        reason = "it names a folder"
    elif "/" in identifier or "\\" in identifier:
        reason = "it contains a path separator"
    elif "\0" in identifier:
        reason = "it contains a NUL byte"
    else:
        return identifier
    raise ValueError(f"{what} {identifier!r} cannot be a file name: {reason}")


def id_path(folder: str | os.PathLike, identifier: str, suffix: str = "", what: str = "id") -> Path:
    """``folder / (identifier + suffix)`` for a :func:`safe_name` identifier."""
    return Path(folder) / f"{safe_name(identifier, what)}{suffix}"
