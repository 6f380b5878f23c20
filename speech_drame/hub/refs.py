"""The one parser of Hub references: ``ORG/NAME[@REVISION]`` and
``hf://datasets|models|spaces/ORG/NAME[@REVISION]``.

A repo id is ``ORG/NAME`` and nothing else (not ``./x``, ``/x``, ``~/x`` or ``a/b/c``): each
part starts with a letter or digit and holds letters, digits, ``_``, ``.`` and ``-``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

RepoType = Literal["model", "dataset", "space"]

REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_REF = re.compile(rf"(?P<repo_id>{REPO_ID.pattern})(?:@(?P<revision>[\w./-]+))?")
HF_SCHEME = "hf://"
URL_KINDS: dict[str, RepoType] = {"models": "model", "datasets": "dataset", "spaces": "space"}


@dataclass(frozen=True)
class HubRef:
    """A Hub repository, optionally at a revision (``None``: the main branch)."""

    repo_id: str
    revision: str | None = None
    repo_type: RepoType = "model"

    @property
    def url_path(self) -> str:
        """The repo's path on the Hub's web site: ``ORG/NAME`` for a model,
        ``datasets/ORG/NAME`` or ``spaces/ORG/NAME`` otherwise."""
        prefix = {"space": "spaces/", "dataset": "datasets/"}.get(self.repo_type, "")
        return f"{prefix}{self.repo_id}"

    def __str__(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.revision else self.repo_id


def is_repo_id(text: str) -> bool:
    """Whether ``text`` is a repo id ``ORG/NAME``.

    Example:
        >>> is_repo_id("someone/lite-scorer"), is_repo_id("./someone/x"), is_repo_id("a/b/c")
        (True, False, False)
    """
    return REPO_ID.fullmatch(text) is not None


def parse_ref(text: str, repo_type: RepoType = "model") -> HubRef | None:
    """``text`` as ``ORG/NAME[@REVISION]``, a repo of ``repo_type``; ``None`` when it has
    another shape.

    Example:
        >>> parse_ref("someone/lite-scorer@v2")
        HubRef(repo_id='someone/lite-scorer', revision='v2', repo_type='model')
        >>> parse_ref("runs/lite/archetype") is None
        True
    """
    match = _REF.fullmatch(text)
    if match is None:
        return None
    return HubRef(match["repo_id"], match["revision"], repo_type)


def parse_url(text: str) -> HubRef | None:
    """``text`` as ``hf://datasets|models|spaces/ORG/NAME[@REVISION]`` (slashes around the
    id ignored); ``None`` when it has another shape.

    Example:
        >>> parse_url("hf://datasets/someone/evalbench/")
        HubRef(repo_id='someone/evalbench', revision=None, repo_type='dataset')
        >>> parse_url("hf://buckets/someone/evalbench") is None
        True
    """
    if not text.startswith(HF_SCHEME):
        return None
    kind, _, rest = text.removeprefix(HF_SCHEME).partition("/")
    if kind not in URL_KINDS:
        return None
    return parse_ref(rest.strip("/"), URL_KINDS[kind])
