"""Ranker settings and pair conventions, by name (light: no numpy or torch at import).

**Configurations** (:data:`PRESETS`, ``configs/animescore_<name>.yaml``): ``released`` (the
default) has the AnimeScore release's head and optimiser settings: BiLSTM and MLP widths 256,
LayerNorm then dropout on the pooled BiLSTM output before the MLP, raw encoder frames, AdamW at
3e-5 (weight decay 1e-4), batches of 8 pairs, 20 epochs. ``compact`` is this package's earlier
CPU-sized head: widths 64, no LayerNorm, frames standardised with the training clips' mean and
standard deviation, 1e-3, batches of 16, up to 30 epochs with early stopping (patience 5).

A config is a :class:`RankerConfig`; :func:`load_config` reads a preset name or a YAML file of
its fields (``configs/animescore_released.yaml`` and ``configs/animescore_compact.yaml`` hold
the two presets). :data:`PAIR_CONVENTIONS` names how pair CSVs are read and accuracy counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from speech_drame.choices import check_choice

PAIR_CONVENTIONS = {
    "released": "every CSV row is its own pair (repeated judgements, 1-1 splits included, stay "
    "separate rows); accuracy reads s(a) > s(b) as A preferred, so a score difference of 0 "
    "predicts B (the AnimeScore release's reading)",
    "majority": "repeated judgements of the same two clips (either order) merged by majority "
    "vote, 1-1 ties left out; a score difference of 0 counts half right",
}
DEFAULT_PAIR_CONVENTION = "released"


def check_convention(name: str) -> str:
    """``name`` if it is a key of :data:`PAIR_CONVENTIONS`, else a ValueError listing them."""
    return check_choice(name, PAIR_CONVENTIONS, "pair convention")


_INTS = ("lstm_hidden", "mlp_hidden", "batch_pairs", "max_epochs", "patience", "seed")
_FLOATS = ("dropout", "learning_rate", "weight_decay", "val_fraction")
_BOOLS = ("layer_norm", "frame_standardise")


@dataclass
class RankerConfig:
    """Head and training settings; the defaults are the ``released`` configuration.

    ``layer_norm``: LayerNorm then dropout on the pooled BiLSTM output, before the MLP's first
    linear layer (where the release has them). ``frame_standardise``: subtract the training
    clips' per-dimension frame mean and divide by their standard deviation before the BiLSTM.
    ``patience``: stop after this many epochs without a better validation NLL (0: run every
    epoch). ``val_fraction``: share of the training pairs held out for checkpoint selection
    when no validation pairs are given.
    """

    name: str = "released"
    lstm_hidden: int = 256
    mlp_hidden: int = 256
    layer_norm: bool = True
    frame_standardise: bool = False
    dropout: float = 0.1
    learning_rate: float = 3e-5
    weight_decay: float = 1e-4
    batch_pairs: int = 8
    max_epochs: int = 20
    patience: int = 0
    val_fraction: float = 0.15
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for key in _INTS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{key} must be an integer, got {value!r}")
        for key in _FLOATS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                hint = " (YAML reads 3e-5 as text: write 3.0e-5)" if isinstance(value, str) else ""
                raise ValueError(f"{key} must be a number, got {value!r}{hint}")
        for key in _BOOLS:
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"{key} must be true or false, got {getattr(self, key)!r}")
        for key in ("lstm_hidden", "mlp_hidden", "batch_pairs", "max_epochs"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be >= 1, got {getattr(self, key)}")
        if self.patience < 0:
            raise ValueError(f"patience must be >= 0 (0: no early stopping), got {self.patience}")
        if not 0.0 < self.val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in (0, 1), got {self.val_fraction}")
        if not 0.0 <= self.dropout < 1.0 or self.learning_rate <= 0 or self.weight_decay < 0:
            raise ValueError(
                "need 0 <= dropout < 1, learning_rate > 0 and weight_decay >= 0, got "
                f"{self.dropout}, {self.learning_rate}, {self.weight_decay}"
            )


PRESETS = {
    "released": RankerConfig(),
    "compact": RankerConfig(
        name="compact",
        lstm_hidden=64,
        mlp_hidden=64,
        layer_norm=False,
        frame_standardise=True,
        learning_rate=1e-3,
        batch_pairs=16,
        max_epochs=30,
        patience=5,
    ),
}
DEFAULT_CONFIG = "released"
# Fields a format-1 ranker folder lacks: it was trained with the compact head.
FORMAT_1_DEFAULTS = {"name": "compact", "layer_norm": False, "frame_standardise": True}


def config_from_mapping(values: dict[str, Any], where: str) -> RankerConfig:
    """A :class:`RankerConfig` from a mapping of its field names; ``where`` prefixes errors.

    Missing fields take the ``released`` values.
    """
    if not isinstance(values, dict):
        raise ValueError(
            f"{where}: expected a mapping of ranker settings, got {type(values).__name__}"
        )
    known = {f.name for f in fields(RankerConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{where}: unknown setting(s) {', '.join(map(str, unknown))}")
    try:
        return RankerConfig(**values)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def load_config(source: str | os.PathLike = DEFAULT_CONFIG) -> RankerConfig:
    """A preset by name (:data:`PRESETS`) or a YAML file of :class:`RankerConfig` fields.

    A file without ``name`` is named after the file (``animescore_x.yaml`` -> ``x``).

    Raises:
        FileNotFoundError: neither a preset nor a file.
        ValueError: bad YAML, unknown setting or bad value (naming the file and the setting).
    """
    import yaml

    if str(source) in PRESETS:
        return replace(PRESETS[str(source)])
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: ranker config not found (a YAML file or one of {', '.join(PRESETS)})"
        )
    try:
        values = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None
    if isinstance(values, dict) and "name" not in values:
        values = {"name": path.stem.removeprefix("animescore_"), **values}
    return config_from_mapping(values, str(path))
