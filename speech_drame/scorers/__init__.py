"""Scorers: evaluators that rate a clip on the dimensions of a config, behind one contract.

- :mod:`.base`: the contract (:class:`~.base.ClipInput`, :class:`~.base.ClipScores`,
  :class:`~.base.Scorer`, :class:`~.base.ScorerError`);
- :mod:`.specs`: :func:`~.specs.load_scorer`, a scorer from its spec (``lite[:PATH]``,
  ``drame-eval:PATH_OR_HUB_ID``, ``judge:MODEL@URL``);
- :mod:`speech_drame.scorers.lite`: the embedded LiteScorer, its training and publishing;
- :mod:`.drame_eval`: DRAME-Eval, a LoRA-tuned Qwen2-Audio;
- :mod:`.judge`: a zero/few-shot chat judge as a scorer;
- :mod:`.evaluation`: any scorer against a split's annotators.

Names are imported on first use (no ``torch`` at ``import speech_drame.scorers``).
"""

from .._lazy import lazy_attributes

__all__ = [
    "ClipInput",
    "ClipScores",
    "Scorer",
    "ScorerError",
    "evaluate_scorer",
    "load_scorer",
    "parse_spec",
]
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "ClipInput": ".base",
        "ClipScores": ".base",
        "Scorer": ".base",
        "ScorerError": ".base",
        "evaluate_scorer": ".evaluation",
        "load_scorer": ".specs",
        "parse_spec": ".specs",
    },
)
