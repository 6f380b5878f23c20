"""Rubrics, context and answer format for model judges of spoken role-play.

One :class:`Rubric` per dimension, paraphrased from the Speech-DRAME annotation guidelines
(Appendix E for archetype, Appendix G for realism): what the dimension judges, which context
it needs, and a one-line meaning per label. The same data serves the fine-tuned evaluator
(one dimension per query, answer read from the label-token distribution) and chat judges.

The fine-tuned evaluator's query is data: the default prompt profile
(``speech_drame/resources/prompt_profile.json``, :mod:`speech_drame.prompt_profile`) holds
:func:`task_preamble`, each dimension's :func:`instruction` (its :func:`question` a field the
paraphrases of :func:`instruction_pool` replace in training), the context lines and the
answer ``<answer>k</answer>`` (:func:`format_answer`) in this wording.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

from .schema import CONTENT_PASS, RUBRIC_NAMES, SEMANTIC_MATCH, Config, check_config, dimensions

ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
INSTRUCTION_POOL = "instruction_pool.json"  # in speech_drame/resources
SCORE_LABELS: tuple[str, ...] = ("1", "2", "3", "4", "5")
PASS_LABELS: tuple[str, ...] = ("0", "1")  # Content Pass: 0 = rejected, 1 = passed


@dataclass(frozen=True)
class Rubric:
    """How one dimension is judged.

    Attributes:
        key: the annotation field (``schema`` name), e.g. ``"local_story_fit"``.
        focus: one or two sentences on what to listen for and what to ignore.
        context: what the judge must consult besides the audio (empty: audio only).
        levels: ``(label, meaning)`` pairs from the best label down.
    """

    key: str
    focus: str
    context: tuple[str, ...]
    levels: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        """The paper's name of the dimension."""
        return RUBRIC_NAMES[self.key]

    @property
    def labels(self) -> tuple[str, ...]:
        """Answer labels in ascending order (``"1".."5"``, or ``"0", "1"`` for Content Pass)."""
        return tuple(sorted(label for label, _ in self.levels))

    @property
    def values(self) -> tuple[int, ...]:
        """The number each label stands for, in the order of :attr:`labels`."""
        return tuple(int(label) for label in self.labels)


_SCORE = "Score from 1 (worst) to 5 (best)."

ARCHETYPE_RUBRICS: dict[str, Rubric] = {
    CONTENT_PASS: Rubric(
        CONTENT_PASS,
        "Is the clip usable at all? Within its first 30 seconds the speech must answer the "
        "role-and-scene prompt in character.",
        ("role and scene",),
        (
            ("1", "passed: stays in the role and responds to the scene"),
            (
                "0",
                "rejected: ignores the role or the trait, is unrelated to the scene, narrates "
                "the scenario or stage directions, speaks for other people, slips into another "
                "language, breaks down (repeats, restarts) or lasts only a second or two",
            ),
        ),
    ),
    "audio_quality": Rubric(
        "audio_quality",
        f"Technical sound quality only; ignore what is said and how well it fits. {_SCORE}",
        (),
        (
            ("5", "clean and clear throughout, no noise or glitch"),
            ("4", "good; faint artifacts on close listening (slight hiss or sharpness)"),
            ("3", "usable, but obvious artifacts (buzz, echo, synthetic timbre) cost clarity"),
            ("2", "frequent glitches or harsh, metallic, clipped sound that distracts"),
            ("1", "artifacts dominate; static or clipping makes it hard to follow"),
        ),
    ),
    "human_likeness": Rubric(
        "human_likeness",
        "Would an ordinary listener believe a person is speaking? Ignore sound quality and "
        f"fit to the prompt; count mispronunciations only if they hurt understanding. {_SCORE}",
        (),
        (
            ("5", "indistinguishable from a person: lively intonation, natural timing, breaths"),
            ("4", "convincing, with slight stiffness, even pacing or an awkward pause"),
            ("3", "could be either: natural and machine-like stretches mixed"),
            ("2", "plainly synthetic: choppy timing, missing pauses, odd or flat inflection"),
            ("1", "mechanical read-aloud delivery, monotone, no natural rhythm"),
        ),
    ),
    "appropriateness": Rubric(
        "appropriateness",
        "Does the tone of the delivery suit both the role and the scene? Judge the performance, "
        f"not the words; ignore sound quality and human likeness. {_SCORE}",
        ("role and scene",),
        (
            ("5", "fits role and scene fully: emotion, social stance and urgency all right"),
            ("4", "strong fit with one small flaw in role, scene reaction or intensity"),
            ("3", "acceptable for both, but shallow or uneven"),
            ("2", "either the role or the reaction to the scene is clearly wrong"),
            ("1", "both role and scene mismatched; tone, urgency or status make no sense"),
        ),
    ),
}

_REALISM_FOCUS = "the target speaker's delivery"
REALISM_RUBRICS: dict[str, Rubric] = {
    "pitch_variation": Rubric(
        "pitch_variation",
        f"How pitch moves across {_REALISM_FOCUS}, given the character and scene. {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "pitch moves naturally and subtly conveys the character's state"),
            ("4", "fitting variation, but restrained or uneven"),
            ("3", "neutral pitch: not distracting, no expressive intent"),
            ("2", "forced, theatrical or mismatched pitch shifts"),
            ("1", "monotone, or at odds with the scene and character"),
        ),
    ),
    "rhythmic_naturalness": Rubric(
        "rhythmic_naturalness",
        f"Timing and pacing of {_REALISM_FOCUS}, given the character and scene. {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "fluent rhythm that reflects the character's habits and the scene's pace"),
            ("4", "small deviations, still natural"),
            ("3", "even pace with no rhythmic personality"),
            ("2", "disjointed, rigid, or pauses in odd places"),
            ("1", "robotic timing that breaks the flow"),
        ),
    ),
    "stress_and_emphasis": Rubric(
        "stress_and_emphasis",
        f"Which words {_REALISM_FOCUS} stresses, and whether that serves the meaning. {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "stress lands on the words that carry meaning or feeling, realistically"),
            ("4", "helpful emphasis with small misplacements"),
            ("3", "mild, generic stress with little effect"),
            ("2", "overdone or misplaced stress, e.g. on function words"),
            ("1", "flat or confusing: everything equal or stressed at random"),
        ),
    ),
    "emotion_accuracy": Rubric(
        "emotion_accuracy",
        f"Does the emotion expressed suit the character and the situation? {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "matches personality and situation, with nuance"),
            ("4", "grounded, slightly misaligned"),
            ("3", "too neutral or safe for the scene"),
            ("2", "out of step with the character or situation"),
            ("1", "jarring emotion with no motivation"),
        ),
    ),
    "emotion_intensity_control": Rubric(
        "emotion_intensity_control",
        "How well the strength of the emotion is calibrated (annotators rate this only when "
        f"the emotion itself scores 3 or more). {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "intensity exactly right for the moment"),
            ("4", "slightly over or under"),
            ("3", "a little exaggerated or dull"),
            ("2", "overacted or underplayed"),
            ("1", "wildly off scale for the moment"),
        ),
    ),
    "dynamic_range": Rubric(
        "dynamic_range",
        "Are shifts of emotion within the clip natural and in character (annotators rate this "
        f"only when intensity control scores 3 or more)? {_SCORE}",
        ("profile", "scene"),
        (
            ("5", "shifts, where present, are natural and in character"),
            ("4", "appropriate shifts, but mild or slow to emerge"),
            ("3", "mostly steady, slight modulation, no arc"),
            ("2", "flat, or jumps without reason"),
            ("1", "out-of-character swings with no trigger"),
        ),
    ),
    "voice_identity_matching": Rubric(
        "voice_identity_matching",
        f"Does the voice itself (age, gender, timbre) fit the character profile? {_SCORE}",
        ("profile",),
        (
            ("5", "the voice clearly fits the expected identity"),
            ("4", "acceptable, small mismatches"),
            ("3", "neutral, not specific to this character"),
            ("2", "partly inconsistent with the profile"),
            ("1", "clearly the wrong kind of voice, or not the target speaker"),
        ),
    ),
    "trait_embodiment": Rubric(
        "trait_embodiment",
        f"Are the character's listed traits audible in the delivery? {_SCORE}",
        ("profile", "traits"),
        (
            ("5", "defining traits conveyed subtly but clearly"),
            ("4", "most traits conveyed, small lapses"),
            ("3", "traits faint, but nothing contradicts them"),
            ("2", "traits missing or contradicted"),
            ("1", "no recognisable trait, or entirely off"),
        ),
    ),
    "local_story_fit": Rubric(
        "local_story_fit",
        f"Does the delivery fit the immediate scene? {_SCORE}",
        ("scene",),
        (
            ("5", "reinforces the scene's emotional and narrative moment"),
            ("4", "mostly coherent, a small mismatch"),
            ("3", "neutral: neither helps nor harms the scene"),
            ("2", "confusing or slightly wrong tone for the scene"),
            ("1", "contradicts what the scene calls for"),
        ),
    ),
    "global_story_coherence": Rubric(
        "global_story_coherence",
        f"Is the delivery consistent with the character's background and identity? {_SCORE}",
        ("profile",),
        (
            ("5", "fully consistent with the character's background and arc"),
            ("4", "slightly off style but plausible"),
            ("3", "generic: could be anyone"),
            ("2", "contradicts the character's habits or growth"),
            ("1", "breaks the established identity"),
        ),
    ),
    SEMANTIC_MATCH: Rubric(
        SEMANTIC_MATCH,
        f"Does what is said serve the scene's goal, emotion or action? {_SCORE}",
        ("scene",),
        (
            ("5", "the content drives the scene's goal or emotion forward"),
            ("4", "a small nuance off, still suits the scene"),
            ("3", "neutral filler, neither helps nor contradicts"),
            ("2", "partly conflicts with the scene; needs a stretch to fit"),
            ("1", "contradicts or derails the scene"),
        ),
    ),
}

RUBRICS: dict[Config, dict[str, Rubric]] = {
    "archetype": ARCHETYPE_RUBRICS,
    "realism": REALISM_RUBRICS,
}

_PREAMBLES: dict[Config, str] = {
    "archetype": (
        "You judge a spoken role-play response generated for the prompt below. Judge only its "
        "first 30 seconds, and judge how it is said rather than the script. When torn between "
        "two scores, choose the lower."
    ),
    "realism": (
        "You judge a spoken role-play performance against the character and scene below. "
        "Judge only the target speaker's voice in the first 30 seconds; ignore background "
        "music and noise. Do not reward theatricality unless it fits the character and scene."
    ),
}


def rubric(config: Config, key: str) -> Rubric:
    """The rubric of dimension ``key`` in ``config`` (Content Pass included for archetype)."""
    try:
        return RUBRICS[check_config(config)][key]
    except KeyError:
        raise ValueError(
            f"no {config} rubric for {key!r}; known: {', '.join(RUBRICS[config])}"
        ) from None


def scored_dimensions(config: Config, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The dimensions a judge answers for a clip of ``config``, in a fixed order.

    Archetype adds Content Pass before its three scales; ``extra`` adds optional dimensions
    the data carries (e.g. ``semantic_match``).
    """
    base = dimensions(config)
    lead = (CONTENT_PASS,) if config == "archetype" else ()
    for key in extra:
        rubric(config, key)
    return (*lead, *base, *(k for k in extra if k not in base))


def task_preamble(config: Config) -> str:
    """The general instruction shared by every dimension of ``config``."""
    return _PREAMBLES[check_config(config)]


def instruction(rubric: Rubric) -> str:
    """The per-dimension question: the rubric, its labels, and the answer format."""
    consult = " and ".join(rubric.context) if rubric.context else "nothing but the audio"
    lines = [f"Dimension: {rubric.name} (consult {consult}). {rubric.focus}"]
    lines += [f"{label}: {meaning}" for label, meaning in rubric.levels]
    choices = "/".join(rubric.labels)
    lines.append(f"Reply {ANSWER_OPEN}k{ANSWER_CLOSE} with k in {choices}.")
    return "\n".join(lines)


def format_answer(label: str | int) -> str:
    """``<answer>k</answer>`` for one label."""
    return f"{ANSWER_OPEN}{label}{ANSWER_CLOSE}"


def question(rubric: Rubric) -> str:
    """The rubric's question: its ``focus`` without the closing 1-5 scale sentence.

    This is the part a paraphrase of :func:`instruction_pool` replaces (the default prompt
    profile's ``{rubric_question}``).
    """
    return rubric.focus.removesuffix(f" {_SCORE}")


@functools.cache
def instruction_pool(config: Config) -> dict[str, tuple[str, ...]]:
    """Paraphrases of every dimension's :func:`question` in ``config`` (our own wording).

    Read from the packaged ``speech_drame/resources/instruction_pool.json`` (the default
    prompt profile's paraphrases). Training with prompt variation draws one per example;
    evaluation and scoring use the canonical question. Raises ``ValueError`` naming the file if a dimension of the
    config has no paraphrases, or one is empty, repeated or equal to the canonical question.
    """
    check_config(config)
    path = resources.files("speech_drame.resources") / INSTRUCTION_POOL
    pool = json.loads(path.read_text(encoding="utf-8")).get(config, {})
    out = {}
    for key, r in RUBRICS[config].items():
        texts = pool.get(key)
        if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise ValueError(f"{INSTRUCTION_POOL}: {config}.{key} needs non-empty paraphrases")
        if len(set(texts)) != len(texts) or question(r) in texts:
            raise ValueError(
                f"{INSTRUCTION_POOL}: {config}.{key} repeats a paraphrase or the canonical question"
            )
        out[key] = tuple(texts)
    return out
