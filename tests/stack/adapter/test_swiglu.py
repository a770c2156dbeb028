# ruff: noqa: E501 - the error table reads best one case per line
"""SwiGLU through the whole stack against ONNX's reference, and its bad input as typed errors
naming the node.

onnxruntime (1.32) has no kernel for SwiGLU's function body (it stops at Swish, opset 24), so
the reference is ONNX's own (``onnx.reference.ReferenceEvaluator``) and the operator's formula
in NumPy: 1-D to 4-D, float32, float16 and float64, alpha 1 (its default), fractional, zero and
negative; a SwiGLU feed-forward block (the gate and the value two MatMuls of one input, the
gated result a third MatMul's input, as Llama's MLP); a gate computed by a Mul; a constant
SwiGLU folded at import; the IR node's alpha; and the bad input as ModelFormatErrors naming the
node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import reference_outputs, stack_outputs

OP = "SwiGLU"
RNG = np.random.default_rng(61)
#: Tolerance per dtype: float32's and float64's few roundings, float16's one of the reference's.
TOL = {np.float32: 1e-6, np.float16: 1e-3, np.float64: 1e-14}
OPSET = [helper.make_opsetid("", 28)]


def swiglu_model(
    arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (), **attrs: Any
) -> onnx.ModelProto:
    node = helper.make_node(OP, list(arrays), ["Y"], name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("Y")],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=OPSET)


def formula(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The operator's definition, in float64, rounded to A's dtype; alpha as the model holds
    it, a float32 (ONNX's float attributes are)."""
    a64, b64, alpha = a.astype(np.float64), b.astype(np.float64), float(np.float32(alpha))
    return (a64 / (1 + np.exp(-alpha * a64)) * b64).astype(a.dtype)


def operands(shape: tuple[int, ...], dtype: Any) -> dict[str, np.ndarray]:
    return {"A": (RNG.standard_normal(shape) * 3).astype(dtype),
            "B": RNG.standard_normal(shape).astype(dtype)}  # fmt: skip


def assert_close(got: np.ndarray, want: np.ndarray, dtype: Any) -> None:
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


DTYPES = [np.float32, np.float16, np.float64]
SHAPES = [(7,), (4, 6), (2, 3, 8), (2, 3, 4, 5)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("alpha", [None, 1.702, 0.5, 0.0, -1.0], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_the_onnx_reference(
    shape: tuple[int, ...], alpha: float | None, dtype: Any
) -> None:
    arrays = operands(shape, dtype)
    model = swiglu_model(arrays, **({} if alpha is None else {"alpha": alpha}))
    (got,) = stack_outputs(model, arrays)
    (want,) = reference_outputs(model, arrays)
    assert_close(got, want, dtype)
    assert_close(got, formula(arrays["A"], arrays["B"], 1.0 if alpha is None else alpha), dtype)


def test_a_swiglu_feed_forward_block_matches_the_reference() -> None:
    """down(SwiGLU(x W_gate, x W_up)): the gate produced by a MatMul, the result read by one."""
    x = RNG.standard_normal((2, 5, 16)).astype(np.float32)
    w_gate, w_up = (RNG.standard_normal((16, 24)).astype(np.float32) / 4 for _ in range(2))
    w_down = RNG.standard_normal((24, 16)).astype(np.float32) / 4
    nodes = [
        helper.make_node("MatMul", ["x", "w_gate"], ["gate"]),
        helper.make_node("MatMul", ["x", "w_up"], ["up"]),
        helper.make_node(OP, ["gate", "up"], ["h"], name="mlp"),
        helper.make_node("MatMul", ["h", "w_down"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(a, n)
        for n, a in (("w_gate", w_gate), ("w_up", w_up), ("w_down", w_down))
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])],
        [helper.make_empty_tensor_value_info("y")], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=OPSET)
    (got,) = stack_outputs(model, {"x": x})
    (want,) = reference_outputs(model, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_gate_computed_by_another_op_feeds_swiglu() -> None:
    a, b = operands((3, 8), np.float32).values()
    scale = np.full((8,), 0.5, np.float32)
    nodes = [
        helper.make_node("Mul", ["a", "scale"], ["gate"]),
        helper.make_node(OP, ["gate", "b"], ["y"], alpha=2.0),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 8]) for n in ("a", "b")],
        [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(scale, "scale")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=OPSET)
    (got,) = stack_outputs(model, {"a": a, "b": b})
    assert_close(got, reference_outputs(model, {"a": a, "b": b})[0], np.float32)
    assert_close(got, formula(a * scale, b, 2.0), np.float32)


def test_a_constant_swiglu_folds_at_import() -> None:
    arrays = operands((4, 6), np.float32)
    model = swiglu_model(arrays, consts=("A", "B"), alpha=1.5)
    assert import_model(model).nodes == ()
    (got,) = stack_outputs(model, {})
    assert_close(got, reference_outputs(model, {})[0], np.float32)


def test_the_ir_node_carries_alpha() -> None:
    arrays = operands((2, 3), np.float32)
    (plain,) = import_model(swiglu_model(arrays)).nodes
    assert plain.op is OpType.SWIGLU and plain.inputs == ("A", "B") and plain.attr("alpha") == 1.0
    (scaled,) = import_model(swiglu_model(arrays, alpha=0.25)).nodes
    assert scaled.attr("alpha") == 0.25


def _raw(
    a: tuple[int, list[int]] = (TensorProto.FLOAT, [2, 3]),
    b: tuple[int, list[int]] | None = None,
    opset: int = 28,
    inputs: tuple[str, ...] = ("a", "b"),
    outputs: tuple[str, ...] = ("y",),
) -> onnx.ModelProto:
    node = helper.make_node(OP, list(inputs), list(outputs), name="n0")
    vis = [helper.make_tensor_value_info("a", *a), helper.make_tensor_value_info("b", *(b or a)),
           helper.make_tensor_value_info("c", *a)]  # fmt: skip
    outs = [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    graph = helper.make_graph([node], "g", vis, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


F, H, D, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 27": (_raw(opset=27), r"\(opset 28\+, model opset 27\) takes A and B, and one output Y"),
    "one input": (_raw(inputs=("a",)), r"takes A and B, and one output Y, got \['a'\] -> \['y'\]"),
    "three inputs": (_raw(inputs=("a", "b", "c")), r"got \['a', 'b', 'c'\]"),
    "empty B": (_raw(inputs=("a", "")), r"got \['a', ''\]"),
    "two outputs": (_raw(outputs=("y", "z")), r"-> \['y', 'z'\]"),
    "int A": (_raw(a=(I32, [2, 3])), r"takes a float16, float32 or float64 A, got int32\[2, 3\]"),
    "B dtype": (_raw(b=(H, [2, 3])), r"takes B of A's type float32\[2, 3\] \(no broadcasting\), got float16\[2, 3\]"),
    "B broadcast": (_raw(b=(F, [3])), r"got float32\[3\]"),
    "B shape": (_raw(a=(D, [2, 3]), b=(D, [3, 2])), r"float64\[2, 3\] \(no broadcasting\), got float64\[3, 2\]"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value
