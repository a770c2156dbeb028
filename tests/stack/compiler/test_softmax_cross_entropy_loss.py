# ruff: noqa: E501 - the case table reads best one case per line
"""The IR SoftmaxCrossEntropyLoss below the importer: its shape and dtype rule (scores, labels
or weights that do not fit, or an unknown reduction, a typed error naming the node; output and
log_prob), its constant-folding evaluator (the log-softmax in float64 rounded once, then
NegativeLogLikelihoodLoss's folder; a label out of range declined), its lowering onto Executable
op 58 with reduction and ignore_index, its arity, and the op it compiles to."""

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

OP = OpType.SOFTMAX_CROSS_ENTROPY_LOSS
F32, F16, F64, I32, I64 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32, ElemType.I64


def node(n_in: int = 2, **attrs: object) -> Node:
    return Node.make("l", OP, ["x", "t", "w"][:n_in], ["y", "lp"], **attrs)  # type: ignore[arg-type]


def rule(n: Node, *types: TensorType | None) -> list[TensorType]:
    return list(rule_for(OP)(n, list(types), {}))


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("tdtype", [I32, I64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("x", "t"), [((3, 5), (3,)), ((3, 5, 2), (3, 2)), ((2, 4, 3, 3, 2), (2, 3, 3, 2)),
                 ((0, 4, 2), (0, 2))], ids=str,
)  # fmt: skip
def test_the_rule_gives_labels_shape_for_none_a_scalar_otherwise_and_log_prob_scores_shape(
    dtype: ElemType, tdtype: ElemType, x: tuple[int, ...], t: tuple[int, ...]
) -> None:
    xt, tt, wt = TensorType(dtype, x), TensorType(tdtype, t), TensorType(dtype, x[1:2])
    assert rule(node(3, reduction="none"), xt, tt, wt) == [TensorType(dtype, t), xt]
    assert rule(node(2, reduction="sum", ignore_index=-1), xt, tt) == [TensorType(dtype, ()), xt]
    assert rule(node(2), xt, tt) == [TensorType(dtype, ()), xt]  # mean, the default


X, T = TensorType(F32, (3, 5, 2)), TensorType(I64, (3, 2))
BAD = {
    "int scores": ((TensorType(I32, (3, 5)), TensorType(I64, (3,))), {}, "float scores [N, C, d1..dk], got int32[3, 5]"),
    "rank 1": ((TensorType(F32, (5,)), TensorType(I64, ())), {}, "got float32[5]"),
    "float labels": ((X, TensorType(F32, (3, 2))), {}, "int32 or int64 labels [3, 2] for scores float32[3, 5, 2], got float32[3, 2]"),
    "labels shape": ((X, TensorType(I64, (3, 5))), {}, "got int64[3, 5]"),
    "weights shape": ((X, T, TensorType(F32, (2,))), {}, "weights float32[5] for scores float32[3, 5, 2], got float32[2]"),
    "weights dtype": ((X, T, TensorType(F64, (5,))), {}, "got float64[5]"),
    "reduction": ((X, T), {"reduction": "max"}, "unknown reduction 'max'; known: none, sum, mean"),
    "ignore_index": ((X, T), {"ignore_index": 1.5}, "ignore_index 1.5 is not an int"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_operands_are_a_typed_error_naming_the_node(case: str) -> None:
    types, attrs, message = BAD[case]
    with pytest.raises(ShapeInferenceError) as err:
        rule(node(len(types), **attrs), *types)
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "l" and err.value.op == "SoftmaxCrossEntropyLoss"
    assert message in str(err.value)


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray] | None:
    fold = evaluate.evaluator_for(OP)
    assert fold is not None
    return fold(n, list(arrays))


X0 = np.log(np.array([[0.25, 0.25, 0.5], [0.5, 0.25, 0.25]], np.float32))  # already normalised
T0 = np.array([2, 0])
W0 = np.array([1.0, 2.0, 4.0], np.float32)


def test_folding_gives_the_known_losses_and_log_prob() -> None:
    y, lp = _fold(node(2, reduction="none"), X0 + 3, T0) or [None, None]
    np.testing.assert_allclose(lp, X0, rtol=1e-7)  # shift-invariant
    np.testing.assert_allclose(y, [np.log(2), np.log(2)], rtol=1e-6)
    (s, _), (m, _) = _fold(node(3, reduction="sum"), X0, T0, W0), _fold(node(3), X0, T0, W0)  # type: ignore[misc]
    np.testing.assert_allclose([s, m], [5 * np.log(2), np.log(2)], rtol=1e-6)
    (ignored, _) = _fold(node(3, reduction="none", ignore_index=2), X0, T0, W0)  # type: ignore[misc]
    np.testing.assert_allclose(ignored, [0.0, np.log(2)], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_folding_is_the_loss_of_the_rounded_log_prob(dtype: type) -> None:
    rng = np.random.default_rng(58)
    x = (rng.standard_normal((4, 6, 5)) * 4).astype(dtype)
    t, w = rng.integers(0, 6, (4, 5)), rng.random(6).astype(dtype)
    y, lp = _fold(node(3), x, t, w) or [None, None]
    assert y.dtype == lp.dtype == dtype and y.shape == () and lp.shape == x.shape  # type: ignore[union-attr]
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(axis=1, keepdims=True)
    want = (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))).astype(dtype)
    np.testing.assert_array_equal(lp, want)
    nll = evaluate.evaluator_for(OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS)
    assert nll is not None
    (loss,) = nll(
        Node.make("n", OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS, ["a", "b", "c"], ["y"]), [want, t, w]
    ) or [None]
    assert y == loss


@pytest.mark.parametrize("bad", [3, -1])
def test_folding_declines_a_label_out_of_range(bad: int) -> None:
    t = np.array([0, bad])
    assert _fold(node(2), X0, t) is None
    assert _fold(node(2, reduction="none", ignore_index=bad), X0, t) is not None


def test_the_op_lowers_to_op_58_with_reduction_and_ignore_index() -> None:
    op, attrs = lower_node(node(3, reduction="sum", ignore_index=-1))
    assert op is ExecOp.SOFTMAX_CROSS_ENTROPY_LOSS == 58
    assert dict(attrs) == {"reduction": "sum", "ignore_index": -1}
    assert dict(lower_node(node(2, reduction="mean"))[1]) == {"reduction": "mean"}
    arity = ARITY[OP]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (2, 3, 2, 2)


def _graph(n: Node, y: TensorType) -> Graph:
    types = {"x": X, "t": T, "w": TensorType(F32, (5,)), "y": y, "lp": X}
    values = (*n.inputs, *n.outputs)
    return Graph("g", (n,), tuple(n.inputs), tuple(n.outputs), {v: types[v] for v in values}, {})


def test_one_output_breaks_the_arity() -> None:
    n = Node.make("l", OP, ["x", "t"], ["y"])
    with pytest.raises(VerifyError, match=r"1 outputs, expected 2") as err:
        verify(_graph(n, TensorType(F32, ())))
    assert err.value.details["check"] == "arity" and err.value.node == "l"


def test_the_graph_compiles_to_one_loss_op() -> None:
    n = node(3, reduction="none", ignore_index=4)
    exe = compile_graph(_graph(n, TensorType(F32, (3, 2)))).executable
    assert [op.op for op in exe.ops] == [ExecOp.SOFTMAX_CROSS_ENTROPY_LOSS]
    assert dict(exe.ops[0].attrs) == {"reduction": "none", "ignore_index": 4}
    assert exe.tensor("t").dtype is ExecDType.I64 and exe.tensor("t").shape == (3, 2)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (3, 2)
    assert exe.tensor("lp").dtype is ExecDType.F32 and exe.tensor("lp").shape == (3, 5, 2)
