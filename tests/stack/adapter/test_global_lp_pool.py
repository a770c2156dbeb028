"""GlobalLpPool through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

1-D and 2-D spatial inputs (1-D promoted to 2-D with a unit height), batch and channels > 1,
p = 1, 2, 3 and the default, float32 and float16 at opset 21 (onnxruntime has no GlobalLpPool
kernel for opset 22, nor a float64 one: float64 is compared with the float32 result on the same
values); models of opsets 7 (the oldest the adapter reads), 11, 21 and 22 import."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from stack.compiler import CompiledModel, ShapeInferenceError
from stack.compiler.jit import shared_runtime

ELEM = {np.dtype(t): e for t, e in ((np.float32, TensorProto.FLOAT),
        (np.float16, TensorProto.FLOAT16), (np.float64, TensorProto.DOUBLE),
        (np.int32, TensorProto.INT32))}  # fmt: skip
RNG = np.random.default_rng(37)


def lp_model(x: np.ndarray, opset: int = 21, **attrs: Any):  # type: ignore[no-untyped-def]
    node = helper.make_node("GlobalLpPool", ["x"], ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", ELEM[x.dtype], x.shape)],
        [helper.make_empty_tensor_value_info("y")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_ort(model, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x})
    return y


def run_stack(model, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run({"x": x})["y"]
    finally:
        compiled.close()


SHAPES = {"1-D": (2, 3, 9), "2-D": (2, 4, 5, 6), "2-D one pixel": (3, 2, 1, 1)}
TOLERANCE = {np.float32: 1e-5, np.float16: 2e-3, np.float64: 1e-5}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("p", [1, 2, 3, None])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_global_lp_pool_matches_onnxruntime(shape: str, p: int | None, dtype: type) -> None:
    data = (RNG.standard_normal(SHAPES[shape]) * 2).astype(np.float32)
    attrs = {} if p is None else {"p": p}
    ref_x = data.astype(np.float16) if dtype is np.float16 else data
    ref = run_ort(lp_model(ref_x, **attrs), ref_x)
    x = data.astype(dtype)
    got = run_stack(lp_model(x, **attrs), x)
    want = (*SHAPES[shape][:2], *(1 for _ in SHAPES[shape][2:]))
    assert got.dtype == dtype and got.shape == want == ref.shape
    np.testing.assert_allclose(got, ref.astype(dtype), rtol=TOLERANCE[dtype], atol=0)


@pytest.mark.parametrize("opset", [7, 11, 21, 22])
def test_every_opset_of_global_lp_pool_imports(opset: int) -> None:
    x = np.array([[[[3.0, -4.0], [0.0, 0.0]]], [[[1.0, 2.0], [2.0, -4.0]]]], np.float32)
    got = run_stack(lp_model(x, opset, p=2), x)
    np.testing.assert_array_equal(got, [[[[5.0]]], [[[5.0]]]])


BAD: dict[str, tuple[Any, type]] = {
    "p zero": (lp_model(np.ones((1, 2, 3, 3), np.float32), p=0), ModelFormatError),
    "p negative": (lp_model(np.ones((1, 2, 3, 3), np.float32), p=-1), ModelFormatError),
    "3-D": (lp_model(np.ones((1, 2, 3, 3, 3), np.float32)), UnsupportedOpError),
    "integer X": (lp_model(np.ones((1, 2, 3, 3), np.int32)), ShapeInferenceError),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_global_lp_pool_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "GlobalLpPool", err.value
