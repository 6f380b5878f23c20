"""A small ONNX model written in the protobuf wire format, without the ``onnx`` package.

Enough of ``onnx.proto`` for a graph of a few nodes with float32/int64 initializers, to be
handed to ONNX Runtime as bytes: :func:`model` of :func:`node` s, :func:`tensor` s and
:func:`value_info` s. Field numbers are those of ``onnx/onnx.proto`` (IR version 8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

IR_VERSION = 8
_ELEM_TYPES = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}
_ATTR_INT = 2  # AttributeProto.AttributeType.INT


def _varint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"negative varint {value}: not needed by these graphs")
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One field: an int as a varint, bytes and text length-delimited."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def tensor(name: str, array: np.ndarray) -> bytes:
    """A ``TensorProto`` initializer holding ``array`` (float32 or int64)."""
    array = np.ascontiguousarray(array)
    dims = b"".join(_field(1, int(d)) for d in array.shape)
    raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return dims + _field(2, _ELEM_TYPES[array.dtype]) + _field(8, name) + _field(9, raw)


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], **attributes: int) -> bytes:
    """A ``NodeProto`` of operator ``op`` with integer attributes (an empty input name skips
    an optional input)."""
    return (
        b"".join(_field(1, name) for name in inputs)
        + b"".join(_field(2, name) for name in outputs)
        + _field(4, op)
        + b"".join(
            _field(5, _field(1, k) + _field(3, v) + _field(20, _ATTR_INT))
            for k, v in attributes.items()
        )
    )


def value_info(name: str, shape: Sequence[int | str], dtype=np.float32) -> bytes:
    """A ``ValueInfoProto``: a graph input or output, its dimensions numbers or names."""
    dims = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _field(1, d)) for d in shape)
    tensor_type = _field(1, _ELEM_TYPES[np.dtype(dtype)]) + _field(2, dims)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def model(
    name: str,
    nodes: Sequence[bytes],
    initializers: Sequence[bytes],
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    opset: int,
) -> bytes:
    """A serialised ``ModelProto`` of one graph in the default domain at ``opset``."""
    graph = (
        b"".join(_field(1, n) for n in nodes)
        + _field(2, name)
        + b"".join(_field(5, t) for t in initializers)
        + b"".join(_field(11, v) for v in inputs)
        + b"".join(_field(12, v) for v in outputs)
    )
    opset_id = _field(1, "") + _field(2, opset)
    return (
        _field(1, IR_VERSION) + _field(2, "speech-drame") + _field(7, graph) + _field(8, opset_id)
    )
