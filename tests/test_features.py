"""Offline feature extractors on real LibriVox speech and on generated audio."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import LIBRIVOX

from speech_drame import atomic_io
from speech_drame.audio import Audio, AudioError, load_audio
from speech_drame.features import asr, prosody, quality, speaker, spectral, text, vad
from speech_drame.features.blueprint import (
    FEATURE_VERSIONS,
    Blueprint,
    extract_blueprint,
    extract_blueprints,
)
from speech_drame.features.cache import CACHE_ENV, FeatureCache, audio_key, default_cache_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")

OTHER_VOICES = [
    Path("/usr/share/sounds/alsa/Front_Center.wav"),
    Path("/usr/share/sounds/alsa/Rear_Left.wav"),
    *sorted(Path("/usr/share/pocketsphinx/test/data/cards").glob("00[25].wav")),
]
SR = 16_000

pytestmark = pytest.mark.skipif(
    not LIBRIVOX.is_dir(), reason="Debian package pocketsphinx-testdata is not installed"
)


def _references() -> dict[str, str]:
    refs = {}
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        words, clip = line.rsplit("(", 1)
        refs[clip.strip(" )")] = words.replace("<s>", "").replace("</s>", "").strip()
    return refs


@pytest.fixture(scope="session")
def librivox() -> dict[str, Audio]:
    return {name: load_audio(LIBRIVOX / f"{name}.wav") for name in sorted(_references())}


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _tone(f0: float | np.ndarray, seconds: float = 2.0, noise: float = 0.0) -> Audio:
    n = int(seconds * SR)
    freq = np.broadcast_to(np.asarray(f0, dtype=np.float64), (n,))
    phase = 2 * np.pi * np.cumsum(freq) / SR
    x = sum(0.3 / k * np.sin(k * phase) for k in (1, 2, 3))  # harmonic-rich, voice-like
    x = x + noise * np.random.default_rng(0).standard_normal(n)
    return load_audio((x.astype(np.float32), SR))


def _with_noise(audio: Audio, snr_db: float, seed: int = 0) -> Audio:
    x = audio.samples.astype(np.float64)
    noise = np.random.default_rng(seed).standard_normal(len(x))
    noise *= np.sqrt(np.mean(x**2) / np.mean(noise**2) / 10 ** (snr_db / 10))
    y = x + noise
    return load_audio(((0.9 * y / np.abs(y).max()).astype(np.float32), SR))


# --- spectral helpers against librosa (the reference implementation) ---------------------


@pytest.mark.parametrize(("n_fft", "n_mels"), [(321, 120), (400, 40)])
def test_mel_spectrogram_matches_librosa(n_fft: int, n_mels: int) -> None:
    librosa = pytest.importorskip("librosa")
    x = (0.1 * np.random.default_rng(1).standard_normal(SR)).astype(np.float32)
    ref = librosa.feature.melspectrogram(y=x, sr=SR, n_fft=n_fft, hop_length=160, n_mels=n_mels)
    ours = spectral.mel_spectrogram(x, SR, n_fft=n_fft, hop_length=160, n_mels=n_mels)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-6 * ref.max())
    np.testing.assert_allclose(
        spectral.power_to_db(ours), librosa.power_to_db(ref, ref=np.max), atol=1e-3
    )


# --- ASR -------------------------------------------------------------------------------


def test_asr_transcribes_librivox_with_low_cer(librivox: dict[str, Audio]) -> None:
    refs = _references()
    errors = chars = 0
    for name, audio in librivox.items():
        hyp = asr.normalize_text(asr.transcribe(audio).text)
        e = _levenshtein(hyp, refs[name])
        errors, chars = errors + e, chars + len(refs[name])
        if audio.seconds > 6:  # the longest clips, each on its own
            assert e / len(refs[name]) < 0.1, (name, hyp)
    assert errors / chars < 0.05  # measured 0.011 (Whisper tiny.en: 0.028)


def test_asr_outputs_are_well_formed(librivox: dict[str, Audio]) -> None:
    audio = next(iter(librivox.values()))
    out = asr.transcribe(audio)
    assert len(out.embedding) == asr.EMBEDDING_DIM == 512 and np.isfinite(out.embedding).all()
    assert out.n_words > 5 and out.n_tokens >= out.n_words
    assert (out.language, out.detected_language) == ("en", "en")
    assert out.language_probability > 0.99 and 0.0 < out.detected_probability <= 1.0
    assert -2.0 < out.avg_logprob <= 0.0 and 0.0 <= out.no_speech_prob < 0.5
    assert asr.transcribe(audio) == out  # deterministic


def test_asr_rejects_long_or_resampled_audio(librivox: dict[str, Audio]) -> None:
    audio = next(iter(librivox.values()))
    long = load_audio((np.tile(audio.samples, 6), SR))
    with pytest.raises(AudioError, match="at most 30 s"):
        asr.transcribe(long)
    narrow = load_audio((audio.samples, SR), sample_rate=8000)
    with pytest.raises(AudioError, match="16000 Hz"):
        asr.transcribe(narrow)


def test_pocketsphinx_fallback_transcribes_librivox(librivox: dict[str, Audio]) -> None:
    from speech_drame.features.asr_pocketsphinx import transcribe_pocketsphinx

    refs = _references()
    errors = {"pocketsphinx": 0, "whisper": 0}
    chars = 0
    for name, audio in librivox.items():
        ref = refs[name]
        errors["pocketsphinx"] += _levenshtein(
            asr.normalize_text(transcribe_pocketsphinx(audio)), ref
        )
        errors["whisper"] += _levenshtein(asr.normalize_text(asr.transcribe(audio).text), ref)
        chars += len(ref)
    # a real transcript, though coarser than Whisper's (measured 0.19 vs 0.03)
    assert errors["pocketsphinx"] / chars < 0.3
    assert errors["whisper"] < errors["pocketsphinx"]
    assert transcribe_pocketsphinx(next(iter(librivox.values()))) == transcribe_pocketsphinx(
        next(iter(librivox.values()))
    )
    narrow = load_audio((next(iter(librivox.values())).samples, SR), sample_rate=8000)
    with pytest.raises(AudioError, match="16000 Hz"):
        transcribe_pocketsphinx(narrow)


# --- DNSMOS ----------------------------------------------------------------------------


def test_dnsmos_matches_speechmos_on_one_window(librivox: dict[str, Audio]) -> None:
    dnsmos_ref = pytest.importorskip("speechmos.dnsmos")
    x = np.concatenate([a.samples for a in librivox.values()])[: quality.WINDOW]
    ours = quality.dnsmos(load_audio((x, SR)))
    ref = dnsmos_ref.run(x, SR)
    assert ours.sig == pytest.approx(ref["sig_mos"], abs=1e-4)
    assert ours.bak == pytest.approx(ref["bak_mos"], abs=1e-4)
    assert ours.ovrl == pytest.approx(ref["ovrl_mos"], abs=1e-4)
    assert ours.p808 == pytest.approx(ref["p808_mos"], abs=1e-3)


def test_dnsmos_drops_when_noise_is_added(librivox: dict[str, Audio]) -> None:
    for audio in list(librivox.values())[:2]:
        clean = quality.dnsmos(audio)
        noisy = quality.dnsmos(_with_noise(audio, snr_db=5))
        assert noisy.ovrl < clean.ovrl - 0.5
        assert noisy.bak < clean.bak - 1.0
        assert noisy.p808 < clean.p808


def test_dnsmos_windows_cover_the_clip() -> None:
    short = np.arange(SR, dtype=np.float32)
    assert quality.windows(short).shape == (1, quality.WINDOW)
    np.testing.assert_array_equal(quality.windows(short)[0, SR : 2 * SR], short)
    long = np.arange(2 * quality.WINDOW + 5, dtype=np.float32)
    w = quality.windows(long)
    assert w.shape == (3, quality.WINDOW)
    assert w[0, 0] == 0 and w[-1, -1] == long[-1]


def test_dnsmos_rejects_samples_beyond_full_scale() -> None:
    loud = _tone(200.0)
    over = Audio(loud.samples * 4, SR, "loud.wav", SR, 1, loud.seconds)
    with pytest.raises(AudioError, match=r"loud.wav: .*within \[-1, 1\]"):
        quality.dnsmos(over)


# --- speaker ---------------------------------------------------------------------------


def test_same_speaker_is_more_similar_than_different_speakers(
    librivox: dict[str, Audio],
) -> None:
    same = [speaker.speaker_embedding(a) for a in librivox.values()]
    others = [speaker.speaker_embedding(load_audio(p)) for p in OTHER_VOICES]
    within = [same[0].similarity(e) for e in same[1:]]
    across = [s.similarity(o) for s in same for o in others]
    assert min(within) > max(across)
    assert all(abs(np.linalg.norm(e.embedding) - 1) < 1e-5 for e in same)


def test_speaker_embedding_matches_resemblyzer(librivox: dict[str, Audio]) -> None:
    resemblyzer = pytest.importorskip("resemblyzer")
    audio = list(librivox.values())[1]
    ref = resemblyzer.VoiceEncoder("cpu", verbose=False).embed_utterance(
        resemblyzer.preprocess_wav(audio.samples)
    )
    assert float(ref @ np.array(speaker.speaker_embedding(audio).embedding)) > 0.9999


# --- VAD and prosody -------------------------------------------------------------------


def test_vad_finds_the_speech_and_the_silence_around_it(librivox: dict[str, Audio]) -> None:
    audio = list(librivox.values())[0]
    pad = np.zeros(SR, dtype=np.float32)
    padded = load_audio((np.concatenate([pad, audio.samples, pad, pad]), SR))
    out = vad.voice_activity(padded)
    assert 1.0 <= out.leading_silence_s <= 1.6
    assert 2.0 <= out.trailing_silence_s <= 2.6
    assert out.speech_seconds == pytest.approx(sum(e - s for s, e in out.segments))
    assert 0.5 < out.speech_ratio < 0.75 and 0 <= out.pause_ratio < 0.5


def test_vad_measures_no_speech_in_noise() -> None:
    hum = load_audio(((0.01 * np.random.default_rng(3).standard_normal(2 * SR)).astype("f4"), SR))
    out = vad.voice_activity(hum)
    assert out.segments == [] and out.speech_seconds == 0.0 and out.speech_ratio == 0.0
    assert out.leading_silence_s == pytest.approx(2.0)


@pytest.mark.parametrize("f0", [110.0, 220.0, 330.0])
def test_f0_of_a_synthetic_tone_is_found_within_2_percent(f0: float) -> None:
    out = prosody.prosody(_tone(f0, noise=0.005))
    assert out.f0_median_hz == pytest.approx(f0, rel=0.02)
    assert out.voiced_ratio > 0.9 and out.f0_range_st < 0.5


def test_pitch_glide_has_a_wider_range_than_a_steady_tone() -> None:
    glide = prosody.prosody(_tone(np.linspace(150.0, 300.0, 2 * SR)))  # one octave
    steady = prosody.prosody(_tone(200.0))
    assert 9.0 < glide.f0_range_st < 12.5  # 5th..95th percentile of a 12-semitone sweep
    assert glide.f0_slope_st > steady.f0_slope_st


def test_f0_slope_is_the_mean_step_between_consecutive_voiced_frames() -> None:
    glide = _tone(np.linspace(150.0, 300.0, 2 * SR))
    f0 = prosody.f0_contour(glide.samples)
    both = (f0[1:] > 0) & (f0[:-1] > 0)
    steps = np.abs(12 * np.log2(f0[1:][both] / f0[:-1][both]))
    out = prosody.prosody(glide)
    assert out.f0_slope_pairs == int(both.sum()) > 100
    assert out.f0_slope_st == pytest.approx(steps.mean())


def test_f0_slope_without_voiced_neighbours_is_undefined_not_zero(monkeypatch) -> None:
    """A pitch track whose voiced frames are all isolated (every other frame) has no
    frame-to-frame step: the slope is NaN with its pair count 0, never 0.0."""
    tone = _tone(200.0)
    real = prosody.f0_contour(tone.samples)
    isolated = real.copy()
    isolated[1::2] = 0.0
    monkeypatch.setattr(prosody, "f0_contour", lambda samples: isolated)
    out = prosody.prosody(tone)
    assert math.isnan(out.f0_slope_st) and out.f0_slope_pairs == 0
    assert out.f0_median_hz == pytest.approx(200.0, rel=0.02)  # the rest is still described
    assert prosody.VERSION != "pyworld-dio-2"  # cached records of the old 0.0 are not served


def test_energy_dynamics_follow_loudness_changes() -> None:
    base = _tone(180.0, seconds=3.0).samples
    flat = prosody.prosody(load_audio((base, SR)))
    envelope = np.repeat([1.0, 0.1, 1.0], SR).astype(np.float32)
    varied = prosody.prosody(load_audio((base * envelope, SR)))
    assert varied.energy_range_db > flat.energy_range_db + 15
    assert varied.energy_std_db > flat.energy_std_db


def test_prosody_raises_without_voiced_frames() -> None:
    noise = (0.1 * np.random.default_rng(4).standard_normal(SR)).astype(np.float32)
    with pytest.raises(AudioError, match="voiced frame"):
        prosody.prosody(load_audio((noise, SR)))  # neither DIO nor the Harvest fallback


def _pink(n: int, seed: int) -> np.ndarray:
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
    x = np.fft.irfft(spectrum, n)
    return x / np.sqrt(np.mean(x**2))


def test_harvest_takes_over_when_dio_finds_no_voicing(librivox: dict[str, Audio]) -> None:
    pyworld = pytest.importorskip("pyworld")
    clean = librivox["sense_and_sensibility_01_austen_64kb-0880"].samples.astype(np.float64)
    noisy = clean + _pink(len(clean), seed=0) * np.sqrt(np.mean(clean**2) * 10 ** (3 / 10))
    noisy = 0.9 * noisy / np.abs(noisy).max()  # pink noise at -3 dB SNR
    f0, _ = pyworld.dio(noisy, SR, f0_floor=60.0, f0_ceil=800.0, frame_period=10.0)
    assert (f0 > 0).sum() < prosody.MIN_VOICED_FRAMES  # DIO gives up here
    reference = prosody.prosody(load_audio((clean.astype(np.float32), SR))).f0_median_hz
    found = prosody.prosody(load_audio((noisy.astype(np.float32), SR))).f0_median_hz
    assert found == pytest.approx(reference, rel=0.1)


# --- text ------------------------------------------------------------------------------


def test_context_similarity_ranks_the_related_context_higher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contexts = {
        "related": "A pirate captain commands his crew",
        "unrelated": "A tax accountant's invoice",
        "related_zh": "一位海盗船长正在指挥他的船员",
        "unrelated_zh": "一位税务会计师的发票",
    }
    english = "Hoist the sails, you scurvy dogs, the storm is upon us!"
    mandarin = "扬帆起航，你们这些懒狗，暴风雨要来了！"
    cache = FeatureCache(tmp_path)
    sims = text.context_similarities([english, mandarin], [contexts, contexts], cache)
    for row in sims:  # English, Mandarin and cross-lingual pairs share one space
        assert row["related"] > row["unrelated"] + 0.1
        assert row["related_zh"] > row["unrelated_zh"] + 0.1
    pair = text.embed_texts(["你那天晚上在哪里？别骗我。", "Where were you that night? Don't lie."])
    assert pair.shape == (2, text.EMBEDDING_DIM) and pair[0] @ pair[1] > 0.6
    np.testing.assert_allclose(np.linalg.norm(pair, axis=1), 1.0, atol=1e-5)
    assert text.embed_texts([]).shape == (0, text.EMBEDDING_DIM)
    monkeypatch.setattr(text, "_model", lambda: pytest.fail("cached texts must not be embedded"))
    again = text.context_similarities([mandarin], [contexts], cache)[0]
    assert again == pytest.approx(sims[1])
    with pytest.raises(ValueError, match="empty"):
        text.context_similarities([""], [{"q": "question"}])


# --- cache and blueprint ---------------------------------------------------------------


def test_cache_is_keyed_by_samples_and_writes_atomically(tmp_path: Path) -> None:
    cache = FeatureCache(tmp_path)
    x = np.linspace(-0.5, 0.5, SR, dtype=np.float32)
    key = audio_key(x, SR)
    assert key != audio_key(x * 0.5, SR) and key != audio_key(x, 8000)
    assert cache.get("prosody", "1", key) is None
    cache.put("prosody", "1", key, {"a": 0.1})
    assert cache.get("prosody", "1", key) == {"a": 0.1}
    assert cache.get("prosody", "2", key) is None  # a new version never reads an old entry
    assert not list(tmp_path.rglob("*.tmp"))
    mode = cache.path("prosody", "1", key).stat().st_mode & 0o777
    assert mode == 0o666 & ~atomic_io._umask()  # the usual mode, not mkstemp's private 0600
    cache.put("prosody", "1", key, {"a": math.nan})  # an undefined feature reads back as NaN
    assert math.isnan(cache.get("prosody", "1", key)["a"])
    cache.path("prosody", "1", key).write_text("{not json")
    with pytest.warns(UserWarning, match="corrupt cache entry"):
        assert cache.get("prosody", "1", key) is None


def test_cache_location_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "/tmp/somewhere")
    assert default_cache_dir() == Path("/tmp/somewhere")
    monkeypatch.delenv(CACHE_ENV)
    assert default_cache_dir() == Path.home() / ".cache" / "speech-drame" / "features"


def test_blueprint_is_cached_and_round_trips_through_json(
    librivox: dict[str, Audio], tmp_path: Path
) -> None:
    audio = list(librivox.values())[-1]
    ctx = {"question": "Describe how a man might become amiable."}
    first = extract_blueprint(audio, ctx, cache=tmp_path)
    folders = [p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*.json")]
    assert sorted(set(folders)) == sorted(FEATURE_VERSIONS)  # every extractor is cached
    assert folders.count("text") == 2  # the transcript's and the question's embeddings
    second = extract_blueprint(audio, ctx, cache=FeatureCache(tmp_path))
    assert second == first
    again = Blueprint.from_json(first.to_json())
    assert again == first
    assert json.loads(first.to_json())["versions"] == FEATURE_VERSIONS
    assert first.words_per_second == pytest.approx(first.transcript.n_words / first.seconds)
    assert set(first.context) == {"question"} and -1 <= first.context["question"] <= 1


def test_batch_reports_bad_clips_and_still_extracts_the_rest(
    librivox: dict[str, Audio], tmp_path: Path
) -> None:
    good = list(librivox.values())[:2]
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    silence_hum = (0.01 * np.random.default_rng(5).standard_normal(SR)).astype(np.float32)
    result = extract_blueprints(
        [good[0], str(empty), (silence_hum, SR), good[1]], cache=tmp_path / "c", progress=False
    )
    assert result.blueprints[0] is not None and result.blueprints[3] is not None
    assert set(result.errors) == {1, 2}
    assert "empty.wav" in result.errors[1] and "0 bytes" in result.errors[1]
    assert result.errors[2].startswith("<array>: ")
    assert result.blueprints[0] == extract_blueprint(good[0], cache=tmp_path / "c")


def test_users_of_an_undefined_f0_slope_say_so(librivox: dict[str, Audio], tmp_path: Path) -> None:
    """The TRACE descriptors, the LiteScorer and the paraling rule scorer on a clip whose F0
    slope is undefined: no 0.0 stands in for it anywhere."""
    from dataclasses import replace

    from speech_drame.protocols.paraling.queries import build_query
    from speech_drame.protocols.paraling.rule_scorer import rule_aspect_scores
    from speech_drame.protocols.trace.blueprint import render_text, trace_blueprint
    from speech_drame.scorers.lite.features import check_blueprint, feature_matrix

    audio = list(librivox.values())[-1]
    ctx = {"question": "Describe how a man might become amiable."}
    bp = extract_blueprint(audio, ctx, cache=tmp_path)
    undefined = replace(bp, prosody=replace(bp.prosody, f0_slope_st=math.nan, f0_slope_pairs=0))
    assert Blueprint.from_json(undefined.to_json()).prosody.f0_slope_pairs == 0

    record = trace_blueprint(undefined)["paralinguistics"]
    assert record["f0_jitter_st"] is None and "consecutive voiced" in record["f0_jitter_note"]
    assert "F0 jitter n/a (no two consecutive voiced frames" in render_text(
        trace_blueprint(undefined)
    )
    assert trace_blueprint(bp)["paralinguistics"]["f0_jitter_st"] == round(
        bp.prosody.f0_slope_st, 3
    )

    with pytest.raises(ValueError, match=r"feature prosody\.f0_slope_st is undefined \(no two"):
        check_blueprint(undefined, "archetype")
    with pytest.raises(ValueError, match=r"prosody\.f0_slope_st is undefined"):
        feature_matrix([bp, undefined], "archetype")
    assert np.isfinite(feature_matrix([bp], "archetype")).all()

    query = build_query({"id": "q", "task": "paralanguage_control", "subtask": "common",
                         "sentence": "A man might become amiable.",
                         "dimensions": {"emotion": "happy"}})  # fmt: skip
    (unit,) = query.units
    ratings = rule_aspect_scores(query, unit, undefined)  # the rules never read the slope
    assert ratings == rule_aspect_scores(query, unit, bp)
    assert all(math.isfinite(v) for v in ratings.values())
