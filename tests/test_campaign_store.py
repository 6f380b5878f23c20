"""The campaign store (SQLite file here; tests/test_campaign_postgres.py runs the same ``check_*``
functions against PostgreSQL) and the campaign intake (official samples, JSONL, folders, gold).

Each ``check_*`` takes ``new_target(name) -> target``, a fresh campaign location (a SQLite path
or a PostgreSQL URL), and a real WAV file the clips point to.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import soundfile as sf
from campaign_scorers import PlantedScorer, hashed_truth
from conftest import OFFICIAL_SAMPLES, tone

from speech_drame.campaign.assign import disagreement
from speech_drame.campaign.attach import attach_scorer
from speech_drame.campaign.intake import read_clips, read_gold
from speech_drame.campaign.records import Answers, CampaignClip
from speech_drame.campaign.store import (
    Campaign,
    CampaignError,
    create_campaign,
    meta_table,
    open_campaign,
    raters_table,
    sa,
)
from speech_drame.scorers.base import ClipInput

NewTarget = Callable[[str], str]
QUESTION = "You are a lighthouse keeper. A storm is coming and a ship is lost. You say:"


class Clock:
    """A settable clock (Unix seconds) for lease tests."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def write_wav(path: Path, seed: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, tone(1.0, 16_000, 180.0 + 20 * seed, seed), 16_000, subtype="PCM_16")
    return path


def make_clips(wav: Path, n: int, prefix: str = "clip") -> list[CampaignClip]:
    return [
        CampaignClip(f"{prefix}{i:02d}", i, str(wav), {"question": f"{QUESTION} ({i})"})
        for i in range(n)
    ]


def make_gold(wav: Path, n: int) -> list[CampaignClip]:
    return [
        CampaignClip(f"gold{i}", i, str(wav), {"question": QUESTION}, gold={"content_pass": False})
        for i in range(n)
    ]


def answers(score: int = 3) -> Answers:
    scores = {"audio_quality": score, "human_likeness": score, "appropriateness": score}
    return Answers("archetype", scores, True, frozenset(), 3, {})


def rate_all(campaign: Campaign, raters: list[str]) -> list[tuple[str, str, str]]:
    """Round-robin: each rater rates one task per turn until all are done; returns
    (rater, kind, clip id) in order."""
    done: list[tuple[str, str, str]] = []
    active = list(raters)
    while active:
        for name in list(active):
            task = campaign.current_task(name)
            if task is None:
                active.remove(name)
                continue
            assert campaign.submit(name, task.task_id, uuid.uuid4().hex, answers()) == "recorded"
            done.append((name, task.kind, task.clip.id))
    return done


def raters_by_clip(campaign: Campaign) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for r in campaign.ratings():
        out[r.clip_id].append(r.rater)
    return out


# --- the behaviour both databases must show ------------------------------------------------
def check_balance_and_distinct_raters(new_target: NewTarget, wav: Path) -> None:
    campaign, _ = create_campaign(new_target("balance"), "archetype", make_clips(wav, 4), [], 2)
    for name in "abcde":
        campaign.add_rater(name)
    # open claims count: the fewest-loaded clip first, ties by position
    first = [campaign.current_task(name).clip.id for name in "abcde"]
    assert first == ["clip00", "clip01", "clip02", "clip03", "clip00"]
    task = campaign.current_task("a")
    campaign.submit("a", task.task_id, "a-1", answers())
    assert campaign.current_task("a").clip.id == "clip01"  # clip00 is full, a had it anyway
    rate_all(campaign, list("abcde"))
    by_clip = raters_by_clip(campaign)
    assert sorted(by_clip) == [c.id for c in campaign.clips()]
    for clip_id, names in by_clip.items():
        assert len(names) == 2 and len(set(names)) == 2, (clip_id, names)
    progress = campaign.progress()
    assert progress["clips"] == 4 and progress["target_ratings"] == 8
    assert progress["regular_ratings"] == 8 and progress["clips_complete"] == 4
    assert sum(r["regular"] for r in progress["raters"].values()) == 8
    assert all(campaign.current_task(name) is None for name in "abcde")
    campaign.close()


def check_resume(new_target: NewTarget, wav: Path) -> None:
    target = new_target("resume")
    campaign, _ = create_campaign(target, "archetype", make_clips(wav, 3), [], 1)
    token = campaign.add_rater("alice")
    rater = campaign.rater_by_token(token)
    task = campaign.current_task(rater)
    assert task.number == 1 and campaign.current_task("alice") == task
    campaign.close()
    with open_campaign(target) as again:  # a restarted server hands out the same task
        assert again.current_task(again.rater_by_token(token)) == task
        assert again.audio_path_for("alice", task.task_id) == str(wav)
        again.submit("alice", task.task_id, "s1", answers())
        after = again.current_task("alice")
        assert after.number == 2 and after.clip.id != task.clip.id


def check_repeats_and_gold(new_target: NewTarget, wav: Path) -> None:
    def run(name: str) -> list[tuple[str, str, int]]:
        campaign, _ = create_campaign(
            new_target(name), "archetype", make_clips(wav, 12), make_gold(wav, 2), 1, 5, 7, 11
        )
        campaign.add_rater("solo")
        seen = []
        while (task := campaign.current_task("solo")) is not None:
            assert task.number == len(seen) + 1
            seen.append((task.kind, task.clip.id, task.number))
            campaign.submit("solo", task.task_id, f"s{task.number}", answers(1 + task.number % 5))
        assert len(campaign.ratings()) == 12
        assert [r.clip_id for r in campaign.ratings(kinds=("gold",))] == [
            c for k, c, _ in seen if k == "gold"
        ]
        assert len(campaign.ratings(kinds=("regular", "repeat", "gold"))) == len(seen)
        counts = campaign.progress()["raters"]["solo"]
        assert counts == {"regular": 12, "repeat": 3, "gold": 2, "total": 17}
        campaign.close()
        return seen

    seen = run("cadence")
    kinds = [kind for kind, _, _ in seen]
    # every 5th task a repeat, every 7th gold (gold first when both are due; none left after two)
    assert [n for k, _, n in seen if k == "repeat"] == [5, 10, 15]
    assert [n for k, _, n in seen if k == "gold"] == [7, 14]
    assert kinds.count("regular") == 12
    regular = [c for k, c, _ in seen if k == "regular"]
    assert len(set(regular)) == 12  # each clip once as a regular task
    repeats = [c for k, c, _ in seen if k == "repeat"]
    assert len(set(repeats)) == 3
    for kind, clip_id, number in seen:
        if kind == "repeat":  # a clip rated before, not one of the last three rated
            rated_before = [c for k, c, n in seen if k == "regular" and n < number]
            assert clip_id in rated_before[:-3]
    assert {c for k, c, _ in seen if k == "gold"} == {"gold0", "gold1"}
    assert run("cadence-again") == seen  # seeded


def check_submit_idempotent_and_errors(new_target: NewTarget, wav: Path) -> None:
    target = new_target("submit")
    campaign, _ = create_campaign(target, "archetype", make_clips(wav, 3), [], 2)
    campaign.add_rater("alice")
    campaign.add_rater("bob")
    a = campaign.current_task("alice")
    b = campaign.current_task("bob")
    assert campaign.submit("alice", a.task_id, "sub-a1", answers(4)) == "recorded"
    with open_campaign(target) as other:  # committed before submit returned
        assert [(r.rater, r.clip_id) for r in other.ratings()] == [("alice", a.clip.id)]
    assert campaign.submit("alice", a.task_id, "sub-a2", answers(1)) == "already recorded"
    assert campaign.submit("alice", a.task_id, "sub-a1", answers(1)) == "already recorded"
    [stored] = campaign.ratings()
    assert stored.answers == answers(4) and stored.rater == "alice"
    with pytest.raises(CampaignError, match=rf"rater 'alice' has no task {b.task_id}"):
        campaign.submit("alice", b.task_id, "sub-x", answers())
    with pytest.raises(CampaignError, match="rater 'bob' has no task 999"):
        campaign.submit("bob", 999, "sub-y", answers())
    with pytest.raises(CampaignError, match=r"task \d+ \(clip 'clip0\d'\).*'sub-a1'"):
        campaign.submit("bob", b.task_id, "sub-a1", answers())
    with pytest.raises(CampaignError, match="unknown rater 'carol'"):
        campaign.submit("carol", b.task_id, "sub-z", answers())
    realism = Answers("realism", {"pitch_variation": 3}, None)
    with pytest.raises(CampaignError, match="not archetype answers"):
        campaign.submit("bob", b.task_id, "sub-r", realism)
    with pytest.raises(CampaignError, match="has no task"):
        campaign.audio_path_for("alice", b.task_id)
    assert campaign.submit("bob", b.task_id, "sub-b1", answers(2)) == "recorded"
    assert [r.rating_id for r in campaign.ratings()] == sorted(
        r.rating_id for r in campaign.ratings()
    )
    campaign.close()


def check_tokens(new_target: NewTarget, wav: Path) -> None:
    campaign, admin = create_campaign(new_target("tokens"), "archetype", make_clips(wav, 1), [], 1)
    token = campaign.add_rater("alice")
    with pytest.raises(CampaignError, match="rater 'alice' already exists"):
        campaign.add_rater("alice")
    assert campaign.rater_by_token(token).name == "alice"
    assert campaign.rater_by_token(token[:-1]) is None and campaign.rater_by_token("") is None
    assert campaign.check_admin(admin) and not campaign.check_admin(token)
    with campaign.engine.connect() as conn:  # only hashes are stored
        stored = [*conn.execute(sa.select(raters_table)), *conn.execute(sa.select(meta_table))]
    text = json.dumps([list(map(str, row)) for row in stored])
    assert token not in text and admin not in text
    assert hashlib.sha256(token.encode()).hexdigest() in text
    new_admin = campaign.rotate_admin_token()
    assert campaign.check_admin(new_admin) and not campaign.check_admin(admin)
    campaign.close()


def check_lease_expiry(new_target: NewTarget, wav: Path) -> None:
    clock = Clock()
    target = new_target("lease")
    campaign, _ = create_campaign(target, "archetype", make_clips(wav, 2), [], 1, clock=clock)
    for name in ("ann", "ben", "cat"):
        campaign.add_rater(name)
    stale = campaign.current_task("ann")
    assert stale.clip.id == "clip00"
    clock.now += 30 * 60
    assert campaign.current_task("ben").clip.id == "clip01"  # ann's claim still holds clip00
    assert campaign.current_task("cat") is None
    clock.now += 31 * 60  # ann's claim is 61 min old: clip00 is free again
    taken = campaign.current_task("cat")
    assert taken.clip.id == "clip00"
    campaign.submit("cat", taken.task_id, "cat-1", answers())
    with pytest.raises(CampaignError, match=rf"rater 'ann', task {stale.task_id} .*withdrawn"):
        campaign.submit("ann", stale.task_id, "ann-1", answers())
    assert campaign.current_task("ann") is None  # withdrawn; clip01 is held by ben
    with pytest.raises(CampaignError, match="withdrawn"):
        campaign.submit("ann", stale.task_id, "ann-1", answers())
    # an expired claim whose clip nobody took is resumed (and renewed)
    ben = campaign.current_task("ben")
    clock.now += 2 * 3600
    assert campaign.current_task("ben") == ben
    clock.now += 30 * 60
    assert campaign.current_task("ann") is None  # ben's renewed claim holds clip01
    assert campaign.submit("ben", ben.task_id, "ben-1", answers()) == "recorded"
    assert {c: len(n) for c, n in raters_by_clip(campaign).items()} == {"clip00": 1, "clip01": 1}
    campaign.close()
    with open_campaign(target, lease_seconds=60, clock=clock) as short:
        assert short.lease_seconds == 60


def check_concurrent_raters(new_target: NewTarget, wav: Path) -> None:
    """Six raters, two threads each, claim and submit at once (both threads of a rater submit
    the same task); every clip ends with exactly K distinct raters, nothing lost or doubled."""
    target = new_target("threads")
    campaign, _ = create_campaign(target, "archetype", make_clips(wav, 10), [], 3)
    names = [f"r{i}" for i in range(6)]
    for name in names:
        campaign.add_rater(name)
    outcomes: list[tuple[str, int, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(12)

    def worker(name: str) -> None:
        try:
            start.wait()
            while (task := campaign.current_task(name)) is not None:
                status = campaign.submit(name, task.task_id, uuid.uuid4().hex, answers())
                with lock:
                    outcomes.append((name, task.task_id, status))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in names for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    recorded = [(n, t) for n, t, s in outcomes if s == "recorded"]
    assert len(recorded) == len(set(recorded)) == 30
    with open_campaign(target) as reopened:
        ratings = reopened.ratings()
        assert len(ratings) == 30 == len({(r.rater, r.clip_id) for r in ratings})
        by_clip = Counter(r.clip_id for r in ratings)
        assert by_clip == {c.id: 3 for c in reopened.clips()}
        assert reopened.progress()["clips_complete"] == 10
    campaign.close()


def check_create_and_open_errors(new_target: NewTarget, wav: Path) -> None:
    target = new_target("errors")
    clips = make_clips(wav, 2)
    with pytest.raises(CampaignError, match="'clip01': id already used by a clip"):
        create_campaign(target, "archetype", [*clips, clips[1]], [], 1)
    dup_gold = [CampaignClip("clip00", 0, str(wav), {"question": "q"}, gold={"content_pass": True})]
    with pytest.raises(CampaignError, match="gold clip 'clip00': id already used"):
        create_campaign(target, "archetype", clips, dup_gold, 1, 0, 3)
    with pytest.raises(CampaignError, match="gold_every needs gold clips"):
        create_campaign(target, "archetype", clips, [], 1, 0, 3)
    with pytest.raises(CampaignError, match="raters per clip must be an integer >= 1"):
        create_campaign(target, "archetype", clips, [], 0)
    with pytest.raises(CampaignError, match="no campaign"):
        open_campaign(target)
    campaign, _ = create_campaign(target, "archetype", clips, [], 1)
    campaign.close()
    with pytest.raises(CampaignError, match="already"):
        create_campaign(target, "archetype", clips, [], 1)
    with open_campaign(target) as again:
        assert again.clips() == clips and again.config == "archetype"
        assert again.raters_per_clip == 1 and again.gold_clips() == []
        with pytest.raises(CampaignError, match="unknown rater 'nobody'"):
            again.current_task("nobody")


def _scorer(campaign: Campaign, **kw) -> PlantedScorer:
    ids = [c.id for c in campaign.clips()]
    return PlantedScorer(campaign.config, hashed_truth(campaign.config, ids), **kw)


def check_attached_scorers(new_target: NewTarget, wav: Path) -> None:
    """Results stored per scorer id and clip, resumed, replaced on retry; names and ids are
    refused when they would mix two scorers."""
    target = new_target("scorers")
    campaign, _ = create_campaign(target, "archetype", make_clips(wav, 5), [], 2)
    first = _scorer(campaign, name="first")
    first.truth.pop("clip03")  # an input failure
    report = attach_scorer(campaign, first, "lite:first", chunk=2)
    assert first.calls == [2, 2, 1] and report.scored_now == 5 and report.cached == 0
    assert report.scored == 4 and report.failures == {"input": 1}
    stored = campaign.scorer_results(first.id)
    direct = first.score([ClipInput(c.id, c.audio_path, c.context) for c in campaign.clips()])
    for result in direct:
        want = {k: v for k, v in result.to_dict().items() if k != "id"}
        assert stored[result.id].result == want and stored[result.id].ok == result.ok
    assert (
        stored["clip03"].error_kind == "input" and "no speech" in stored["clip03"].result["error"]
    )
    first.calls.clear()
    again = attach_scorer(campaign, first, "lite:first")  # settled: nothing to score
    assert again.scored_now == 0 and again.cached == 5 and first.calls == []
    first.truth["clip03"] = {d: 3.0 for d in first.dimensions}
    retried = attach_scorer(campaign, first, "lite:first", retry_failed=True)
    assert retried.scored_now == 1 and retried.scored == 5 and not retried.failures
    second = _scorer(campaign, name="second", seed=4)
    with pytest.raises(CampaignError, match=r"attached as 'lite:first'.*give it another --name"):
        attach_scorer(campaign, second, "lite:first")
    with pytest.raises(CampaignError, match=r"attached as 'lite:first'.*use --name lite:first"):
        attach_scorer(campaign, first, "lite:first", "renamed")
    with pytest.raises(CampaignError, match="a realism scorer; the campaign rates archetype"):
        attach_scorer(campaign, PlantedScorer("realism", {}), "lite:x")
    attach_scorer(campaign, second, "lite:second")
    campaign.close()
    with open_campaign(target) as reopened:
        assert [s.name for s in reopened.attached_scorers()] == ["lite:first", "lite:second"]
        assert len(reopened.scorer_results(second.id)) == 5
        assert reopened.scorer_results(first.id)["clip00"] == stored["clip00"]
        assert reopened.priorities() == {}  # balanced keeps none


def check_assignment_rules(new_target: NewTarget, wav: Path) -> None:
    """uncertain and disagreement deal their priority first among the least-rated clips, keep
    K distinct raters per clip, the repeat and gold cadence, and update on ratings."""
    for rule in ("balanced", "uncertain", "disagreement"):
        campaign, _ = create_campaign(new_target(rule), "archetype", make_clips(wav, 12),
                                      make_gold(wav, 2), 2, 4, 5, 3, assign=rule)  # fmt: skip
        assert campaign.assign == rule
        attach_scorer(campaign, _scorer(campaign, wide=frozenset({"clip05"})), "lite:a")
        attach_scorer(campaign, _scorer(campaign, failures=frozenset({"clip06"}), seed=1,
                                        name="b"), "lite:b")  # fmt: skip
        for name in ("r1", "r2", "r3"):
            campaign.add_rater(name)
        first = campaign.current_task("r1").clip.id
        assert first == {"balanced": "clip00", "uncertain": "clip05",
                         "disagreement": "clip06"}[rule]  # fmt: skip
        if rule == "disagreement":
            before = campaign.priorities()
            task = campaign.current_task("r1")
            campaign.submit("r1", task.task_id, "d-1", answers(1))
            results = [
                campaign.scorer_results(s.scorer_id)["clip06"].result
                for s in campaign.attached_scorers()
            ]
            want = disagreement("archetype", results, [answers(1)])
            assert campaign.priorities()["clip06"] == pytest.approx(want, abs=1e-12)
            assert want != before["clip06"]
        rate_all(campaign, ["r1", "r2", "r3"])
        by_clip = raters_by_clip(campaign)
        assert sorted(by_clip) == [c.id for c in campaign.clips()]
        assert all(len(n) == 2 == len(set(n)) for n in by_clip.values()), by_clip
        every = campaign.ratings(kinds=("regular", "repeat", "gold"))
        for name in ("r1", "r2", "r3"):
            mine = [r.kind for r in every if r.rater == name]  # by task number
            assert mine[4] == "gold" and mine[9:10] in (["gold"], [])  # every 5th
            assert mine[7] == "repeat" and "gold" not in mine[:4], mine
        campaign.close()


def check_version_1_upgrade(new_target: NewTarget, wav: Path) -> None:
    """A campaign made before attached scorers opens, keeps its ratings and is dealt balanced."""
    target = new_target("upgrade")
    campaign, admin = create_campaign(target, "archetype", make_clips(wav, 3), [], 1)
    campaign.add_rater("alice")
    task = campaign.current_task("alice")
    campaign.submit("alice", task.task_id, "s1", answers(4))
    with campaign.engine.connect() as conn, conn.begin():  # back to what version 1 wrote
        for table in ("clip_priority", "clip_scores", "scorers"):
            conn.exec_driver_sql(f"DROP TABLE {table}")
        conn.exec_driver_sql("ALTER TABLE meta DROP COLUMN assign")
        conn.exec_driver_sql("UPDATE meta SET schema_version = 1")
    campaign.close()
    with open_campaign(target) as upgraded:
        assert upgraded.assign == "balanced" and upgraded.check_admin(admin)
        assert [r.answers for r in upgraded.ratings()] == [answers(4)]
        attach_scorer(upgraded, _scorer(upgraded), "lite:a")
        assert len(upgraded.scorer_results(upgraded.attached_scorers()[0].scorer_id)) == 3
    with open_campaign(target) as again, again.engine.connect() as conn:
        assert conn.execute(sa.select(meta_table.c.schema_version)).scalar_one() == 2


CHECKS = [
    check_balance_and_distinct_raters,
    check_resume,
    check_repeats_and_gold,
    check_submit_idempotent_and_errors,
    check_tokens,
    check_lease_expiry,
    check_concurrent_raters,
    check_create_and_open_errors,
    check_attached_scorers,
    check_assignment_rules,
    check_version_1_upgrade,
]


# --- SQLite ----------------------------------------------------------------------------------
@pytest.fixture
def wav(tmp_path) -> Path:
    return write_wav(tmp_path / "audio" / "tone.wav")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_sqlite(check, tmp_path, wav):
    check(lambda name: str(tmp_path / f"{name}.db"), wav)


def test_sqlite_file_settings(tmp_path, wav):
    """WAL, synchronous=FULL, a busy timeout; write transactions take the lock at BEGIN."""
    target = tmp_path / "c.db"
    campaign, _ = create_campaign(str(target), "archetype", make_clips(wav, 2), [], 1)
    statements: list[str] = []
    sa.event.listen(
        campaign.engine, "before_cursor_execute", lambda *a: statements.append(a[2]), named=False
    )
    with campaign.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000
    campaign.add_rater("alice")
    assert "BEGIN IMMEDIATE" in statements
    campaign.close()
    assert open_campaign(f"sqlite:///{target}").clips()[0].id == "clip00"  # a URL works too
    (tmp_path / "notes.txt").write_text("not a database\n" * 100)
    with pytest.raises(CampaignError, match="notes.txt: cannot open the campaign"):
        open_campaign(str(tmp_path / "notes.txt"))
    with pytest.raises(CampaignError, match="missing/c.db: folder .* does not exist"):
        create_campaign(str(tmp_path / "missing" / "c.db"), "archetype", make_clips(wav, 1), [], 1)


# --- intake ----------------------------------------------------------------------------------
def test_official_samples_are_accepted_as_they_are():
    archetype = read_clips(OFFICIAL_SAMPLES / "archetype_data" / "test.jsonl", "archetype")
    assert [c.id for c in archetype] == [
        "250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav",
        "250814_zh_SocialIdentity_0051_Cascaded-Qwen3-CosyTTS.wav",
    ]
    assert [c.position for c in archetype] == [0, 1]
    assert all(Path(c.audio_path).is_file() and Path(c.audio_path).is_absolute() for c in archetype)
    assert archetype[0].context["question"].startswith("你是拖延症患者")
    missing: list[str] = []
    realism = read_clips(
        OFFICIAL_SAMPLES / "realism_data" / "test.jsonl", "realism", missing=missing
    )
    [clip] = realism  # role-eval_v1_0000.wav is absent from the samples
    assert clip.id == "role-eval_v1_0001" and clip.audio_path.endswith("role-eval_v1_0001.wav")
    assert set(clip.context) == {"profile", "scene", "traits"}
    assert clip.extra == {
        "transcript": clip.extra["transcript"],
        "char_age": "Teenager",
        "data_source": "unknown",
    }
    [message] = missing
    assert "test.jsonl:1 (clip 'role-eval_v1_0000')" in message and "not found" in message


def test_jsonl_clips_and_errors(tmp_path):
    wav = write_wav(tmp_path / "audio" / "a.wav")
    write_wav(tmp_path / "audio" / "b.wav", 1)
    (tmp_path / "broken.wav").write_bytes(b"RIFF not really")
    good = [
        {"id": "a", "audio": "audio/a.wav", "question": "Q1"},
        {"id": "b", "wav_path": "/home/someone/data/audio/b.wav", "question": "Q2"},
        {"id": "c", "audio": str(wav), "question": "Q3", "transcript": "ignored for archetype"},
    ]

    def jsonl(name: str, rows: list) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        return path

    clips = read_clips(jsonl("clips.jsonl", good), "archetype")
    assert [(c.id, Path(c.audio_path).name, c.context) for c in clips] == [
        ("a", "a.wav", {"question": "Q1"}),
        ("b", "b.wav", {"question": "Q2"}),
        ("c", "a.wav", {"question": "Q3"}),
    ]
    assert clips[2].extra == {}

    def fails(rows: list, pattern: str, config: str = "archetype", **kw) -> None:
        path = jsonl("bad.jsonl", rows)
        with pytest.raises(ValueError, match=pattern):
            read_clips(path, config, **kw)

    fails(
        [good[0], {**good[1], "id": "a"}],
        r"bad.jsonl:2 \(clip 'a'\): clip id 'a' repeats .*bad.jsonl:1",
    )
    fails([{"id": "a", "audio": "audio/a.wav"}], r"bad.jsonl:1 \(clip 'a'\): field 'question'")
    fails([{"audio": "audio/a.wav", "question": "Q"}], r"bad.jsonl:1: field 'id'")
    fails([{"id": "a", "question": "Q"}], r"bad.jsonl:1 \(clip 'a'\): field 'audio' or 'wav_path'")
    fails([{"id": "a", "audio": "broken.wav", "question": "Q"}], r"bad.jsonl:1 .*broken.wav")
    fails([{"id": "a", "wav_path": "../x/a.wav", "question": "Q"}], r"field 'wav_path'.*outside")
    fails(
        [{"id": "a", "audio": "nowhere.wav", "question": "Q"}], r"bad.jsonl: no clip has its audio"
    )
    fails(
        [{"id": "r", "audio": "audio/a.wav", "profile": "P", "scene": "S", "traits": "T",
          "char_age": 30}],
        r"bad.jsonl:1 \(clip 'r'\): field 'char_age' must be a string",
        "realism",
    )  # fmt: skip
    fails(
        [good[0]],
        r"contexts.jsonl: a contexts file goes with a folder",
        contexts=tmp_path / "contexts.jsonl",
    )
    (tmp_path / "syntax.jsonl").write_text('{"id": "a"}\n{"id": \n')
    with pytest.raises(ValueError, match=r"syntax.jsonl:2: invalid JSON"):
        read_clips(tmp_path / "syntax.jsonl", "archetype")
    with pytest.raises(ValueError, match="nothing.jsonl: no such file"):
        read_clips(tmp_path / "nothing.jsonl", "archetype")


def test_folder_of_clips_with_contexts(tmp_path):
    systems = tmp_path / "systems"
    for system, seed in (("sysA", 0), ("sysB", 1)):
        for scenario in ("s01", "s02"):
            write_wav(systems / system / f"{scenario}.wav", seed)
    contexts = tmp_path / "scenarios.jsonl"
    contexts.write_text(
        "".join(
            json.dumps({"id": s, "char_profile": f"P {s}", "local_scene": "S", "char_style": "T"})
            + "\n"
            for s in ("s01", "s02")
        )
    )
    clips = read_clips(systems, "realism", contexts=contexts)
    assert [c.id for c in clips] == ["sysA__s01", "sysA__s02", "sysB__s01", "sysB__s02"]
    assert clips[3].context == {"profile": "P s02", "scene": "S", "traits": "T"}
    assert clips[3].audio_path == str(systems / "sysB" / "s02.wav")

    with pytest.raises(ValueError, match="systems: a folder of clips needs a scenario file"):
        read_clips(systems, "realism")
    write_wav(systems / "sysC" / "s03.flac", 2)
    with pytest.raises(ValueError, match=r"sysC/s03.flac: scenario 's03' is not in .*scenarios"):
        read_clips(systems, "realism", contexts=contexts)
    (systems / "sysC" / "s03.flac").unlink()
    write_wav(systems / "sysB" / "s01.flac", 2)
    with pytest.raises(ValueError, match=r"sysB/s01.wav: clip id 'sysB__s01' repeats .*s01.flac"):
        read_clips(systems, "realism", contexts=contexts)
    (systems / "sysB" / "s01.flac").unlink()
    (systems / "sysB" / "s02.wav").write_bytes(b"\0" * 100)
    with pytest.raises(ValueError, match=r"sysB/s02.wav"):
        read_clips(systems, "realism", contexts=contexts)
    with pytest.raises(ValueError, match="field 'question'"):
        read_clips(systems, "archetype", contexts=contexts)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="empty: no audio files"):
        read_clips(empty, "realism", contexts=contexts)


def test_gold_clips(tmp_path):
    write_wav(tmp_path / "g.wav")
    rows = [
        {"id": "g1", "audio": "g.wav", "question": "Q", "expect": {"content_pass": False}},
        {"id": "g2", "audio": "g.wav", "question": "Q", "expect": {"audio_quality": [1, 2]}},
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = read_gold(path, "archetype")
    assert [(g.id, g.gold) for g in gold] == [
        ("g1", {"content_pass": False}),
        ("g2", {"audio_quality": [1, 2]}),
    ]
    clips = make_clips(tmp_path / "g.wav", 3)
    campaign, _ = create_campaign(str(tmp_path / "c.db"), "archetype", clips, gold, 1, 0, 2)
    assert campaign.gold_clips() == gold and campaign.clips() == clips
    campaign.close()

    bad = {
        '"expect": {}': r"gold.jsonl:1 \(clip 'g'\): field 'expect' must be a non-empty object",
        '"expect": {"audio_quality": [2, 1]}': r"'expect.audio_quality' must be \[low, high\]",
        '"expect": {"audio_quality": [0, 6]}': r"field 'expect.audio_quality'",
        '"expect": {"audio_quality": [true, 2]}': r"field 'expect.audio_quality'",
        '"expect": {"content_pass": 0}': r"field 'expect.content_pass' must be true or false",
        '"expect": {"pitch_variation": [1, 2]}': r"'expect.pitch_variation': not a archetype dim",
        '"expect": {"content_pass": false, "audio_quality": [1, 2]}': "fails Content Pass",
    }
    for expect, pattern in bad.items():
        path.write_text('{"id": "g", "audio": "g.wav", "question": "Q", ' + expect + "}\n")
        with pytest.raises(ValueError, match=pattern):
            read_gold(path, "archetype")
    path.write_text(
        '{"id": "g", "audio": "gone.wav", "question": "Q", "expect": {"content_pass": true}}\n'
    )
    with pytest.raises(
        ValueError, match=r"gold.jsonl:1 \(clip 'g'\): audio file 'gone.wav' not found"
    ):
        read_gold(path, "archetype")
    realism = '{"id": "g", "audio": "g.wav", "profile": "P", "scene": "S", "traits": "T", '
    path.write_text(realism + '"expect": {"content_pass": false}}\n')
    with pytest.raises(ValueError, match="'expect.content_pass': not a realism dimension"):
        read_gold(path, "realism")
    path.write_text(realism + '"expect": {"dynamic_range": [4, 5]}}\n')
    assert read_gold(path, "realism")[0].gold == {"dynamic_range": [4, 5]}


def test_intake_feeds_a_campaign(tmp_path):
    """Official samples -> campaign -> three raters; positions follow the file."""
    clips = read_clips(OFFICIAL_SAMPLES / "archetype_data" / "test.jsonl", "archetype")
    campaign, _ = create_campaign(str(tmp_path / "c.db"), "archetype", clips, [], 3)
    for name in ("x", "y", "z"):
        campaign.add_rater(name)
    done = rate_all(campaign, ["x", "y", "z"])
    assert Counter(clip for _, _, clip in done) == {c.id: 3 for c in clips}
    assert list(itertools.islice((c for _, _, c in done), 2)) == [clips[0].id, clips[1].id]
    campaign.close()
