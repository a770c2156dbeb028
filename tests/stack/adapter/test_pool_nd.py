"""Pools through the whole stack against onnxruntime: 3-D MaxPool / AveragePool (two 2-D pools
on views), GlobalMaxPool and LpPool; their bad input as typed errors naming the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from tests.stack.adapter.both import ours, reference

RNG = np.random.default_rng(11)


def _model(
    op: str, x_shape: list[int], x_type: int = TensorProto.FLOAT, opset: int = 19, **attrs: Any
) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", x_type, x_shape)],
        [helper.make_empty_tensor_value_info("y")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(op: str, x_shape: list[int], opset: int = 19, **attrs: Any) -> None:
    model = _model(op, x_shape, opset=opset, **attrs)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    ref = reference(model, x)
    got = ours(model, x)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


WINDOWS: dict[str, tuple[list[int], dict[str, Any]]] = {
    # name: (X shape, attributes)
    "3-D plain": ([1, 2, 4, 5, 6], {"kernel_shape": [2, 2, 2]}),
    "3-D strided, padded": (
        [2, 3, 5, 6, 7],
        {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    ),
    "3-D dilated": ([1, 1, 6, 5, 7], {"kernel_shape": [2, 2, 3], "dilations": [2, 1, 2]}),
    "3-D ceil mode": (
        [1, 2, 5, 6, 5],
        {
            "kernel_shape": [2, 3, 2],
            "strides": [2, 2, 2],
            "pads": [1, 1, 0, 0, 1, 1],
            "ceil_mode": 1,
        },
    ),
    "3-D same upper": (
        [1, 2, 5, 4, 3],
        {"kernel_shape": [3, 2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
    ),
    "2-D": ([1, 2, 5, 6], {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]}),
    "1-D": ([2, 3, 9], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
}


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("case", list(WINDOWS))
def test_windowed_pools_match_onnxruntime(op: str, case: str) -> None:
    x_shape, attrs = WINDOWS[case]
    if op == "AveragePool":
        for include in (0, 1):
            _check(op, x_shape, count_include_pad=include, **attrs)
    else:
        _check(op, x_shape, **attrs)


@pytest.mark.parametrize("shape", [[2, 3, 7], [1, 2, 4, 5], [1, 2, 3, 4, 5]], ids=str)
def test_global_max_pool_matches_onnxruntime(shape: list[int]) -> None:
    _check("GlobalMaxPool", shape)


LP: dict[str, tuple[list[int], dict[str, Any]]] = {
    "2-D p=2": ([1, 2, 5, 6], {"kernel_shape": [2, 3]}),
    "2-D p=1 strided": ([1, 2, 6, 6], {"kernel_shape": [3, 3], "strides": [2, 2], "p": 1}),
    "2-D p=3 padded": ([2, 1, 5, 5], {"kernel_shape": [2, 2], "pads": [1, 0, 1, 1], "p": 3}),
    "2-D same lower": ([1, 2, 5, 4], {"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER"}),
    "1-D": ([1, 3, 8], {"kernel_shape": [3], "strides": [2]}),
    "3-D": ([1, 2, 4, 4, 5], {"kernel_shape": [2, 2, 3], "strides": [1, 2, 1]}),
}


@pytest.mark.parametrize("case", list(LP))
def test_lp_pool_matches_onnxruntime(case: str) -> None:
    x_shape, attrs = LP[case]
    _check("LpPool", x_shape, **attrs)


def test_lp_pool_ceil_mode_sums_the_tail_window() -> None:
    """ceil_mode: the last window runs past the input; its missing values count as zeros."""
    x = RNG.standard_normal((1, 1, 5, 5)).astype(np.float32)
    model = _model("LpPool", [1, 1, 5, 5], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    got = ours(model, x)
    padded = np.zeros((6, 6), np.float32)
    padded[:5, :5] = x[0, 0]
    ref = np.sqrt((padded**2).reshape(3, 2, 3, 2).sum(axis=(1, 3)))
    assert got.shape == (1, 1, 3, 3)
    np.testing.assert_allclose(got[0, 0], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("op", "shape", "x_type", "attrs", "error"),
    [
        ("MaxPool", [1, 2, 4, 4, 4], TensorProto.FLOAT, {"kernel_shape": [2, 2]},
         ModelFormatError),
        ("AveragePool", [1, 2, 4, 4, 4], TensorProto.FLOAT, {"kernel_shape": [2, 0, 2]},
         ModelFormatError),
        ("MaxPool", [1, 1, 2, 2, 2, 2], TensorProto.FLOAT, {"kernel_shape": [1, 1, 1, 1]},
         UnsupportedOpError),
        ("LpPool", [1, 2, 4, 4], TensorProto.INT32, {"kernel_shape": [2, 2]}, ModelFormatError),
        ("LpPool", [1, 2, 4, 4], TensorProto.FLOAT, {"kernel_shape": [2, 2], "p": 0},
         ModelFormatError),
        ("GlobalMaxPool", [4, 4], TensorProto.FLOAT, {}, ModelFormatError),
    ],
    ids=["kernel rank", "zero kernel", "4-D spatial", "integer LpPool", "p 0", "rank 2"],
)  # fmt: skip
def test_bad_pools_are_typed_errors_naming_the_node(
    op: str, shape: list[int], x_type: int, attrs: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error) as err:
        import_model(_model(op, shape, x_type, **attrs))
    assert err.value.node == "n0", err.value  # type: ignore[attr-defined]
