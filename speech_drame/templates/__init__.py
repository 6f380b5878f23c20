"""Jinja templates of the cards the toolkit writes, kept in the checkout's top-level
``model_card/`` folder (the wheel ships the same files as ``speech_drame/templates/model_card/``):

- ``datasetcard.md``: the ``README.md`` of a Hub-ready dataset folder
  (:func:`speech_drame.data.card.render_card`);
- ``modelcard.md``: the ``README.md`` of an exported DRAME-Eval evaluator
  (:func:`speech_drame.hub.cards.render_model_card`);
- ``lite_modelcard.md``: the ``README.md`` of a pushed LiteScorer
  (:func:`speech_drame.hub.cards.render_lite_model_card`);
- ``space_readme.md``: the ``README.md`` of a Space bundle
  (:func:`speech_drame.space_bundle.bundle_space`).

Each is rendered by ``huggingface_hub``'s card classes (``DatasetCard`` / ``ModelCard`` / ``SpaceCard``
``.from_template``): the YAML front matter is the card data (``{{ card_data }}``), the body the
template. From a source checkout (an editable install included) the files are read from
``model_card/``; from an installed wheel with :mod:`importlib.resources`, so it needs no checkout.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

__all__ = [
    "DATASET_CARD",
    "LITE_MODEL_CARD",
    "MODEL_CARD",
    "SPACE_README",
    "read_template",
    "render",
    "template_folder",
]

DATASET_CARD = "datasetcard.md"
MODEL_CARD = "modelcard.md"
LITE_MODEL_CARD = "lite_modelcard.md"
SPACE_README = "space_readme.md"
FOLDER = "model_card"  # the checkout's folder, and its name inside the wheel
_CHECKOUT = Path(__file__).resolve().parents[2] / FOLDER


def template_folder() -> Path | Traversable:
    """The folder of the card templates: the checkout's ``model_card/``, else (an installed
    wheel) ``speech_drame/templates/model_card/``, where ``setup.py`` maps it."""
    if (_CHECKOUT / MODEL_CARD).is_file():
        return _CHECKOUT
    return files(__name__).joinpath(FOLDER)


def read_template(name: str) -> str:
    """The text of the template ``name`` (e.g. :data:`MODEL_CARD`)."""
    resource = template_folder().joinpath(name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"card template {name!r} is missing from {template_folder()}: reinstall speech-drame"
        )
    return resource.read_text(encoding="utf-8")


def render(card_class: type, card_data: Any, template: str, **values: Any) -> str:
    """Render a card: ``card_class.from_template`` (e.g. ``huggingface_hub.ModelCard``) with
    ``card_data`` as front matter and ``template`` (Jinja source) as body; the text ends with a
    newline."""
    card = card_class.from_template(card_data, template_str=template, **values)
    text = str(card)
    return text if text.endswith("\n") else text + "\n"
