"""Atomic outputs: files and folders appear whole or not at all, JSON is strict.

Every output a command writes goes through here, so a kill leaves either the previous
version or the new one, never a mix:

* :func:`write_bytes` / :func:`write_text` / :func:`write_json` write a temporary file beside
  the target, fsync it and ``os.replace`` it into place.
* :func:`staging_dir` + :func:`replace_dir` build a folder beside its target and swap it in;
  :func:`replaceable_folder` first decides whether the target may be replaced at all.
* :func:`strict_json` turns undefined numbers (NaN, +-inf) into ``null`` so files are valid JSON
  for every parser; the reason an undefined value is undefined belongs beside it in the
  document (e.g. a ``notes`` entry), written by the caller.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = [
    "FolderRefused",
    "recover_dir",
    "replace_dir",
    "replaceable_folder",
    "staging_dir",
    "strict_json",
    "write_bytes",
    "write_json",
    "write_text",
]


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (umask() is not
    thread-safe)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError):
        mask = os.umask(0o022)
        os.umask(mask)
        return mask


def strict_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (dicts, lists, tuples walked).

    >>> strict_json({"r": float("nan"), "xs": [1.0, float("inf")]})
    {'r': None, 'xs': [1.0, None]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    if not isinstance(text, str):
        raise TypeError(f"write_text needs a str, got {type(text).__name__}")
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, value: Any, indent: int | None = 1) -> Path:
    """Write ``value`` as strict JSON (NaN/inf -> null) atomically; returns the path."""
    text = json.dumps(strict_json(value), indent=indent, ensure_ascii=False, allow_nan=False)
    return write_text(path, text + "\n")


def staging_dir(target: str | os.PathLike) -> Path:
    """A new empty folder beside ``target`` (same file system) to build it in."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    staged.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; the swapped-in folder gets the usual mode
    return staged


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False if
    the system or file system cannot."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


def recover_dir(target: str | os.PathLike) -> list[Path]:
    """Undo what a killed :func:`replace_dir` left: restore a missing ``target`` from its
    ``.NAME.old-*`` copy and remove other leftovers; returns the paths removed."""
    target = Path(target)
    olds = sorted(target.parent.glob(f".{target.name}.old-*"))
    if olds and not target.exists():
        olds.pop().rename(target)
    for stale in olds:
        shutil.rmtree(stale, ignore_errors=True)
    return olds


class FolderRefused(UsageError):
    """A folder a command may not replace with its output; the message names it and why."""


def replaceable_folder(
    target: str | os.PathLike,
    what: str,
    is_earlier: Callable[[Path], bool],
    *,
    overwrite: bool = False,
    holds: Sequence[tuple[str, str | os.PathLike]] = (),
    earlier_needs_overwrite: bool = True,
) -> Path:
    """The folder a command may replace with its output ``what``: ``target`` with its symlinks
    resolved (the link stays, the folder it points to is replaced). Only a missing or empty
    folder, or an earlier output of the same kind (``is_earlier``; with ``overwrite`` when
    ``earlier_needs_overwrite``) is ever replaced, whatever the options.

    Raises:
        FolderRefused: one line naming ``target``: it holds one of ``holds`` (``(what it is,
            path)``, e.g. the command's own input), is the current folder or holds it, is a
            mount point, is a file, is a non-empty folder that is not an earlier ``what``, or is
            an earlier one and ``overwrite`` is off (where needed).
    """
    path = Path(target).resolve()
    for label, item in holds:
        if Path(item).resolve().is_relative_to(path):
            raise FolderRefused(
                f"output folder {target} holds {label} {item}: replacing it would delete "
                f"{'that' if Path(item).resolve() != path else 'it'}; choose another folder"
            )
    if Path.cwd().resolve().is_relative_to(path):
        here = (
            "is the current folder" if Path.cwd().resolve() == path else "holds the current folder"
        )
        raise FolderRefused(f"output folder {target} {here}: write {what} into a new folder")
    if os.path.ismount(path):
        raise FolderRefused(
            f"output folder {target} is a mount point: write {what} into a folder inside it"
        )
    if path.exists() and not path.is_dir():
        raise FolderRefused(f"output {target} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        if not is_earlier(path):
            raise FolderRefused(
                f"output folder {target} exists and is not an earlier {what}: choose another "
                f"folder (only an earlier {what} is ever replaced)"
            )
        if earlier_needs_overwrite and not overwrite:
            raise FolderRefused(
                f"output folder {target} holds an earlier {what}: pass --overwrite to replace it"
            )
    return path


def replace_dir(staged: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Swap the finished folder ``staged`` in as ``target``; the old one is removed after.

    Where the system can, the swap is one atomic exchange, so a kill leaves either the old or
    the new folder at ``target``. Elsewhere it is two renames, and a kill between them leaves
    the old folder as ``.NAME.old-*``, which :func:`recover_dir` (called first here) restores.
    """
    staged, target = Path(staged), Path(target)
    recover_dir(target)
    if not target.exists():
        staged.rename(target)
        return target
    if _exchange(staged, target):
        shutil.rmtree(staged, ignore_errors=True)  # now holds the old folder
        return target
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rmdir(old)
    target.rename(old)
    staged.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return target
