"""The Gradio Space: score one spoken role-play clip in the browser.

:func:`score_clip` is the whole logic (checks, scorer, result); :func:`build_app` lays out a
Gradio 6 Blocks page around it and :func:`launch` serves it on 127.0.0.1. The scorer is the
LiteScorer (``$SPEECH_DRAME_LITE_SCORER`` or ``artifacts/lite_scorer``, as trained by
``make demo``), or a DRAME-Eval adapter when ``$SPEECH_DRAME_EVAL_ADAPTER`` names one.
Only the first 30 s of a clip are scored (the paper's rubric); longer uploads are cut and the
page says so; uploads over :data:`MAX_UPLOAD_MB` and clips over :data:`MAX_SECONDS` are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from speech_drame.audio import SCORED_SECONDS, AudioError, load_audio, probe_seconds
from speech_drame.schema import CONTENT_PASS, RUBRIC_NAMES, Config, check_config

ADAPTER_ENV = "SPEECH_DRAME_EVAL_ADAPTER"
MAX_UPLOAD_MB = 20
MAX_SECONDS = 600.0  # longer recordings are refused; up to this, the first 30 s are scored
MODES: tuple[Config, ...] = ("archetype", "realism")


class InputError(ValueError):
    """Input the Space refuses, with a message meant for the user."""


@dataclass
class SpaceResult:
    """What the page shows for one clip."""

    mode: Config
    scorer: str
    scores: dict[str, float]
    distributions: dict[str, list[float]]
    content_pass: float | None
    transcript: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "scorer": self.scorer,
            "scores": self.scores,
            "distributions": self.distributions,
            CONTENT_PASS: self.content_pass,
            "transcript": self.transcript,
            "notes": self.notes,
        }


def context_fields(mode: Config, question: str, profile: str, scene: str, traits: str) -> dict:
    """The context texts a mode needs, checked to be non-empty."""
    ctx = {"question": question} if mode == "archetype" else {
        "profile": profile, "scene": scene, "traits": traits}  # fmt: skip
    empty = [k for k, v in ctx.items() if not (v or "").strip()]
    if empty:
        raise InputError(f"{mode} mode needs the {', '.join(empty)} text")
    return {k: v.strip() for k, v in ctx.items()}


@lru_cache(maxsize=4)
def _lite(mode: Config, path: str | None) -> Any:
    from speech_drame.scorers.lite import load_scorer

    return load_scorer(mode, path)


@lru_cache(maxsize=2)
def _drame_eval(adapter: str) -> Any:
    from speech_drame.scorers.drame_eval import DrameEvalScorer

    return DrameEvalScorer.from_pretrained(adapter, batch_size=1)


def check_upload(path: str | os.PathLike) -> list[str]:
    """Refuse oversized or unreadable uploads; notes for the user (e.g. the 30 s cut)."""
    size_mb = os.path.getsize(path) / 2**20
    if size_mb > MAX_UPLOAD_MB:
        raise InputError(f"the upload is {size_mb:.1f} MB; the limit is {MAX_UPLOAD_MB} MB")
    try:
        seconds = probe_seconds(path)
    except AudioError as exc:
        raise InputError(f"unreadable audio: {exc.reason}") from None
    if seconds > MAX_SECONDS:
        raise InputError(f"the clip lasts {seconds:.0f} s; the limit is {MAX_SECONDS:.0f} s")
    if seconds > SCORED_SECONDS:
        return [f"the clip lasts {seconds:.1f} s: only its first {SCORED_SECONDS:.0f} s are scored"]
    return []


def score_clip(
    audio_path: str | os.PathLike | None,
    mode: str,
    question: str = "",
    profile: str = "",
    scene: str = "",
    traits: str = "",
    *,
    scorer_path: str | None = None,
) -> SpaceResult:
    """Score one clip with the Space's scorer.

    Raises:
        InputError: no audio, a missing context text, an oversized, overlong or unreadable
            clip, a clip the features cannot use (no speech heard), or no scorer for the mode.
    """
    if not audio_path:
        raise InputError("upload or record a clip first")
    mode = check_config(mode)
    ctx = context_fields(mode, question, profile, scene, traits)
    notes = check_upload(audio_path)
    try:
        audio = load_audio(audio_path, max_seconds=SCORED_SECONDS)
    except AudioError as exc:
        raise InputError(f"unusable audio: {exc.reason}") from None
    adapter = os.environ.get(ADAPTER_ENV)
    if adapter:
        return _score_drame_eval(_drame_eval(adapter), audio, mode, ctx, notes, adapter)
    from speech_drame.features.blueprint import FeatureError, extract_blueprint
    from speech_drame.scorers.lite import ScorerError

    try:
        scorer = _lite(mode, scorer_path)
    except ScorerError as exc:
        raise InputError(f"no scorer for {mode} mode: {exc}") from None
    try:
        bp = extract_blueprint(audio, ctx)
    except (AudioError, FeatureError) as exc:
        raise InputError(f"cannot score this clip: {exc}") from None
    (result,) = scorer.score_blueprints([bp])
    return SpaceResult(mode, "LiteScorer", result.scores, result.distributions,
                       result.content_pass, result.transcript, notes)  # fmt: skip


def _score_drame_eval(scorer, audio, mode: Config, ctx: dict, notes: list, name: str):
    from speech_drame.commands.score import DRAME_EVAL_FIELDS
    from speech_drame.scorers.drame_eval import Clip

    fields = {DRAME_EVAL_FIELDS[key]: text for key, text in ctx.items()}
    if scorer.config != mode:
        raise InputError(f"the DRAME-Eval adapter {name} scores {scorer.config}, not {mode}")
    (result,) = scorer.score_clips([Clip("upload", audio.samples, fields)])
    if not result.ok:
        raise InputError(f"the scorer failed: {result.error}")
    scores = {k: v.expected for k, v in result.scores.items() if k != CONTENT_PASS}
    dists = {k: list(v.probabilities) for k, v in result.scores.items() if k != CONTENT_PASS}
    cp = result.scores.get(CONTENT_PASS)
    return SpaceResult(mode, f"DRAME-Eval ({name})", scores, dists,
                       cp.expected if cp else None, "", notes)  # fmt: skip


def result_markdown(result: SpaceResult) -> str:
    """Scores and 5-way distributions as a Markdown table, with the notes above it."""
    lines = [f"> {n}" for n in result.notes]
    if result.content_pass is not None:
        lines.append(f"**Content Pass probability: {result.content_pass:.3f}**")
    lines += ["", "| Dimension | Score | p1 | p2 | p3 | p4 | p5 |", "|---|---|---|---|---|---|---|"]
    for dim, score in result.scores.items():
        dist = " | ".join(f"{p:.2f}" for p in result.distributions[dim])
        lines.append(f"| {RUBRIC_NAMES[dim]} | {score:.2f} | {dist} |")
    return "\n".join(lines)


def demo_examples(release: str | os.PathLike, per_mode: int = 2) -> list[list[str]]:
    """Example rows (audio, mode, question, profile, scene, traits) from a demo release."""
    from speech_drame.release import find_jsonl_files, iter_lines, resolve_wav_path

    root = Path(release)
    if not root.is_dir():
        return []
    out: list[list[str]] = []
    taken = dict.fromkeys(MODES, 0)
    for file in find_jsonl_files(root):
        for line in iter_lines(file):
            if taken[file.config] >= per_mode:
                break
            rec = line.record
            wav = resolve_wav_path(root, file.path.parent, rec["wav_path"], str(file.path))
            if wav is None:
                continue
            out.append([str(wav), file.config, rec.get("question", ""), rec.get("char_profile", ""),
                        rec.get("local_scene", ""), rec.get("char_style", "")])  # fmt: skip
            taken[file.config] += 1
    return out


def build_app(scorer_path: str | None = None, examples_from: str | None = None):
    """The Gradio Blocks page (see the module docstring)."""
    import gradio as gr
    import pandas as pd

    def run(audio, mode, question, profile, scene, traits):
        try:
            result = score_clip(audio, mode, question, profile, scene, traits,
                                scorer_path=scorer_path)  # fmt: skip
        except InputError as exc:
            raise gr.Error(str(exc)) from None
        frame = pd.DataFrame({"dimension": [RUBRIC_NAMES[d] for d in result.scores],
                              "score": list(result.scores.values())})  # fmt: skip
        cp = result.content_pass
        return (result_markdown(result), frame, "n/a" if cp is None else f"{cp:.3f}",
                result.transcript, result.to_dict())  # fmt: skip

    with gr.Blocks(title="Speech-DRAME scorer") as app:
        gr.Markdown(
            "# Speech-DRAME: score a spoken role-play clip\n"
            f"Archetype mode judges a reply to a role-and-scene prompt; realism mode judges a "
            f"performance against a character profile, scene and traits. Only the first "
            f"{SCORED_SECONDS:.0f} s are scored; uploads up to {MAX_UPLOAD_MB} MB."
        )
        with gr.Row():
            with gr.Column():
                mode = gr.Radio(list(MODES), value="archetype", label="Mode", elem_id="mode")
                audio = gr.Audio(sources=["upload", "microphone"], type="filepath",
                                 label="Clip", elem_id="clip")  # fmt: skip
                question = gr.Textbox(label="Question (archetype)", elem_id="question")
                profile = gr.Textbox(label="Character profile (realism)", elem_id="profile")
                scene = gr.Textbox(label="Local scene (realism)", elem_id="scene")
                traits = gr.Textbox(label="Character traits (realism)", elem_id="traits")
                button = gr.Button("Score", variant="primary", elem_id="score-button")
            with gr.Column():
                table = gr.Markdown(elem_id="score-table")
                bars = gr.BarPlot(x="dimension", y="score", y_lim=[1, 5], label="Scores",
                                  elem_id="score-bars")  # fmt: skip
                passed = gr.Textbox(label="Content Pass probability", elem_id="content-pass")
                transcript = gr.Textbox(label="Transcript", elem_id="transcript")
                details = gr.JSON(label="All results", elem_id="details")
        inputs = [audio, mode, question, profile, scene, traits]
        examples = demo_examples(examples_from) if examples_from else []
        if examples:
            gr.Examples(examples, inputs, label="Demo corpus examples")
        button.click(run, inputs, [table, bars, passed, transcript, details], api_name="score")
    return app


def default_release() -> str:
    """The demo release `make demo` builds, for examples."""
    return str(Path(__file__).resolve().parents[1] / "build" / "demo_release")


def launch(port: int = 7860, scorer: str | None = None, **kwargs: Any) -> Any:
    """Serve the Space on 127.0.0.1 (blocking unless ``prevent_thread_lock=True``)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    app = build_app(scorer, default_release())
    return app.launch(server_name="127.0.0.1", server_port=port, max_file_size=f"{MAX_UPLOAD_MB}mb",
                      **kwargs)  # fmt: skip
