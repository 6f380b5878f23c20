"""A small ONNX model written in the protobuf wire format, without the ``onnx`` package.

Enough of ``onnx.proto`` for a graph of a few nodes with float32/int64 initializers, to be
handed to ONNX Runtime as bytes: :func:`model` of :func:`node` s, :func:`tensor` s and
:func:`value_info` s. Field numbers are those of ``onnx/onnx.proto`` (IR version 8).

Each message is kept as a list of parts (the arrays' own buffers among them) and joined once by
:func:`model`, so the weights are copied once, not once per level of nesting.
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


Message = list  # the parts of one serialised message, bytes-like, in order


def _size(message: Message) -> int:
    return sum(len(part) for part in message)  # the buffers are byte-formatted


def _field(number: int, payload: Message | bytes | str | int) -> Message:
    """One field: an int as a varint; a message, bytes or text length-delimited."""
    if isinstance(payload, int):
        return [_varint(number << 3) + _varint(payload)]
    if not isinstance(payload, list):
        payload = [payload.encode() if isinstance(payload, str) else payload]
    return [_varint(number << 3 | 2) + _varint(_size(payload)), *payload]


def tensor(name: str, array: np.ndarray) -> Message:
    """A ``TensorProto`` initializer holding ``array`` (float32 or int64), its buffer not copied
    (unless it is not contiguous little-endian)."""
    array = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False))
    dims = [part for d in array.shape for part in _field(1, int(d))]
    raw = memoryview(array).cast("B")
    return [*dims, *_field(2, _ELEM_TYPES[array.dtype]), *_field(8, name), *_field(9, [raw])]


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], **attributes: int) -> Message:
    """A ``NodeProto`` of operator ``op`` with integer attributes (an empty input name skips
    an optional input)."""
    attribute_fields = [
        _field(5, [*_field(1, k), *_field(3, v), *_field(20, _ATTR_INT)])
        for k, v in attributes.items()
    ]
    fields = [_field(1, n) for n in inputs] + [_field(2, n) for n in outputs]
    fields += [_field(4, op), *attribute_fields]
    return [part for f in fields for part in f]


def value_info(name: str, shape: Sequence[int | str], dtype=np.float32) -> Message:
    """A ``ValueInfoProto``: a graph input or output, its dimensions numbers or names."""
    dims = [
        part
        for d in shape
        for part in _field(1, _field(2, d) if isinstance(d, str) else _field(1, d))
    ]
    tensor_type = [*_field(1, _ELEM_TYPES[np.dtype(dtype)]), *_field(2, dims)]
    return [*_field(1, name), *_field(2, _field(1, tensor_type))]


def model(
    name: str,
    nodes: Sequence[Message],
    initializers: Sequence[Message],
    inputs: Sequence[Message],
    outputs: Sequence[Message],
    opset: int,
) -> bytes:
    """A serialised ``ModelProto`` of one graph in the default domain at ``opset``."""
    fields = [_field(1, n) for n in nodes] + [_field(2, name)]
    fields += [_field(5, t) for t in initializers]
    fields += [_field(11, v) for v in inputs] + [_field(12, v) for v in outputs]
    graph = [part for f in fields for part in f]
    opset_id = [*_field(1, ""), *_field(2, opset)]
    parts = [*_field(1, IR_VERSION), *_field(2, "speech-drame"), *_field(7, graph)]
    return b"".join([*parts, *_field(8, opset_id)])
