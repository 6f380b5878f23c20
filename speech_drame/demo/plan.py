"""What the demo release contains: one :class:`ClipPlan` per record, drawn from a seed.

Archetype records pair a prompt with a reply rendered by a TTS voice (on-role, borderline,
irrelevant, fourth-wall, narration or stage direction) or with a real recording, plus a delivery
preset and a degradation. Realism records pair a transcript rendered by a TTS voice
(``train``/``test``) or recorded by a human (``test_real``, real speech only) with the matching
context or a negative one: a scene or a profile swapped at mild, moderate or severe mismatch.

Both languages of EvalBench are planned the same way: English texts and voices
(:mod:`~speech_drame.demo.scenarios`) and Mandarin ones (:mod:`~speech_drame.demo.scenarios_zh`,
espeak-ng pinyin voices). :data:`LANGUAGE_PLANS` sets how many voices render each text so that
Mandarin makes about 64 % of the synthetic realism clips (the paper's 9k zh / 5k en) and about
half of the synthetic archetype clips. Real recordings are English. A clip never mixes languages:
negatives, cross-pairings and profile swaps stay within its language.

Splits keep every record made from the same base rendering (text, voice, engine rate) or the
same real clip together. Record ids mimic the official ones and carry the language like them
(``demo_zh_<Category>_<scenario>_<number>.wav``, ``demo_en_role-eval_v1_<number>``); the
construction stays in the manifest.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from speech_drame.demo.degrade import NOISE_COLORS, Degradation
from speech_drame.demo.delivery import PRESETS, Delivery, as_recorded, needs_world
from speech_drame.demo.real_speech import RealClip
from speech_drame.demo.scenarios import (
    ARCHETYPE_SCENARIOS,
    BORDERLINE_LINES,
    CHARACTERS,
    IRRELEVANT_LINES,
    MISMATCH_LABELS,
    REAL_ARCHETYPE_SCENARIOS,
    ArchetypeScenario,
    Character,
    character_for_group,
    real_archetype_scenario,
)
from speech_drame.demo.scenarios_zh import (
    ZH_ARCHETYPE_SCENARIOS,
    ZH_BORDERLINE_LINES,
    ZH_CHARACTERS,
    ZH_IRRELEVANT_LINES,
)
from speech_drame.demo.tts import VOICES

CONFIG_CODES = {"archetype": 1, "realism": 2}
TEST_FRACTION = 0.2  # of the records outside test_real
SYNTHETIC_SPEAKER_AGE = "Adult"
REAL_SPEAKER_AGE = {"official": "Young Adult"}  # every other real speaker sounds adult
VOICE_WEIGHTS: dict[str, float] = {
    "piper:en_US-joe-medium": 2.2,
    "flite:slt": 1.5,
    "flite:rms": 1.0,
    "flite:awb": 1.0,
    "flite:kal16": 1.0,
    "flite:kal": 0.7,
    "espeak:en-us+m3": 0.8,
    "espeak:en-gb+f2": 0.8,
    "espeak:en-us+f4": 0.8,
    "espeak:en-gb-x-rp+m1": 0.8,
}
# the voices Whisper identifies as Mandarin more often weigh more (see speech_drame.demo.tts)
ZH_MALE_VOICES: dict[str, float] = {
    "espeak:cmn-latn-pinyin+Jacky": 1.4,
    "espeak:cmn-latn-pinyin+m7": 0.8,
    "espeak:cmn-latn-pinyin+m3": 0.8,
}
ZH_FEMALE_VOICES: dict[str, float] = {
    "espeak:cmn-latn-pinyin+Annie": 1.2,
    "espeak:cmn-latn-pinyin+shelby": 1.2,
    "espeak:cmn-latn-pinyin+f3": 0.8,
}
ZH_VOICE_WEIGHTS: dict[str, float] = {**ZH_MALE_VOICES, **ZH_FEMALE_VOICES}
PRESET_WEIGHTS: dict[str, float] = {
    "neutral": 0.30,
    "lively": 0.15,
    "subdued": 0.15,
    "flat": 0.12,
    "rushed": 0.10,
    "exaggerated": 0.10,
    "dragging": 0.08,
}
ARCHETYPE_DEGRADATION_WEIGHTS = {"none": 0.45, "noise": 0.25, "clipping": 0.15, "bandlimit": 0.15}
REALISM_NOISE_P = 0.15  # realism: mild/moderate background noise (lowers confidence only)
MIN_RESYNTH_WORDS = 5  # real transcripts shorter than this make too-short TTS clips
ALSA_CLIPS_IN_ARCHETYPE = 4
CROSS_PAIRED_SHARE = 0.1  # on-role renderings re-paired with another category's prompt
REAL_IRRELEVANT = 4


@dataclass(frozen=True)
class LanguagePlan:
    """The texts of one language and how many voices render each of them."""

    scenarios: tuple[ArchetypeScenario, ...]
    borderline_lines: tuple[str, ...]
    irrelevant_lines: tuple[str, ...]
    characters: tuple[Character, ...]  # synthetic characters (transcripts rendered by TTS)
    voice_weights: dict[str, float]
    fitting_voices: dict[str, dict[str, float]]  # by character gender: first voice of a line
    on_role_voices: int  # per on-role archetype reply
    variant_p: float  # chance that an on-role rendering gets a second delivery
    off_role_voices: int  # per off-role archetype reply
    borderline_voices: int
    irrelevant_voices: int
    realism_voices: int  # per transcript of a synthetic character
    real_transcript_voices: int = 0  # per transcript of a real English clip


LANGUAGE_PLANS: dict[str, LanguagePlan] = {
    "en": LanguagePlan(
        ARCHETYPE_SCENARIOS, BORDERLINE_LINES, IRRELEVANT_LINES,
        tuple(c for c in CHARACTERS.values() if not c.real_group), VOICE_WEIGHTS,
        {"M": {"piper:en_US-joe-medium": 0.5, "flite:rms": 0.25, "flite:awb": 0.25},
         "F": {"flite:slt": 0.7, "espeak:en-gb+f2": 0.15, "espeak:en-us+f4": 0.15}},
        on_role_voices=2, variant_p=0.1, off_role_voices=1, borderline_voices=1,
        irrelevant_voices=1, realism_voices=2, real_transcript_voices=1,
    ),
    "zh": LanguagePlan(
        ZH_ARCHETYPE_SCENARIOS, ZH_BORDERLINE_LINES, ZH_IRRELEVANT_LINES,
        tuple(ZH_CHARACTERS.values()), ZH_VOICE_WEIGHTS,
        {"M": ZH_MALE_VOICES, "F": ZH_FEMALE_VOICES},
        on_role_voices=3, variant_p=0.3, off_role_voices=2, borderline_voices=2,
        irrelevant_voices=3, realism_voices=5,
    ),
}  # fmt: skip
ALL_CHARACTERS: dict[str, Character] = {**CHARACTERS, **ZH_CHARACTERS}


@dataclass(frozen=True)
class Source:
    """The base audio of a clip: a TTS rendering (text, voice, engine rate) or a real recording."""

    kind: str  # "tts" | "real"
    voice: str = ""
    text: str = ""
    rate: float = 1.0
    clip_id: str = ""

    @property
    def key(self) -> str:
        if self.kind == "real":
            return f"real:{self.clip_id}"
        return f"tts:{self.voice}:{self.rate:.2f}:{self.text}"


@dataclass
class ClipPlan:
    config: str
    source: Source
    delivery: Delivery
    degradation: Degradation
    context: dict
    split: str = ""
    number: int = 0
    record_id: str = ""
    wav_name: str = ""
    seed: int = 0
    real_group: str = ""

    @property
    def is_real(self) -> bool:
        return self.source.kind == "real"

    @property
    def language(self) -> str:
        """The language spoken in the clip and written in its context ("en" or "zh")."""
        return self.context["language"]

    @property
    def vocoded(self) -> bool:
        """True when the clip goes through WORLD resynthesis (pitch or time changed)."""
        return needs_world(self.delivery, self.source.rate)


def _weighted(rng: np.random.Generator, weights: dict[str, float], k: int = 1) -> list[str]:
    keys = list(weights)
    p = np.array([weights[x] for x in keys])
    return [keys[i] for i in rng.choice(len(keys), size=k, replace=False, p=p / p.sum())]


def _preset(rng: np.random.Generator, rate: float | None = None) -> Delivery:
    weights = {
        name: w for name, w in PRESET_WEIGHTS.items() if rate is None or PRESETS[name].rate == rate
    }
    return PRESETS[_weighted(rng, weights)[0]]


def _tts(voice_key: str, text: str, delivery: Delivery) -> Source:
    """Piper renders at its default rate (one length scale per process); the others at the
    delivery's rate."""
    rate = 1.0 if VOICES[voice_key].engine == "piper" else delivery.rate
    return Source("tts", voice_key, text, rate)


def _variant(rng: np.random.Generator, source: Source) -> Delivery:
    """Another delivery that a rendering of ``source`` can give."""
    engine_rate = VOICES[source.voice].engine != "piper"
    return _preset(rng, source.rate if engine_rate else None)


def _degradation(rng: np.random.Generator, weights: dict[str, float]) -> Degradation:
    kind = _weighted(rng, weights)[0]
    if kind == "none":
        return Degradation()
    color = NOISE_COLORS[int(rng.integers(len(NOISE_COLORS)))] if kind == "noise" else ""
    return Degradation(kind, int(rng.integers(1, 4)), color)


def _archetype(
    scenario: ArchetypeScenario, content: str, source: Source, delivery: Delivery,
    degradation: Degradation, real_group: str = "",
) -> ClipPlan:  # fmt: skip
    context = {
        "scenario": scenario.key,
        "category": scenario.category,
        "question": scenario.question,
        "content": content,
        "target_arousal": scenario.arousal,
        "language": scenario.language,
    }
    return ClipPlan("archetype", source, delivery, degradation, context, real_group=real_group)


def _plan_archetype_language(
    rng: np.random.Generator, lang: LanguagePlan, deg_w: dict[str, float]
) -> list[ClipPlan]:
    """The TTS archetype records of one language."""
    plans: list[ClipPlan] = []
    for scenario in lang.scenarios:
        for line in scenario.on_role:
            for voice_key in _weighted(rng, lang.voice_weights, lang.on_role_voices):
                delivery = _preset(rng)
                source = _tts(voice_key, line, delivery)
                plans.append(
                    _archetype(scenario, "on_role", source, delivery, _degradation(rng, deg_w))
                )
                if rng.random() < lang.variant_p:
                    again = _variant(rng, source)
                    plans.append(
                        _archetype(scenario, "on_role", source, again, _degradation(rng, deg_w))
                    )
        for voice_key in _weighted(rng, lang.voice_weights, lang.off_role_voices):
            delivery = _preset(rng)
            source = _tts(voice_key, scenario.off_role, delivery)
            plans.append(
                _archetype(
                    scenario, scenario.off_role_kind, source, delivery, _degradation(rng, deg_w)
                )
            )
    on_role = [p for p in plans if p.context["content"] == "on_role"]
    n_cross = round(CROSS_PAIRED_SHARE * len(on_role))
    for i in rng.choice(len(on_role), size=n_cross, replace=False):
        base = on_role[int(i)]
        others = [s for s in lang.scenarios if s.category != base.context["category"]]
        scenario = others[int(rng.integers(len(others)))]
        delivery = _variant(rng, base.source)
        plans.append(
            _archetype(scenario, "irrelevant", base.source, delivery, _degradation(rng, deg_w))
        )
    for lines, content, n_voices in (
        (lang.irrelevant_lines, "irrelevant", lang.irrelevant_voices),
        (lang.borderline_lines, "borderline", lang.borderline_voices),
    ):
        for line in lines:
            for voice_key in _weighted(rng, lang.voice_weights, n_voices):
                scenario = lang.scenarios[int(rng.integers(len(lang.scenarios)))]
                delivery = _preset(rng)
                source = _tts(voice_key, line, delivery)
                plans.append(
                    _archetype(scenario, content, source, delivery, _degradation(rng, deg_w))
                )
    return plans


def plan_archetype(rng: np.random.Generator, real_clips: list[RealClip]) -> list[ClipPlan]:
    """Archetype records before splitting (see the module docstring)."""
    plans: list[ClipPlan] = []
    deg_w = ARCHETYPE_DEGRADATION_WEIGHTS
    for lang in LANGUAGE_PLANS.values():
        plans += _plan_archetype_language(rng, lang, deg_w)
    alsa = [c for c in real_clips if c.group == "alsa"]
    keep_alsa = {
        alsa[int(i)].clip_id for i in rng.choice(len(alsa), ALSA_CLIPS_IN_ARCHETYPE, False)
    }
    chosen = [c for c in real_clips if c.group != "alsa" or c.clip_id in keep_alsa]
    degraded_only = {k: w for k, w in deg_w.items() if k != "none"}
    for clip in chosen:
        scenario = real_archetype_scenario(clip.group)
        delivery = as_recorded(character_for_group(clip.group).recorded_arousal)
        source = Source("real", clip_id=clip.clip_id)
        plans.append(_archetype(scenario, "on_role", source, delivery, Degradation(), clip.group))
        if rng.random() < 0.6:
            degradation = _degradation(rng, degraded_only)
            plans.append(_archetype(scenario, "on_role", source, delivery, degradation, clip.group))
    for i in rng.choice(len(chosen), size=REAL_IRRELEVANT, replace=False):
        clip = chosen[int(i)]
        scenario = ARCHETYPE_SCENARIOS[int(rng.integers(len(ARCHETYPE_SCENARIOS)))]  # English
        delivery = as_recorded(character_for_group(clip.group).recorded_arousal)
        source = Source("real", clip_id=clip.clip_id)
        plans.append(
            _archetype(scenario, "irrelevant", source, delivery, Degradation(), clip.group)
        )
    return plans


def _contexts(rng: np.random.Generator, k: int) -> list[tuple[str, int]]:
    """``k`` distinct (mismatch type, level) pairs; the matching context is the likeliest."""
    options = [("none", 0)] + [(t, lv) for t in ("scene", "profile") for lv in (1, 2, 3)]
    p = np.array([0.4] + [0.1] * 6)
    return [options[int(i)] for i in rng.choice(len(options), size=k, replace=False, p=p)]


def _realism(
    character: Character, transcript: str, source: Source, delivery: Delivery,
    degradation: Degradation, mismatch: tuple[str, int], real_group: str = "",
) -> ClipPlan:  # fmt: skip
    kind, level = mismatch
    presented = character
    scene = character.scene
    if kind == "scene":
        scene = character.negative_scenes[level - 1]
    elif kind == "profile":
        presented = ALL_CHARACTERS[character.profile_swaps[level - 1]]
        scene = presented.scene
    context = {
        "character": character.key,
        "presented": presented.key,
        "mismatch_type": kind,
        "mismatch_level": level,
        "mismatch_label": MISMATCH_LABELS[level],
        "scene_arousal": scene.arousal,
        "presented_gender": presented.gender,
        "local_scene": scene.text,
        "char_age": presented.age,
        "char_style": presented.style,
        "char_profile": presented.profile,
        "transcript": transcript,
        "language": character.language,
    }
    return ClipPlan("realism", source, delivery, degradation, context, real_group=real_group)


def plan_realism(rng: np.random.Generator, real_clips: list[RealClip]) -> list[ClipPlan]:
    """Realism records; real recordings only in ``test_real`` (split already set)."""
    lines = [
        (c, text, lang.realism_voices)
        for lang in LANGUAGE_PLANS.values()
        for c in lang.characters
        for text in c.transcripts
    ]
    lines += [
        (
            character_for_group(clip.group),
            clip.transcript,
            LANGUAGE_PLANS["en"].real_transcript_voices,
        )
        for clip in real_clips
        if len(clip.transcript.split()) >= MIN_RESYNTH_WORDS
    ]
    plans: list[ClipPlan] = []
    for character, text, n_voices in lines:
        lang = LANGUAGE_PLANS[character.language]
        first = _weighted(rng, lang.fitting_voices[character.gender])[0]
        others = {k: w for k, w in lang.voice_weights.items() if k != first}
        for voice_key in [first, *_weighted(rng, others, n_voices - 1)]:
            delivery = _preset(rng)
            source = _tts(voice_key, text, delivery)
            for mismatch in _contexts(rng, 2 if rng.random() < 0.9 else 1):
                degradation = Degradation()
                if rng.random() < REALISM_NOISE_P:
                    color = NOISE_COLORS[int(rng.integers(len(NOISE_COLORS)))]
                    degradation = Degradation("noise", int(rng.integers(1, 3)), color)
                plans.append(_realism(character, text, source, delivery, degradation, mismatch))
    for clip in real_clips:
        character = character_for_group(clip.group)
        source = Source("real", clip_id=clip.clip_id)
        delivery = as_recorded(character.recorded_arousal)
        negatives = _contexts(rng, 4)
        contexts = [("none", 0)] + [m for m in negatives if m != ("none", 0)][:3]
        for mismatch in contexts:
            plan = _realism(
                character, clip.transcript, source, delivery, Degradation(), mismatch, clip.group
            )
            plan.split = "test_real"
            plans.append(plan)
    return plans


def _split_by_source(plans: list[ClipPlan], fraction: float, rng: np.random.Generator) -> None:
    """Give ``train``/``test`` to plans without a split, whole source groups at a time, with
    ``fraction`` of each language's records in ``test``."""
    for language in LANGUAGE_PLANS:
        groups: dict[str, list[ClipPlan]] = defaultdict(list)
        for plan in plans:
            if not plan.split and plan.language == language:
                groups[plan.source.key].append(plan)
        keys = list(groups)
        order = rng.permutation(len(keys))
        target = fraction * sum(len(g) for g in groups.values())
        in_test = 0
        for i in order:
            group = groups[keys[int(i)]]
            split = "test" if in_test < target else "train"
            in_test += len(group) if split == "test" else 0
            for plan in group:
                plan.split = split


def _seed(seed: int, config: str, number: int) -> int:
    state = np.random.SeedSequence([seed, CONFIG_CODES[config], number]).generate_state(1)
    return int(state[0])


def _scenario_number(key: str) -> int:
    keys = [s.key for s in (*ARCHETYPE_SCENARIOS, *REAL_ARCHETYPE_SCENARIOS,
                            *ZH_ARCHETYPE_SCENARIOS)]  # fmt: skip
    return keys.index(key) + 1


def plan_release(seed: int, real_clips: list[RealClip], limit: int | None = None) -> list[ClipPlan]:
    """Every record of the release, numbered, split and named; ``limit`` caps each split.

    The draws do not depend on ``limit``: a limited release is a subset of the full one.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of records per split, got {limit}")
    out: list[ClipPlan] = []
    for config, planner in (("archetype", plan_archetype), ("realism", plan_realism)):
        rng = np.random.default_rng([seed, CONFIG_CODES[config]])
        plans = planner(rng, real_clips)
        _split_by_source(plans, TEST_FRACTION, rng)
        number = 0
        for split in ("train", "test", "test_real"):
            members = [p for p in plans if p.split == split]
            for i in rng.permutation(len(members)):
                plan = members[int(i)]
                number += 1
                plan.number = number
                plan.seed = _seed(seed, config, number)
                if config == "archetype":
                    scenario = _scenario_number(plan.context["scenario"])
                    plan.record_id = (
                        f"demo_{plan.language}_{plan.context['category']}_{scenario:04d}_"
                        f"{number:04d}.wav"
                    )
                    plan.wav_name = plan.record_id
                else:
                    plan.record_id = f"demo_{plan.language}_role-eval_v1_{number:04d}"
                    plan.wav_name = f"{plan.record_id}.wav"
                out.append(plan)
    if limit is None:
        return out
    kept: dict[tuple[str, str], int] = defaultdict(int)
    limited = []
    for plan in out:
        if kept[plan.config, plan.split] < limit:
            kept[plan.config, plan.split] += 1
            limited.append(plan)
    return limited


def speaker(plan: ClipPlan, real_clips: dict[str, RealClip]) -> tuple[str, str]:
    """(gender, age) of the voice heard in ``plan``."""
    if plan.is_real:
        clip = real_clips[plan.source.clip_id]
        return clip.speaker_gender, REAL_SPEAKER_AGE.get(clip.group, SYNTHETIC_SPEAKER_AGE)
    return VOICES[plan.source.voice].gender, SYNTHETIC_SPEAKER_AGE
