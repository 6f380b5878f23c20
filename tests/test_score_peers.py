"""benchmarks/score_peers.py (bench_score.py --peers): failures are counted per clip, a peer that is
not installed or cannot load is a line of the table, and the torchaudio stand-in leaves nothing
behind. Real clips (LibriVox) through the real speechmos and speech-drame DNSMOS."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import LIBRIVOX

from speech_drame.audio import load_audio

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("score_peers", REPO / "benchmarks/score_peers.py")
score_peers = sys.modules["score_peers"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(score_peers)
SR = 16_000


@pytest.fixture(scope="module")
def clips() -> list[np.ndarray]:
    """Two real speech clips (LibriVox), 16 kHz float32 within [-1, 1]."""
    wavs = sorted(LIBRIVOX.glob("*.wav"))[:2]
    return [load_audio(w).samples[: 4 * SR] for w in wavs]


def test_per_clip_counts_the_clip_that_fails_and_times_all(clips):
    from speechmos import dnsmos

    loud = 1.5 * clips[0] / np.abs(clips[0]).max()  # speechmos refuses samples outside [-1, 1]
    score_all = score_peers.per_clip(lambda x: dnsmos.run(x, SR), workers=2)
    row = score_peers.measure(score_all, [clips[0], loud, clips[1]], {}, "speechmos", "English")
    assert (row.clips, row.failed) == (3, 1)
    assert "between -1 and 1" in row.first_error
    assert row.audio_seconds == pytest.approx((2 * len(clips[0]) + len(clips[1])) / SR)
    assert row.real_time == pytest.approx(row.audio_seconds / row.wall)
    assert row.clips_per_second == pytest.approx(3 / row.wall)


def test_whole_list_api_that_raises_fails_every_clip(clips, capsys):
    from speechmos import plcmos

    score_all = score_peers.whole_list(lambda xs: plcmos.run(xs, SR, return_df=False))
    ok = score_peers.measure(score_all, clips, {}, "plcmos", "English")
    loud = 1.5 * clips[1] / np.abs(clips[1]).max()
    bad = score_peers.measure(score_all, [clips[0], loud], {}, "plcmos", "English")
    assert ok.failed == 0
    assert bad.failed == 2 and "between -1 and 1" in bad.first_error
    assert "it/s" not in capsys.readouterr().err  # its progress bar is hidden


def test_report_lists_missing_and_broken_peers_and_times_the_rest(
    clips, tmp_path, monkeypatch, capsys
):
    real = {p.label: p for p in score_peers.peers(None, tmp_path)}
    ours = real["speech-drame DNSMOS, fewest 9 s windows"]
    empty = tmp_path / "no_scorer"
    empty.mkdir()
    absent = score_peers.Peer("absent", "no_such_module_score_peers", "pip install absent==1", None)
    no_heads = lambda: score_peers.lite_scorer(str(empty), tmp_path / "cache")  # noqa: E731
    broken = score_peers.Peer("LiteScorer without heads", "speech_drame", "-", no_heads)
    monkeypatch.setattr(score_peers, "peers", lambda scorer, root: [absent, broken, ours])
    sets = {"English (LibriVox)": ([(x, SR) for x in clips], {}), "Other": ([(clips[1], SR)], {})}
    rows = score_peers.report(sets)
    text = capsys.readouterr().out
    assert "absent" in text and "not installed (pip install absent==1)" in text
    assert "LiteScorer without heads" in text and "could not run: ScorerError" in text
    assert str(empty) in text  # the error names the folder
    assert [(r.peer, r.clip_set, r.clips, r.failed) for r in rows] == [
        (ours.label, "English (LibriVox)", 2, 0),
        (ours.label, "Other", 1, 0),
    ]


def test_torchaudio_stand_in_serves_the_import_then_is_gone():
    if importlib.util.find_spec("torchaudio") is not None:
        pytest.skip("torchaudio is installed here: the stand-in is for where it is not")
    with score_peers.torchaudio_stand_in() as reason:
        import torchaudio

        assert "cannot be imported here (ModuleNotFoundError" in reason
        with pytest.raises(AttributeError, match="torchaudio.load: torchaudio cannot be imported"):
            torchaudio.load("clip.wav")
    assert "torchaudio" not in sys.modules
    assert importlib.util.find_spec("torchaudio") is None
    with pytest.raises(ModuleNotFoundError):
        import torchaudio  # noqa: F401, F811
