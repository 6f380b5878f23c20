"""AnimeScore-style pairwise preference ranking of voices.

- :mod:`.config`: ranker configurations by name (``released`` default, ``compact``), their
  YAML files, and the pair conventions (``released`` default, ``majority``).
- :mod:`.pairs`: the release's pair CSVs (column aliases, every row or majority vote, clear
  errors) and a synthetic demo pair set built from the demo corpus's construction labels.
- :mod:`.encoders`: frozen frame encoders (the ASR's multilingual Whisper base encoder offline
  by default, any transformers SSL model by name) with frame features cached on disk.
- :mod:`.ranker`: BiLSTM -> mean pooling -> MLP -> scalar score, trained with the pairwise
  logistic loss; safetensors + config; batch ``score(paths)``.
- :mod:`.baseline`: handcrafted acoustic features with logistic regression on feature
  differences, 5-fold cross-validation.
"""

from ..._lazy import lazy_attributes

__all__ = [
    "PairSet",
    "Ranker",
    "RankerConfig",
    "demo_pairs",
    "load_config",
    "load_pairs",
    "run_baseline",
    "train_ranker",
]
_MODULES = {
    ".pairs": ("PairSet", "demo_pairs", "load_pairs"),
    ".config": ("RankerConfig", "load_config"),
    ".ranker": ("Ranker", "train_ranker"),
    ".baseline": ("run_baseline",),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
