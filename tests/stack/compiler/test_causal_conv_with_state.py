# ruff: noqa: E501 - the case tables read best one case per line
"""The IR CausalConvWithState below the importer: its shape and dtype rule (output of input's
type and present_state [B, C, K - 1]; operands or an activation that do not fit a typed error
naming the node), its constant-folding evaluator (the taps summed in float64 and rounded once,
SiLU for silu and swish, present_state the padded input's last K - 1 positions), its lowering
onto Executable op 62 with its activation, its arity, and the op it compiles to."""

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
RULE = rule_for(OpType.CAUSAL_CONV_WITH_STATE)


def node(n_in: int = 2, activation: object = "none") -> Node:
    return Node.make("cc", OpType.CAUSAL_CONV_WITH_STATE, ["x", "w", "b", "p"][:n_in], ["y", "s"],
                     activation=activation)  # fmt: skip


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("activation", ["none", "silu", "swish"])
@pytest.mark.parametrize(
    ("x", "k", "n_in"),
    [((2, 3, 7), 4, 2), ((1, 5, 1), 3, 3), ((2, 3, 2), 5, 4), ((3, 2, 6), 1, 4), ((0, 3, 0), 2, 4)],
    ids=["plain", "bias decode", "bias past short", "one tap", "empty"],
)  # fmt: skip
def test_the_rule_gives_output_and_present_state(dtype, activation, x, k, n_in) -> None:  # type: ignore[no-untyped-def]
    n, c, _ = x
    types = [tt(dtype, *x), tt(dtype, c, 1, k), tt(dtype, c), tt(dtype, n, c, k - 1)][:n_in]
    y, s = RULE(node(n_in, activation), types, {})
    assert y == tt(dtype, *x) and s == tt(dtype, n, c, k - 1)


X, W = tt(F32, 2, 3, 5), tt(F32, 3, 1, 4)


@pytest.mark.parametrize(
    ("types", "activation", "message"),
    [
        ([tt(I32, 2, 3, 5), tt(I32, 3, 1, 4)], "none", r"float input \[B, C, L\], got int32\[2, 3, 5\]"),
        ([tt(F32, 3, 5), W], "none", r"got float32\[3, 5\]"),
        ([X, tt(F32, 3, 2, 4)], "none", r"weight float32\[3, 1, K\] \(K >= 1\) for input float32\[2, 3, 5\], got float32\[3, 2, 4\]"),
        ([X, tt(F32, 2, 1, 4)], "none", r"got float32\[2, 1, 4\]"),
        ([X, tt(F32, 3, 1, 0)], "none", r"got float32\[3, 1, 0\]"),
        ([X, tt(F16, 3, 1, 4)], "none", r"got float16\[3, 1, 4\]"),
        ([X, W, tt(F32, 4)], "none", r"bias float32\[3\] for input float32\[2, 3, 5\], got float32\[4\]"),
        ([X, W, tt(F32, 3), tt(F32, 2, 3, 4)], "none", r"past_state float32\[2, 3, 3\] for input .* got float32\[2, 3, 4\]"),
        ([X, W, tt(F32, 3), tt(F16, 2, 3, 3)], "none", r"got float16\[2, 3, 3\]"),
        ([X, W], "relu", "takes activation none, silu, swish, got 'relu'"),
        ([X, W], 1, "got 1"),
    ],
    ids=["int input", "rank 2", "weight not depthwise", "weight channels", "empty kernel",
         "weight dtype", "bias shape", "past_state shape", "past_state dtype", "activation relu",
         "activation int"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(types, activation, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        RULE(node(len(types), activation), types, {})
    assert err.value.node == "cc" and err.value.op == "CausalConvWithState"


def test_a_missing_weight_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 1 is required"):
        RULE(node(), [X, None], {})


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    fn = evaluate.evaluator_for(OpType.CAUSAL_CONV_WITH_STATE)
    assert fn is not None
    result = fn(n, list(arrays))
    assert result is not None and len(result) == 2
    return result


def test_folding_convolves_causally_and_keeps_the_last_positions() -> None:
    x = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5)
    w = np.array([[[1.0, 10.0, 100.0]]], np.float32)
    y, s = _fold(node(), x, w)
    np.testing.assert_array_equal(y.ravel(), [100, 210, 321, 432, 543])
    np.testing.assert_array_equal(s.ravel(), [4, 5])
    past = np.array([[[7.0, 8.0]]], np.float32)
    y, s = _fold(node(4), x[:, :, :1], w, np.array([0.5], np.float32), past)
    np.testing.assert_array_equal(y.ravel(), [7 + 80 + 100 + 0.5])
    np.testing.assert_array_equal(s.ravel(), [8, 1])


@pytest.mark.parametrize("activation", ["silu", "swish"])
def test_folding_applies_silu_rounded_once(activation: str) -> None:
    rng = np.random.default_rng(62)
    x, w = (
        rng.standard_normal((2, 3, 6)).astype(np.float16),
        rng.standard_normal((3, 1, 3)).astype(np.float16),
    )
    (plain, _), (act, _) = _fold(node(), x, w), _fold(node(activation=activation), x, w)
    conv = _fold(node(), x.astype(np.float64), w.astype(np.float64))[0]
    assert act.dtype == np.float16
    np.testing.assert_array_equal(act, (conv / (1 + np.exp(-conv))).astype(np.float16))
    np.testing.assert_array_equal(plain, conv.astype(np.float16))


def test_causal_conv_lowers_to_op_62_with_its_activation() -> None:
    op, attrs = lower_node(node(3, "silu"))
    assert op is ExecOp.CAUSAL_CONV_WITH_STATE == 62
    assert dict(attrs) == {"activation": "silu"}
    arity = ARITY[OpType.CAUSAL_CONV_WITH_STATE]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (2, 4, 2, 2)


def _graph(n: Node) -> Graph:
    types = {"x": X, "w": W, "b": tt(F32, 3), "p": tt(F32, 2, 3, 3), "y": X, "s": tt(F32, 2, 3, 3)}
    return Graph("g", (n,), tuple(n.inputs), ("y", "s"), types, {})


def test_one_output_breaks_the_arity() -> None:
    n = Node.make("cc", OpType.CAUSAL_CONV_WITH_STATE, ["x", "w"], ["y"], activation="none")
    with pytest.raises(VerifyError, match=r"1 outputs, expected 2\.\.2") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "cc"


def test_the_graph_compiles_to_one_causal_conv_op() -> None:
    exe = compile_graph(_graph(node(4, "swish"))).executable
    assert [op.op for op in exe.ops] == [ExecOp.CAUSAL_CONV_WITH_STATE]
    assert dict(exe.ops[0].attrs) == {"activation": "swish"}
    assert exe.tensor("x").dtype is ExecDType.F32 and exe.tensor("s").shape == (2, 3, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 3, 5)
