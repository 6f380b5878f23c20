"""The campaign database: clips, raters, their tasks and ratings (SQLAlchemy Core).

A campaign lives in one SQLite file or one PostgreSQL database (a SQLAlchemy URL such as
``postgresql+psycopg://user@host/db``); both run the same statements.

**Assignment.** A rater asks for a task with :meth:`Campaign.current_task`: the open task they
already hold (claimed, not rated) is returned again, else a new one is claimed in one write
transaction. A regular task goes to the clip with the fewest ratings plus live claims (claims
younger than the lease, 60 min by default) among the clips still under K that this rater has
not had, ties by position; so every clip ends with exactly K distinct raters once enough raters
rate. Every ``repeat_every``-th task is instead a hidden repeat of one of the rater's rated
regular clips (never one of the last three), every ``gold_every``-th a gold clip the rater has
not had (gold first when both are due; either falls back to a regular task when none is left;
the choices are seeded by the campaign seed, rater and task number). A rater is done when no
regular clip is left for them. A claim older than the lease stops counting for its clip; if the
clip then fills up with other raters, the stale task is withdrawn (its holder gets the next
task; submitting it is refused). The campaign's rule (``assign``, :mod:`.assign`) orders the
clips of equal load by their stored priority (``balanced``: by position only).

**Attached scorers.** ``scorers`` names each attached scorer and its id; ``clip_scores`` holds
one result per (scorer id, clip), a failure with its kind; ``clip_priority`` a clip's priority,
updated in the transaction that stores its scores or, under ``disagreement``, one of its
ratings. A version-1 campaign (before these) is upgraded when opened (:func:`_upgrade`).

**Durability.** Every write is one transaction, committed before the method returns. SQLite
runs in WAL mode with ``synchronous=FULL`` and a busy timeout; its write transactions begin with
``BEGIN IMMEDIATE``, so claims from many processes serialise on the database lock; within one
process a lock queues the threads first (SQLite's own lock wait sleeps in growing steps, which
gave waiting writers seconds of latency under load).
PostgreSQL write transactions first lock the campaign's meta row (``SELECT ... FOR UPDATE``),
to the same effect. Rating ids, given in commit order, are the order of arrival.

**Tokens.** Rater links and the admin token come from :func:`secrets.token_urlsafe`; only their
SHA-256 is stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..extras import require
from ..schema import Config, check_config
from .assign import DEFAULT_RULE, check_rule, priority
from .records import (
    TASK_KINDS,
    Answers,
    AttachedScorer,
    CampaignClip,
    StoredRating,
    StoredScore,
    TaskKind,
)

sa = require("sqlalchemy", "a rating campaign")

SCHEMA_VERSION = 2  # 2: attached scorers, their scores, the assignment rule and priorities
LEASE_SECONDS = 3600.0  # a claim older than this no longer holds its clip for the rater
RECENT_EXCLUDED = 3  # a repeat is never one of the rater's last three rated clips
BUSY_TIMEOUT_MS = 30_000
MAX_NAME_CHARS = 100
MAX_SUBMISSION_ID_CHARS = 200

metadata = sa.MetaData()
meta_table = sa.Table(
    "meta",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("config", sa.String(16), nullable=False),
    sa.Column("raters_per_clip", sa.Integer, nullable=False),
    sa.Column("repeat_every", sa.Integer, nullable=False),
    sa.Column("gold_every", sa.Integer, nullable=False),
    sa.Column("seed", sa.Integer, nullable=False),
    sa.Column("created", sa.Double, nullable=False),
    sa.Column("admin_token_sha256", sa.String(64), nullable=False),
    sa.Column("schema_version", sa.Integer, nullable=False),
    sa.Column("assign", sa.String(16), nullable=False, server_default=DEFAULT_RULE),
)
clips_table = sa.Table(
    "clips",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("clip_id", sa.Text, nullable=False, unique=True),
    sa.Column("is_gold", sa.Boolean, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("data", sa.JSON, nullable=False),  # audio_path, context, extra, gold
    sa.UniqueConstraint("is_gold", "position"),
)
raters_table = sa.Table(
    "raters",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Double, nullable=False),
)
tasks_table = sa.Table(
    "tasks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("rater_id", sa.ForeignKey("raters.id"), nullable=False),
    sa.Column("clip_pk", sa.ForeignKey("clips.id"), nullable=False),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.Column("slot", sa.Integer, nullable=False),  # the rater's task number when claimed
    sa.Column("claimed_at", sa.Double, nullable=False),
    sa.Column("withdrawn_at", sa.Double, nullable=True),  # lease expired, clip filled by others
    sa.UniqueConstraint("rater_id", "clip_pk", "kind"),
)
ratings_table = sa.Table(
    "ratings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("task_id", sa.ForeignKey("tasks.id"), nullable=False, unique=True),
    sa.Column("submission_id", sa.Text, nullable=False, unique=True),
    sa.Column("answers", sa.JSON, nullable=False),
    sa.Column("submitted_at", sa.Double, nullable=False),
)
scorers_table = sa.Table(
    "scorers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("scorer_id", sa.Text, nullable=False, unique=True),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("dimensions", sa.JSON, nullable=False),
    sa.Column("content_pass", sa.Boolean, nullable=False),
    sa.Column("attached_at", sa.Double, nullable=False),
)
clip_scores_table = sa.Table(
    "clip_scores",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("scorer_id", sa.Text, nullable=False),
    sa.Column("clip_pk", sa.ForeignKey("clips.id"), nullable=False),
    sa.Column("result", sa.JSON, nullable=False),  # ClipScores.to_dict() without the id
    sa.Column("error_kind", sa.String(8), nullable=True),  # null: scored
    sa.Column("scored_at", sa.Double, nullable=False),
    sa.UniqueConstraint("scorer_id", "clip_pk"),
)
clip_priority_table = sa.Table(
    "clip_priority",
    metadata,
    sa.Column("clip_pk", sa.ForeignKey("clips.id"), primary_key=True, autoincrement=False),
    sa.Column("priority", sa.Double, nullable=False),
)
ADDED_IN_2 = (scorers_table, clip_scores_table, clip_priority_table)


class CampaignError(InputError):
    """A campaign that cannot be opened or created, or a request it refuses (unknown rater,
    task of another rater, duplicate name); the message names the rater, task or clip, for the
    administrator. ``public`` is what a rater may be told of a refused submission: it names no
    clip, no other task or rater, and not what kind of task it was."""

    def __init__(self, message: str, public: str = "this rating cannot be recorded"):
        super().__init__(message)
        self.public = public


@dataclass(frozen=True)
class RaterRow:
    id: int
    name: str
    created: float  # Unix seconds


@dataclass(frozen=True)
class Task:
    """A clip handed to a rater; ``number``: how many the rater has rated so far + 1."""

    task_id: int
    kind: TaskKind
    clip: CampaignClip
    number: int


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, _sha256(token)


def _url(target: str) -> Any:
    """``target`` as a SQLAlchemy URL: a URL as given, anything else a SQLite file path."""
    if "://" in target:
        return sa.make_url(target)
    return sa.URL.create("sqlite", database=str(Path(target).resolve()))


def _engine(url: Any) -> Any:
    if url.get_backend_name() != "sqlite":
        if url.get_driver_name() == "psycopg":
            require("psycopg", "a rating campaign in PostgreSQL")
        return sa.create_engine(url, pool_pre_ping=True)
    engine = sa.create_engine(
        url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
    )

    # SQLAlchemy's pysqlite recipe: the driver begins no transactions of its own; we emit BEGIN
    # (IMMEDIATE for writes, so that concurrent writers queue on the lock instead of failing).
    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in (
            "journal_mode=WAL",
            "synchronous=FULL",
            f"busy_timeout={BUSY_TIMEOUT_MS}",
            "foreign_keys=ON",
        ):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        write = connection.get_execution_options().get("campaign_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _describe(target: str) -> str:
    """``target`` for messages, without a password."""
    url = _url(target)
    return target if url.get_backend_name() == "sqlite" else url.render_as_string()


def _clip(row: Any) -> CampaignClip:
    data = row.data
    return CampaignClip(
        row.clip_id,
        row.position,
        data["audio_path"],
        dict(data["context"]),
        dict(data["extra"]),
        data["gold"],
    )


class Campaign:
    """An open campaign; safe to share between threads (each call uses its own connection)."""

    def __init__(
        self,
        engine: Any,
        where: str,
        *,
        lease_seconds: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ):
        self.engine, self.where = engine, where
        self.lease_seconds, self.clock = lease_seconds, clock
        with engine.connect() as conn:
            meta = conn.execute(sa.select(meta_table)).one()
            rows = conn.execute(sa.select(clips_table).order_by(clips_table.c.position)).all()
        if meta.schema_version != SCHEMA_VERSION:
            raise CampaignError(
                f"{where}: campaign schema version {meta.schema_version}, this speech-drame "
                f"reads version {SCHEMA_VERSION}"
            )
        self.config: Config = check_config(meta.config)
        self.raters_per_clip: int = meta.raters_per_clip
        self.repeat_every: int = meta.repeat_every
        self.gold_every: int = meta.gold_every
        self.seed: int = meta.seed
        self.assign: str = meta.assign
        self.created: float = meta.created
        self._by_pk = {row.id: _clip(row) for row in rows}
        self._regular = [self._by_pk[r.id] for r in rows if not r.is_gold]
        self._gold = [self._by_pk[r.id] for r in rows if r.is_gold]
        self._pk = {row.clip_id: row.id for row in rows}
        sqlite = engine.dialect.name == "sqlite"
        self._writer = threading.Lock() if sqlite else contextlib.nullcontext()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transactions --------------------------------------------------------------------
    @contextmanager
    def _read(self) -> Iterator[Any]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """One write transaction, serialised with every other (see the module docstring)."""
        with self._writer, self.engine.connect() as conn:
            conn.execution_options(campaign_write=True)
            with conn.begin():
                conn.execute(sa.select(meta_table.c.id).with_for_update())
                yield conn

    # --- clips ---------------------------------------------------------------------------
    def clips(self) -> list[CampaignClip]:
        """The clips of the campaign proper, by position."""
        return list(self._regular)

    def gold_clips(self) -> list[CampaignClip]:
        """The attention-check clips, by position."""
        return list(self._gold)

    # --- raters and tokens ---------------------------------------------------------------
    def add_rater(self, name: str) -> str:
        """Register a rater; returns their link token (shown once, only its hash is kept)."""
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise CampaignError(
                f"rater name {name!r}: expected a non-empty name without spaces around"
            )
        if len(name) > MAX_NAME_CHARS:
            raise CampaignError(f"rater name {name!r}: longer than {MAX_NAME_CHARS} characters")
        token, digest = _new_token()
        with self._write() as conn:
            taken = conn.execute(
                sa.select(raters_table.c.id).where(raters_table.c.name == name)
            ).first()
            if taken is not None:
                raise CampaignError(f"rater {name!r} already exists")
            conn.execute(
                raters_table.insert().values(name=name, token_sha256=digest, created=self.clock())
            )
        return token

    def raters(self) -> list[RaterRow]:
        """Every rater, in order of registration."""
        with self._read() as conn:
            rows = conn.execute(sa.select(raters_table).order_by(raters_table.c.id)).all()
        return [RaterRow(r.id, r.name, r.created) for r in rows]

    def rater_by_token(self, token: str) -> RaterRow | None:
        if not isinstance(token, str) or not token:
            return None
        with self._read() as conn:
            row = conn.execute(
                sa.select(raters_table).where(raters_table.c.token_sha256 == _sha256(token))
            ).first()
        return None if row is None else RaterRow(row.id, row.name, row.created)

    def check_admin(self, token: str | None) -> bool:
        if not isinstance(token, str) or not token:
            return False
        with self._read() as conn:
            stored = conn.execute(sa.select(meta_table.c.admin_token_sha256)).scalar_one()
        return hmac.compare_digest(_sha256(token), stored)

    @property
    def database_file(self) -> Path | None:
        """The SQLite file the campaign is kept in (``None`` for a database server)."""
        url = self.engine.url
        return Path(url.database).resolve() if url.get_backend_name() == "sqlite" else None

    def admin_digest(self) -> str:
        """The SHA-256 of the current admin token (what is stored): it changes with the token."""
        with self._read() as conn:
            return conn.execute(sa.select(meta_table.c.admin_token_sha256)).scalar_one()

    def rotate_admin_token(self) -> str:
        """A new admin token; the previous one stops working."""
        token, digest = _new_token()
        with self._write() as conn:
            conn.execute(meta_table.update().values(admin_token_sha256=digest))
        return token

    def _rater(self, conn: Any, rater: RaterRow | str) -> RaterRow:
        name = rater.name if isinstance(rater, RaterRow) else rater
        row = conn.execute(sa.select(raters_table).where(raters_table.c.name == name)).first()
        if row is None:
            raise CampaignError(f"unknown rater {name!r}")
        return RaterRow(row.id, row.name, row.created)

    # --- tasks ---------------------------------------------------------------------------
    def _rated_count(self, conn: Any, rater_id: int) -> int:
        return conn.execute(
            sa.select(sa.func.count())
            .select_from(ratings_table.join(tasks_table))
            .where(tasks_table.c.rater_id == rater_id)
        ).scalar_one()

    def _open_task(self, conn: Any, rater_id: int) -> Any:
        return conn.execute(
            sa.select(tasks_table)
            .outerjoin(ratings_table)
            .where(
                tasks_table.c.rater_id == rater_id,
                tasks_table.c.withdrawn_at.is_(None),
                ratings_table.c.id.is_(None),
            )
        ).first()

    def _load(self, now: float) -> Any:
        """Subquery: regular clip pk -> ratings + live claims (``clip_pk``, ``n``)."""
        t = tasks_table
        counted = sa.or_(
            ratings_table.c.id.is_not(None),
            sa.and_(t.c.withdrawn_at.is_(None), t.c.claimed_at > now - self.lease_seconds),
        )
        return (
            sa.select(t.c.clip_pk, sa.func.count().label("n"))
            .select_from(t.outerjoin(ratings_table))
            .where(t.c.kind == "regular", counted)
            .group_by(t.c.clip_pk)
        )

    def _lost(self, conn: Any, task: Any, now: float) -> bool:
        """Whether a regular task's expired claim lost its clip: others filled it meanwhile."""
        if task.kind != "regular" or task.claimed_at > now - self.lease_seconds:
            return False
        others = self._load(now).where(
            tasks_table.c.id != task.id, tasks_table.c.clip_pk == task.clip_pk
        )
        row = conn.execute(others).first()
        return row is not None and row.n >= self.raters_per_clip

    def _task(self, conn: Any, row: Any) -> Task:
        number = self._rated_count(conn, row.rater_id) + 1
        return Task(row.id, row.kind, self._by_pk[row.clip_pk], number)

    def current_task(self, rater: RaterRow | str) -> Task | None:
        """The rater's open task, else a newly claimed one; ``None`` when the rater is done."""
        now = self.clock()
        with self._read() as conn:
            row = self._open_task(conn, self._rater(conn, rater).id)
            if row is not None and not (
                row.kind == "regular" and row.claimed_at <= now - self.lease_seconds
            ):
                return self._task(conn, row)
        with self._write() as conn:
            rater_row = self._rater(conn, rater)
            row = self._open_task(conn, rater_row.id)
            if row is not None:
                if not self._lost(conn, row, now):
                    if row.kind == "regular" and row.claimed_at <= now - self.lease_seconds:
                        conn.execute(
                            tasks_table.update()
                            .where(tasks_table.c.id == row.id)
                            .values(claimed_at=now)
                        )
                    return self._task(conn, row)
                conn.execute(
                    tasks_table.update().where(tasks_table.c.id == row.id).values(withdrawn_at=now)
                )
            return self._claim(conn, rater_row.id, now)

    def _claim(self, conn: Any, rater_id: int, now: float) -> Task | None:
        slot = self._rated_count(conn, rater_id) + 1
        pk = self._next_regular(conn, rater_id, now)
        if pk is None:
            return None
        kind: TaskKind = "regular"
        rng = random.Random(f"{self.seed}:{rater_id}:{slot}")
        if self.gold_every and slot % self.gold_every == 0:
            gold = self._gold_candidates(conn, rater_id)
            if gold:
                pk, kind = rng.choice(gold), "gold"
        if kind == "regular" and self.repeat_every and slot % self.repeat_every == 0:
            repeats = self._repeat_candidates(conn, rater_id)
            if repeats:
                pk, kind = rng.choice(repeats), "repeat"
        task_id = conn.execute(
            tasks_table.insert().values(
                rater_id=rater_id, clip_pk=pk, kind=kind, slot=slot, claimed_at=now
            )
        ).inserted_primary_key[0]
        return Task(task_id, kind, self._by_pk[pk], slot)

    def _next_regular(self, conn: Any, rater_id: int, now: float) -> int | None:
        load = self._load(now).subquery()
        n = sa.func.coalesce(load.c.n, 0)
        had = sa.select(tasks_table.c.clip_pk).where(
            tasks_table.c.rater_id == rater_id, tasks_table.c.kind == "regular"
        )
        joined = clips_table.outerjoin(load, load.c.clip_pk == clips_table.c.id)
        order = [n]
        if self.assign != "balanced":  # among equals, the highest priority first
            joined = joined.outerjoin(
                clip_priority_table, clip_priority_table.c.clip_pk == clips_table.c.id
            )
            order.append(sa.func.coalesce(clip_priority_table.c.priority, 0.0).desc())
        return conn.execute(
            sa.select(clips_table.c.id)
            .select_from(joined)
            .where(
                sa.not_(clips_table.c.is_gold),
                n < self.raters_per_clip,
                clips_table.c.id.not_in(had),
            )
            .order_by(*order, clips_table.c.position)
            .limit(1)
        ).scalar()

    def _gold_candidates(self, conn: Any, rater_id: int) -> list[int]:
        had = sa.select(tasks_table.c.clip_pk).where(tasks_table.c.rater_id == rater_id)
        return list(
            conn.execute(
                sa.select(clips_table.c.id)
                .where(clips_table.c.is_gold, clips_table.c.id.not_in(had))
                .order_by(clips_table.c.position)
            ).scalars()
        )

    def _repeat_candidates(self, conn: Any, rater_id: int) -> list[int]:
        rated = list(
            conn.execute(
                sa.select(tasks_table.c.clip_pk)
                .select_from(tasks_table.join(ratings_table))
                .where(tasks_table.c.rater_id == rater_id, tasks_table.c.kind == "regular")
                .order_by(ratings_table.c.id)
            ).scalars()
        )
        repeated = set(
            conn.execute(
                sa.select(tasks_table.c.clip_pk).where(
                    tasks_table.c.rater_id == rater_id, tasks_table.c.kind == "repeat"
                )
            ).scalars()
        )
        recent = rated[-RECENT_EXCLUDED:]
        return sorted(pk for pk in rated if pk not in repeated and pk not in recent)

    def _owned_task(self, conn: Any, rater: RaterRow | str, task_id: int) -> tuple[RaterRow, Any]:
        rater_row = self._rater(conn, rater)
        row = None
        if isinstance(task_id, int) and not isinstance(task_id, bool):
            row = conn.execute(sa.select(tasks_table).where(tasks_table.c.id == task_id)).first()
        if row is None or row.rater_id != rater_row.id:
            raise CampaignError(
                f"rater {rater_row.name!r} has no task {task_id!r}",
                "this task is not open for you: reload the page for your current clip",
            )
        return rater_row, row

    def submit(
        self, rater: RaterRow | str, task_id: int, submission_id: str, answers: Answers
    ) -> Literal["recorded", "already recorded"]:
        """Store the rater's answers to their task, committed before this returns.

        The same task submitted again (any ``submission_id``) is ``"already recorded"`` and
        keeps the first answers. Raises :class:`CampaignError` for a task that is not the
        rater's, a withdrawn task, a ``submission_id`` used for another task, or answers of
        another config.
        """
        if not isinstance(answers, Answers) or answers.config != self.config:
            raise CampaignError(
                f"task {task_id!r}: answers are not {self.config} answers",
                "the answers do not fit this campaign",
            )
        if (
            not isinstance(submission_id, str)
            or not submission_id
            or len(submission_id) > MAX_SUBMISSION_ID_CHARS
        ):
            raise CampaignError(
                f"task {task_id!r}: submission id must be 1..{MAX_SUBMISSION_ID_CHARS} characters",
                f"the submission id must be 1..{MAX_SUBMISSION_ID_CHARS} characters",
            )
        now = self.clock()
        with self._write() as conn:
            rater_row, task = self._owned_task(conn, rater, task_id)
            done = conn.execute(
                sa.select(ratings_table.c.id).where(ratings_table.c.task_id == task.id)
            ).first()
            if done is not None:
                return "already recorded"
            used = conn.execute(
                sa.select(ratings_table.c.task_id).where(
                    ratings_table.c.submission_id == submission_id
                )
            ).first()
            clip = self._by_pk[task.clip_pk].id
            if used is not None:
                raise CampaignError(
                    f"rater {rater_row.name!r}, task {task.id} (clip {clip!r}): submission "
                    f"{submission_id!r} was already used for task {used.task_id}",
                    "this submission id was already used: reload the page for your current clip",
                )
            if task.withdrawn_at is not None or self._lost(conn, task, now):
                raise CampaignError(
                    f"rater {rater_row.name!r}, task {task.id} (clip {clip!r}): the task was "
                    f"withdrawn (held longer than {self.lease_seconds / 60:g} min while other "
                    f"raters completed the clip)",
                    f"this clip was kept open longer than {self.lease_seconds / 60:g} min and "
                    "has been rated by others meanwhile: reload the page for your next clip",
                )
            conn.execute(
                ratings_table.insert().values(
                    task_id=task.id,
                    submission_id=submission_id,
                    answers=answers.to_json(),
                    submitted_at=now,
                )
            )
            if self.assign == "disagreement" and task.kind == "regular":
                self._update_priorities(conn, [task.clip_pk])
        return "recorded"

    def audio_path_for(self, rater: RaterRow | str, task_id: int) -> str:
        """The audio file of one of the rater's own tasks."""
        with self._read() as conn:
            _, task = self._owned_task(conn, rater, task_id)
        return self._by_pk[task.clip_pk].audio_path

    # --- results -------------------------------------------------------------------------
    def ratings(self, kinds: Iterable[TaskKind] = ("regular",)) -> list[StoredRating]:
        """The ratings of tasks of ``kinds``, in order of arrival."""
        kinds = tuple(kinds)
        unknown = [k for k in kinds if k not in TASK_KINDS]
        if unknown:
            raise CampaignError(f"unknown task kinds {unknown}; expected {', '.join(TASK_KINDS)}")
        query = (
            sa.select(
                ratings_table.c.id,
                raters_table.c.name,
                tasks_table.c.clip_pk,
                tasks_table.c.kind,
                ratings_table.c.answers,
                ratings_table.c.submitted_at,
            )
            .select_from(ratings_table.join(tasks_table).join(raters_table))
            .where(tasks_table.c.kind.in_(kinds))
            .order_by(ratings_table.c.id)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [
            StoredRating(
                r.id,
                r.name,
                self._by_pk[r.clip_pk].id,
                r.kind,
                Answers.from_json(r.answers),
                r.submitted_at,
            )
            for r in rows
        ]

    def progress(self) -> dict[str, Any]:
        """Counts for the dashboard: ``clips``, ``raters_per_clip``, ``target_ratings``
        (clips x K), ``regular_ratings``, ``clips_complete`` (K regular ratings) and
        ``raters``: name -> ratings by kind (``regular``, ``repeat``, ``gold``, ``total``)."""
        per_clip: dict[int, int] = {}
        raters: dict[str, dict[str, int]] = {}
        with self._read() as conn:
            for (name,) in conn.execute(sa.select(raters_table.c.name).order_by(raters_table.c.id)):
                raters[name] = {kind: 0 for kind in TASK_KINDS} | {"total": 0}
            rows = conn.execute(
                sa.select(
                    raters_table.c.name, tasks_table.c.kind, tasks_table.c.clip_pk
                ).select_from(ratings_table.join(tasks_table).join(raters_table))
            ).all()
        for name, kind, pk in rows:
            raters[name][kind] += 1
            raters[name]["total"] += 1
            if kind == "regular":
                per_clip[pk] = per_clip.get(pk, 0) + 1
        k = self.raters_per_clip
        return {
            "clips": len(self._regular),
            "raters_per_clip": k,
            "target_ratings": len(self._regular) * k,
            "regular_ratings": sum(per_clip.values()),
            "clips_complete": sum(n >= k for n in per_clip.values()),
            "raters": raters,
        }

    # --- attached scorers ----------------------------------------------------------------
    def attach(self, scorer: AttachedScorer) -> AttachedScorer:
        """Register ``scorer`` under its name; returns it, or the entry already registered
        for the same name and scorer id (an attach that resumes).

        Raises:
            CampaignError: the name belongs to another scorer id, or the scorer id is attached
                under another name.
        """
        with self._write() as conn:
            for column, value in (("name", scorer.name), ("scorer_id", scorer.scorer_id)):
                row = conn.execute(
                    sa.select(scorers_table).where(scorers_table.c[column] == value)
                ).first()
                if row is None:
                    continue
                if row.name == scorer.name and row.scorer_id == scorer.scorer_id:
                    return _attached(row)
                raise CampaignError(
                    f"{self.where}: scorer {row.scorer_id} ({row.spec}) is attached as "
                    f"{row.name!r}; this is scorer {scorer.scorer_id} ({scorer.spec}) as "
                    f"{scorer.name!r}: "
                    + ("give it another --name" if column == "name" else f"use --name {row.name}")
                )
            conn.execute(
                scorers_table.insert().values(
                    name=scorer.name, scorer_id=scorer.scorer_id, spec=scorer.spec,
                    description=scorer.description, dimensions=list(scorer.dimensions),
                    content_pass=scorer.content_pass, attached_at=scorer.attached_at,
                )
            )  # fmt: skip
        return scorer

    def attached_scorers(self) -> list[AttachedScorer]:
        """The attached scorers, in order of attachment."""
        with self._read() as conn:
            rows = conn.execute(sa.select(scorers_table).order_by(scorers_table.c.id)).all()
        return [_attached(r) for r in rows]

    def scorer_results(self, scorer_id: str) -> dict[str, StoredScore]:
        """Clip id -> the stored result of ``scorer_id`` (regular clips it was run on)."""
        with self._read() as conn:
            rows = conn.execute(
                sa.select(clip_scores_table).where(clip_scores_table.c.scorer_id == scorer_id)
            ).all()
        out = {}
        for r in rows:
            clip_id = self._by_pk[r.clip_pk].id
            out[clip_id] = StoredScore(clip_id, dict(r.result), r.error_kind, r.scored_at)
        return out

    def store_results(
        self, scorer_id: str, results: Sequence[tuple[str, dict[str, Any], str | None]]
    ) -> None:
        """Store ``(clip id, result, error kind or None)`` of ``scorer_id`` in one transaction,
        replacing the clips' earlier results of it, and update their priorities (a rule other
        than ``balanced``)."""
        now = self.clock()
        unknown = [c for c, _, _ in results if c not in self._pk or self._by_pk[self._pk[c]].gold]
        if unknown:
            raise CampaignError(f"{self.where}: no clip {unknown[0]!r} in the campaign proper")
        pks = [self._pk[c] for c, _, _ in results]
        with self._write() as conn:
            table = clip_scores_table
            conn.execute(
                table.delete().where(table.c.scorer_id == scorer_id, table.c.clip_pk.in_(pks))
            )
            if results:
                conn.execute(
                    table.insert(),
                    [{"scorer_id": scorer_id, "clip_pk": pk, "result": result,
                      "error_kind": kind, "scored_at": now}
                     for pk, (_, result, kind) in zip(pks, results, strict=True)],
                )  # fmt: skip
            self._update_priorities(conn, pks)

    def _update_priorities(self, conn: Any, pks: Sequence[int]) -> None:
        """Recompute the priority of the clips ``pks`` under the campaign's rule
        (:func:`.assign.priority`) from every attached scorer's results and their ratings."""
        if self.assign == "balanced" or not pks:
            return
        attached = sa.select(scorers_table.c.scorer_id)
        scored = conn.execute(
            sa.select(clip_scores_table.c.clip_pk, clip_scores_table.c.result).where(
                clip_scores_table.c.clip_pk.in_(pks),
                clip_scores_table.c.scorer_id.in_(attached),
                clip_scores_table.c.error_kind.is_(None),
            )
        ).all()
        results: dict[int, list[dict[str, Any]]] = {pk: [] for pk in pks}
        for pk, result in scored:
            results[pk].append(result)
        ratings: dict[int, list[Answers]] = {pk: [] for pk in pks}
        if self.assign == "disagreement":  # a rater has one regular task per clip at most
            rows = conn.execute(
                sa.select(tasks_table.c.clip_pk, ratings_table.c.answers)
                .select_from(ratings_table.join(tasks_table))
                .where(tasks_table.c.clip_pk.in_(pks), tasks_table.c.kind == "regular")
            ).all()
            for pk, answers in rows:
                ratings[pk].append(Answers.from_json(answers))
        table = clip_priority_table
        conn.execute(table.delete().where(table.c.clip_pk.in_(pks)))
        conn.execute(
            table.insert(),
            [{"clip_pk": pk, "priority": priority(self.assign, self.config, results[pk],
                                                  ratings[pk])} for pk in results],
        )  # fmt: skip

    def priorities(self) -> dict[str, float]:
        """Clip id -> its stored priority (clips without one have 0; none under ``balanced``)."""
        with self._read() as conn:
            rows = conn.execute(sa.select(clip_priority_table)).all()
        return {self._by_pk[r.clip_pk].id: r.priority for r in rows}


def _attached(row: Any) -> AttachedScorer:
    return AttachedScorer(row.name, row.scorer_id, row.spec, row.description,
                          tuple(row.dimensions), row.content_pass, row.attached_at)  # fmt: skip


def _upgrade(engine: Any) -> None:
    """Bring a version-1 campaign (before attached scorers) to this version, in one
    transaction: the dealing rule it had (``balanced``) is recorded and the new tables are
    created. Any other version is left as it is (:class:`Campaign` refuses it)."""
    with engine.connect() as conn:
        conn.execution_options(campaign_write=True)
        with conn.begin():
            version = conn.execute(
                sa.select(meta_table.c.schema_version).with_for_update()
            ).scalar_one()
            if version != 1:
                return
            conn.exec_driver_sql(
                f"ALTER TABLE meta ADD COLUMN assign VARCHAR(16) DEFAULT '{DEFAULT_RULE}' NOT NULL"
            )
            metadata.create_all(conn, tables=ADDED_IN_2)
            conn.execute(meta_table.update().values(schema_version=SCHEMA_VERSION))


def _has_campaign(engine: Any) -> bool:
    return sa.inspect(engine).has_table("meta")


def open_campaign(
    target: str, *, lease_seconds: float = LEASE_SECONDS, clock: Callable[[], float] = time.time
) -> Campaign:
    """Open the campaign at ``target`` (a SQLite file path or a SQLAlchemy URL).

    ``lease_seconds`` and ``clock`` (Unix seconds) set how long a claim holds its clip.
    """
    url = _url(str(target))
    where = _describe(str(target))
    if url.get_backend_name() == "sqlite" and not Path(url.database).is_file():
        raise CampaignError(f"{where}: no campaign there (speech-drame campaign create makes one)")
    engine = _engine(url)
    try:
        if not _has_campaign(engine):
            raise CampaignError(f"{where}: no campaign there (no 'meta' table)")
        _upgrade(engine)
        return Campaign(engine, where, lease_seconds=lease_seconds, clock=clock)
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        raise CampaignError(f"{where}: cannot open the campaign ({exc.orig})") from None
    except BaseException:
        engine.dispose()
        raise


def _check_clips(clips: Sequence[CampaignClip], gold: Sequence[CampaignClip]) -> None:
    if not clips:
        raise CampaignError("a campaign needs at least one clip")
    seen: dict[str, str] = {}
    for label, group in (("clip", clips), ("gold clip", gold)):
        for clip in group:
            if not isinstance(clip, CampaignClip):
                raise CampaignError(f"{label} {clip!r}: expected a CampaignClip")
            if (label == "gold clip") != (clip.gold is not None):
                raise CampaignError(f"{label} {clip.id!r}: gold expectations misplaced")
            if clip.id in seen:
                raise CampaignError(f"{label} {clip.id!r}: id already used by a {seen[clip.id]}")
            seen[clip.id] = label


def _check_count(name: str, value: Any, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise CampaignError(f"{name} must be an integer >= {low}, got {value!r}")
    return value


def create_campaign(
    target: str,
    config: Config,
    clips: Sequence[CampaignClip],
    gold: Sequence[CampaignClip] = (),
    raters_per_clip: int = 3,
    repeat_every: int = 0,
    gold_every: int = 0,
    seed: int = 0,
    *,
    assign: str = DEFAULT_RULE,
    lease_seconds: float = LEASE_SECONDS,
    clock: Callable[[], float] = time.time,
) -> tuple[Campaign, str]:
    """Create a campaign at ``target`` (a new SQLite file, or a PostgreSQL database without
    one) from ``clips`` (positions: their order) and ``gold`` clips, dealt by the rule
    ``assign`` (:mod:`.assign`); returns it and the admin token (shown once)."""
    config = check_config(config)
    try:
        check_rule(assign)
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    _check_count("raters per clip", raters_per_clip, 1)
    _check_count("repeat_every", repeat_every, 0)
    _check_count("gold_every", gold_every, 0)
    _check_count("seed", seed, 0)
    _check_clips(clips, gold)
    if gold_every and not gold:
        raise CampaignError("gold_every needs gold clips")
    if gold and not gold_every:
        raise CampaignError(f"{len(gold)} gold clips given but gold_every is 0 (never shown)")
    url = _url(str(target))
    where = _describe(str(target))
    sqlite_path = Path(url.database) if url.get_backend_name() == "sqlite" else None
    if sqlite_path is not None:
        if sqlite_path.exists():
            raise CampaignError(f"{where}: already exists; a campaign is created in a new file")
        if not sqlite_path.parent.is_dir():
            raise CampaignError(f"{where}: folder {sqlite_path.parent} does not exist")
    engine = _engine(url)
    token, digest = _new_token()
    try:
        if _has_campaign(engine):
            raise CampaignError(f"{where}: already holds a campaign")
        with engine.connect() as conn:
            conn.execution_options(campaign_write=True)
            with conn.begin():
                metadata.create_all(conn)
                conn.execute(
                    meta_table.insert().values(
                        id=1,
                        config=config,
                        raters_per_clip=raters_per_clip,
                        repeat_every=repeat_every,
                        gold_every=gold_every,
                        seed=seed,
                        created=clock(),
                        admin_token_sha256=digest,
                        schema_version=SCHEMA_VERSION,
                        assign=assign,
                    )
                )
                rows = [
                    {
                        "clip_id": clip.id,
                        "is_gold": is_gold,
                        "position": position,
                        "data": {
                            "audio_path": clip.audio_path,
                            "context": clip.context,
                            "extra": clip.extra,
                            "gold": clip.gold,
                        },
                    }
                    for is_gold, group in ((False, clips), (True, gold))
                    for position, clip in enumerate(group)
                ]
                conn.execute(clips_table.insert(), rows)
        campaign = Campaign(engine, where, lease_seconds=lease_seconds, clock=clock)
    except BaseException as exc:
        engine.dispose()
        if sqlite_path is not None:  # the file did not exist before
            for suffix in ("", "-wal", "-shm"):
                Path(f"{sqlite_path}{suffix}").unlink(missing_ok=True)
        if isinstance(exc, sa.exc.DBAPIError):
            raise CampaignError(f"{where}: cannot create the campaign ({exc.orig})") from None
        raise
    return campaign, token
