"""The LiteScorer, the embedded default evaluator: small heads over a clip's blueprint (trained
with torch, run in numpy).

- :mod:`.features`: the blueprint as one fixed-length vector (:func:`~.features.feature_matrix`);
- :mod:`.model`: the network and its saved folder (:class:`~.model.LiteModel`,
  :func:`~.model.load_lite_model`, :func:`~.model.default_scorer_dir`);
- :mod:`.fit`: label distribution learning over annotators (:func:`~.fit.train_lite_model`);
- :mod:`.finetune`: a trained scorer fine-tuned on new ratings (:func:`~.finetune.load_parent`,
  :func:`~.finetune.fine_tune_lite_model`; ``train-lite --init``);
- :mod:`.scorer`: the model as a Scorer (:class:`~.scorer.LiteScorer`, ``lite[:PATH]``);
- :mod:`.training`: ``speech-drame train-lite``, train and evaluate on a dataset folder;
- :mod:`.publish`: a trained folder with its model card, staged and pushed to the Hub.

``LiteEvaluator`` is the deprecated name of :class:`~.scorer.LiteScorer` (a
``DeprecationWarning`` when used). Names are imported on first use (no ``torch`` at import).
"""

from typing import Any

from ..._lazy import lazy_attributes

__all__ = [
    "LiteModel",
    "LiteScorer",
    "TrainingOptions",
    "default_scorer_dir",
    "feature_matrix",
    "fine_tune_lite_model",
    "load_lite_model",
    "load_parent",
    "push_lite_scorer",
    "train_and_evaluate",
    "train_lite_model",
]
_getattr, __dir__ = lazy_attributes(
    __name__,
    {
        "LiteModel": ".model",
        "LiteScorer": ".scorer",
        "TrainingOptions": ".model",
        "default_scorer_dir": ".model",
        "feature_matrix": ".features",
        "fine_tune_lite_model": ".finetune",
        "load_lite_model": ".model",
        "load_parent": ".finetune",
        "push_lite_scorer": ".publish",
        "train_and_evaluate": ".training",
        "train_lite_model": ".fit",
    },
)


def __getattr__(name: str) -> Any:
    if name == "LiteEvaluator":  # deprecated: warns on every use, so it is never cached here
        from .scorer import lite_evaluator

        return lite_evaluator(stacklevel=2)
    return _getattr(name)
