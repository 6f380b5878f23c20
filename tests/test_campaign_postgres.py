"""The campaign store on a real PostgreSQL server: the same ``check_*`` behaviour as on SQLite
(tests/test_campaign_store.py), against a cluster this module starts in a temporary folder
(``initdb`` + ``pg_ctl``, trust authentication, a free port on 127.0.0.1; as user ``postgres``
via ``runuser`` when the tests run as root) and stops at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres_cluster import create_database, running_cluster, unavailable
from test_campaign_store import CHECKS, write_wav

USER = "campaign"


@pytest.fixture(scope="module")
def postgres() -> Iterator[int]:
    """The port of a running cluster on 127.0.0.1 (superuser ``campaign``, trust)."""
    why = unavailable()
    if why:
        pytest.skip(why)
    with running_cluster(USER) as port:
        yield port


@pytest.fixture
def new_database(postgres, request):
    """``new_target(name) -> URL`` of a new, empty database."""
    counter = iter(range(1000))
    base = request.node.name.split("[")[-1].rstrip("]").replace("-", "_").lower()

    def new_target(name: str) -> str:
        return create_database(USER, postgres, f"{base}_{name}_{next(counter)}")

    return new_target


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_postgres(check, new_database, tmp_path):
    check(new_database, write_wav(tmp_path / "audio" / "tone.wav"))
