"""RoleBench: score every system's responses to a scenario set, resumably and in shards.

A *scenario set* is an EvalBench config and split (a Hub-ready dataset folder), a JSONL of
archetype questions (``id, question``) or realism contexts (``id, char_profile|profile,
local_scene|scene, char_style|traits``), or a multi-turn JSONL of dialogues
(:mod:`speech_drame.multiturn`; every turn is a realism scenario). Each *system* is a folder of
response audio whose file names are scenario ids.

Every scored (system, scenario, scorer id, audio sha256) is one row of an append-only results
file (:mod:`speech_drame.results_log`): a rerun skips done work, a killed run resumes without
duplicate or lost rows, and shards (``rank`` of ``world_size`` processes) write their own files,
which one process merges: rank 0 after a barrier under ``accelerate``/``torchrun``, otherwise
the last shard to finish (:func:`finish_shard`). Missing files are listed at report time; unreadable audio,
failed feature extraction and scorer failures are stored as error rows with their reason.
:mod:`speech_drame.rolebench_report` turns the rows into the leaderboard.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speech_drame.atomic_io import write_json
from speech_drame.commands.score import AUDIO_SUFFIXES
from speech_drame.jsonl import read_objects
from speech_drame.paths import id_path, safe_name
from speech_drame.results_log import ResultsLog, read_rows, row_key, unique_rows
from speech_drame.schema import Config, check_config

KEY_FIELDS = ("system", "scenario", "scorer", "sha256")
RESULTS_FILE = "results.jsonl"
SHARD_GLOB = "results.rank*.jsonl"
DONE_GLOB = "shard.rank*.done"  # markers of finished shards (see finish_shard)
# scenario-file column -> scorer context name (official realism names first, short names too)
REALISM_COLUMNS = {"profile": ("char_profile", "profile"), "scene": ("local_scene", "scene"),
                   "traits": ("char_style", "traits")}  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    """One prompt a system answers: its id, mode and the scorer's context texts."""

    id: str
    mode: Config
    context: dict[str, str]
    dialogue: str | None = None  # multi-turn: the dialogue this turn belongs to
    turn: int | None = None


@dataclass(frozen=True)
class ScenarioSet:
    mode: Config
    scenarios: tuple[Scenario, ...]
    multi_turn: bool = False

    def dialogues(self) -> dict[str, list[str]]:
        """Multi-turn: dialogue id -> its scenario ids in turn order."""
        out: dict[str, list[str]] = {}
        for s in sorted(self.scenarios, key=lambda s: (s.dialogue or "", s.turn or 0)):
            out.setdefault(s.dialogue or "", []).append(s.id)
        return out


def _realism_context(obj: Mapping[str, Any], where: str) -> dict[str, str]:
    ctx = {}
    for name, columns in REALISM_COLUMNS.items():
        value = next((obj[c] for c in columns if obj.get(c)), None)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: needs a non-empty {' or '.join(columns)}")
        ctx[name] = value
    return ctx


def scenario_from_row(obj: Mapping[str, Any], mode: Config, where: str) -> Scenario:
    """A scenario from a JSONL object or dataset row; errors name ``where`` and the field."""
    sid = obj.get("id")
    if not isinstance(sid, (str, int)) or isinstance(sid, bool) or not str(sid).strip():
        raise ValueError(f"{where}: field 'id' must be a non-empty string, got {sid!r}")
    try:
        safe_name(str(sid), "scenario id")  # it names the response files
    except ValueError as exc:
        raise ValueError(f"{where}: field 'id': {exc}") from None
    if mode == "archetype":
        question = obj.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{where}: field 'question' must be a non-empty string")
        return Scenario(str(sid), mode, {"question": question})
    return Scenario(str(sid), mode, _realism_context(obj, where))


def _check_unique(scenarios: Sequence[Scenario], where: str) -> None:
    seen: set[str] = set()
    for s in scenarios:
        if s.id in seen:
            raise ValueError(f"{where}: scenario id {s.id!r} repeated")
        seen.add(s.id)


def load_scenario_file(path: str | os.PathLike, mode: Config | None = None) -> ScenarioSet:
    """Scenarios of a JSONL file; the mode is ``mode`` or read from the first row's fields.

    A file whose rows have ``turns`` is a multi-turn scenario file (realism context per turn).
    """
    from speech_drame import multiturn

    path = Path(path)
    rows = read_objects(path)
    if not rows:
        raise ValueError(f"{path}: no scenarios")
    first = rows[0][1]
    if "turns" in first:
        scenarios = [
            Scenario(
                t.scenario_id,
                "realism",
                {"profile": d.profile, "scene": d.scene, "traits": d.traits},
                d.dialogue_id,
                t.index,
            )
            for d in multiturn.load_scenarios(path)
            for t in d.turns
        ]
        return ScenarioSet("realism", tuple(scenarios), multi_turn=True)
    if mode is None:
        mode = "archetype" if "question" in first else "realism"
    mode = check_config(mode)
    scenarios = [scenario_from_row(obj, mode, where) for where, obj in rows]
    _check_unique(scenarios, str(path))
    return ScenarioSet(mode, tuple(scenarios))


def load_dataset_scenarios(folder: str | os.PathLike, config: Config, split: str) -> ScenarioSet:
    """Scenarios of an EvalBench config and split in a Hub-ready dataset folder (no audio read)."""
    import datasets

    config = check_config(config)
    ds = datasets.load_dataset(str(folder), config, split=split)
    ds = ds.remove_columns([c for c in ds.column_names if c in ("audio", "annotations")])
    where = f"{folder} {config}/{split}"
    scenarios = [scenario_from_row(row, config, f"{where} row {i}") for i, row in enumerate(ds)]
    _check_unique(scenarios, where)
    return ScenarioSet(config, tuple(scenarios))


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
    """Every row of the run folder (main file and shard files), one per key."""
    out = Path(out)
    rows = read_rows(out / RESULTS_FILE)
    for path in sorted(out.glob(SHARD_GLOB)):
        rows += read_rows(path)
    return unique_rows(rows, KEY_FIELDS)


def merge_shards(out: str | os.PathLike) -> int:
    """Append the shard files' new rows to ``results.jsonl``, then remove the shard files and
    the finished-shard markers (:func:`finish_shard`).

    Safe to interrupt: a shard file is removed only after its rows are in the main file, and
    reruns drop rows already there. Returns the number of rows appended.
    """
    out = Path(out)
    done = {row_key(r, KEY_FIELDS) for r in read_rows(out / RESULTS_FILE)}
    shards = sorted(out.glob(SHARD_GLOB))
    added = 0
    with ResultsLog(out / RESULTS_FILE) as log:
        for path in shards:
            for row in read_rows(path):
                key = row_key(row, KEY_FIELDS)
                if key not in done:
                    log.append(row)
                    done.add(key)
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
        h.update(f"\n{it.system}\0{it.scenario.id}\0{it.sha256}".encode())
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


def lite_scorer_id(scorer: Any) -> str:
    """``lite-<hash>`` of a LiteScorer's config and weights: rows of another scorer never match."""
    h = hashlib.sha256(json.dumps(scorer.config(), sort_keys=True).encode())
    for name, tensor in sorted(scorer.net.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().numpy().tobytes())
    return f"lite-{h.hexdigest()[:16]}"


def _row(item: WorkItem, scorer_id: str, **values: Any) -> dict[str, Any]:
    row = {
        "system": item.system,
        "scenario": item.scenario.id,
        "scorer": scorer_id,
        "sha256": item.sha256,
        "path": str(item.path),
    }
    if item.scenario.dialogue is not None:
        row["dialogue"], row["turn"] = item.scenario.dialogue, item.scenario.turn
    return {**row, **values}


def score_items(
    items: Sequence[WorkItem],
    scorer: Any,
    scorer_id: str,
    log: ResultsLog,
    *,
    workers: int = 1,
    cache: Any = "default",
    chunk: int | None = None,
    progress: bool = False,
) -> int:
    """Score ``items`` with a LiteScorer in chunks, appending one row per item to ``log``.

    Features of a chunk are extracted by ``workers`` threads; a clip that cannot be read or
    analysed, or that the scorer fails on, gets an error row naming the reason. A scored row
    carries ``audio``, what reading the clip measured and did (the 30 s cut, its peak and the
    gain that fitted it into [-1, 1]; :class:`speech_drame.audio.AudioFacts`). ``progress``
    shows a tqdm bar over the items on stderr. Returns the number of rows written.
    """
    from tqdm.auto import tqdm

    from speech_drame.features.blueprint import extract_blueprints

    size = chunk or 2 * workers
    written = 0
    bar = tqdm(total=len(items), unit="clip", desc="scoring", disable=not progress)
    for start in range(0, len(items), size):
        part = items[start : start + size]
        batch = extract_blueprints(
            [str(it.path) for it in part],
            [it.scenario.context for it in part],
            cache=cache,
            workers=workers,
            progress=False,
        )
        for i, it in enumerate(part):
            bp = batch.blueprints[i]
            if bp is None:
                row = _row(it, scorer_id, error=batch.errors[i], stage="audio/features")
            else:
                try:
                    (result,) = scorer.score_blueprints([bp])
                except Exception as exc:  # noqa: BLE001 - any scorer failure is a counted row
                    row = _row(it, scorer_id, error=f"{it.path}: {type(exc).__name__}: {exc}",
                               stage="scorer")  # fmt: skip
                else:
                    row = _row(
                        it,
                        scorer_id,
                        scores=result.scores,
                        content_pass=result.content_pass,
                        transcript=result.transcript,
                        audio=bp.audio.to_dict() if bp.audio is not None else None,
                    )
            log.append(row)
            written += 1
            bar.update()
    bar.close()
    return written


def pending(items: Sequence[WorkItem], done_rows: Sequence[Mapping[str, Any]], scorer_id: str):
    """The items without a row for ``scorer_id``."""
    done = {row_key(r, KEY_FIELDS) for r in done_rows}
    return [it for it in items if (it.system, it.scenario.id, scorer_id, it.sha256) not in done]


@dataclass
class RunSummary:
    rows_written: int
    already_done: int
    shard_items: int


def run_shard(
    plan: Plan,
    out: str | os.PathLike,
    scorer: Any,
    scorer_id: str,
    *,
    rank: int = 0,
    world_size: int = 1,
    workers: int = 1,
    cache: Any = "default",
    chunk: int | None = None,
    progress: bool = False,
) -> RunSummary:
    """Score this process's shard of ``plan`` into its results file, skipping done rows
    (``progress``: a tqdm bar over the items to score)."""
    mine = shard(plan.items, rank, world_size)
    todo = pending(mine, read_results(out), scorer_id)
    with ResultsLog(results_path(out, rank, world_size)) as log:
        written = score_items(todo, scorer, scorer_id, log, workers=workers, cache=cache,
                              chunk=chunk, progress=progress)  # fmt: skip
    return RunSummary(written, len(mine) - len(todo), len(mine))
