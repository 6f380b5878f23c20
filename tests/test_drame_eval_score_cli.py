"""`speech-drame score --scorer drame-eval:FOLDER`: same output as the LiteScorer path."""

import json

import pytest
import soundfile as sf
from conftest import save_tiny_evaluator, tone

from speech_drame.cli import main
from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer

QUESTION = "You are a night-shift nurse. A patient cannot sleep. You say:"


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    """An (untrained) DRAME-Eval folder: tiny base from seed 1, fresh LoRA adapter, processor."""
    folder = save_tiny_evaluator(tmp_path_factory.mktemp("drame_eval"))
    clips = folder / "clips"
    clips.mkdir()
    for i, seconds in enumerate((1.0, 2.0)):
        sf.write(clips / f"c{i}.wav", tone(seconds, seed=i, freq=180 + 90 * i), 16_000)
    sf.write(clips / "silent.wav", tone(1.0) * 0, 16_000)
    return folder


def test_json_output_matches_the_scorer(evaluator, capsys):
    clips = evaluator / "clips"
    status = main(
        ["score", str(clips / "c0.wav"), str(clips / "c1.wav"), "--config", "archetype",
         "--question", QUESTION, "--scorer", f"drame-eval:{evaluator}", "--json"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    rows = json.loads(out.out)
    assert [r["id"] for r in rows] == [str(clips / "c0.wav"), str(clips / "c1.wav")]
    direct = DrameEvalScorer.from_pretrained(evaluator).score_clips(
        [Clip("c0", tone(1.0, seed=0, freq=180), {"question": QUESTION})]
    )[0]
    row = rows[0]
    assert set(row["scores"]) == set(row["distributions"]) == {
        "audio_quality", "human_likeness", "appropriateness"
    }  # fmt: skip
    for dim, value in row["scores"].items():
        assert value == pytest.approx(direct.scores[dim], abs=1e-4)
        assert len(row["distributions"][dim]) == 5
        assert sum(row["distributions"][dim]) == pytest.approx(1.0, abs=1e-6)
    assert row["content_pass"] == pytest.approx(direct.content_pass, abs=1e-4)
    assert set(row["label_mass"]) == {"content_pass", *row["scores"]}
    assert row["label_mass"] == pytest.approx(direct.label_mass, abs=1e-5)
    # the default decoding, and every dimension flagged: an untrained model's label mass is ~0
    assert row["decoding"] == "expectation" and row["unreliable"] == list(row["label_mass"])
    assert "8 (clip, dimension) score(s) with label mass below 0.5" in out.err


def test_the_cut_and_the_full_scale_scaling_are_reported(evaluator, tmp_path, capsys):
    """DRAME-Eval rows carry the same audio facts as the LiteScorer's (30 s cut, peak, gain)."""
    long_loud = tmp_path / "long_loud.wav"
    sf.write(long_loud, 2.0 * tone(31.0, seed=3) / 0.31, 16_000, subtype="FLOAT")  # peak ~2
    argv = ["score", str(long_loud), "--config", "archetype", "--question", QUESTION,
            "--scorer", f"drame-eval:{evaluator}"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    audio = row["audio"]
    assert audio["truncated"] and audio["seconds"] == pytest.approx(30.0)
    assert audio["original_seconds"] == pytest.approx(31.0)
    assert audio["peak"] > 1.9 and audio["gain"] == pytest.approx(1 / audio["peak"], rel=1e-3)
    assert main(argv) == 0
    assert "cut to the first 30 s" in capsys.readouterr().out


def test_bad_clip_is_reported_and_mode_mismatch_refused(evaluator, capsys):
    clips = evaluator / "clips"
    status = main(
        ["score", str(clips), "--config", "archetype", "--question", QUESTION,
         "--scorer", f"drame-eval:{evaluator}"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 1
    assert out.out.count("Human Likeness") == 2 and "transcript" not in out.out
    assert "silent.wav: digital silence" in out.err and "1 of 3 clip(s)" in out.err

    status = main(
        ["score", str(clips / "c0.wav"), "--config", "realism", "--profile", "p", "--scene", "s",
         "--traits", "t", "--scorer", f"drame-eval:{evaluator}"]
    )  # fmt: skip
    assert status == 2
    assert "a DRAME-Eval evaluator for archetype, not realism" in capsys.readouterr().err
    status = main(
        ["score", str(clips / "c0.wav"), "--config", "archetype", "--question", QUESTION,
         "--scorer", f"drame-eval:{clips}"]
    )  # fmt: skip
    assert status == 2
    assert "not a DRAME-Eval folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec", ["{tmp}/missing/evaluator", "./missing", "../missing", "~/missing-drame-eval", "missing",
             "runs/missing/evaluator"],
)  # fmt: skip
def test_a_missing_folder_is_reported_as_missing_not_looked_up_on_the_hub(
    spec, evaluator, tmp_path, capsys
):
    spec = spec.format(tmp=tmp_path)
    status = main(
        ["score", str(evaluator / "clips" / "c0.wav"), "--config", "archetype", "--question",
         QUESTION, "--scorer", f"drame-eval:{spec}"]
    )  # fmt: skip
    assert status == 2
    assert capsys.readouterr().err.strip() == f"error: {spec}: no such folder"


def test_an_org_name_that_is_no_folder_is_tried_on_the_hub(evaluator, capsys):
    status = main(
        ["score", str(evaluator / "clips" / "c0.wav"), "--config", "archetype", "--question",
         QUESTION, "--scorer", "drame-eval:someone/not-a-folder"]
    )  # fmt: skip
    assert status == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: someone/not-a-folder: no such folder, and no ")
    assert "from the Hub repo someone/not-a-folder" in line
