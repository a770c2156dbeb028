"""ConvTranspose through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

The cases cover what the importer resolves into the kernel's pads: explicit pads, auto_pad
SAME_UPPER / SAME_LOWER / VALID, output_padding, output_shape (larger than the natural size:
zero extension), strides, dilations, groups, bias, and the 1-D form promoted to 2-D."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from stack.compiler import ShapeInferenceError
from tests.stack.adapter.both import ours, reference

F = TensorProto.FLOAT


def _model(x_shape, w, bias=None, x_type=F, **attrs: Any):  # type: ignore[no-untyped-def]
    inits = [numpy_helper.from_array(w, "w")]
    ins = ["x", "w"]
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "b"))
        ins.append("b")
    node = helper.make_node("ConvTranspose", ins, ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", x_type, x_shape)],
        [helper.make_empty_tensor_value_info("y")],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


RNG = np.random.default_rng(5)
CASES: dict[str, tuple[list[int], list[int], dict[str, Any]]] = {
    # name: (X shape, W shape, attributes)
    "plain": ([1, 2, 4, 4], [2, 3, 3, 3], {}),
    "strided with pads": ([2, 3, 5, 4], [3, 4, 3, 3], {"strides": [2, 2], "pads": [1, 0, 1, 2]}),
    "output padding": ([1, 2, 3, 3], [2, 2, 3, 3], {"strides": [3, 2], "output_padding": [1, 1]}),
    "output shape": ([1, 1, 3, 3], [1, 2, 3, 3], {"strides": [3, 2], "output_shape": [10, 8]}),
    "same upper": ([1, 2, 3, 5], [2, 2, 3, 3], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "same lower": ([1, 2, 3, 5], [2, 2, 4, 3], {"strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    "valid": ([1, 2, 3, 3], [2, 2, 2, 2], {"strides": [2, 2], "auto_pad": "VALID"}),
    "dilated": ([1, 2, 4, 3], [2, 2, 3, 2], {"dilations": [2, 3], "pads": [1, 1, 2, 0]}),
    "grouped": ([2, 4, 3, 3], [4, 3, 2, 2], {"group": 2, "strides": [2, 1]}),
    "depthwise": (
        [1, 3, 4, 4],
        [3, 1, 3, 3],
        {"group": 3, "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    "1-D": ([2, 2, 7], [2, 3, 4], {"strides": [3], "pads": [1, 2], "output_padding": [1]}),
    "3-D": ([1, 2, 3, 4, 4], [2, 3, 2, 3, 3], {}),
    "3-D strided with pads": (
        [2, 3, 3, 4, 3],
        [3, 2, 3, 2, 3],
        {"strides": [2, 2, 1], "pads": [1, 0, 1, 1, 0, 2]},
    ),
    "3-D dilated": (
        [1, 2, 3, 3, 4],
        [2, 2, 2, 2, 3],
        {"dilations": [2, 1, 2], "strides": [1, 2, 1]},
    ),
    "3-D grouped": ([1, 4, 2, 3, 3], [4, 3, 2, 2, 2], {"group": 2, "strides": [2, 1, 2]}),
    "3-D output padding": (
        [1, 2, 3, 3, 3],
        [2, 2, 3, 3, 3],
        {"strides": [3, 2, 2], "output_padding": [2, 1, 0]},
    ),
    "3-D output shape": (
        [1, 1, 2, 3, 3],
        [1, 2, 2, 3, 3],
        {"strides": [3, 2, 2], "output_shape": [6, 8, 8]},
    ),
    "3-D same lower": (
        [1, 2, 3, 3, 2],
        [2, 2, 3, 2, 3],
        {"strides": [2, 2, 2], "auto_pad": "SAME_LOWER"},
    ),
}


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("case", list(CASES))
def test_conv_transpose_matches_onnxruntime(case: str, bias: bool) -> None:
    x_shape, w_shape, attrs = CASES[case]
    w = RNG.standard_normal(w_shape).astype(np.float32)
    b = RNG.standard_normal(w_shape[1] * attrs.get("group", 1)).astype(np.float32)
    model = _model(x_shape, w, b if bias else None, **attrs)
    x = RNG.standard_normal(x_shape).astype(np.float32)
    ref = reference(model, x)
    got = ours(model, x)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


W = np.ones((2, 3, 3, 3), np.float32)
W3 = np.ones((2, 1, 2, 2, 2), np.float32)
BAD: dict[str, tuple[Any, type[Exception]]] = {
    "W of another rank": (_model([1, 2, 4, 4], np.ones((2, 3, 3), np.float32)), ModelFormatError),
    "channels mismatch": (_model([1, 4, 4, 4], W), ShapeInferenceError),
    "groups do not divide": (_model([1, 2, 4, 4], W, group=3), ShapeInferenceError),
    "dtypes differ": (_model([1, 2, 4, 4], W.astype(np.float64)), ShapeInferenceError),
    "bias of the wrong size": (
        _model([1, 2, 4, 4], W, np.ones(4, np.float32)),
        ShapeInferenceError,
    ),
    "strides of the wrong length": (_model([1, 2, 4, 4], W, strides=[2]), ModelFormatError),
    "zero stride": (_model([1, 2, 4, 4], W, strides=[0, 1]), ModelFormatError),
    "negative pads": (_model([1, 2, 4, 4], W, pads=[-1, 0, 0, 0]), ModelFormatError),
    "kernel_shape disagrees": (_model([1, 2, 4, 4], W, kernel_shape=[2, 2]), ModelFormatError),
    "pads leave nothing": (_model([1, 2, 1, 1], W, pads=[2, 0, 2, 0]), ShapeInferenceError),
    "4-D input": (
        _model([1, 2, 2, 2, 2, 2], np.ones((2, 1, 2, 2, 2, 2), np.float32)),
        UnsupportedOpError,
    ),
    "3-D channels mismatch": (_model([1, 3, 2, 2, 2], W3), ShapeInferenceError),
    "3-D groups do not divide": (_model([1, 2, 2, 2, 2], W3, group=3), ShapeInferenceError),
    "3-D dtypes differ": (_model([1, 2, 2, 2, 2], W3.astype(np.float64)), ShapeInferenceError),
    "3-D bias of the wrong size": (
        _model([1, 2, 2, 2, 2], W3, np.ones(3, np.float32)),
        ShapeInferenceError,
    ),
    "3-D pads leave nothing": (
        _model([1, 2, 1, 1, 1], W3, pads=[2, 0, 0, 1, 0, 0]),
        ShapeInferenceError,
    ),
    "3-D strides of the wrong length": (
        _model([1, 2, 2, 2, 2], W3, strides=[1, 1]),
        ModelFormatError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_conv_transpose_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value
    assert err.value.op == "ConvTranspose", err.value


def test_an_encoder_decoder_with_a_skip_matches_onnxruntime() -> None:
    """Conv (stride 2) → Relu → ConvTranspose (stride 2) + the input: the transposed
    convolution between the layouts the compiler picks for its neighbours."""
    rng = np.random.default_rng(9)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((8, 3, 4, 4)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["h"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node(
            "ConvTranspose", ["r", "w2", "b2"], ["u"], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
        helper.make_node("Add", ["u", "x"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("y", F, [2, 3, 16, 16])],
        [numpy_helper.from_array(a, n) for n, a in (("w1", w1), ("w2", w2), ("b2", b2))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    ref = reference(model, x)
    got = ours(model, x)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
