"""Simulated annotators: the latent-score model and its official-format annotations.

These are **synthetic proxy labels**, not human ratings. Every clip gets latent "true" scores
computed from its construction parameters; 3 to 6 simulated annotators then rate it with their
own bias and noise, and the result is written exactly as the official release stores human
annotations.

Latent-score model. Each clip is described by factors in [0, 1]:

* ``N`` naturalness of the source (real speech 1.0, piper 0.68, flite 0.18-0.38, espeak-ng
  0.10-0.12), minus 0.06 when pitch or timing was changed by WORLD resynthesis;
* ``C`` clean audio quality of the source (0.42 for 8 kHz flite ``kal`` .. 0.92);
* ``D`` degradation multiplier (1 when clean; noise 0.72/0.46/0.20, clipping 0.70/0.45/0.20,
  band-limiting 0.80/0.56/0.32 at mild/moderate/severe);
* ``R`` rate naturalness ``exp(-ln(rate)^2 / (2*0.2^2))``;
* ``P`` pitch-range naturalness ``exp(-ln(k)^2 / (2*0.45^2))`` (flattened or exaggerated F0);
* ``A`` arousal fit ``1 - |a_delivery - a_target| / 2`` between the delivery and what the
  prompt or the presented scene calls for;
* realism only: ``V`` voice fit to the presented profile (0.6 gender match + 0.4 age fit),
  ``S`` scene congruence and ``G`` profile congruence (1 - level/3 for a mismatch at level
  1/2/3 = mild/moderate/severe; a swapped profile brings its own scene, so it also lowers ``S``
  by 0.7 level/3).

Archetype latents: Audio Quality ``1 + 4 C D``; Human Likeness ``1 + 4 (0.72 N + 0.14 R +
0.14 P) - 0.12 severity``; Appropriateness ``1 + 4 (0.45 A + 0.35 N + 0.20 P)``. Realism
latents are ``1 + 4 * sum(w_f * f)`` with the weights of :data:`REALISM_WEIGHTS`. Content Pass
is drawn per annotator with a probability set by the reply (on-role 0.96, borderline 0.5,
irrelevant 0.04, fourth-wall 0.06, narration 0.12, stage direction 0.08; times 0.2 for clips
under 2 s, which the rubric rejects as too short) shifted by the annotator's strictness.

Annotators come from a seeded pool; each has a bias (N(0, 0.2)), a noise level (0.3-0.5),
a Content Pass strictness and a confidence offset. A score is the latent plus bias plus noise,
with a 3 % chance of an outlier (latent +/- 2), rounded and clipped to 1..5. Realism emotion
scores are gated per annotator as the rubric says: intensity is "N/A" when that annotator's
accuracy is below 3, dynamic range when intensity is below 3 or "N/A".

Mandarin clips are rated by the same model and the same pool (their sources are espeak-ng
pinyin voices with espeak-ng's priors); their comments are written in Chinese, as in the
official Mandarin records (:data:`ZH_COMMENTS`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from speech_drame.demo.degrade import Degradation
from speech_drame.demo.delivery import Delivery
from speech_drame.schema import EMOTION_GATE_THRESHOLD, NOT_APPLICABLE, SCORE_MAX, SCORE_MIN

# (naturalness N, clean quality C) of each source: a TTS voice key or "real:<group>".
SOURCE_PRIORS: dict[str, tuple[float, float]] = {
    "piper:en_US-joe-medium": (0.68, 0.90),
    "flite:slt": (0.38, 0.74),
    "flite:rms": (0.32, 0.70),
    "flite:awb": (0.30, 0.66),
    "flite:kal16": (0.22, 0.62),
    "flite:kal": (0.18, 0.42),
    "espeak:en-us+m3": (0.10, 0.62),
    "espeak:en-gb+f2": (0.12, 0.62),
    "espeak:en-us+f4": (0.12, 0.62),
    "espeak:en-gb-x-rp+m1": (0.10, 0.62),
    "espeak:cmn-latn-pinyin+Jacky": (0.10, 0.62),
    "espeak:cmn-latn-pinyin+m3": (0.10, 0.62),
    "espeak:cmn-latn-pinyin+m7": (0.10, 0.62),
    "espeak:cmn-latn-pinyin+Annie": (0.12, 0.62),
    "espeak:cmn-latn-pinyin+shelby": (0.12, 0.62),
    "espeak:cmn-latn-pinyin+f3": (0.12, 0.62),
    "real:librivox": (1.0, 0.80),
    "real:cards": (1.0, 0.62),
    "real:drill": (1.0, 0.72),
    "real:bingo": (1.0, 0.72),
    "real:alsa": (1.0, 0.92),
    "real:official": (1.0, 0.86),
}
VOCODER_PENALTY = 0.06
QUALITY_MULTIPLIER: dict[str, tuple[float, float, float, float]] = {
    "none": (1.0, 1.0, 1.0, 1.0),
    "noise": (1.0, 0.72, 0.46, 0.20),
    "clipping": (1.0, 0.70, 0.45, 0.20),
    "bandlimit": (1.0, 0.80, 0.56, 0.32),
}
CONTENT_PASS_PROBABILITY: dict[str, float] = {
    "on_role": 0.96,
    "borderline": 0.5,
    "irrelevant": 0.04,
    "fourth_wall": 0.06,
    "narration": 0.12,
    "stage_direction": 0.08,
}
TOO_SHORT_SECONDS = 2.0  # archetype rubric: 1-2 s clips are rejected
TOO_SHORT_FACTOR = 0.2
INSUFFICIENT_SECONDS = 1.6  # realism: too short to judge the dimensions
AGES: tuple[str, ...] = ("Child", "Teenager", "Young Adult", "Adult", "Elderly")
REALISM_WEIGHTS: dict[str, dict[str, float]] = {
    "pitch_variation": {"N": 0.45, "P": 0.45, "A": 0.10},
    "rhythmic_naturalness": {"N": 0.50, "R": 0.40, "A": 0.10},
    "stress_and_emphasis": {"N": 0.45, "P": 0.30, "R": 0.15, "A": 0.10},
    "emotion_accuracy": {"N": 0.30, "S": 0.30, "G": 0.15, "A": 0.15, "P": 0.10},
    "emotion_intensity_control": {"N": 0.35, "P": 0.20, "S": 0.20, "A": 0.15, "R": 0.10},
    "dynamic_range": {"P": 0.40, "N": 0.35, "S": 0.15, "A": 0.10},
    "voice_identity_matching": {"G": 0.45, "N": 0.30, "V": 0.25},
    "trait_embodiment": {"G": 0.50, "N": 0.25, "V": 0.15, "A": 0.10},
    "local_story_fit": {"S": 0.65, "A": 0.15, "N": 0.10, "G": 0.10},
    "global_story_coherence": {"G": 0.60, "N": 0.15, "S": 0.15, "V": 0.10},
}
# Familiarity of a role category: the archetype confidence (1..3) centres on it.
CATEGORY_FAMILIARITY: dict[str, float] = {
    "DailyOccupation": 2.7,
    "SocialIdentity": 2.7,
    "RelativeRole": 2.7,
    "BasicEvent": 2.7,
    "NamedCharacter": 2.3,
    "PersonalityTrait": 2.3,
    "FictionalOccupation": 2.0,
}
# The comments of Mandarin clips, in Chinese.
ZH_COMMENTS: dict[str, str] = {
    "Audible background hiss.": "有明显的背景噪声。",
    "Noisy recording, speech partly masked.": "噪声较大，部分语音听不清。",
    "Distorted, sounds clipped.": "声音失真，有削波。",
    "Harsh crackling on loud syllables.": "音量大的地方有刺耳的爆音。",
    "Muffled, like a phone line.": "声音发闷，像电话里的声音。",
    "Thin and boxy sound.": "声音单薄发闷。",
    "Sounds like an old, compressed recording.": "像是压缩过的老录音。",
    "Some room noise.": "有一些房间噪声。",
    "Synthetic, slightly buzzy timbre.": "合成音色，有点嗡嗡声。",
    "Thin, metallic sound.": "声音单薄，有金属感。",
    "Unnatural pacing.": "语速不自然。",
    "Speed feels mechanical.": "节奏机械。",
    "Monotone.": "语调单一。",
    "Flat, read-aloud intonation.": "语调平淡，像在念稿。",
    "Pitch swings sound artificial.": "音高起伏不自然。",
    "Sing-song, forced intonation.": "语调像唱歌，很做作。",
    "A little stiff, read-aloud feel.": "有点生硬，像念稿。",
    "Slightly unnatural pauses.": "停顿有点不自然。",
    "Robotic, machine-like delivery.": "机械，像机器人。",
    "Mechanical rhythm, no breaths.": "节奏机械，没有换气。",
    "Tone fits the role and the scene.": "语气符合角色和场景。",
    "Believable reaction for this role.": "反应符合这个角色。",
    "Good match for the situation.": "和情境很匹配。",
    "Acceptable, but lacks emotional depth.": "还可以，但情感不够。",
    "Generic delivery.": "表达比较普通。",
    "Too calm for what is happening.": "对这个情境来说太平静了。",
    "Lacks urgency.": "缺少紧迫感。",
    "Too energetic for the situation.": "情绪过于激动，不符合情境。",
    "Overacted for this scene.": "表演过头了。",
    "Does not sound like this role.": "听起来不像这个角色。",
    "Flat, no sense of the character.": "平淡，没有角色感。",
    "The clip is very short, hard to judge.": "音频太短，难以判断。",
    "The delivery does not fit the described scene.": "语气不符合描述的场景。",
    "The scene and the tone of the line clash.": "场景和台词的语气冲突。",
    "The voice does not match the character profile.": "声音和角色设定不符。",
    "Hard to hear this character in this voice.": "这个声音听不出这个角色。",
    "Sounds synthetic, which makes the emotion hard to judge.": "听起来是合成的，情感难以判断。",
}
ANNOTATOR_COUNTS = (3, 4, 5, 6)
ANNOTATOR_COUNT_P = (0.3, 0.3, 0.2, 0.2)
OUTLIER_P = 0.03


@dataclass(frozen=True)
class Rater:
    bias: float
    noise_sd: float
    strictness: float  # logit shift against passing content
    confidence_offset: float


def rater_pool(rng: np.random.Generator, size: int = 10) -> list[Rater]:
    """A pool of simulated annotators with persistent tendencies."""
    return [
        Rater(
            bias=float(rng.normal(0, 0.2)),
            noise_sd=float(rng.uniform(0.3, 0.5)),
            strictness=float(rng.normal(0, 0.5)),
            confidence_offset=float(rng.normal(0, 0.3)),
        )
        for _ in range(size)
    ]


def draw_raters(pool: list[Rater], rng: np.random.Generator) -> list[Rater]:
    """3 to 6 distinct annotators of the pool, in rating order."""
    k = int(rng.choice(ANNOTATOR_COUNTS, p=ANNOTATOR_COUNT_P))
    return [pool[i] for i in rng.choice(len(pool), size=k, replace=False)]


def pitch_naturalness(pitch_range: float) -> float:
    return math.exp(-(math.log(pitch_range) ** 2) / (2 * 0.45**2))


def rate_naturalness(rate: float) -> float:
    return math.exp(-(math.log(rate) ** 2) / (2 * 0.2**2))


def arousal_fit(delivered: float, target: float) -> float:
    return 1.0 - min(abs(delivered - target), 2.0) / 2.0


def age_fit(speaker_age: str, presented_age: str) -> float:
    gap = abs(AGES.index(speaker_age) - AGES.index(presented_age))
    return max(0.0, 1.0 - 0.3 * gap)


def _source(label: str, vocoded: bool) -> tuple[float, float]:
    if label not in SOURCE_PRIORS:
        raise KeyError(f"no latent-score prior for source {label!r}")
    n, c = SOURCE_PRIORS[label]
    if vocoded:
        n, c = n - VOCODER_PENALTY, c - VOCODER_PENALTY
    return n, c


def _clip_score(x: float) -> float:
    return min(max(x, float(SCORE_MIN)), float(SCORE_MAX))


def _rate(latent: float, rater: Rater, rng: np.random.Generator) -> int:
    if rng.random() < OUTLIER_P:
        value = latent + (2.0 if rng.random() < 0.5 else -2.0)
    else:
        value = latent + rater.bias + rng.normal(0, rater.noise_sd)
    return int(round(_clip_score(value)))


def _pick(options: tuple[str, ...], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


def _in(language: str, comment: str) -> str:
    """``comment`` in the annotators' language (empty comments stay empty)."""
    return ZH_COMMENTS[comment] if language == "zh" and comment else comment


# --- archetype -------------------------------------------------------------------------
@dataclass(frozen=True)
class ArchetypeFacts:
    source: str  # SOURCE_PRIORS key
    delivery: Delivery
    degradation: Degradation
    content: str  # CONTENT_PASS_PROBABILITY key
    category: str
    target_arousal: float
    seconds: float
    vocoded: bool = False  # WORLD resynthesis (pitch or time) was applied
    language: str = "en"  # of the prompt and the reply: the annotators' comments follow it


def archetype_latent(facts: ArchetypeFacts) -> tuple[dict[str, float], dict[str, float]]:
    """(latent scores, factors) of an archetype clip."""
    n, c = _source(facts.source, facts.vocoded)
    deg = facts.degradation
    f = {
        "N": n,
        "C": c,
        "D": QUALITY_MULTIPLIER[deg.kind][deg.severity],
        "R": rate_naturalness(facts.delivery.rate),
        "P": pitch_naturalness(facts.delivery.pitch_range),
        "A": arousal_fit(facts.delivery.arousal, facts.target_arousal),
    }
    latent = {
        "audio_quality": 1 + 4 * f["C"] * f["D"],
        "human_likeness": 1
        + 4 * (0.72 * f["N"] + 0.14 * f["R"] + 0.14 * f["P"])
        - 0.12 * deg.severity,
        "appropriateness": 1 + 4 * (0.45 * f["A"] + 0.35 * f["N"] + 0.20 * f["P"]),
    }
    return {k: _clip_score(v) for k, v in latent.items()}, f


def content_pass_probability(facts: ArchetypeFacts) -> float:
    p = CONTENT_PASS_PROBABILITY[facts.content]
    return p * TOO_SHORT_FACTOR if facts.seconds < TOO_SHORT_SECONDS else p


def _quality_comment(facts: ArchetypeFacts, rng: np.random.Generator) -> str:
    kind = facts.degradation.kind
    if kind == "noise":
        return _pick(("Audible background hiss.", "Noisy recording, speech partly masked."), rng)
    if kind == "clipping":
        return _pick(("Distorted, sounds clipped.", "Harsh crackling on loud syllables."), rng)
    if kind == "bandlimit":
        return _pick(("Muffled, like a phone line.", "Thin and boxy sound."), rng)
    if facts.source.startswith("real:"):
        return _pick(("Sounds like an old, compressed recording.", "Some room noise."), rng)
    return _pick(("Synthetic, slightly buzzy timbre.", "Thin, metallic sound."), rng)


def _likeness_comment(f: dict[str, float], delivery: Delivery, rng: np.random.Generator) -> str:
    if f["R"] < 0.6:
        return _pick(("Unnatural pacing.", "Speed feels mechanical."), rng)
    if f["P"] < 0.6:
        if delivery.pitch_range < 1:
            return _pick(("Monotone.", "Flat, read-aloud intonation."), rng)
        return _pick(("Pitch swings sound artificial.", "Sing-song, forced intonation."), rng)
    if f["N"] >= 0.9:
        return _pick(("A little stiff, read-aloud feel.", "Slightly unnatural pauses."), rng)
    return _pick(("Robotic, machine-like delivery.", "Mechanical rhythm, no breaths."), rng)


def _appropriateness_comment(score: int, facts: ArchetypeFacts, rng: np.random.Generator) -> str:
    if score >= 4:
        return _pick(
            ("Tone fits the role and the scene.", "Believable reaction for this role.",
             "Good match for the situation."), rng,
        )  # fmt: skip
    gap = facts.delivery.arousal - facts.target_arousal
    if score == 3:
        return _pick(("Acceptable, but lacks emotional depth.", "Generic delivery."), rng)
    if gap < -0.5:
        return _pick(("Too calm for what is happening.", "Lacks urgency."), rng)
    if gap > 0.5:
        return _pick(("Too energetic for the situation.", "Overacted for this scene."), rng)
    return _pick(("Does not sound like this role.", "Flat, no sense of the character."), rng)


def archetype_annotations(
    facts: ArchetypeFacts, pool: list[Rater], rng: np.random.Generator
) -> tuple[dict[str, list], dict[str, float], dict[str, float]]:
    """(official ``annotations`` object, latent scores, factors) of one archetype clip."""
    latent, f = archetype_latent(facts)
    raters = draw_raters(pool, rng)
    p = content_pass_probability(facts)
    logit = math.log(p / (1 - p))
    ann: dict[str, list] = {
        k: []
        for k in (
            "content_pass", "audio_quality", "human_likeness", "appropriateness", "confidence",
            "audio_quality_comment", "human_likeness_comment", "appropriateness_comment",
        )
    }  # fmt: skip
    familiarity = CATEGORY_FAMILIARITY[facts.category]
    for rater in raters:
        passed = bool(rng.random() < 1 / (1 + math.exp(-(logit - rater.strictness))))
        ann["content_pass"].append(passed)
        if not passed:
            for key in ("audio_quality", "human_likeness", "appropriateness", "confidence"):
                ann[key].append(None)
            for key in ("audio_quality_comment", "human_likeness_comment"):
                ann[key].append("")
            ann["appropriateness_comment"].append("")
            continue
        aq = _rate(latent["audio_quality"], rater, rng)
        hl = _rate(latent["human_likeness"], rater, rng)
        ap = _rate(latent["appropriateness"], rater, rng)
        conf = familiarity + rater.confidence_offset + rng.normal(0, 0.5)
        ann["audio_quality"].append(aq)
        ann["human_likeness"].append(hl)
        ann["appropriateness"].append(ap)
        ann["confidence"].append(int(round(min(max(conf, 1.0), 3.0))))
        # as in the official sample: no quality comment above 3, "N/A" for likeness above 3
        lang = facts.language
        ann["audio_quality_comment"].append(
            _in(lang, _quality_comment(facts, rng)) if aq <= 3 else ""
        )
        ann["human_likeness_comment"].append(
            _in(lang, _likeness_comment(f, facts.delivery, rng)) if hl <= 3 else "N/A"
        )
        ann["appropriateness_comment"].append(_in(lang, _appropriateness_comment(ap, facts, rng)))
    return ann, latent, f


# --- realism ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RealismFacts:
    source: str
    speaker_gender: str
    speaker_age: str
    delivery: Delivery
    degradation: Degradation
    mismatch_type: str  # "none" | "scene" | "profile"
    mismatch_level: int  # 0..3
    scene_arousal: float  # arousal the presented scene calls for
    presented_gender: str
    presented_age: str
    char_style: str
    seconds: float
    vocoded: bool = False
    language: str = "en"  # of the context and the transcript: the comments follow it


def realism_latent(facts: RealismFacts) -> tuple[dict[str, float], dict[str, float]]:
    """(latent scores, factors) of a realism clip."""
    n, _ = _source(facts.source, facts.vocoded)
    level = facts.mismatch_level / 3
    f = {
        "N": n,
        "R": rate_naturalness(facts.delivery.rate),
        "P": pitch_naturalness(facts.delivery.pitch_range),
        "A": arousal_fit(facts.delivery.arousal, facts.scene_arousal),
        "V": 0.6 * (facts.speaker_gender == facts.presented_gender)
        + 0.4 * age_fit(facts.speaker_age, facts.presented_age),
        "S": 1.0 - {"none": 0.0, "scene": level, "profile": 0.7 * level}[facts.mismatch_type],
        "G": 1.0 - (level if facts.mismatch_type == "profile" else 0.0),
    }
    latent = {
        dim: _clip_score(1 + 4 * sum(w * f[k] for k, w in weights.items()))
        for dim, weights in REALISM_WEIGHTS.items()
    }
    return latent, f


def _realism_comment(facts: RealismFacts, f: dict[str, float], rng: np.random.Generator) -> str:
    if rng.random() > 0.15:
        return ""
    if facts.seconds < INSUFFICIENT_SECONDS:
        return "The clip is very short, hard to judge."
    if f["S"] < 0.6:
        return _pick(("The delivery does not fit the described scene.",
                      "The scene and the tone of the line clash."), rng)  # fmt: skip
    if f["G"] < 0.6 or f["V"] < 0.6:
        return _pick(("The voice does not match the character profile.",
                      "Hard to hear this character in this voice."), rng)  # fmt: skip
    if f["N"] < 0.5:
        return "Sounds synthetic, which makes the emotion hard to judge."
    return ""


def realism_annotations(
    facts: RealismFacts, pool: list[Rater], rng: np.random.Generator
) -> tuple[dict[str, list], dict[str, float], dict[str, float]]:
    """(official ``annotations`` object, latent scores, factors) of one realism clip."""
    latent, f = realism_latent(facts)
    raters = draw_raters(pool, rng)
    traits = [t.strip() for t in re.split(r"[,，、]", facts.char_style) if t.strip()]
    trait_sep = "、" if facts.language == "zh" else ", "
    scene_p = 0.10 if facts.mismatch_type == "scene" else 0.03
    p_contradictory = 0.02 + scene_p * facts.mismatch_level
    p_insufficient = 0.55 if facts.seconds < INSUFFICIENT_SECONDS else 0.03
    per_rater = []
    for rater in raters:
        s = {dim: _rate(latent[dim], rater, rng) for dim in latent}
        if s["emotion_accuracy"] < EMOTION_GATE_THRESHOLD:
            s["emotion_intensity_control"] = NOT_APPLICABLE
        if s["emotion_intensity_control"] == NOT_APPLICABLE or (
            s["emotion_intensity_control"] < EMOTION_GATE_THRESHOLD
        ):
            s["dynamic_range"] = NOT_APPLICABLE
        keep = 0.15 + 0.8 * (s["trait_embodiment"] - 1) / 4
        observed = [t for t in traits if rng.random() < keep]
        conf = (
            4.3 - 0.9 * (facts.seconds < TOO_SHORT_SECONDS) - 0.35 * facts.degradation.severity
            + rater.confidence_offset + rng.normal(0, 0.6)
        )  # fmt: skip
        sufficient = bool(rng.random() >= p_insufficient)
        contradictory = bool(rng.random() < p_contradictory)
        s.update(
            annotator_confidence_rating=int(round(min(max(conf, 1.0), 5.0))),
            comments=_in(facts.language, _realism_comment(facts, f, rng)),
            observed=trait_sep.join(observed) if observed else NOT_APPLICABLE,
            sufficient=sufficient,
            contradictory=contradictory,
            prmopt_quality="valid" if sufficient and not contradictory else "invalid",
        )
        per_rater.append(s)

    def column(key: str) -> list:
        return [s[key] for s in per_rater]

    ann = {
        "annotator_confidence_rating": column("annotator_confidence_rating"),
        "comments": column("comments"),
        "dynamic_range": column("dynamic_range"),
        "emotion_accuracy": column("emotion_accuracy"),
        "emotion_intensity_control": column("emotion_intensity_control"),
        "global_story_coherence": column("global_story_coherence"),
        "local_story_fit": column("local_story_fit"),
        "multi-speaker_influence": [False] * len(per_rater),
        "observed_character_style_dimensions": column("observed"),
        "pitch_variation": column("pitch_variation"),
        "sufficient": column("sufficient"),
        "contradictory": column("contradictory"),
        "prmopt_quality": column("prmopt_quality"),
        "rhythmic_naturalness": column("rhythmic_naturalness"),
        "stress_and_emphasis": column("stress_and_emphasis"),
        "trait_embodiment": column("trait_embodiment"),
        "voice_identity_matching": column("voice_identity_matching"),
    }
    return ann, latent, f
