"""`speech-drame features`: every distinct clip computed by exactly one rank, into one cache."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf
from conftest import LIBRIVOX, archetype_record, free_port, realism_record, write_release

from speech_drame import cli
from speech_drame.audio import AudioError
from speech_drame.features import shard
from speech_drame.features.blueprint import EXTRACTORS
from speech_drame.features.cache import FeatureCache
from speech_drame.scorers.lite.training import extract_split

# row id -> librivox clip: 0870 is in two configs, 0920 in two rows of one split
ROWS = {
    "archetype_data/train.jsonl": {"a0870": "0870", "a0880": "0880"},
    "archetype_data/test.jsonl": {"a0890": "0890"},
    "realism_data/train.jsonl": {"r0870": "0870", "r0920": "0920"},
    "realism_data/test.jsonl": {"r0930": "0930", "r0920b": "0920"},
}
DISTINCT = 5
PARTS = [("archetype", "train"), ("archetype", "test"), ("realism", "train"), ("realism", "test")]
SUMMARY = re.compile(
    r"features (\S+ \S+|\d+/\d+): (\d+) clip\(s\) of (\d+) row\(s\): (\d+) computed, "
    r"(\d+) already cached, (\d+) failed"
)


def _reference(keys: list[str], world: int) -> dict[int, set[str]]:
    """Distinct keys by first appearance, dealt out one by one."""
    distinct: list[str] = []
    for key in keys:
        if key not in distinct:
            distinct.append(key)
    return {r: {k for i, k in enumerate(distinct) if i % world == r} for r in range(world)}


@pytest.mark.parametrize("world", [1, 2, 3, 5])
def test_every_clip_belongs_to_one_rank_and_repeats_follow_their_first(world) -> None:
    rng = random.Random(world)
    keys = [f"k{rng.randrange(40)}" for _ in range(200)]
    ranks = shard.owners(keys, world)
    owned = {r: {k for k, o in zip(keys, ranks, strict=True) if o == r} for r in range(world)}
    assert owned == _reference(keys, world)
    assert set().union(*owned.values()) == set(keys)
    assert sum(map(len, owned.values())) == len(set(keys))  # disjoint
    sizes = [len(v) for v in owned.values()]
    assert max(sizes) - min(sizes) <= 1
    assert all(ranks[keys.index(k)] == o for k, o in zip(keys, ranks, strict=True))


def test_a_world_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="world size"):
        shard.owners(["a"], 0)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A release of 7 rows over both configs and 4 splits, made of 5 distinct clips."""
    from speech_drame.data.build import build_dataset

    root = tmp_path_factory.mktemp("sharding")
    files, audio = {}, {}
    for rel, rows in ROWS.items():
        make = archetype_record if rel.startswith("archetype") else realism_record
        files[rel] = [make(rid) for rid in rows]
        for rid, clip in rows.items():
            audio[rid] = sf.read(LIBRIVOX / f"sense_and_sensibility_01_austen_64kb-{clip}.wav",
                                 dtype="float32")[0]  # fmt: skip
    write_release(root / "release", files, audio)
    build_dataset(root / "release", root / "ds", progress=False, license_id="cc-by-4.0")
    return root / "ds"


def test_repeated_audio_is_one_clip_of_one_rank(dataset) -> None:
    rows = list(shard.read_rows(shard.split_streams(dataset, PARTS)))
    key = {row.where.split(" ")[1]: row.key for row in rows}
    assert len(rows) == 7 and len(set(key.values())) == DISTINCT
    assert key["a0870"] == key["r0870"] and key["r0920"] == key["r0920b"]
    ranks = dict(zip(key, shard.owners([r.key for r in rows], 2), strict=True))
    assert ranks["a0870"] == ranks["r0870"] and ranks["r0920"] == ranks["r0920b"]


def test_splits_are_checked_against_the_card(dataset) -> None:
    assert shard.dataset_parts(dataset, ["archetype", "realism"], None) == PARTS
    assert shard.dataset_parts(dataset, ["realism"], ["test"]) == [("realism", "test")]
    with pytest.raises(ValueError, match="no split test_real"):
        shard.dataset_parts(dataset, ["archetype", "realism"], ["train", "test_real"])


@pytest.fixture(scope="module")
def sharded(dataset, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """`accelerate launch` of 2 CPU processes filling a fresh cache."""
    cache = tmp_path_factory.mktemp("cache")
    accelerate = Path(sys.executable).with_name("accelerate")
    command = [str(accelerate), "launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(free_port()), "-m", "speech_drame.cli", "features",
               "--dataset", str(dataset), "--cache", str(cache), "--quiet"]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    return done, cache


def _summaries(stdout: str) -> dict[str, tuple[int, ...]]:
    return {m[1]: tuple(map(int, m.groups()[1:])) for m in SUMMARY.finditer(stdout)}


@pytest.mark.slow
def test_two_processes_compute_each_clip_once_into_one_cache(sharded, dataset) -> None:
    done, cache = sharded
    assert done.returncode == 0, done.stderr[-3000:]
    reports = _summaries(done.stdout)
    assert set(reports) == {"0/2", "1/2", "all 2"}, done.stdout
    # (clips, rows, computed, cached, failed): 3 and 2 clips dealt out, nothing twice
    assert reports["0/2"] == (3, 7, 3, 0, 0) and reports["1/2"] == (2, 7, 2, 0, 0)
    assert reports["all 2"] == (DISTINCT, 7, DISTINCT, 0, 0)
    for name, (version, _, _) in EXTRACTORS.items():
        assert len(list((cache / name / f"v{version}").rglob("*.json"))) == DISTINCT, name
    # 5 transcripts, the archetype question and the realism profile, scene and traits
    assert len(list((cache / "text").rglob("*.json"))) == DISTINCT + 4

    store = FeatureCache(cache)
    for config, split in PARTS:
        got = extract_split(dataset, config, split, store, progress=False)
        assert not got.failures and len(got.ids) == len(ROWS[f"{config}_data/{split}.jsonl"])
    assert store.misses == 0 and store.hits > 0


@pytest.mark.slow
def test_explicit_ranks_report_their_own_part_and_failures_fail_the_run(
    sharded, dataset, monkeypatch, capsys
) -> None:
    _, cache = sharded
    args = ["features", "--dataset", str(dataset), "--cache", str(cache), "--quiet"]
    assert cli.main([*args, "--rank", "1", "--world-size", "2"]) == 0
    assert _summaries(capsys.readouterr().out) == {"1/2": (2, 7, 0, 2, 0)}

    def unreadable(source, **kwargs):
        raise AudioError("clip", "cannot decode")

    monkeypatch.setattr(shard, "load_audio", unreadable)
    assert cli.main([*args, "--config", "realism", "--splits", "test"]) == 1
    out = capsys.readouterr().out
    assert _summaries(out) == {"0/1": (2, 2, 0, 0, 2)}
    assert "realism/test r0930: clip: cannot decode" in out
