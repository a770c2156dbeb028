"""ONNX semantics the folder and the device must both honour, through the real adapter.

Each case runs twice: with the inputs as initializers (the compiler folds the node) and as
run-time inputs (the KMD's kernel computes it). Both must give ONNX's answer.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.onnx_backend import StackBackend
from stack.compiler import CompiledModel, ShapeInferenceError
from stack.compiler.jit import shared_runtime


def _binary_model(op: str, a: np.ndarray, b: np.ndarray, folded: bool, **attrs: object):  # type: ignore[no-untyped-def]
    dtype = helper.np_dtype_to_tensor_dtype(a.dtype)
    node = helper.make_node(op, ["a", "b"], ["y"], name="n0", **attrs)
    ins = (
        []
        if folded
        else [
            helper.make_tensor_value_info(n, dtype, list(v.shape)) for n, v in (("a", a), ("b", b))
        ]
    )
    inits = [numpy_helper.from_array(a, "a"), numpy_helper.from_array(b, "b")] if folded else []
    out = helper.make_tensor_value_info("y", dtype, None)
    graph = helper.make_graph([node], "g", ins, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(op: str, a: np.ndarray, b: np.ndarray, folded: bool, **attrs: object) -> np.ndarray:
    graph = import_model(_binary_model(op, a, b, folded, **attrs))
    model = CompiledModel(graph, runtime=shared_runtime())
    try:
        return model.run({} if folded else {"a": a, "b": b})["y"]
    finally:
        model.close()


@pytest.mark.parametrize("folded", [True, False], ids=["folder", "device"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_div_truncates_toward_zero(folded: bool, dtype: type) -> None:
    a = np.array([-7, 7, -7, 7, -1, 0], dtype)
    b = np.array([2, 2, -2, -2, 3, -5], dtype)
    np.testing.assert_array_equal(_run("Div", a, b, folded), np.array([-3, 3, 3, -3, 0, 0], dtype))


@pytest.mark.parametrize("folded", [True, False], ids=["folder", "device"])
def test_int64_div_is_exact_above_2_to_the_53(folded: bool) -> None:
    a = np.array([2**62 + 1, -(2**62) - 3, 2**63 - 1], np.int64)
    b = np.array([1, 2, 3], np.int64)
    expected = np.array([2**62 + 1, -(2**61) - 1, (2**63 - 1) // 3], np.int64)
    np.testing.assert_array_equal(_run("Div", a, b, folded), expected)


def _zero_d_model(op: str, **attrs: object):  # type: ignore[no-untyped-def]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node(op, ["x"] * (2 if op == "Concat" else 1), ["y"], name="n0", **attrs)
    graph = helper.make_graph([node], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("op", "attrs"), [("Concat", {"axis": 0}), ("LayerNormalization", {}), ("Flatten", {})]
)
def test_a_0d_input_gets_a_typed_error_naming_the_node(op: str, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        import_model(_zero_d_model(op, **attrs))
    assert err.value.node == "n0"


@pytest.mark.parametrize("op", ["Relu", "Softmax", "Identity"])
def test_a_0d_input_runs(op: str) -> None:
    (y,) = StackBackend.run_model(_zero_d_model(op), {"x": np.array(-2.5, np.float32)})
    ref = {"Relu": 0.0, "Softmax": 1.0, "Identity": -2.5}[op]
    assert y.shape == () and float(y) == ref


@pytest.mark.parametrize("folded", [True, False], ids=["folder", "device"])
@pytest.mark.parametrize(("fmod", "expected"), [(0, [1, 1, -1, -1]), (1, [-1, 1, -1, 1])])
def test_integer_mod_follows_onnx(folded: bool, fmod: int, expected: list[int]) -> None:
    """fmod = 0: the remainder takes the divisor's sign; fmod = 1: the dividend's (C fmod)."""
    a = np.array([-7, 7, -7, 7], np.int64)
    b = np.array([2, 2, -2, -2], np.int64)
    np.testing.assert_array_equal(_run("Mod", a, b, folded, fmod=fmod), expected)


@pytest.mark.parametrize("folded", [True, False], ids=["folder", "device"])
def test_float_fmod_keeps_the_dividend_sign(folded: bool) -> None:
    a = np.array([-7.5, 7.5, -0.5], np.float32)
    b = np.array([2.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(_run("Mod", a, b, folded, fmod=1), np.fmod(a, b))
