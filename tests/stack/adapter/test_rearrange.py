"""SpaceToDepth, DepthToSpace, Hardmax and EyeLike through the whole stack against onnxruntime
(SpaceToDepth's opset-28 CRD mode against a NumPy reference), and their bad input as typed
errors naming the node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import ShapeInferenceError
from tests.stack.adapter.both import ours, reference

RNG = np.random.default_rng(13)


def _model(op: str, shape: list[int], opset: int = 13, **attrs: Any) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name="n0", **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_empty_tensor_value_info("y")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(op: str, shape: list[int], opset: int = 13, **attrs: Any) -> None:
    model = _model(op, shape, opset, **attrs)
    x = RNG.standard_normal(shape).astype(np.float32)
    if op == "Hardmax":  # ties: the first maximum wins
        x[..., 0] = x[..., 1]
    ref = reference(model, x)
    got = ours(model, x)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


CASES: dict[str, tuple[str, list[int], int, dict[str, Any]]] = {
    "space to depth": ("SpaceToDepth", [2, 3, 4, 6], 13, {"blocksize": 2}),
    "space to depth by 3": ("SpaceToDepth", [1, 2, 6, 3], 13, {"blocksize": 3}),
    "depth to space DCR": ("DepthToSpace", [2, 8, 3, 2], 13, {"blocksize": 2}),
    "depth to space CRD": ("DepthToSpace", [1, 18, 2, 3], 13, {"blocksize": 3, "mode": "CRD"}),
    "hardmax last axis": ("Hardmax", [3, 4, 5], 13, {}),
    "hardmax axis 0": ("Hardmax", [4, 3, 2], 13, {"axis": 0}),
    "hardmax axis -2": ("Hardmax", [2, 5, 3], 13, {"axis": -2}),
    "hardmax opset 11 (2-D view)": ("Hardmax", [2, 3, 4], 11, {"axis": 1}),
    "eye": ("EyeLike", [4, 5], 13, {}),
    "eye above the diagonal, int32": ("EyeLike", [3, 5], 13, {"k": 2, "dtype": TensorProto.INT32}),
    "eye below the diagonal": ("EyeLike", [5, 3], 13, {"k": -1}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_onnxruntime(case: str) -> None:
    op, shape, opset, attrs = CASES[case]
    _check(op, shape, opset, **attrs)


def test_space_to_depth_crd_puts_each_channel_s_block_together() -> None:
    x = RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)
    got = ours(_model("SpaceToDepth", [1, 2, 4, 6], 28, blocksize=2, mode="CRD"), x)
    assert got.shape == (1, 8, 2, 3)
    for c in range(2):
        for bh in range(2):
            for bw in range(2):
                np.testing.assert_array_equal(got[0, c * 4 + bh * 2 + bw], x[0, c, bh::2, bw::2])


BAD: dict[str, tuple[onnx.ModelProto, type[Exception]]] = {
    "block does not divide": (_model("SpaceToDepth", [1, 2, 5, 4], blocksize=2), ModelFormatError),
    "channels not divisible": (_model("DepthToSpace", [1, 6, 2, 2], blocksize=2), ModelFormatError),
    "3-D input": (_model("DepthToSpace", [4, 2, 2], blocksize=2), ModelFormatError),
    "bad mode": (_model("DepthToSpace", [1, 4, 2, 2], blocksize=2, mode="XYZ"), ModelFormatError),
    "axis out of range": (_model("Hardmax", [2, 3], axis=2), ShapeInferenceError),
    "3-D EyeLike": (_model("EyeLike", [2, 2, 2]), ModelFormatError),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value  # type: ignore[attr-defined]
