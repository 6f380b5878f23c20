"""speech_drame.features.onnx_graph: protobuf bytes that ONNX Runtime loads and runs."""

from __future__ import annotations

import numpy as np
import pytest

from speech_drame.features import onnx_graph

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16_383, 16_384, 2**31, 2**63 - 1])
def test_varints_are_protobufs_own(value: int) -> None:
    encoder = pytest.importorskip("google.protobuf.internal.encoder")
    assert onnx_graph._varint(value) == encoder._VarintBytes(value)


def test_a_negative_varint_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        onnx_graph._varint(-1)


def test_a_graph_with_initializers_and_a_named_dimension_runs() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    model = onnx_graph.model(
        "affine",
        [
            onnx_graph.node("MatMul", ["x", "w"], ["xw"]),
            onnx_graph.node("Add", ["xw", "b"], ["y"]),
            onnx_graph.node("ReduceSum", ["y", "axes"], ["total"], keepdims=0),
        ],
        [
            onnx_graph.tensor("w", w),
            onnx_graph.tensor("b", b),
            onnx_graph.tensor("axes", np.array([1], dtype=np.int64)),
        ],
        [onnx_graph.value_info("x", ["batch", 5])],
        [onnx_graph.value_info("y", ["batch", 3]), onnx_graph.value_info("total", ["batch"])],
        opset=17,
    )
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y, total = session.run(["y", "total"], {"x": x})
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-6)
    np.testing.assert_allclose(total, (x @ w + b).sum(axis=1), rtol=1e-5)
    assert [i.shape for i in session.get_inputs()] == [["batch", 5]]
