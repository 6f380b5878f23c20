"""Checking and coercing the statistics' inputs: scores, annotator lists, dimension names.

A NaN inside a Python list, a non-numeric value or a score outside the scale raises
:class:`ValueError` naming the entry; ``None`` marks a missing rating.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from speech_drame.schema import (
    ARCHETYPE_DIMENSIONS,
    CONTENT_PASS,
    REALISM_DIMENSIONS,
    SCORE_MAX,
    SCORE_MIN,
    SEMANTIC_MATCH,
)

SCORED_DIMENSIONS: tuple[str, ...] = (*ARCHETYPE_DIMENSIONS, *REALISM_DIMENSIONS, SEMANTIC_MATCH)
KNOWN_DIMENSIONS: tuple[str, ...] = (CONTENT_PASS, *SCORED_DIMENSIONS)
PASS_THRESHOLD = 0.5  # a Content Pass probability >= this predicts "pass"

_NUMBER, _NONE, _BOOL, _NAN, _OTHER = range(5)


def _classify(value: Any) -> int:
    if value is None:
        return _NONE
    if isinstance(value, bool | np.bool_):
        return _BOOL
    if isinstance(value, numbers.Real):
        return _NUMBER if math.isfinite(value) else _NAN
    return _OTHER


_CLASSIFY = np.frompyfunc(_classify, 1, 1)


def _plain_numbers_or_none(values: np.ndarray) -> bool:
    """Whether an object array holds only non-boolean real numbers and None (a fast check
    by type; anything else goes through :func:`_classify` for a precise message)."""
    kinds = set(map(type, values.ravel()))
    kinds.discard(type(None))
    return all(issubclass(t, numbers.Real) and not issubclass(t, bool | np.bool_) for t in kinds)


def _to_float(
    values: np.ndarray,
    where: Callable[[tuple[int, ...]], str],
    *,
    missing_ok: bool,
    nan_is_missing: bool,
    bool_ok: bool | np.ndarray = False,
    low: float | np.ndarray = SCORE_MIN,
    high: float | np.ndarray = SCORE_MAX,
) -> np.ndarray:
    """Check ``values`` and return them as floats (NaN = missing).

    ``where(index)`` names an entry for error messages. ``bool_ok`` and the bounds broadcast
    against the last axis (one setting per dimension).
    """
    shape = values.shape
    bool_ok = np.broadcast_to(np.asarray(bool_ok), shape) if shape else np.asarray(bool_ok)

    def fail(mask: np.ndarray, reason: Callable[[Any], str]) -> None:
        if mask.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), shape))
            value = values[index]
            raise ValueError(
                f"{where(index)}: {reason(value.item() if isinstance(value, np.generic) else value)}"
            )

    if values.dtype == object and _plain_numbers_or_none(values):
        missing = values == None  # noqa: E711 (elementwise)
        if not missing_ok:
            fail(missing, lambda v: "missing value (None)")
        out = np.full(shape, np.nan)
        out[~missing] = values[~missing].astype(float)
        fail(
            ~missing & ~np.isfinite(out),
            lambda v: f"{v!r} is not a score (use None for a missing rating)",
        )
    elif values.dtype == object:
        codes = _CLASSIFY(values).astype(np.int8) if values.size else np.zeros(shape, np.int8)
        fail(codes == _OTHER, lambda v: f"expected a number, got {v!r}")
        fail(codes == _NAN, lambda v: f"{v!r} is not a score (use None for a missing rating)")
        fail((codes == _BOOL) & ~bool_ok, lambda v: f"expected a number, got the boolean {v!r}")
        if not missing_ok:
            fail(codes == _NONE, lambda v: "missing value (None)")
        out = np.full(shape, np.nan)
        present = codes != _NONE
        out[present] = values[present].astype(float)
    else:
        kind = values.dtype.kind
        if kind not in "biuf":
            raise ValueError(
                f"{where((0,) * len(shape))}: expected numbers, got {values.dtype} values"
            )
        if kind == "b":
            fail(~bool_ok, lambda v: f"expected a number, got the boolean {v!r}")
        out = values.astype(float, copy=False)
        lo, hi = _scalar_if_uniform(low), _scalar_if_uniform(high)
        inside = (out >= lo) & (out <= hi)
        if inside.all() or (missing_ok and nan_is_missing and (inside | np.isnan(out)).all()):
            return out  # the common case, in few passes
        fail(np.isinf(out), lambda v: f"{v!r} is not a finite score")
        if not (missing_ok and nan_is_missing):
            fail(np.isnan(out), lambda v: f"{v!r} is not a score")
    bad = ~np.isnan(out) & ((out < low) | (out > high))
    if bad.any():
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), shape))
        lo, hi = (np.broadcast_to(v, shape)[index] for v in (low, high))
        raise ValueError(f"{where(index)}: score {out[index]:g} outside the scale {lo:g}..{hi:g}")
    return out


def _scalar_if_uniform(bound: float | np.ndarray) -> float | np.ndarray:
    """One bound for every dimension as a scalar (comparisons broadcast 5x faster)."""
    flat = np.ravel(bound)
    return float(flat[0]) if (flat == flat[0]).all() else bound


def _array(values: Any) -> np.ndarray:
    """``values`` as an array; non-numeric content as objects so that errors can name it.

    Raises ValueError (from numpy) for ragged nesting.
    """
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "biufO" else np.asarray(values, dtype=object)


def _check_dimensions(dimensions: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(dimensions, str):
        raise ValueError(f"dimensions must be a list of names, got the string {dimensions!r}")
    dims = tuple(dimensions)
    if not dims:
        raise ValueError("dimensions is empty: name at least one dimension")
    for d in dims:
        if d not in KNOWN_DIMENSIONS:
            raise ValueError(f"unknown dimension {d!r}; known: {', '.join(KNOWN_DIMENSIONS)}")
    repeated = sorted({d for d in dims if dims.count(d) > 1})
    if repeated:
        raise ValueError(f"dimensions named more than once: {', '.join(repeated)}")
    return dims


def _bounds(dims: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cp = np.array([d == CONTENT_PASS for d in dims])
    return np.where(cp, 0.0, SCORE_MIN), np.where(cp, 1.0, SCORE_MAX), cp


def booleans_as_numbers(rows: Any) -> tuple[Any, frozenset[int]]:
    """Per-sample rows with every boolean as ``1.0``/``0.0``, and the positions that held one.

    For stores that hold numbers only (the ``evaluate`` module's Arrow columns). A row has one
    entry per dimension: a value or a list of annotator values. Input that is not a list of
    rows is returned unchanged. :func:`check_boolean_positions` then makes sure, once the
    dimensions are known, that only Content Pass held booleans (votes or decisions), so the
    conversion accepts nothing that :func:`alignment_table` would refuse.

    >>> booleans_as_numbers([[True, 3], [[False, True], None]])
    ([[1.0, 3], [[0.0, 1.0], None]], frozenset({0}))
    """
    if not _is_list(rows) or (isinstance(rows, np.ndarray) and rows.dtype.kind in "iuf"):
        return rows, frozenset()
    positions: set[int] = set()

    def number(value: Any, j: int) -> Any:
        if isinstance(value, bool | np.bool_):
            positions.add(j)
            return float(value)
        return value

    out = []
    for row in rows:
        if not _is_list(row):
            out.append(row)
            continue
        out.append(
            [
                [number(v, j) for v in entry] if _is_list(entry) else number(entry, j)
                for j, entry in enumerate(row)
            ]
        )
    return out, frozenset(positions)


def check_boolean_positions(
    positions: frozenset[int], dimensions: Sequence[str], name: str
) -> None:
    """Raise if a position :func:`booleans_as_numbers` found booleans in is not Content Pass.

    >>> check_boolean_positions(frozenset({1}), ["content_pass", "audio_quality"], "predictions")
    Traceback (most recent call last):
    ...
    ValueError: predictions: booleans in dimension 'audio_quality'; only content_pass takes True/False
    """
    dims = _check_dimensions(dimensions)
    wrong = [dims[j] for j in sorted(positions) if j < len(dims) and dims[j] != CONTENT_PASS]
    if wrong:
        raise ValueError(
            f"{name}: booleans in dimension {wrong[0]!r}; only {CONTENT_PASS} takes True/False"
        )


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


def _list_length(value: Any, where: str) -> int:
    if not _is_list(value):
        raise ValueError(f"{where}: expected a list of annotator ratings, got {value!r}")
    return len(value)


def _vector(values: Any, name: str) -> np.ndarray:
    arr = _array(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty input")
    return _to_float(
        arr,
        lambda i: f"{name}[{i[0]}]",
        missing_ok=False,
        nan_is_missing=False,
        bool_ok=True,
        low=-np.inf,
        high=np.inf,
    )


def _pair(x: Any, y: Any, names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    a, b = _vector(x, names[0]), _vector(y, names[1])
    if a.size != b.size:
        raise ValueError(f"{names[0]} has {a.size} values but {names[1]} has {b.size}")
    return a, b
