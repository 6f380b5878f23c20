"""What the README promises around its commands, held to it (the places a newcomer tripped on).

Each test names the promise; the README blocks themselves run in ``test_readme.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import LIBRIVOX, REPO, archetype_record, realism_record, write_release

from speech_drame.cli import main
from speech_drame.data.build import BuildError, build_dataset

README = (REPO / "README.md").read_text(encoding="utf-8")


# --- ratings -> training ----------------------------------------------------------------------


def test_an_export_with_a_test_share_deals_clips_by_a_hash_of_their_id(tmp_path):
    from campaign_standin import rated_campaign

    from speech_drame.campaign.export import export_release

    camp = rated_campaign("archetype", n=40, folder=tmp_path / "audio")
    report = export_release(camp, tmp_path / "release", test_share=0.25)
    rated = [c.id for c in camp.clips() if any(r.clip_id == c.id for r in camp.ratings())]
    expected = {
        cid: "test"
        if int.from_bytes(hashlib.sha256(cid.encode()).digest()[:8], "big") < 0.25 * 2**64
        else "train"
        for cid in rated
    }
    for split in ("train", "test"):
        lines = (
            (tmp_path / "release" / "archetype_data" / f"{split}.jsonl").read_text().splitlines()
        )
        assert sorted(json.loads(line)["id"] for line in lines) == sorted(
            c for c, s in expected.items() if s == split
        )
        assert report["splits"][split] == len(lines)
    assert 0 < report["splits"]["test"] < report["splits"]["train"]
    with pytest.raises(ValueError, match="test share 1.5"):
        export_release(camp, tmp_path / "other", test_share=1.5)


def test_train_lite_on_a_test_only_dataset_says_how_to_get_a_train_split(tmp_path, capsys):
    src = write_release(tmp_path / "rel", {"archetype_data/test.jsonl": [archetype_record("a")]})
    build_dataset(src, tmp_path / "ds", progress=False)
    assert (
        main(["train-lite", "--dataset", str(tmp_path / "ds"), "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert "archetype: no train split to train on (the card lists ['test'])" in err
    assert "campaign export --test-share 0.2" in err


# --- the demo dataset is replaced only when asked ------------------------------------------------


def test_a_build_of_another_source_does_not_replace_an_earlier_build(tmp_path, monkeypatch, capsys):
    a = write_release(tmp_path / "a", {"realism_data/test.jsonl": [realism_record("r1")]})
    b = write_release(tmp_path / "b", {"realism_data/test.jsonl": [realism_record("r2")]})
    out = tmp_path / "speech-drame"
    build_dataset(a, out, progress=False)
    build_dataset(a, out, progress=False)  # the same source: rebuilt in place
    with pytest.raises(
        BuildError, match=rf"holds a build of {a}; building {b} there would replace"
    ):
        build_dataset(b, out, progress=False)
    build_dataset(b, out, overwrite=True, progress=False)
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--source", str(a), "--quiet"]) == 0  # no --out: a folder of its own
    assert (tmp_path / "a-built" / "build_report.json").is_file()
    assert "built " + str(tmp_path / "a-built") in capsys.readouterr().out


def test_the_export_hint_builds_into_a_folder_of_its_own_with_a_licence(tmp_path, capsys):
    pytest.importorskip("sqlalchemy")
    from campaign_standin import make_clips

    from speech_drame.campaign.store import create_campaign

    db = tmp_path / "c.db"
    camp, _ = create_campaign(
        str(db), "archetype", make_clips("archetype", 2, tmp_path / "a"), (), 1
    )
    camp.add_rater("ann")
    task = camp.current_task("ann")
    from speech_drame.campaign.forms import validate_answers

    camp.submit("ann", task.task_id, "s1", validate_answers("archetype", {"content_pass": False}))
    camp.close()
    assert main(["campaign", "export", str(db), "--out", str(tmp_path / "rel")]) == 0
    printed = capsys.readouterr().out
    assert (
        f"speech-drame build --source {tmp_path / 'rel'} --out {tmp_path / 'rel'}-built --license ID"
        in printed
    )
    assert "export with --test-share 0.2" in printed


# --- synthetic labels are said beside the numbers --------------------------------------------------


@pytest.fixture(scope="module")
def demo_scorer() -> Path:
    scorer = REPO / "artifacts" / "lite_scorer"
    if not (scorer / "metrics.json").is_file():
        pytest.fail("the demo LiteScorer is missing: run `make demo-scorer`")
    return scorer


def test_score_says_a_demo_scorer_learned_from_synthetic_labels(demo_scorer, capsys):
    clip = str(sorted(LIBRIVOX.glob("*.wav"))[0])
    argv = ["score", clip, "--config", "archetype", "--question", "You are a firefighter. You say:",
            "--scorer", f"lite:{demo_scorer}", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("NOTE: this scorer learned from synthetic proxy labels")
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["warning"].startswith("this scorer learned from synthetic proxy labels")


def test_the_leaderboard_heads_with_the_scorer_and_its_warning(demo_scorer, tmp_path, capsys):
    clips = sorted(LIBRIVOX.glob("*.wav"))[:2]
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text("".join(
        json.dumps({"id": f"s{i}", "question": "You are a narrator. You say:"}) + "\n"
        for i in range(2)))  # fmt: skip
    for system in ("a", "b"):
        (tmp_path / "systems" / system).mkdir(parents=True)
        for i, clip in enumerate(clips):
            shutil.copy(clip, tmp_path / "systems" / system / f"s{i}.wav")
    run = tmp_path / "run"
    assert main(["bench", "--scenarios", str(scenarios), "--systems-dir", str(tmp_path / "systems"),
                 "--out", str(run), "--scorer", f"lite:{demo_scorer}", "--no-plots"]) == 0  # fmt: skip
    board = (run / "leaderboard.md").read_text().splitlines()
    assert (
        board[0].startswith("Scorer `")
        and "**Note:** this scorer learned from synthetic" in board[2]
    )
    assert board.index(next(line for line in board if line.startswith("| Rank"))) > 2
    assert json.loads((run / "leaderboard.json").read_text())["warning"].startswith("this scorer")
    assert "No human-aligned scorer ships" in README.split("## Quick start")[0]


# --- RoleBench scenarios from EvalBench -----------------------------------------------------------


def test_dataset_scenarios_are_prompts_named_without_suffix_or_system(
    official_dataset_dir, tmp_path, capsys
):
    from speech_drame.rolebench.scenarios import load_dataset_scenarios

    scenarios = load_dataset_scenarios(official_dataset_dir, "archetype", "test")
    assert [s.id for s in scenarios.scenarios] == [
        "250814_zh_SocialIdentity_0051"
    ]  # two systems, one prompt
    out = tmp_path / "scenarios.jsonl"
    assert main(["scenarios", "--dataset", str(official_dataset_dir), "--config", "archetype",
                 "--out", str(out)]) == 0  # fmt: skip
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["id"] == "250814_zh_SocialIdentity_0051" and line["question"].startswith(
        "你是拖延症患者"
    )
    assert sorted(line["clips"]) == ["250814_zh_SocialIdentity_0051_Cascaded-Qwen3-CosyTTS.wav",
                                     "250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav"]  # fmt: skip
    assert "1 archetype scenarios, the distinct prompts of the 2 clips" in capsys.readouterr().out


def test_prompts_rated_for_one_system_lose_its_name():
    from speech_drame.rolebench.scenarios import dataset_prompts

    rows = [{"id": f"250814_en_Job_{n}_{s}.wav", "question": f"q{n}"}
            for n, systems in (("0001", ("SysA", "SysB")), ("0002", ("SysB",)), ("0003", ("Other",)))
            for s in systems]  # fmt: skip
    assert [p[0] for p in dataset_prompts(rows, "archetype")] == [
        "250814_en_Job_0001", "250814_en_Job_0002", "250814_en_Job_0003_Other"]  # fmt: skip


# --- the paper's tables beside the reproduced ones -------------------------------------------------


def test_the_papers_tables_are_transcribed_consistently():
    from speech_drame.paper_tables import COLUMNS, paper_rows

    for config, split, table, n in (("archetype", "test", "Table 2", 8),
                                    ("realism", "test", "Table 3", 8),
                                    ("realism", "test_real", "Table 4", 8)):  # fmt: skip
        found = paper_rows(config, split)
        assert found["table"] == table and len(found["rows"]) == n
        for row in found["rows"]:
            values = row["table"]
            assert set(values) == {s for s, _, _ in COLUMNS[config]}
            pearsons = [
                v for k, v in values.items() if k.endswith("_pearson") and k != "avg_pearson"
            ]
            mean = float(np.mean(pearsons))
            if (table, row["name"]) == ("Table 4", "Gemini2.5Pro (few-shot)"):
                # the paper prints Avg. 0.166; its ten columns average 0.154
                assert values["avg_pearson"] == 0.166 and mean == pytest.approx(0.154, abs=5e-4)
            else:  # the paper's Avg. is the mean of its columns, to its rounding
                assert values["avg_pearson"] == pytest.approx(mean, abs=1.5e-3), row
    assert paper_rows("archetype", "train") is None
    assert paper_rows("realism", "test")["rows"][-1]["table"]["avg_pearson"] == 0.625


def test_table_paper_prints_the_papers_rows_below_the_reproduced_ones(
    official_dataset_dir, tmp_path, capsys
):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": r, "content_pass": 0.9, "scores": {"audio_quality": 3}}) + "\n"
                             for r in ("250814_zh_SocialIdentity_0051_Qwen2.5-Omni-7B.wav",
                                       "250814_zh_SocialIdentity_0051_Cascaded-Qwen3-CosyTTS.wav")))  # fmt: skip
    argv = ["table", "--predictions", str(preds), "--dataset", str(official_dataset_dir),
            "--config", "archetype"]  # fmt: skip
    assert main([*argv, "--paper"]) == 0
    out = capsys.readouterr().out
    assert "| *paper: DRAME-Eval (fine-tuned)* | 93.6% | 0.682 | 0.680 | 0.525 | 0.629 |" in out
    assert out.index("| p |") < out.index("*paper: Gemini2.5Pro (zero-shot)*")
    assert "paper rows: Speech-DRAME Table 2" in out
    assert main(argv) == 0 and "*paper:" not in capsys.readouterr().out


# --- what fetches, and audio in any format ffmpeg reads ----------------------------------------------


@pytest.mark.parametrize("argv,needle", [
    (["build", "--source", "someone/some-release", "--out", "x"], "not in the Hub cache and the Hub cannot be reached"),
    (["score", "CLIP", "--config", "archetype", "--question", "q", "--scorer", "lite:someone/some-scorer"], "someone/some-scorer"),
])  # fmt: skip
def test_what_the_readme_says_fetches_from_the_hub_says_so_offline(
    argv, needle, tmp_path, capsys, monkeypatch
):
    assert "`build --source ORG/NAME`" in README and "`--scorer lite:ORG/NAME`" in README
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    clip = str(sorted(LIBRIVOX.glob("*.wav"))[0])
    assert main([clip if a == "CLIP" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


@pytest.fixture(scope="module")
def m4a(tmp_path_factory) -> tuple[Path, Path]:
    """A LibriVox clip as WAV and as AAC in an .m4a (Debian's ffmpeg encodes it)."""
    folder = tmp_path_factory.mktemp("formats")
    wav = folder / "speech.wav"
    shutil.copy(sorted(LIBRIVOX.glob("*.wav"))[0], wav)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(wav), "-c:a", "aac", "-b:a",
                    "96k", str(folder / "speech.m4a")], check=True)  # fmt: skip
    return wav, folder / "speech.m4a"


def test_an_m4a_decodes_through_ffmpeg_like_its_wav(m4a):
    from speech_drame.audio import load_audio

    wav, aac = load_audio(m4a[0]), load_audio(m4a[1])
    assert aac.original_seconds == pytest.approx(wav.original_seconds, abs=0.05)
    n = min(len(wav.samples), len(aac.samples))
    # AAC is lossy and its encoder delays the signal by a frame: the best lag's correlation
    lags = range(0, 4096, 16)
    best = max(
        np.corrcoef(wav.samples[: n - 4096], aac.samples[k : n - 4096 + k])[0, 1] for k in lags
    )
    assert best > 0.95
    cut = load_audio(m4a[1], max_seconds=1.0)
    assert cut.truncated and len(cut.samples) == 16_000


def test_score_reads_a_folder_in_every_format_and_lists_what_it_skips(
    m4a, tmp_path, demo_scorer, capsys
):
    folder = tmp_path / "clips"
    folder.mkdir()
    shutil.copy(m4a[0], folder / "a.wav")
    shutil.copy(m4a[1], folder / "b.m4a")
    (folder / "notes.txt").write_text("not audio")
    argv = ["score", str(folder), "--config", "archetype", "--question", "You say:", "--scorer",
            f"lite:{demo_scorer}", "--json", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert [Path(r["id"]).name for r in json.loads(captured.out)] == ["a.wav", "b.m4a"]
    assert "skipped 1 file(s) of the folder(s): " in captured.err
    assert "notes.txt (not an audio file type: .txt)" in captured.err


# --- campaigns ----------------------------------------------------------------------------------


def test_campaign_status_says_when_agreement_will_appear(tmp_path):
    from campaign_standin import StandIn, make_clips, random_answers

    from speech_drame.campaign.stats import campaign_status, format_status

    camp = StandIn("archetype", 3, make_clips("archetype", 12))
    rng = np.random.default_rng(0)
    for i, clip in enumerate(camp.clips()[:9]):  # one rating each on 9 of 12 clips
        camp.rate(f"r{i % 3}", clip.id, random_answers("archetype", rng, 3.0))
    text = format_status(campaign_status(camp, bootstrap=0))
    assert "agreement and ceiling need clips with 2 or more ratings: none yet" in text
    assert "after about 4 more rating(s)" in text
    camp.rate("r1", camp.clips()[0].id, random_answers("archetype", rng, 3.0))
    assert "none yet" not in format_status(campaign_status(camp, bootstrap=0))


# --- the command line -------------------------------------------------------------------------


def test_version_from_the_command_and_python_m():
    import tomllib

    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    for argv in (
        [str(Path(sys.executable).parent / "speech-drame"), "--version"],
        [sys.executable, "-m", "speech_drame", "--version"],
    ):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == f"speech-drame {version}", done
    done = subprocess.run([sys.executable, "-m", "speech_drame", "agreement", "--help"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "usage: speech-drame agreement" in done.stdout


def test_import_counts_an_unusable_answer_once_and_names_content_pass_only_for_archetype(
    tmp_path, capsys
):
    from speech_drame.official_formats import OFFICIAL_NAMES
    from speech_drame.schema import REALISM_DIMENSIONS

    trial = tmp_path / "t.jsonl"
    lines = [{"id": "r0", "response": "sorry"},
             {"id": "r1", "response": json.dumps({OFFICIAL_NAMES[d]: 3 for d in REALISM_DIMENSIONS})}]  # fmt: skip
    trial.write_text("".join(json.dumps(x) + "\n" for x in lines))
    src = write_release(
        tmp_path / "rel", {"realism_data/test.jsonl": [realism_record("r0"), realism_record("r1")]}
    )
    build_dataset(src, tmp_path / "ds", progress=False)
    assert main(["import-predictions", str(trial), "--config", "realism", "--dataset", str(tmp_path / "ds"),
                 "--out", str(tmp_path / "p.jsonl"), "--failed-as", "1"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert (
        "unusable answers: 1 (10 clip-dimension scores); unusable answers count as 1, as the official"
        in out
    )
    assert "Content Pass" not in out.split("\n\n")[0]


def test_the_metric_timing_the_readme_states_names_the_evaluate_overhead():
    text = " ".join(README.split("## Measuring alignment")[1].split("## Scoring a clip")[0].split())
    assert re.search(r"100,000 x 11 in about [\d.]+ s on 2 cores", text)
    assert "evaluate.load(...).compute" in text and "bench_metric.py" in text
