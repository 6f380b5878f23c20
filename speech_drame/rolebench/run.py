"""RoleBench runs: score every system's responses to a scenario set, resumably and in shards.

Each *system* is a folder of response audio whose file names are scenario ids
(:mod:`speech_drame.rolebench.scenarios`). Any :class:`~speech_drame.scorers.base.Scorer`
rates them (``lite[:PATH]``, ``drame-eval:...``, ``judge:...``;
:func:`speech_drame.scorers.specs.load_scorer`), a chunk of clips per call.

Every scored (system, scenario, context hash, scorer id, audio sha256) is a row of an
append-only results file (:mod:`speech_drame.rolebench.results_log`); the latest row of a key
is its result. A rerun skips done work: a scored clip, and a clip that failed for a reason
that scoring it again cannot change (``error_kind == "input"``: unreadable audio, no speech).
A clip that failed for a transient reason (``"model"``: out of memory, a runtime error of the
model, a failed endpoint) is scored again by every rerun; ``retry_failed`` rescores input
failures too. A killed run resumes without duplicate or lost rows. Shards (``rank`` of
``world_size`` processes) write their own files, which one process merges: rank 0 after a
barrier under ``accelerate``/``torchrun``, otherwise the last shard to finish
(:func:`finish_shard`). Missing files are listed at report time
(:mod:`speech_drame.rolebench.report`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_json
from speech_drame.audio import AUDIO_SUFFIXES
from speech_drame.paths import id_path
from speech_drame.rolebench.results_log import ResultsLog, latest_rows, read_rows
from speech_drame.rolebench.scenarios import Scenario, ScenarioSet

# the key of a result: who answered which scenario (and its context texts), rated by whom, and
# the exact audio; a changed file, context or scorer is a new key
KEY_FIELDS = ("system", "scenario", "context", "scorer", "sha256")
RESULTS_FILE = "results.jsonl"
SHARD_GLOB = "results.rank*.jsonl"
DONE_GLOB = "shard.rank*.done"  # markers of finished shards (see finish_shard)


# --- systems and work ------------------------------------------------------------------------


def find_response(folder: Path, scenario_id: str) -> Path | None:
    """``<folder>/<scenario id><suffix>`` for the first audio suffix that exists.

    Raises:
        ValueError: the id is not a plain file name (:func:`speech_drame.paths.safe_name`).
    """
    for suffix in AUDIO_SUFFIXES:
        path = id_path(folder, scenario_id, suffix, "scenario id")
        if path.is_file():
            return path
    return None


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class WorkItem:
    system: str
    scenario: Scenario
    path: Path
    sha256: str

    def key(self, scorer_id: str) -> tuple:
        """This item's result key (:data:`KEY_FIELDS`) for ``scorer_id``."""
        return (self.system, self.scenario.id, self.scenario.context_hash, scorer_id, self.sha256)


@dataclass
class Plan:
    """What a run has to do: items with audio, and per system the scenarios without a file."""

    items: list[WorkItem]
    missing: dict[str, list[str]] = field(default_factory=dict)


def plan_work(scenarios: ScenarioSet, systems: Mapping[str, str | os.PathLike]) -> Plan:
    """Pair every system with every scenario; hashes the response files (no decoding)."""
    plan = Plan([], {})
    for system in sorted(systems):
        folder = Path(systems[system])
        if not folder.is_dir():
            raise FileNotFoundError(f"system {system!r}: folder {folder} does not exist")
        plan.missing[system] = []
        for s in scenarios.scenarios:
            path = find_response(folder, s.id)
            if path is None:
                plan.missing[system].append(s.id)
            else:
                plan.items.append(WorkItem(system, s, path, file_sha256(path)))
    return plan


def shard(items: Sequence[Any], rank: int, world_size: int) -> list[Any]:
    """The items process ``rank`` of ``world_size`` handles (round robin over a fixed order)."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world_size, got rank {rank} of {world_size}")
    return list(items[rank::world_size])


def results_path(out: str | os.PathLike, rank: int = 0, world_size: int = 1) -> Path:
    """``results.jsonl`` for a single process, ``results.rank<r>.jsonl`` for a shard."""
    name = RESULTS_FILE if world_size == 1 else f"results.rank{rank}.jsonl"
    return Path(out) / name


def read_results(out: str | os.PathLike) -> list[dict[str, Any]]:
    """The latest row of every key in the run folder (the main file, then the shard files,
    whose rows are newer than the main file's: they are merged into it, in that order)."""
    out = Path(out)
    rows = read_rows(out / RESULTS_FILE)
    for path in sorted(out.glob(SHARD_GLOB)):
        rows += read_rows(path)
    return latest_rows(rows, KEY_FIELDS)


def _canonical(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def merge_shards(out: str | os.PathLike) -> int:
    """Append the shard files' rows to ``results.jsonl`` (in shard order, each file's rows in
    the order written), then remove the shard files and the finished-shard markers
    (:func:`finish_shard`).

    Every row is appended (a later row of a key supersedes an earlier one) except a row that
    is already in the main file verbatim: a merge interrupted after appending and rerun adds
    nothing twice. A shard file is removed only after its rows are in the main file. Returns
    the number of rows appended.
    """
    out = Path(out)
    present = {_canonical(r) for r in read_rows(out / RESULTS_FILE)}
    shards = sorted(out.glob(SHARD_GLOB))
    added = 0
    with ResultsLog(out / RESULTS_FILE) as log:
        for path in shards:
            for row in read_rows(path):
                canonical = _canonical(row)
                if canonical not in present:
                    log.append(row)
                    present.add(canonical)
                    added += 1
    for path in shards:
        path.unlink()
    for path in out.glob(DONE_GLOB):
        path.unlink()
    return added


def plan_digest(plan: Plan, scorer_id: str) -> str:
    """A fingerprint of the work (items, response hashes) and the scorer of a sharded run."""
    h = hashlib.sha256(scorer_id.encode())
    for it in plan.items:
        h.update(("\n" + "\0".join(it.key(scorer_id))).encode())
    return h.hexdigest()[:16]


def finish_shard(out: str | os.PathLike, rank: int, world_size: int, digest: str) -> bool:
    """Record that shard ``rank`` of ``world_size`` is done; True for the last one to finish.

    Under an exclusive lock on ``OUT/.shards.lock``, the shard writes ``shard.rank<r>.done``
    (its world size and :func:`plan_digest`) and counts the markers of the same run, so exactly
    one shard sees them all: that one merges (:func:`merge_shards` removes the markers). A shard
    rerun after a crash counts again, and markers of another plan or world size do not count.
    """
    import fcntl

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    me = {"rank": rank, "world_size": world_size, "plan": digest}
    with open(out / ".shards.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        write_json(out / f"shard.rank{rank}.done", me)
        finished = set()
        for path in out.glob(DONE_GLOB):
            try:
                marker = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # unreadable: not a finished shard of this run
            if marker.get("world_size") == world_size and marker.get("plan") == digest:
                finished.add(marker.get("rank"))
        return finished == set(range(world_size))


# --- scoring -----------------------------------------------------------------------------------


def _row(item: WorkItem, scorer: Mapping[str, str], **values: Any) -> dict[str, Any]:
    """A results row of ``item``; ``scorer`` holds the scorer's ``scorer`` id and its
    ``scorer_description`` (every setting it uses), so a row read alone says how it was scored."""
    row = {
        "system": item.system,
        "scenario": item.scenario.id,
        "context": item.scenario.context_hash,
        **scorer,
        "sha256": item.sha256,
        "path": str(item.path),
    }
    if item.scenario.dialogue is not None:
        row["dialogue"], row["turn"] = item.scenario.dialogue, item.scenario.turn
    row.update(values)
    row["scored_at"] = round(time.time(), 3)
    return row


def _result_row(item: WorkItem, scorer: Mapping[str, str], result: Any) -> dict[str, Any]:
    """One clip's :class:`~speech_drame.scorers.base.ClipScores` as a results row; a failure
    keeps its ``error``, ``error_kind`` and the ``stage`` it failed at (``input``/``model``)."""
    values = result.to_dict()
    values.pop("id", None)
    if not result.ok:
        values["error_kind"] = result.error_kind or "model"
        values["stage"] = values["error_kind"]
    return _row(item, scorer, **values)


def score_items(
    items: Sequence[WorkItem],
    scorer: Any,
    log: ResultsLog,
    *,
    chunk: int | None = None,
    progress: bool = False,
) -> tuple[int, int]:
    """Score ``items`` with ``scorer`` (a :class:`~speech_drame.scorers.base.Scorer`), ``chunk``
    clips per :meth:`~speech_drame.scorers.base.Scorer.score` call (default its
    ``batch_size``), appending one row per item to ``log`` after each call.

    Every row names the scorer by ``scorer`` (its id) and ``scorer_description``. A scored row
    carries ``scores``, ``distributions``, ``content_pass`` (when the scorer has
    one), ``label_mass`` and ``decoding`` (when the scorer has them; the report flags a low mass,
    :func:`speech_drame.rolebench.report.system_table`), ``transcript`` (when known),
    ``language`` and ``language_probability`` (the spoken language the scorer's ASR identified,
    when it runs one; rows without it read as ``unknown``) and ``audio``, what reading the clip
    measured and did (:class:`speech_drame.audio.AudioFacts`). A clip the scorer could not score
    gets a row with its ``error``, ``error_kind`` and ``stage``; a call that raises instead of answering makes
    every clip of its chunk a ``model`` failure at stage ``scorer``. ``progress`` shows a tqdm
    bar over the items on stderr. Returns the number of rows written and how many of them are
    failures.
    """
    from tqdm.auto import tqdm

    from speech_drame.scorers.base import ClipInput, ClipScores

    size = max(1, chunk or getattr(scorer, "batch_size", 1) or 1)
    scorer_id = scorer.id
    named = {"scorer": scorer_id, "scorer_description": scorer.description}
    written = failed = 0
    bar = tqdm(total=len(items), unit="clip", desc="scoring", disable=not progress)
    for start in range(0, len(items), size):
        part = items[start : start + size]
        clips = [
            ClipInput(f"{it.system}/{it.scenario.id}", str(it.path), it.scenario.context)
            for it in part
        ]
        try:
            results = scorer.score(clips)
            if len(results) != len(part):
                raise RuntimeError(f"returned {len(results)} results for {len(part)} clips")
        except Exception as exc:  # noqa: BLE001 - a failed call is a counted, retryable row
            why = f"the scorer failed on a chunk of {len(part)} clips: {type(exc).__name__}: {exc}"
            rows = [_row(it, named, error=f"{it.path}: {why}", error_kind="model",
                         stage="scorer") for it in part]  # fmt: skip
        else:
            rows = []
            for it, result in zip(part, results, strict=True):
                if not isinstance(result, ClipScores):
                    raise TypeError(f"{scorer_id}: score() returned {type(result).__name__}")
                rows.append(_result_row(it, named, result))
        for row in rows:
            log.append(row)
            written += 1
            failed += "error" in row
        bar.update(len(part))
    bar.close()
    return written, failed


def is_final(row: Mapping[str, Any] | None, retry_failed: bool = False) -> bool:
    """Whether a stored row settles its key: a scored clip, or (unless ``retry_failed``) a
    failure of kind ``input``. A ``model`` failure (or a failure of unknown kind) is not."""
    if row is None:
        return False
    if "error" not in row:
        return True
    return not retry_failed and row.get("error_kind") == "input"


def pending(
    items: Sequence[WorkItem],
    rows: Sequence[Mapping[str, Any]],
    scorer_id: str,
    *,
    retry_failed: bool = False,
) -> list[WorkItem]:
    """The items whose latest row for ``scorer_id`` (in ``rows``, oldest first) does not
    settle them (:func:`is_final`)."""
    latest = {tuple(r.get(f) for f in KEY_FIELDS): r for r in rows}
    return [it for it in items if not is_final(latest.get(it.key(scorer_id)), retry_failed)]


@dataclass
class RunSummary:
    rows_written: int
    already_done: int
    shard_items: int
    failed_now: int = 0  # of the rows written, failures (see the report for their reasons)


def run_shard(
    plan: Plan,
    out: str | os.PathLike,
    scorer: Any,
    *,
    rank: int = 0,
    world_size: int = 1,
    chunk: int | None = None,
    retry_failed: bool = False,
    progress: bool = False,
) -> RunSummary:
    """Score this process's shard of ``plan`` with ``scorer`` into its results file, skipping
    settled items (:func:`pending`; ``progress``: a tqdm bar over the items to score)."""
    mine = shard(plan.items, rank, world_size)
    todo = pending(mine, read_results(out), scorer.id, retry_failed=retry_failed)
    with ResultsLog(results_path(out, rank, world_size)) as log:
        written, failed = score_items(todo, scorer, log, chunk=chunk, progress=progress)
    return RunSummary(written, len(mine) - len(todo), len(mine), failed)
