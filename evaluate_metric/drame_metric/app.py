"""The drame_metric Space: paste predictions and references as JSON, get the alignment table.

evaluate 0.4.6's ``evaluate.utils.launch_gradio_widget`` builds its form with ``gr.inputs`` /
``gr.outputs``, which Gradio 4 removed, and it cannot pass ``dimensions``: this small app
replaces it. Run locally with ``python evaluate_metric/drame_metric/app.py``; on the Hub this file
is the ``app_file`` and ``drame_metric.py`` sits beside it. The metric needs only the installed
``speech-drame`` package (requirements.txt).
"""

import json
import math
import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import evaluate  # noqa: E402
import gradio as gr  # noqa: E402

HERE = Path(__file__).resolve().parent
LABEL_POLICIES = ("paper", "skip")
EXAMPLE = {
    "predictions": [[4.2, 3.9], [2.1, 2.8], [3.0, 3.4], [4.8, 4.1]],
    "references": [
        [[4, 5, 4], [4, None, 4]],
        [[2, 2, 3], [3, 2, 3]],
        [[3, 4, 3], [3, 3, 4]],
        [[5, 5, 4], [4, 5, 5]],
    ],
    "dimensions": ["audio_quality", "human_likeness"],
}
DESCRIPTION = """\
Human alignment of an automatic evaluator of spoken role-play (Speech-DRAME): per-dimension
Pearson correlation with the mean human rating, its average, Content Pass accuracy, and beside
them Spearman, Kendall tau-b, MAE and RMSE. Paste JSON lists: **predictions** hold one row per
sample with one score per dimension; **references** hold per sample and dimension one score or
the list of annotator ratings (`null` = a null rating). See the metric card below.
"""

_metric = None


def metric():
    """The metric module beside this file, loaded once."""
    global _metric
    if _metric is None:
        _metric = evaluate.load(str(HERE / "drame_metric.py"))
    return _metric


def _json_list(text: str, name: str) -> list:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(value, list) or not value:
        raise ValueError(f"{name}: expected a non-empty JSON list")
    return value


def _dimensions(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        names = _json_list(text, "dimensions")
    else:
        names = [name.strip() for name in text.split(",") if name.strip()]
    if not names or not all(isinstance(name, str) for name in names):
        raise ValueError("dimensions: give the dimension names, comma-separated or as a JSON list")
    return names


def _finite(value):
    """NaN (an undefined statistic, explained in ``notes``) as ``null`` in the JSON output."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def compute_from_json(
    predictions: str,
    references: str,
    dimensions: str,
    label_policy: str = "paper",
    emotion_gating: bool = False,
) -> dict:
    """The metric's result for pasted JSON; NaN given as ``null``.

    Raises:
        ValueError: text that is not a JSON list, or input the metric refuses.
    """
    result = metric().compute(
        predictions=_json_list(predictions, "predictions"),
        references=_json_list(references, "references"),
        dimensions=_dimensions(dimensions),
        label_policy=label_policy,
        emotion_gating=bool(emotion_gating),
    )
    return _finite(result)


def _compute(predictions, references, dimensions, label_policy, emotion_gating):
    try:
        return compute_from_json(predictions, references, dimensions, label_policy, emotion_gating)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def _card() -> str:
    """The metric card (README.md) without its front matter."""
    text = (HERE / "README.md").read_text(encoding="utf-8")
    if text.startswith("---"):
        text = text.split("\n---", 1)[-1].split("\n", 1)[-1]
    return text


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="Metric: drame_metric") as demo:
        gr.Markdown("# Metric: drame_metric\n\n" + DESCRIPTION)
        with gr.Row():
            with gr.Column():
                predictions = gr.Code(
                    json.dumps(EXAMPLE["predictions"]), language="json", label="predictions"
                )
                references = gr.Code(
                    json.dumps(EXAMPLE["references"]), language="json", label="references"
                )
                dimensions = gr.Textbox(
                    ", ".join(EXAMPLE["dimensions"]),
                    label="dimensions (one per position, comma-separated)",
                )
                with gr.Row():
                    label_policy = gr.Radio(
                        list(LABEL_POLICIES), value="paper", label="label_policy"
                    )
                    emotion_gating = gr.Checkbox(False, label="emotion_gating")
                button = gr.Button("Compute", variant="primary")
            result = gr.JSON(label="drame_metric")
        button.click(
            _compute,
            [predictions, references, dimensions, label_policy, emotion_gating],
            result,
            api_name="compute",
        )
        gr.Markdown(_card())
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
