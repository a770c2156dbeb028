# ruff: noqa: E501 - the case table reads best one case per line
"""The IR NegativeLogLikelihoodLoss below the importer: its shape and dtype rule (an input,
target or weight that does not fit, or an unknown reduction, a typed error naming the node), its
constant-folding evaluator (float64 arithmetic rounded once; ignored places lose 0 and weigh 0;
a target out of range declined), its lowering onto Executable op 57 with reduction and
ignore_index, its arity, and the op it compiles to."""

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

OP = OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS
F32, F16, F64, I32, I64 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32, ElemType.I64


def node(n_in: int = 2, **attrs: object) -> Node:
    return Node.make("l", OP, ["x", "t", "w"][:n_in], ["y"], **attrs)  # type: ignore[arg-type]


def rule(n: Node, *types: TensorType | None) -> TensorType:
    (y,) = rule_for(OP)(n, list(types), {})
    return y


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("tdtype", [I32, I64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("x", "t"), [((3, 5), (3,)), ((3, 5, 2), (3, 2)), ((2, 4, 3, 3, 2), (2, 3, 3, 2)),
                 ((0, 4, 2), (0, 2))], ids=str,
)  # fmt: skip
def test_the_rule_gives_target_shape_for_none_and_a_scalar_otherwise(
    dtype: ElemType, tdtype: ElemType, x: tuple[int, ...], t: tuple[int, ...]
) -> None:
    xt, tt, wt = TensorType(dtype, x), TensorType(tdtype, t), TensorType(dtype, x[1:2])
    assert rule(node(3, reduction="none"), xt, tt, wt) == TensorType(dtype, t)
    assert rule(node(2, reduction="sum", ignore_index=-1), xt, tt) == TensorType(dtype, ())
    assert rule(node(2), xt, tt) == TensorType(dtype, ())  # mean, the default


X, T = TensorType(F32, (3, 5, 2)), TensorType(I64, (3, 2))
BAD = {
    "int input": ((TensorType(I32, (3, 5)), TensorType(I64, (3,))), {}, "float input [N, C, d1..dk], got int32[3, 5]"),
    "rank 1": ((TensorType(F32, (5,)), TensorType(I64, ())), {}, "got float32[5]"),
    "float target": ((X, TensorType(F32, (3, 2))), {}, "int32 or int64 target [3, 2] for input float32[3, 5, 2], got float32[3, 2]"),
    "target shape": ((X, TensorType(I64, (3, 5))), {}, "got int64[3, 5]"),
    "weight shape": ((X, T, TensorType(F32, (2,))), {}, "weight float32[5] for input float32[3, 5, 2], got float32[2]"),
    "weight dtype": ((X, T, TensorType(F64, (5,))), {}, "got float64[5]"),
    "reduction": ((X, T), {"reduction": "max"}, "unknown reduction 'max'; known: none, sum, mean"),
    "ignore_index": ((X, T), {"ignore_index": 1.5}, "ignore_index 1.5 is not an int"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_operands_are_a_typed_error_naming_the_node(case: str) -> None:
    types, attrs, message = BAD[case]
    with pytest.raises(ShapeInferenceError) as err:
        rule(node(len(types), **attrs), *types)
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "l" and err.value.op == "NegativeLogLikelihoodLoss"
    assert message in str(err.value)


def _fold(n: Node, *arrays: np.ndarray) -> np.ndarray | None:
    fold = evaluate.evaluator_for(OP)
    assert fold is not None
    out = fold(n, list(arrays))
    return None if out is None else out[0]


X0 = np.array([[-1.0, -2.0, -3.0], [-0.5, -0.25, -4.0]], np.float32)  # N = 2, C = 3
T0 = np.array([2, 0])
W0 = np.array([1.0, 2.0, 4.0], np.float32)


def test_folding_gives_the_known_losses() -> None:
    np.testing.assert_array_equal(_fold(node(2, reduction="none"), X0, T0), [3.0, 0.5])
    assert _fold(node(2, reduction="sum"), X0, T0) == 3.5
    assert _fold(node(2), X0, T0) == 1.75
    np.testing.assert_array_equal(_fold(node(3, reduction="none"), X0, T0, W0), [12.0, 0.5])
    assert _fold(node(3), X0, T0, W0) == np.float32(12.5 / 5)
    ignored = _fold(node(3, reduction="none", ignore_index=2), X0, T0, W0)
    np.testing.assert_array_equal(ignored, [0.0, 0.5])
    assert _fold(node(3, ignore_index=2), X0, T0, W0) == 0.5  # 0.5 / weight 1


def test_folding_a_mean_over_places_all_ignored_is_nan() -> None:
    assert np.isnan(_fold(node(2, ignore_index=1), X0, np.array([1, 1])))  # type: ignore[arg-type]
    assert _fold(node(2, reduction="sum", ignore_index=1), X0, np.array([1, 1])) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_folding_computes_in_float64_and_rounds_once(dtype: type) -> None:
    rng = np.random.default_rng(57)
    x = rng.standard_normal((4, 6, 5)).astype(dtype)
    t = rng.integers(0, 6, (4, 5))
    w = rng.random(6).astype(dtype)
    y = _fold(node(3), x, t, w)
    assert y is not None and y.dtype == dtype and y.shape == ()
    picked = -np.take_along_axis(x.astype(np.float64), t[:, None, :], axis=1)[:, 0]
    weights = w.astype(np.float64)[t]
    assert y == ((picked * weights).sum() / weights.sum()).astype(dtype)


@pytest.mark.parametrize("bad", [3, -1])
def test_folding_declines_a_target_out_of_range(bad: int) -> None:
    """The device kernel reports it (a fault naming the op), not the folder; an ignored one
    folds."""
    t = np.array([0, bad])
    assert _fold(node(2), X0, t) is None
    assert _fold(node(2, reduction="none", ignore_index=bad), X0, t) is not None


def test_the_op_lowers_to_op_57_with_reduction_and_ignore_index() -> None:
    op, attrs = lower_node(node(3, reduction="sum", ignore_index=-1))
    assert op is ExecOp.NEGATIVE_LOG_LIKELIHOOD_LOSS == 57
    assert dict(attrs) == {"reduction": "sum", "ignore_index": -1}
    assert dict(lower_node(node(2, reduction="mean"))[1]) == {"reduction": "mean"}
    arity = ARITY[OP]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (2, 3, 1, 1)


def _graph(n: Node, y: TensorType) -> Graph:
    types = {"x": X, "t": T, "w": TensorType(F32, (5,)), "y": y}
    return Graph("g", (n,), tuple(n.inputs), ("y",), {v: types[v] for v in (*n.inputs, "y")}, {})


def test_one_input_breaks_the_arity() -> None:
    n = Node.make("l", OP, ["x"], ["y"])
    with pytest.raises(VerifyError, match=r"1 inputs, expected 2\.\.3") as err:
        verify(Graph("g", (n,), ("x",), ("y",), {"x": X, "y": TensorType(F32, ())}, {}))
    assert err.value.details["check"] == "arity" and err.value.node == "l"


def test_the_graph_compiles_to_one_loss_op() -> None:
    n = node(3, reduction="none", ignore_index=4)
    exe = compile_graph(_graph(n, TensorType(F32, (3, 2)))).executable
    assert [op.op for op in exe.ops] == [ExecOp.NEGATIVE_LOG_LIKELIHOOD_LOSS]
    assert dict(exe.ops[0].attrs) == {"reduction": "none", "ignore_index": 4}
    assert exe.tensor("t").dtype is ExecDType.I64 and exe.tensor("t").shape == (3, 2)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (3, 2)
