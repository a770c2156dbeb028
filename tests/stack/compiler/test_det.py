"""The IR Det below the importer: its shape and dtype rule (a non-float X, a rank below 2 or
trailing axes that differ a typed error naming the node), its constant-folding evaluator (float64
arithmetic rounded once to X's dtype, 1 for an empty matrix, NaN for a matrix holding one), its
lowering onto Executable op 56 without attributes, its arity, and the op it compiles to."""

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

NODE = Node.make("d", OpType.DET, ["x"], ["y"])
FLOATS = (ElemType.F32, ElemType.F16, ElemType.F64)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("shape", "out"),
    [((3, 3), ()), ((5, 2, 2), (5,)), ((2, 3, 4, 4), (2, 3)), ((1, 1), ()), ((4, 0, 0), (4,)),
     ((0, 3, 3), (0,))],
    ids=str,
)  # fmt: skip
def test_the_rule_gives_the_batch_shape_in_x_dtype(
    dtype: ElemType, shape: tuple[int, ...], out: tuple[int, ...]
) -> None:
    (y,) = rule_for(OpType.DET)(NODE, [TensorType(dtype, shape)], {})
    assert y == TensorType(dtype, out)


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (TensorType(ElemType.F32, (4,)), "Det takes X of shape [*, M, M], got float32[4]"),
        (TensorType(ElemType.F32, ()), "got float32[]"),
        (TensorType(ElemType.F32, (2, 3, 4)), "got float32[2, 3, 4]"),
        (TensorType(ElemType.I32, (3, 3)), "Det takes a float X, got int32[3, 3]"),
        (TensorType(ElemType.BOOL, (2, 2)), "Det takes a float X, got bool[2, 2]"),
    ],
    ids=["rank 1", "rank 0", "not square", "int32", "bool"],
)
def test_a_bad_x_is_a_typed_error_naming_the_node(x: TensorType, message: str) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.DET)(NODE, [x], {})
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "d" and err.value.op == "Det"
    assert message in str(err.value)


def _fold(x: np.ndarray) -> np.ndarray:
    fold = evaluate.evaluator_for(OpType.DET)
    assert fold is not None
    out = fold(NODE, [x])
    assert out is not None
    (y,) = out
    return y


def test_folding_gives_the_known_determinants() -> None:
    x = np.array([
        [[2, 5, 7], [0, 3, -1], [0, 0, 4]],
        [[0, 1, 0], [1, 0, 0], [0, 0, 1]],
        [[1, 2, 3], [4, 5, 6], [1, 2, 3]],
    ], np.float32)  # fmt: skip
    y = _fold(x)
    assert y.dtype == np.float32 and y.shape == (3,)
    np.testing.assert_allclose(y, [24, -1, 0], rtol=1e-6, atol=1e-6)
    scalar = _fold(np.array([[3.0, 1.0], [2.0, 4.0]]))
    assert scalar.shape == () and scalar.dtype == np.float64
    np.testing.assert_allclose(scalar, 10.0, rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_folding_computes_in_float64_and_rounds_once(dtype: type) -> None:
    x = np.random.default_rng(56).standard_normal((4, 3, 3)).astype(dtype)
    y = _fold(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.linalg.det(x.astype(np.float64)).astype(dtype))


def test_folding_an_empty_matrix_is_one_and_an_empty_batch_is_empty() -> None:
    np.testing.assert_array_equal(_fold(np.zeros((3, 0, 0), np.float16)), np.ones(3, np.float16))
    assert _fold(np.zeros((0, 0))).shape == () and _fold(np.zeros((0, 0))) == 1
    assert _fold(np.zeros((2, 0, 3, 3), np.float32)).shape == (2, 0)


def test_folding_a_matrix_holding_nan_gives_nan() -> None:
    """LAPACK's own answer for [[nan, 1], [1, 1]] is 0: the folder says NaN, as the kernel."""
    x = np.array([[[np.nan, 1], [1, 1]], [[1, 2], [3, 4]]], np.float32)
    y = _fold(x)
    assert np.isnan(y[0])
    np.testing.assert_allclose(y[1], -2, rtol=1e-6)


def test_det_lowers_to_op_56_without_attributes() -> None:
    op, attrs = lower_node(NODE)
    assert op is ExecOp.DET == 56
    assert dict(attrs) == {}
    assert (ARITY[OpType.DET].min_in, ARITY[OpType.DET].max_in) == (1, 1)
    assert (ARITY[OpType.DET].min_out, ARITY[OpType.DET].max_out) == (1, 1)


def _graph(node: Node) -> Graph:
    x, y = TensorType(ElemType.F32, (2, 3, 3)), TensorType(ElemType.F32, (2,))
    return Graph("g", (node,), ("x",), ("y",), {"x": x, "y": y}, {})


def test_a_second_input_breaks_the_arity() -> None:
    node = Node.make("d", OpType.DET, ["x", "x"], ["y"])
    with pytest.raises(VerifyError, match=r"2 inputs, expected 1\.\.1") as err:
        verify(_graph(node))
    assert err.value.details["check"] == "arity" and err.value.node == "d"


def test_the_graph_compiles_to_one_det_op() -> None:
    exe = compile_graph(_graph(NODE)).executable
    assert [op.op for op in exe.ops] == [ExecOp.DET]
    assert dict(exe.ops[0].attrs) == {}
    assert exe.tensor("x").dtype is ExecDType.F32 and exe.tensor("x").shape == (2, 3, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2,)
