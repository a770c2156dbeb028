# ruff: noqa: E501 - the case tables read best one case per line
"""The IR SwiGLU below the importer: its shape and dtype rule (Y of A's type; a non-float A or a
B of another type or shape a typed error naming the node), its constant-folding evaluator (A *
sigmoid(alpha * A) * B in float64, rounded once to A's dtype), its lowering onto Executable op
61 with alpha, its arity, and the op it compiles to."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import (
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    VerifyError,
    compile_graph,
    evaluate,
    rule_for,
    verify,
)
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

F32, F16, F64, I32 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32


def node(alpha: float = 1.0, inputs: tuple[str, ...] = ("a", "b")) -> Node:
    return Node.make("sw", OpType.SWIGLU, list(inputs), ["y"], alpha=alpha)


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 8), (2, 3, 4, 5), (0, 3)], ids=str)
def test_the_rule_gives_a_type(dtype: ElemType, shape: tuple[int, ...]) -> None:
    (y,) = rule_for(OpType.SWIGLU)(node(), [tt(dtype, *shape), tt(dtype, *shape)], {})
    assert y == tt(dtype, *shape)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (tt(I32, 2, 3), tt(I32, 2, 3), r"SwiGLU takes a float16, float32 or float64 A, got int32\[2, 3\]"),
        (tt(F32, 2, 3), tt(F16, 2, 3), r"takes B of A's type float32\[2, 3\] \(no broadcasting\), got float16\[2, 3\]"),
        (tt(F32, 2, 3), tt(F32, 3), r"got float32\[3\]"),
        (tt(F32, 2, 3), tt(F32, 1, 3), r"got float32\[1, 3\]"),
    ],
    ids=["int A", "B dtype", "B broadcast rank", "B broadcast size"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(
    a: TensorType, b: TensorType, message: str
) -> None:
    with pytest.raises(ShapeInferenceError, match=message) as err:
        rule_for(OpType.SWIGLU)(node(), [a, b], {})
    assert err.value.node == "sw" and err.value.op == "SwiGLU"


def test_a_missing_value_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 1 is required"):
        rule_for(OpType.SWIGLU)(node(), [tt(F32, 2), None], {})


def _fold(n: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    fn = evaluate.evaluator_for(OpType.SWIGLU)
    assert fn is not None
    result = fn(n, [a, b])
    assert result is not None
    return result[0]


def test_folding_gates_the_value_by_the_swish_of_a() -> None:
    a = np.array([0.0, 1.0, -2.0, 3.0, 40.0, -40.0], np.float64)
    b = np.array([5.0, 2.0, 1.0, -1.0, 0.5, 7.0], np.float64)
    got = _fold(node(), a, b)
    np.testing.assert_allclose(got, a / (1 + np.exp(-a)) * b, rtol=1e-15, atol=1e-300)
    assert got[0] == 0 and got[4] == 20.0
    half = _fold(node(alpha=0.0), a, b)  # sigmoid(0) = 1/2
    np.testing.assert_array_equal(half, a * 0.5 * b)


def test_folding_float16_computes_wide_and_rounds_once() -> None:
    rng = np.random.default_rng(61)
    a, b = (
        rng.standard_normal((4, 8)).astype(np.float16),
        rng.standard_normal((4, 8)).astype(np.float16),
    )
    got = _fold(node(alpha=1.702), a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64 / (1 + np.exp(-1.702 * a64)) * b64).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_folding_keeps_ieee_nan_and_infinity() -> None:
    a = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    b = np.array([1.0, 2.0, 1.0, np.inf], np.float32)
    got = _fold(node(), a, b)
    assert np.isnan(got[0]) and got[1] == np.inf and np.isnan(got[2]) and got[3] == np.inf


def test_swiglu_lowers_to_op_61_with_alpha() -> None:
    op, attrs = lower_node(node(alpha=1.702))
    assert op is ExecOp.SWIGLU == 61
    assert dict(attrs) == {"alpha": 1.702}
    arity = ARITY[OpType.SWIGLU]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (2, 2, 1, 1)


def _graph(n: Node) -> Graph:
    types = {"a": tt(F32, 2, 3), "b": tt(F32, 2, 3), "y": tt(F32, 2, 3)}
    return Graph("g", (n,), tuple(n.inputs), ("y",), types, {})


def test_one_input_breaks_the_arity() -> None:
    with pytest.raises(VerifyError, match=r"1 inputs, expected 2") as err:
        verify(_graph(node(inputs=("a",))))
    assert err.value.details["check"] == "arity" and err.value.node == "sw"


def test_the_graph_compiles_to_one_swiglu_op() -> None:
    exe = compile_graph(_graph(node(alpha=0.5))).executable
    assert [op.op for op in exe.ops] == [ExecOp.SWIGLU]
    assert dict(exe.ops[0].attrs) == {"alpha": 0.5}
    for name in ("a", "b", "y"):
        assert exe.tensor(name).dtype is ExecDType.F32 and exe.tensor(name).shape == (2, 3)
