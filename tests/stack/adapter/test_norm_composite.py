"""MeanVarianceNormalization and GroupNormalization through the whole stack against
onnxruntime (GroupNormalization's opset-18 per-group affine against NumPy), and their bad input
as typed errors naming the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import ShapeInferenceError
from tests.stack.adapter.both import ours, reference

RNG = np.random.default_rng(17)


def _model(
    op: str, shape: list[int], opset: int, inits: tuple[np.ndarray, ...] = (), **attrs: Any
) -> onnx.ModelProto:
    names = ["scale", "bias"][: len(inits)]
    graph = helper.make_graph(
        [helper.make_node(op, ["x", *names], ["y"], name="n0", **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(a, n) for a, n in zip(inits, names, strict=True)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _against_ort(model: onnx.ModelProto, shape: list[int]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
    ref = reference(model, x)
    got = ours(model, x)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3], [-1, 2]], ids=str)
def test_mean_variance_normalization_matches_onnxruntime(axes: list[int] | None) -> None:
    attrs = {} if axes is None else {"axes": axes}
    _against_ort(_model("MeanVarianceNormalization", [2, 3, 4, 5], 13, **attrs), [2, 3, 4, 5])


@pytest.mark.parametrize(
    ("shape", "groups"), [([3, 4, 2, 2], 2), ([2, 6, 5], 3), ([1, 4, 2, 3, 2], 4)], ids=str
)
def test_group_normalization_matches_onnxruntime(shape: list[int], groups: int) -> None:
    scale = RNG.standard_normal(shape[1]).astype(np.float32)
    bias = RNG.standard_normal(shape[1]).astype(np.float32)
    model = _model("GroupNormalization", shape, 21, (scale, bias), num_groups=groups,
                   epsilon=1e-3)  # fmt: skip
    _against_ort(model, shape)


def test_group_normalization_of_opset_18_scales_each_group() -> None:
    x = RNG.standard_normal((2, 6, 3)).astype(np.float32)
    scale, bias = np.array([2.0, -1.0], np.float32), np.array([0.5, 3.0], np.float32)
    got = ours(_model("GroupNormalization", [2, 6, 3], 18, (scale, bias), num_groups=2), x)
    g = x.reshape(2, 2, 9)
    normed = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + 1e-5)
    ref = (normed * scale[:, None] + bias[:, None]).reshape(2, 6, 3)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


ONES4 = (np.ones(4, np.float32), np.ones(4, np.float32))
BAD: dict[str, tuple[onnx.ModelProto, type[Exception]]] = {
    "groups do not divide C": (
        _model("GroupNormalization", [1, 4, 3], 21, ONES4, num_groups=3),
        ModelFormatError,
    ),
    "scale of the wrong shape": (
        _model("GroupNormalization", [1, 4, 3], 21, (np.ones(2, np.float32),) * 2, num_groups=2),
        ModelFormatError,
    ),
    "2-D input": (_model("GroupNormalization", [4, 4], 21, ONES4, num_groups=2), ModelFormatError),
    "MVN axis out of range": (
        _model("MeanVarianceNormalization", [2, 3], 13, axes=[2]),
        ShapeInferenceError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value  # type: ignore[attr-defined]
