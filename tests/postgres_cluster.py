"""A throwaway PostgreSQL cluster on 127.0.0.1, for the campaign tests and benchmark.

``initdb`` + ``pg_ctl`` from Debian's newest ``/usr/lib/postgresql/*/bin`` in a temporary folder,
trust authentication, a free port; as user ``postgres`` (``runuser``) when running as root, since
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import free_port


def unavailable() -> str | None:
    """Why no cluster can be started here, or None."""
    if importlib.util.find_spec("psycopg") is None:
        return "the 'postgres' extra (psycopg) is not installed"
    if _bin_dir() is None:
        return "no PostgreSQL binaries (/usr/lib/postgresql/*/bin/initdb)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser to start PostgreSQL as another user"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run PostgreSQL as"
    return None


def _bin_dir() -> Path | None:
    def version(path: str) -> int:
        part = Path(path).parts[-3]
        return int(part) if part.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    return Path(found[-1]).parent if found else None


@contextmanager
def running_cluster(user: str) -> Iterator[int]:
    """Start a cluster whose superuser is ``user``; yield its port; stop and delete it."""
    why = unavailable()
    if why:
        raise RuntimeError(why)
    bin_dir = _bin_dir()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="campaign-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()

    def run(*args: str) -> None:
        proc = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode:
            raise RuntimeError(f"{args[0]} failed:\n{proc.stdout}\n{proc.stderr}")

    started = False
    try:
        run(str(bin_dir / "initdb"), "-A", "trust", "-U", user, "-E", "UTF8", "-D", str(data))
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1"
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w",
            "start")  # fmt: skip
        started = True
        yield port
    finally:
        if started:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


def create_database(user: str, port: int, name: str) -> str:
    """Create database ``name``; its SQLAlchemy URL."""
    import psycopg

    with psycopg.connect(f"postgresql://{user}@127.0.0.1:{port}/postgres") as conn:
        conn.autocommit = True
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://{user}@127.0.0.1:{port}/{name}"
