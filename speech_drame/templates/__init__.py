"""Jinja templates of the cards the toolkit writes, shipped as package data.

- ``datasetcard.md``: the ``README.md`` of a Hub-ready dataset folder
  (:func:`speech_drame.data.card.render_card`);
- ``modelcard.md``: the ``README.md`` of an exported DRAME-Eval evaluator
  (:func:`speech_drame.model_card.render_model_card`);
- ``lite_modelcard.md``: the ``README.md`` of a pushed LiteScorer
  (:func:`speech_drame.model_card.render_lite_model_card`);
- ``space_readme.md``: the ``README.md`` of a Space bundle
  (:func:`speech_drame.space_bundle.bundle_space`).

Each is rendered by ``huggingface_hub``'s card classes (``DatasetCard`` / ``ModelCard`` / ``SpaceCard``
``.from_template``): the YAML front matter is the card data (``{{ card_data }}``), the body the
template. The files are read with :mod:`importlib.resources`, so an installed wheel needs no
checkout beside it.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

__all__ = [
    "DATASET_CARD",
    "LITE_MODEL_CARD",
    "MODEL_CARD",
    "SPACE_README",
    "read_template",
    "render",
]

DATASET_CARD = "datasetcard.md"
MODEL_CARD = "modelcard.md"
LITE_MODEL_CARD = "lite_modelcard.md"
SPACE_README = "space_readme.md"


def read_template(name: str) -> str:
    """The text of the packaged template ``name`` (e.g. :data:`MODEL_CARD`)."""
    resource = files(__name__).joinpath(name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"card template {name!r} is missing from the installed speech_drame package "
            f"({files(__name__)}): reinstall speech-drame"
        )
    return resource.read_text(encoding="utf-8")


def render(card_class: type, card_data: Any, template: str, **values: Any) -> str:
    """Render a card: ``card_class.from_template`` (e.g. ``huggingface_hub.ModelCard``) with
    ``card_data`` as front matter and ``template`` (Jinja source) as body; the text ends with a
    newline."""
    card = card_class.from_template(card_data, template_str=template, **values)
    text = str(card)
    return text if text.endswith("\n") else text + "\n"
