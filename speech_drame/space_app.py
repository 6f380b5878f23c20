"""The Gradio Space: score one spoken role-play clip in the browser.

:func:`score_clip` is the whole logic (checks, scorer, result); :func:`build_app` lays out a
Gradio 6 Blocks page around it and :func:`launch` serves it on 127.0.0.1. The scorer is any
scorer spec (:mod:`speech_drame.scorers.specs`): the ``scorer`` argument, else
``$SPEECH_DRAME_SCORER``, else ``lite`` (``$SPEECH_DRAME_LITE_SCORER`` or
``artifacts/lite_scorer``, as trained by ``make demo``); the page names it and what it was
trained on next to the scores.

Limits: uploads over :data:`MAX_UPLOAD_MB` and clips over :data:`MAX_SECONDS` are refused
(from the file header, before decoding); only the first 30 s are decoded and scored, and the
page says when a clip was cut or scaled into [-1, 1] (:mod:`speech_drame.audio`).

Privacy: an upload's features are computed without the feature cache, and nothing about it is
stored; Gradio's temporary copies of uploads are deleted by ``delete_cache``
(:data:`TEMP_FILES`) and when the Space stops, SIGTERM included (:func:`launch` treats it as
Ctrl-C); a Space killed outright leaves its copies, and the next start deletes those older
than the retention (:func:`sweep_uploads`). The queue is bounded (:data:`MAX_QUEUE`). The page
says so (:data:`PRIVACY_NOTE`). Error messages name the uploaded file, never a server path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from speech_drame.audio import SCORED_SECONDS, AudioError, load_audio, probe_seconds
from speech_drame.features.common import load_once
from speech_drame.languages import describe_language
from speech_drame.schema import CONFIGS, CONTEXTS, RUBRIC_NAMES, check_config
from speech_drame.scorers.base import ClipInput, ClipScores, Scorer, ScorerError

from . import errors

SCORER_ENV = "SPEECH_DRAME_SCORER"  # a scorer spec, e.g. drame-eval:ORG/NAME
PROFILE_ENV = "SPEECH_DRAME_PROMPT_PROFILE"  # the prompt profile file of a plain PEFT adapter
SPEC_FILE = "scorer.txt"  # a Space folder's scorer spec, one line (`space bundle` writes it)
MAX_UPLOAD_MB = 20
MAX_SECONDS = 600.0  # longer recordings are refused; up to this, the first 30 s are scored
MODES = CONFIGS
MAX_QUEUE = 16  # requests waiting at once; more are turned away with "queue full"
CONCURRENCY = 1  # clips scored at once (the feature extractors already use every core)
TEMP_FILES = (300, 900)  # Gradio's delete_cache: every 5 min, delete copies older than 15 min
PRIVACY_NOTE = (
    "Privacy: uploads and recordings are not stored. They are used only to compute the scores "
    "shown; neither the audio nor its features (transcript, speaker and text embeddings) are "
    f"kept. Gradio's temporary copy of an upload is deleted {TEMP_FILES[1] // 60} minutes "
    f"after the upload (checked every {TEMP_FILES[0] // 60} minutes) and when the Space is "
    "stopped; if the server is killed outright, the copies older than "
    f"{TEMP_FILES[1] // 60} minutes are deleted when it next starts."
)


# The score table keeps each number on one line (the dimension names wrap instead) and scrolls
# sideways rather than squeezing its columns; Gradio 6 takes a page's CSS in launch()
PAGE_CSS = """
#score-table { overflow-x: auto; }
#score-table th, #score-table td { padding: 6px 8px; font-variant-numeric: tabular-nums; }
#score-table td { white-space: nowrap; overflow-wrap: normal; word-break: normal; }
#score-table td:first-child { white-space: normal; min-width: 7em; }
#score-table th:not(:first-child), #score-table td:not(:first-child) { text-align: right; }
"""
OUTPUT_MIN_WIDTH = 480  # px: below it the results go under the inputs, not beside them


class InputError(errors.InputError):
    """Input the Space refuses, with a message meant for the user."""


def context_fields(mode: str, question: str, profile: str, scene: str, traits: str) -> dict:
    """The context texts a mode needs, checked to be non-empty."""
    given = {"question": question, "profile": profile, "scene": scene, "traits": traits}
    ctx = {name: (given[name] or "").strip() for name in CONTEXTS[check_config(mode)]}
    empty = [k for k, v in ctx.items() if not v]
    if empty:
        raise InputError(f"{mode} mode needs the {', '.join(empty)} text")
    return ctx


def folder_scorer(folder: str | os.PathLike) -> str | None:
    """The scorer spec of the Space folder ``folder`` (its ``app.py`` asks): ``$SPEECH_DRAME_SCORER``,
    else the spec ``speech-drame space bundle`` wrote in its ``scorer.txt`` (a relative
    LiteScorer folder taken from ``folder``), else None (:func:`scorer_spec`'s default)."""
    from speech_drame.scorers.specs import parse_spec

    env, path = os.environ.get(SCORER_ENV), Path(folder, SPEC_FILE)
    if env or not path.is_file():
        return env or None
    spec = path.read_text(encoding="utf-8").strip()
    parsed = parse_spec(spec)
    if parsed.kind == "lite" and parsed.target and Path(folder, parsed.target).is_dir():
        return f"lite:{Path(folder, parsed.target).resolve()}"
    return spec


def scorer_spec(spec: str | None = None) -> str:
    """The spec the Space scores with: ``spec``, else ``$SPEECH_DRAME_SCORER``, else ``lite``."""
    return spec or os.environ.get(SCORER_ENV) or "lite"


@load_once
def _scorer(spec: str, mode: str, profile: str | None) -> Scorer:
    """The scorer of ``spec`` for ``mode`` (a DRAME-Eval checkpoint queried with the prompt
    profile file ``profile``, when given), loaded once (a request during :func:`warm_up` waits
    for its load); uploads never enter a feature cache."""
    from speech_drame.scorers.specs import load_scorer

    return load_scorer(spec, mode, cache=None, batch_size=1, prompt_profile=profile)


def check_upload(path: str | os.PathLike) -> None:
    """Refuse a missing, oversized, unreadable or overlong upload, from its size and header
    (nothing is decoded); messages name the file only."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"{path.name}: the upload is no longer on the server (copies are deleted after "
            f"{TEMP_FILES[1] // 60} minutes); upload it again"
        )
    size_mb = path.stat().st_size / 2**20
    if size_mb > MAX_UPLOAD_MB:
        raise InputError(
            f"{path.name}: the upload is {size_mb:.1f} MB; the limit is {MAX_UPLOAD_MB} MB"
        )
    try:
        seconds = probe_seconds(path)
    except AudioError as exc:
        raise InputError(f"{path.name}: {exc.reason}") from None
    if seconds > MAX_SECONDS:
        raise InputError(
            f"{path.name}: the clip lasts {seconds:.0f} s; the limit is {MAX_SECONDS:.0f} s"
        )


def describe_training(info: Mapping[str, Any]) -> str:
    """What a scorer's record of its training data (a LiteScorer's ``info``, a DRAME-Eval
    ``training_data``) says, for a person.

    Read defensively: a scorer saved before a field existed says "not recorded" for it.
    """
    dataset = info.get("dataset")
    if not dataset:
        return "training data: not recorded"
    shown = Path(dataset).name if Path(dataset).is_absolute() else dataset  # no server paths
    details = [f"{info['split']} split"] if info.get("split") else []
    if isinstance(info.get("n_train"), int):
        details.append(f"{info['n_train']} clips")
    text = f"trained on `{shown}`" + (f" ({', '.join(details)})" if details else "")
    synthetic = info.get("labels_are_synthetic")
    if synthetic is True:
        text += (
            "; labels: **synthetic proxy labels** (simulated annotators, not human ratings), so "
            "the scores show the pipeline working, not agreement with people"
        )
        if info.get("label_note"):
            text += f". The dataset card says: {str(info['label_note']).rstrip('.')}"
    elif synthetic is False:
        text += "; labels: the dataset's annotators (the card does not mark them synthetic)"
    else:
        text += "; whether its labels are human or synthetic: not recorded"
    return text


def _shown_path(path: str | os.PathLike) -> str:
    """A folder as the page shows it: relative to the working folder when inside it, else its
    name (the page never shows where the server keeps files)."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return path.name


def _scorer_problem(exc: Exception, spec: str) -> str:
    """Why no scorer could be loaded, with a LiteScorer folder shown as on the page."""
    from speech_drame.scorers.lite.model import default_scorer_dir
    from speech_drame.scorers.specs import parse_spec

    parsed = parse_spec(spec)
    if parsed.kind != "lite":
        return str(exc)
    root = Path(parsed.target or default_scorer_dir())
    return (
        str(exc)
        .replace(str(root.resolve()), _shown_path(root))
        .replace(str(root), _shown_path(root))
    )


def _load(spec: str, mode: str) -> Scorer:
    """:func:`_scorer` (with ``$SPEECH_DRAME_PROMPT_PROFILE``), with a failure as an
    :class:`InputError` for the page."""
    try:
        return _scorer(spec, mode, os.environ.get(PROFILE_ENV) or None)
    except (ScorerError, OSError, ValueError) as exc:
        raise InputError(f"no scorer for {mode} mode: {_scorer_problem(exc, spec)}") from None


def _public_description(scorer: Scorer) -> str:
    """The scorer's description with every absolute path in it shown as :func:`_shown_path`
    does (URLs are left as they are)."""
    return re.sub(r"(?<![\w:/.])/[^\s()]+", lambda m: _shown_path(m.group()), scorer.description)


def scorer_card(mode: str, spec: str | None = None) -> str:
    """Markdown naming the scorer the Space uses for ``mode`` and what it was trained on."""
    mode = check_config(mode)
    spec = scorer_spec(spec)
    try:
        scorer = _load(spec, mode)
    except InputError as exc:
        return f"**Scorer:** `{spec}`: {exc}"
    name = _public_description(scorer)
    trained = (
        describe_training(scorer.training_data)
        if scorer.training_data is not None
        else "not trained on rated clips (a zero- or few-shot judge)"
    )
    return f"**Scorer:** {name}, {trained}."


def score_clip(
    audio_path: str | os.PathLike | None,
    mode: str,
    question: str = "",
    profile: str = "",
    scene: str = "",
    traits: str = "",
    *,
    scorer: str | None = None,
) -> ClipScores:
    """Score one clip with the Space's scorer (:func:`scorer_spec`), storing nothing about it
    (no feature cache). The result's id is the file name.

    Raises:
        InputError: no audio, a missing context text, an oversized, overlong or unusable
            clip, a clip the scorer cannot use (no speech heard), a scorer that failed, or no
            scorer for the mode. Messages name the file, never its folder on the server.
    """
    if not audio_path:
        raise InputError("upload or record a clip first")
    mode = check_config(mode)
    ctx = context_fields(mode, question, profile, scene, traits)
    name = Path(audio_path).name
    check_upload(audio_path)
    try:
        audio = load_audio(audio_path, max_seconds=SCORED_SECONDS)
    except AudioError as exc:
        raise InputError(f"{name}: {exc.reason}") from None
    audio = dataclasses.replace(audio, source=name)  # later messages name the file only
    (result,) = _load(scorer_spec(scorer), mode).score([ClipInput(name, audio, ctx)])
    if not result.ok:
        raise InputError(str(result.error).replace(str(audio_path), name))
    if result.audio is None:
        result.audio = audio.facts
    return result


def result_details(result: ClipScores, mode: str, spec: str | None = None) -> dict[str, Any]:
    """What the page's "All results" shows: the mode, the scorer and the clip's result."""
    scorer = _load(scorer_spec(spec), mode)
    return {"mode": mode, "scorer": _public_description(scorer), "scorer_id": scorer.id,
            **result.to_dict()}  # fmt: skip


def result_markdown(result: ClipScores) -> str:
    """Scores and 5-way distributions as a Markdown table, with what reading the audio did
    (the 30 s cut, the scaling into [-1, 1]) above it."""
    lines = [f"> {n}" for n in (result.audio.notes() if result.audio is not None else [])]
    if result.language is not None:  # its own paragraph: not inside the notes' quote
        spoken = describe_language(result.language, result.language_probability)
        lines += ["", f"Spoken language: {spoken}", ""]
    if result.content_pass is not None:
        lines.append(f"**Content Pass probability: {result.content_pass:.3f}**")
    lines += ["", "| Dimension | Score (1-5) | p1 | p2 | p3 | p4 | p5 |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for dim, score in result.scores.items():
        dist = " | ".join(f"{p:.2f}" for p in result.distributions[dim])
        lines.append(f"| {RUBRIC_NAMES[dim]} | {score:.2f} | {dist} |")
    return "\n".join(lines)


def score_figure(scores: Mapping[str, float]) -> Any:
    """Horizontal bars of the expected scores on the fixed 1..5 rubric scale (a matplotlib
    ``Figure``): dimension names on the y axis, first dimension on top."""
    from matplotlib.figure import Figure

    names = [RUBRIC_NAMES[d] for d in scores]
    values = list(scores.values())
    fig = Figure(figsize=(6.4, 0.42 * len(names) + 1.1), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    rows = list(range(len(names)))
    ax.barh(rows, [v - 1 for v in values], left=1, height=0.6, color="#4f46e5")
    ax.set_yticks(rows, names)
    ax.invert_yaxis()
    ax.set_xlim(1, 5)
    ax.set_xticks([1, 2, 3, 4, 5])
    ax.set_xlabel("expected score (1 = lowest, 5 = highest)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    for row, value in zip(rows, values, strict=True):
        inside = value > 4.5  # no room to the right: write it inside the bar
        ax.text(value - 0.05 if inside else value + 0.05, row, f"{value:.2f}", va="center",
                ha="right" if inside else "left", color="white" if inside else "black")  # fmt: skip
    return fig


def demo_examples(release: str | os.PathLike, per_mode: int = 2) -> list[list[str]]:
    """Example rows (audio, mode, question, profile, scene, traits) from a demo release."""
    from speech_drame.data.release import find_jsonl_files, iter_lines, resolve_wav_path

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


def build_app(
    scorer: str | None = None,
    examples_from: str | None = None,
    examples_label: str = "Demo corpus examples",
):
    """The Gradio Blocks page (see the module docstring), with its bounded queue; the examples
    are :func:`demo_examples` of the release ``examples_from``. Serve it with
    ``launch(css=PAGE_CSS)`` (:data:`PAGE_CSS`)."""
    from speech_drame.extras import require

    gr = require("gradio", "the Space")

    def run(audio, mode, question, profile, scene, traits):
        try:
            result = score_clip(audio, mode, question, profile, scene, traits, scorer=scorer)
        except InputError as exc:
            raise gr.Error(str(exc)) from None
        cp = "n/a" if result.content_pass is None else f"{result.content_pass:.3f}"
        return (scorer_card(mode, scorer), result_markdown(result), score_figure(result.scores),
                cp, result.transcript or "", result_details(result, mode, scorer))  # fmt: skip

    def show_mode(mode):
        """The selected mode's fields only; the previous results are cleared."""
        archetype = mode == "archetype"
        realism = [gr.update(visible=not archetype)] * 3
        return (gr.update(visible=archetype), *realism, scorer_card(mode, scorer), "",
                None, gr.update(visible=archetype, value=""), "", None)  # fmt: skip

    with gr.Blocks(title="Speech-DRAME scorer", delete_cache=TEMP_FILES) as app:
        gr.Markdown(
            "# Speech-DRAME: score a spoken role-play clip\n"
            "Archetype mode judges a reply to a role-and-scene prompt; realism mode judges a "
            "performance against a character profile, scene and traits. Each dimension gets an "
            "expected score on the rubric's 1-5 scale (1 = lowest, 5 = highest) with its "
            "distribution; archetype mode also gives the probability that the content passes. "
            f"Only the first {SCORED_SECONDS:.0f} s are scored; uploads up to "
            f"{MAX_UPLOAD_MB} MB and {MAX_SECONDS / 60:.0f} minutes. What the scores mean "
            "depends on the scorer's training labels: see the note above the scores."
        )
        gr.Markdown(PRIVACY_NOTE, elem_id="privacy")
        with gr.Row():
            with gr.Column():
                mode = gr.Radio(list(MODES), value="archetype", label="Mode", elem_id="mode")
                audio = gr.Audio(sources=["upload", "microphone"], type="filepath",
                                 label="Clip", elem_id="clip")  # fmt: skip
                question = gr.Textbox(label="Question (role and scene)", elem_id="question")
                profile = gr.Textbox(label="Character profile", elem_id="profile", visible=False)
                scene = gr.Textbox(label="Local scene", elem_id="scene", visible=False)
                traits = gr.Textbox(label="Character traits", elem_id="traits", visible=False)
                button = gr.Button("Score", variant="primary", elem_id="score-button")
            with gr.Column(min_width=OUTPUT_MIN_WIDTH):
                scorer_md = gr.Markdown(elem_id="scorer-info")
                table = gr.Markdown(elem_id="score-table")
                bars = gr.Plot(label="Scores (1-5)", show_label=False, format="png",
                               elem_id="score-bars")  # fmt: skip
                passed = gr.Textbox(label="Content Pass probability", elem_id="content-pass")
                transcript = gr.Textbox(label="Transcript", elem_id="transcript")
                details = gr.JSON(label="All results", elem_id="details")
        inputs = [audio, mode, question, profile, scene, traits]
        examples = demo_examples(examples_from) if examples_from else []
        if examples:
            gr.Examples(examples, inputs, label=examples_label)
        outputs = [scorer_md, table, bars, passed, transcript, details]
        button.click(run, inputs, outputs, api_name="score")
        mode.change(show_mode, mode, [question, profile, scene, traits, *outputs],
                    api_visibility="private")  # fmt: skip
        app.load(lambda: scorer_card(MODES[0], scorer), None, scorer_md,
                 api_visibility="private")  # fmt: skip
    return app.queue(max_size=MAX_QUEUE, default_concurrency_limit=CONCURRENCY)


def default_release() -> str:
    """The demo release `make demo` builds, for examples."""
    return str(Path(__file__).resolve().parents[1] / "build" / "demo_release")


def sweep_uploads(age: float = TEMP_FILES[1], folder: str | os.PathLike | None = None) -> int:
    """Delete the upload copies older than ``age`` seconds (by modification time) in Gradio's
    upload folder (``$GRADIO_TEMP_DIR``, else the system's temporary folder's ``gradio``), which
    an instance killed before it could clean up left; returns how many. Younger files, which a
    running instance may still serve, are left to it."""
    import time

    if folder is None:
        from gradio.utils import get_upload_folder

        folder = get_upload_folder()
    root, now, removed = Path(folder), time.time(), 0
    if not root.is_dir():
        return 0
    for path in sorted(root.rglob("*"), reverse=True):  # files before their folders
        try:
            if path.is_file() and now - path.stat().st_mtime > age:
                path.unlink()
                removed += 1
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        except OSError:  # another instance removed it first
            continue
    return removed


def _sigterm_as_ctrl_c() -> None:
    """SIGTERM (``kill``, a container stop) stops the Space as Ctrl-C does: Gradio then deletes
    its uploads. Only the main thread can take signals; elsewhere nothing changes."""
    import signal
    import threading

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def warm_up(spec: str | None = None) -> threading.Thread:
    """Load the Space's scorer for every mode, and a LiteScorer's feature models, in a
    background thread, so the first request does not wait for them. A scorer that cannot be
    loaded is left to the page, which says why when it is asked for."""
    from speech_drame.features.loading import preload
    from speech_drame.scorers.specs import parse_spec

    spec = scorer_spec(spec)

    def load() -> None:
        if parse_spec(spec).kind == "lite":
            preload()
        for mode in MODES:
            with contextlib.suppress(InputError):  # shown on the page, with its reason
                _load(spec, mode)

    thread = threading.Thread(target=load, name="speech-drame-warm-up", daemon=True)
    thread.start()
    return thread


def launch(port: int = 7860, scorer: str | None = None, **kwargs: Any) -> Any:
    """Serve the Space on 127.0.0.1 with the scorer spec ``scorer`` (see :func:`scorer_spec`;
    blocking unless ``prevent_thread_lock=True``), its scorer loading while the page starts
    (:func:`warm_up`). Leftover uploads of earlier instances are swept first
    (:func:`sweep_uploads`); a blocking server stops on SIGTERM as on Ctrl-C."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    warm_up(scorer)
    app = build_app(scorer, default_release())  # first: it says so if gradio is missing
    sweep_uploads()
    if not kwargs.get("prevent_thread_lock"):
        _sigterm_as_ctrl_c()
    return app.launch(server_name="127.0.0.1", server_port=port, max_file_size=f"{MAX_UPLOAD_MB}mb",
                      css=PAGE_CSS, **kwargs)  # fmt: skip
