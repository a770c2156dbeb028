"""MaxRoiPool through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

Batch and channels > 1, rois inside X, reaching outside it and inverted, pooled shapes 1x1 to
3x4, spatial scales 1 and 0.5, float32 (onnxruntime has MaxRoiPool for float32 only: float16
and float64 are compared with the float32 result on the same values); models of opsets 7 (the
oldest the adapter reads), 11, 21 and 22 import."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import CompiledModel, ShapeInferenceError
from stack.compiler.jit import shared_runtime

ELEM = {np.dtype(t): e for t, e in ((np.float32, TensorProto.FLOAT),
        (np.float16, TensorProto.FLOAT16), (np.float64, TensorProto.DOUBLE),
        (np.int32, TensorProto.INT32))}  # fmt: skip
RNG = np.random.default_rng(41)
ROIS = np.array(
    [[0, 0, 0, 7, 5], [1, 2, 1, 5, 6], [0, 3, 3, 3, 3], [1, -2, -1, 9, 12], [0, 6, 4, 2, 1]],
    np.float32,
)


def roi_model(x: np.ndarray, rois: np.ndarray, opset: int = 21, **attrs: Any):  # type: ignore[no-untyped-def]
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", ELEM[x.dtype], x.shape),
            helper.make_tensor_value_info("rois", ELEM[rois.dtype], rois.shape),
        ],
        [helper.make_empty_tensor_value_info("y")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_ort(model, x: np.ndarray, rois: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x, "rois": rois})
    return y


def run_stack(model, x: np.ndarray, rois: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run({"x": x, "rois": rois})["y"]
    finally:
        compiled.close()


@pytest.mark.parametrize("pooled", [(1, 1), (2, 2), (3, 4)], ids=lambda s: f"pooled{s}")
@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_max_roi_pool_matches_onnxruntime(
    pooled: tuple[int, int], scale: float, dtype: type
) -> None:
    data = RNG.standard_normal((2, 3, 6, 8)).astype(np.float32).astype(dtype).astype(np.float32)
    attrs = {"pooled_shape": list(pooled), "spatial_scale": scale}
    ref = run_ort(roi_model(data, ROIS, **attrs), data, ROIS)
    x, rois = data.astype(dtype), ROIS.astype(dtype)
    got = run_stack(roi_model(x, rois, **attrs), x, rois)
    assert got.dtype == dtype and got.shape == (len(ROIS), 3, *pooled) == ref.shape
    np.testing.assert_array_equal(got, ref.astype(dtype))


@pytest.mark.parametrize("opset", [7, 11, 21, 22])
def test_every_opset_of_max_roi_pool_imports(opset: int) -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    rois = np.array([[0, 0, 0, 3, 3]], np.float32)
    got = run_stack(roi_model(x, rois, opset, pooled_shape=[2, 2]), x, rois)
    np.testing.assert_array_equal(got, [[[[5.0, 7.0], [13.0, 15.0]]]])


_X, _R = np.ones((1, 2, 4, 4), np.float32), np.zeros((2, 5), np.float32)
BAD: dict[str, tuple[Any, type]] = {
    "no pooled_shape": (roi_model(_X, _R), ModelFormatError),
    "pooled zero": (roi_model(_X, _R, pooled_shape=[0, 2]), ModelFormatError),
    "one pooled size": (roi_model(_X, _R, pooled_shape=[2]), ModelFormatError),
    "rois of four": (
        roi_model(_X, np.zeros((2, 4), np.float32), pooled_shape=[1, 1]),
        ModelFormatError,
    ),
    "3-D X": (roi_model(np.ones((1, 2, 4), np.float32), _R, pooled_shape=[1, 1]), ModelFormatError),
    "integer X": (roi_model(_X.astype(np.int32), _R, pooled_shape=[1, 1]), ShapeInferenceError),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_max_roi_pool_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "MaxRoiPool", err.value
