"""The demo release generator: official format, real speech, determinism, label behaviour."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from speech_drame.audio import load_audio
from speech_drame.demo import degrade as dg
from speech_drame.demo import raters
from speech_drame.demo.delivery import PRESETS, WorldAnalysis, as_recorded, rms_dbfs
from speech_drame.demo.pinyin import to_pinyin
from speech_drame.demo.plan import plan_release
from speech_drame.demo.real_speech import find_real_clips, load_real_clip
from speech_drame.demo.scenarios_zh import (
    ZH_ARCHETYPE_SCENARIOS,
    ZH_BORDERLINE_LINES,
    ZH_CHARACTERS,
    ZH_IRRELEVANT_LINES,
)
from speech_drame.demo.tts import synthesize
from speech_drame.languages import language_from_script, language_hint
from speech_drame.schema import DATA_DIRS, NOT_APPLICABLE, SPLITS, dimensions, validate_record

LIMIT = 10
PREFIX = "speech_drame/finetuning/data"


@pytest.fixture(scope="module")
def release(tmp_path_factory, official_samples_dir) -> Path:
    from speech_drame.demo.release import make_release

    out = tmp_path_factory.mktemp("demo") / "release"
    make_release(out, seed=5, workers=2, limit=LIMIT, official_dir=official_samples_dir,
                 progress=False)  # fmt: skip
    return out


def _records(root: Path, config: str, split: str) -> list[dict]:
    path = root / DATA_DIRS[config] / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _manifest(root: Path) -> dict[str, dict]:
    manifest = json.loads((root / "DEMO_MANIFEST.json").read_text(encoding="utf-8"))
    return {clip["id"]: clip for clip in manifest["clips"]}


@pytest.mark.slow
def test_records_follow_the_official_format(release, official_samples_dir):
    for config, data_dir in DATA_DIRS.items():
        official = _records(official_samples_dir, config, "test")[0]
        for split in SPLITS[config]:
            records = _records(release, config, split)
            assert 1 <= len(records) <= LIMIT
            for record in records:
                validated = validate_record(record, config, where=f"{config}/{split}")
                assert list(record) == list(official)
                assert list(record["annotations"]) == list(official["annotations"])
                assert 3 <= validated.n_annotators <= 6
                assert record["wav_path"].startswith(f"{PREFIX}/{data_dir}/")
                wav = release / data_dir / Path(record["wav_path"]).name
                assert load_audio(wav).seconds >= 0.3


@pytest.mark.slow
def test_archetype_scores_are_null_exactly_when_content_failed(release):
    for split in SPLITS["archetype"]:
        for record in _records(release, "archetype", split):
            ann = record["annotations"]
            for i, passed in enumerate(ann["content_pass"]):
                scores = [ann[k][i] for k in (*dimensions("archetype"), "confidence")]
                if passed:
                    assert all(isinstance(s, int) for s in scores)
                    assert 1 <= ann["confidence"][i] <= 3
                    assert ann["human_likeness_comment"][i] == "N/A" or scores[1] <= 3
                else:
                    assert scores == [None] * 4
                    assert ann["appropriateness_comment"][i] == ""


@pytest.mark.slow
def test_realism_emotion_gating_and_meta_fields(release):
    for split in SPLITS["realism"]:
        for record in _records(release, "realism", split):
            ann = record["annotations"]
            for i, accuracy in enumerate(ann["emotion_accuracy"]):
                intensity, dynamic = ann["emotion_intensity_control"][i], ann["dynamic_range"][i]
                assert (intensity == NOT_APPLICABLE) == (accuracy < 3)
                gated = intensity == NOT_APPLICABLE or intensity < 3
                assert (dynamic == NOT_APPLICABLE) == gated
                assert 1 <= ann["annotator_confidence_rating"][i] <= 5
                valid = ann["sufficient"][i] and not ann["contradictory"][i]
                assert ann["prmopt_quality"][i] == ("valid" if valid else "invalid")
            assert ann["multi-speaker_influence"] == [False] * len(ann["comments"])


@pytest.mark.slow
def test_manifest_describes_every_clip_and_test_real_is_real_speech(release):
    clips = _manifest(release)
    for config in DATA_DIRS:
        for split in SPLITS[config]:
            for record in _records(release, config, split):
                clip = clips[record["id"]]
                assert (clip["config"], clip["split"]) == (config, split)
                assert set(clip["latent"]) == set(dimensions(config))
                assert clip["n_annotators"] == len(record["annotations"]["comments"
                                                   if config == "realism" else "content_pass"])  # fmt: skip
                if config == "realism":
                    assert clip["real_speech"] == (split == "test_real")
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert "synthetic proxy labels" in readme
    assert "cmn-latn-pinyin" in readme and "pinyin" in readme
    assert re.search(r"Mandarin makes \d+% of the archetype clips", readme)


def _context_text(record: dict) -> str:
    if "question" in record:
        return record["question"]
    return " ".join(record[k] for k in ("local_scene", "char_profile", "transcript"))


@pytest.mark.slow
def test_ids_and_manifest_carry_the_language_of_the_context(release):
    clips = _manifest(release)
    seen = set()
    for config in DATA_DIRS:
        for split in SPLITS[config]:
            for record in _records(release, config, split):
                language = language_from_script(_context_text(record))
                assert language_hint(record["id"]) == language == clips[record["id"]]["language"]
                seen.add(language)
                if split == "test_real":
                    assert language == "en"
    assert seen == {"zh", "en"}


@pytest.mark.slow
def test_labels_fall_with_degradation_severity(release):
    clips = _manifest(release)
    by_severity: dict[bool, list[float]] = {False: [], True: []}
    for split in SPLITS["archetype"]:
        for record in _records(release, "archetype", split):
            scores = [s for s in record["annotations"]["audio_quality"] if s is not None]
            if scores:
                degraded = clips[record["id"]]["degradation"]["severity"] >= 2
                by_severity[degraded].append(float(np.mean(scores)))
    assert by_severity[False] and by_severity[True]
    assert np.mean(by_severity[False]) > np.mean(by_severity[True]) + 0.5


@pytest.mark.slow
def test_release_is_byte_identical_for_a_seed_whatever_the_workers(
    release, tmp_path, official_samples_dir
):
    from speech_drame.demo.release import make_release

    again = tmp_path / "again"
    make_release(again, seed=5, workers=1, limit=LIMIT, official_dir=official_samples_dir,
                 progress=False)  # fmt: skip
    files = sorted(p.relative_to(release) for p in release.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (release / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_a_limited_plan_is_a_subset_of_the_full_plan(official_samples_dir):
    clips = find_real_clips(official_samples_dir)
    full = {p.record_id: p for p in plan_release(3, clips)}
    small = plan_release(3, clips, limit=4)
    assert len(small) == 4 * (len(SPLITS["archetype"]) + len(SPLITS["realism"]))
    for plan in small:
        twin = full[plan.record_id]
        assert (twin.source, twin.delivery, twin.degradation, twin.context, twin.seed) == (
            plan.source, plan.delivery, plan.degradation, plan.context, plan.seed
        )  # fmt: skip
    with pytest.raises(ValueError, match="limit"):
        plan_release(3, clips, limit=0)


def test_language_shares_follow_evalbench(official_samples_dir):
    plans = plan_release(0, find_real_clips(official_samples_dir))
    for config, zh_share in (("archetype", 0.5), ("realism", 0.64)):
        tts = [p for p in plans if p.config == config and not p.is_real]
        assert np.mean([p.language == "zh" for p in tts]) == pytest.approx(zh_share, abs=0.04)
        for split in ("train", "test"):
            in_split = [p for p in tts if p.split == split]
            assert np.mean([p.language == "zh" for p in in_split]) == pytest.approx(
                zh_share, abs=0.12
            )
    assert all(p.language == "en" for p in plans if p.is_real)
    assert 700 <= len(plans) <= 900  # about the size of the English-only release (766)
    for plan in plans:
        context = plan.context.get("question") or plan.context["local_scene"]
        assert language_hint(plan.record_id) == language_from_script(context) == plan.language
        if not plan.is_real:
            assert language_from_script(plan.source.text) == plan.language


def test_mandarin_texts_are_chinese_and_stay_in_mandarin():
    texts = [*ZH_BORDERLINE_LINES, *ZH_IRRELEVANT_LINES]
    for scenario in ZH_ARCHETYPE_SCENARIOS:
        texts += [scenario.question, *scenario.on_role, scenario.off_role]
        assert scenario.question.endswith("你说：") and scenario.language == "zh"
    for character in ZH_CHARACTERS.values():
        texts += [character.profile, character.style, character.scene.text, *character.transcripts]
        texts += [scene.text for scene in character.negative_scenes]
        assert character.language == "zh"
        assert all(ZH_CHARACTERS[key].language == "zh" for key in character.profile_swaps)
    for text in texts:
        assert language_from_script(text) == "zh", text
        to_pinyin(text)  # every line can be spoken


def test_pinyin_has_tone_digits_sandhi_and_pauses():
    assert to_pinyin("你好，我们一起走吧！") == "ni2 hao3, wo3 men5 yi4 qi3 zou3 ba5!"
    assert to_pinyin("“绿色的？”他说：“不是。”") == "lv4 se4 de5? ta1 shuo1, bu2 shi4."
    with pytest.raises(ValueError, match="'3'.*三个苹果"):
        to_pinyin("我要3个苹果。三个苹果")


def test_a_mandarin_rendering_is_speech_of_plausible_length():
    text = "下面播报天气预报：明天北方地区有小雨。"
    samples, sr = synthesize("espeak:cmn-latn-pinyin+Annie", text)
    assert rms_dbfs(samples) > -45
    assert 0.15 < len(samples) / sr / len(text) < 0.4  # seconds per character


def test_refuses_to_overwrite_a_folder_that_is_not_a_demo_release(tmp_path):
    from speech_drame.demo.release import make_release

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a demo release"):
        make_release(tmp_path, limit=1, progress=False)
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("voice", ["piper:en_US-joe-medium", "flite:slt", "espeak:en-us+m3"])
def test_tts_wrappers_produce_speech(voice):
    samples, sr = synthesize(voice, "The lighthouse keeper counted seven ships before dawn.")
    assert samples.dtype == np.float32 and sr >= 8_000
    assert rms_dbfs(samples) > -45
    assert 1.5 < len(samples) / sr < 8.0


@pytest.mark.parametrize("voice", ["flite:awb", "espeak:en-gb+f2"])
def test_engine_rate_changes_the_duration(voice):
    text = "Please keep the door closed while the kettle boils."
    slow, sr = synthesize(voice, text, rate=0.8)
    fast, _ = synthesize(voice, text, rate=1.25)
    assert 1.3 < len(slow) / len(fast) < 1.8


def test_pitch_range_and_shift_change_the_measured_f0():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyworld imports the deprecated pkg_resources
        import pyworld

    samples, sr = synthesize("flite:slt", "Oh really, you went all the way there by yourself?")
    analysis = WorldAnalysis(samples, sr)

    def log_f0(y: np.ndarray) -> np.ndarray:
        f0, t = pyworld.dio(y.astype(np.float64), sr, frame_period=10.0)
        f0 = pyworld.stonemask(y.astype(np.float64), f0, t, sr)
        return np.log(f0[f0 > 0])

    plain = log_f0(analysis.synthesize(0.0, 1.0))
    flat = log_f0(analysis.synthesize(0.0, PRESETS["flat"].pitch_range))
    up = log_f0(analysis.synthesize(4.0, 1.0))
    assert flat.std() < 0.6 * plain.std()
    assert np.median(up) - np.median(plain) == pytest.approx(4 * np.log(2) / 12, abs=0.06)
    fast = analysis.synthesize(0.0, 1.0, time_scale=1.25)
    assert len(fast) == pytest.approx(len(samples) / 1.25, abs=2)
    assert np.median(log_f0(fast)) == pytest.approx(np.median(plain), abs=0.05)


def test_degradations_hit_their_nominal_parameters():
    rng = np.random.default_rng(0)
    t = np.arange(32_000) / 16_000
    x = (0.3 * np.sin(2 * np.pi * 200 * t) + 0.1 * np.sin(2 * np.pi * 6000 * t)).astype(np.float32)
    for color in dg.NOISE_COLORS:
        noisy = dg.add_noise(x, 10.0, color, rng)
        snr = 10 * np.log10(np.mean(x**2) / np.mean((noisy - x) ** 2))
        assert snr == pytest.approx(10.0, abs=0.3)
    band = dg.band_limit(x, 16_000, *dg.BAND_HZ[2])
    spectrum = np.abs(np.fft.rfft(band))
    assert spectrum[6000 * 2] < 0.01 * np.abs(np.fft.rfft(x))[6000 * 2]
    clipped = dg.hard_clip(x, dg.CLIP_FRACTION[3])
    crest = lambda y: np.max(np.abs(y)) / np.sqrt(np.mean(y**2))  # noqa: E731
    assert crest(clipped) < 1.1 < 1.5 < crest(x)  # clipped to nearly a square wave
    with pytest.raises(ValueError, match="severity"):
        dg.Degradation("noise", 0, "white")
    with pytest.raises(ValueError, match="noise colour"):
        dg.Degradation("clipping", 2, "pink")


def _archetype_facts(source: str, degradation: dg.Degradation, **kw) -> raters.ArchetypeFacts:
    base = dict(delivery=PRESETS["neutral"], content="on_role", category="DailyOccupation",
                target_arousal=0.0, seconds=4.0)  # fmt: skip
    base.update(kw)
    return raters.ArchetypeFacts(source, degradation=degradation, **base)


def _mean_score(facts, dim: str, n: int = 150) -> float:
    pool = raters.rater_pool(np.random.default_rng(1))
    scores = []
    for i in range(n):
        ann, _, _ = raters.archetype_annotations(facts, pool, np.random.default_rng(i))
        scores += [s for s in ann[dim] if s is not None]
    return float(np.mean(scores))


def test_simulated_annotators_follow_the_construction_parameters():
    piper = "piper:en_US-joe-medium"
    aq = [
        _mean_score(_archetype_facts(piper, dg.Degradation("noise", sev, "white")
                                     if sev else dg.Degradation()), "audio_quality")
        for sev in (0, 1, 2, 3)
    ]  # fmt: skip
    assert aq == sorted(aq, reverse=True) and aq[0] - aq[3] > 2
    likeness = [
        _mean_score(_archetype_facts(src, dg.Degradation(), delivery=as_recorded(0.0)),
                    "human_likeness")
        for src in ("real:librivox", piper, "flite:slt", "espeak:en-us+m3")
    ]  # fmt: skip
    assert likeness == sorted(likeness, reverse=True)
    fits = []
    for level in (0, 1, 2, 3):
        facts = raters.RealismFacts(
            "real:librivox", "M", "Adult", as_recorded(0.0), dg.Degradation(),
            "scene" if level else "none", level, 0.0, "M", "Adult", "Calm", 4.0,
        )  # fmt: skip
        fits.append(raters.realism_latent(facts)[0]["local_story_fit"])
    assert fits == sorted(fits, reverse=True) and fits[0] - fits[3] > 2
    flat = raters.RealismFacts(
        "piper:en_US-joe-medium",
        "M",
        "Adult",
        PRESETS["flat"],
        dg.Degradation(),
        "none",
        0,
        0.0,
        "M",
        "Adult",
        "Calm",
        4.0,
    )
    neutral = raters.RealismFacts(
        "piper:en_US-joe-medium",
        "M",
        "Adult",
        PRESETS["neutral"],
        dg.Degradation(),
        "none",
        0,
        0.0,
        "M",
        "Adult",
        "Calm",
        4.0,
    )
    assert (raters.realism_latent(flat)[0]["pitch_variation"]
            < raters.realism_latent(neutral)[0]["pitch_variation"] - 1)  # fmt: skip


def test_mandarin_clips_get_chinese_comments():
    facts = _archetype_facts("espeak:cmn-latn-pinyin+Annie", dg.Degradation("noise", 3, "white"),
                             language="zh")  # fmt: skip
    pool = raters.rater_pool(np.random.default_rng(1))
    comments = []
    for i in range(20):
        ann, _, _ = raters.archetype_annotations(facts, pool, np.random.default_rng(i))
        comments += [c for c in ann["audio_quality_comment"] if c]
    assert comments and all(language_from_script(c) == "zh" for c in comments)


def test_short_clips_mostly_fail_content_pass():
    piper = "piper:en_US-joe-medium"
    long = raters.content_pass_probability(_archetype_facts(piper, dg.Degradation()))
    short = raters.content_pass_probability(_archetype_facts(piper, dg.Degradation(), seconds=1.4))
    assert long > 0.9 and short < 0.25


def test_real_clips_are_found_checked_and_readable(official_samples_dir, tmp_path):
    clips = find_real_clips(official_samples_dir)
    groups = {c.group for c in clips}
    assert {"librivox", "cards", "drill", "bingo", "alsa", "official"} == groups
    assert not any("Noise" in str(c.path) for c in clips)
    raw = next(c for c in clips if c.raw_pcm)
    audio = load_real_clip(raw)
    assert audio.sample_rate == 16_000 and audio.seconds > 2.0
    # a transcript that disagrees with the Debian transcription file names the clip
    fake = tmp_path / "pocketsphinx"
    for sub in ("librivox", "cards"):
        (fake / sub).mkdir(parents=True)
        for f in (Path("/usr/share/pocketsphinx/test/data") / sub).iterdir():
            (fake / sub / f.name).symlink_to(f)
    tx = fake / "librivox" / "transcription"
    text = tx.read_text().replace("ill disposed young man", "well disposed young man")
    tx.unlink()
    tx.write_text(text)
    with pytest.raises(ValueError, match="0880.wav: transcript"):
        find_real_clips(None, pocketsphinx_dir=fake)
