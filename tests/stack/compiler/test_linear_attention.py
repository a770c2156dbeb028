# ruff: noqa: E501 - the case tables read best one case per line
"""The IR LinearAttention below the importer: its shape and dtype rule (output [B, T, Hq * Dv]
of query's type, present_state [B, Hkv, Dk, Dv] of past_state's or query's; operands that do not
fit a typed error naming the node), its constant-folding evaluator (ONNX's reference, step by
step in float32), its lowering onto Executable op 68 with its four attributes, its arity, and the
op it compiles to."""

from __future__ import annotations

import math

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
from stack.compiler.linear_attention import UPDATE_RULES, reads
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

F32, F16, F64 = ElemType.F32, ElemType.F16, ElemType.F64
RULE = rule_for(OpType.LINEAR_ATTENTION)
NAMES = ["q", "k", "v", "s", "g", "b"]


def attrs(rule: str = "gated_delta", hq: int = 4, hkv: int = 2, **over: object) -> dict:
    return {"update_rule": rule, "q_num_heads": hq, "kv_num_heads": hkv, "scale": 0.0, **over}


def node(n_in: int = 6, **kw: object) -> Node:
    return Node.make("la", OpType.LINEAR_ATTENTION, NAMES[:n_in], ["y", "st"], **attrs(**kw))


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


Q, K, V, S = tt(F32, 2, 3, 8), tt(F32, 2, 3, 4), tt(F32, 2, 3, 6), tt(F32, 2, 2, 2, 3)
G, B = tt(F32, 2, 3, 2), tt(F32, 2, 3, 1)


@pytest.mark.parametrize(
    ("types", "kw", "want"),
    [
        ([Q, K, V], dict(rule="linear"), (tt(F32, 2, 3, 12), tt(F32, 2, 2, 2, 3))),
        ([Q, K, V, S, G, B], dict(), (tt(F32, 2, 3, 12), tt(F32, 2, 2, 2, 3))),
        ([Q, K, V, S, tt(F32, 2, 3, 4)], dict(rule="gated"), (tt(F32, 2, 3, 12), tt(F32, 2, 2, 2, 3))),
        ([tt(F16, 1, 5, 8), tt(F16, 1, 5, 2), tt(F16, 1, 5, 3), tt(F32, 1, 1, 2, 3), tt(F16, 1, 5, 1), tt(F16, 1, 5, 1)], dict(hq=4, hkv=1), (tt(F16, 1, 5, 12), tt(F32, 1, 1, 2, 3))),
        ([tt(F16, 2, 3, 8), tt(F16, 2, 3, 4), tt(F16, 2, 3, 6)], dict(rule="linear"), (tt(F16, 2, 3, 12), tt(F16, 2, 2, 2, 3))),
    ],
    ids=["linear", "gated_delta gqa", "gated per-key decay", "mqa f32 state", "f16"],
)  # fmt: skip
def test_the_rule_gives_two_outputs(types, kw, want) -> None:  # type: ignore[no-untyped-def]
    assert RULE(node(len(types), **kw), types, {}) == list(want)


@pytest.mark.parametrize(
    ("types", "kw", "message"),
    [
        ([tt(F64, 2, 3, 8), tt(F64, 2, 3, 4), tt(F64, 2, 3, 6)], dict(rule="linear"), r"float16 or float32 query, key, value, decay and beta of one type"),
        ([Q, tt(F16, 2, 3, 4), V], dict(rule="linear"), r"of one type"),
        ([Q, K, V, tt(F64, 2, 2, 2, 3)], dict(rule="linear"), r"float16 or float32 past_state"),
        ([tt(F32, 3, 8), K, V], dict(rule="linear"), r"3-D query, key and value"),
        ([Q, K, V], dict(rule="linear", hq=3, hkv=2), r"q_num_heads 3 a positive multiple of kv_num_heads 2"),
        ([Q, K, V], dict(rule="linear", hkv=0), r"kv_num_heads 0"),
        ([Q, tt(F32, 2, 3, 8), V], dict(rule="linear"), r"key \[2, 3, 2 \* Dk\]"),
        ([Q, K, tt(F32, 2, 3, 5)], dict(rule="linear"), r"value \[2, 3, 2 \* Dv\]"),
        ([Q, K, V, tt(F32, 2, 2, 3, 2)], dict(rule="linear"), r"past_state \[2, 2, 2, 3\]"),
        ([Q, K, V, S, tt(F32, 2, 3, 3)], dict(rule="gated"), r"decay \[2, 3, 2\] or \[2, 3, 4\]"),
        ([Q, K, V, S, G, tt(F32, 2, 3, 4)], dict(), r"beta \[2, 3, 2\] or \[2, 3, 1\]"),
        ([Q, K, V, S, G], dict(), r"gated_delta takes its decay and beta"),
        ([Q, K, V], dict(rule="gated"), r"gated takes its decay and beta"),
    ],
    ids=["float64", "key type", "state type", "rank 2", "heads not dividing", "no kv heads", "key shape", "value shape",
         "state shape", "decay shape", "beta shape", "no beta", "no decay"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(types, kw, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        RULE(node(len(types), **kw), types, {})
    assert err.value.node == "la" and err.value.op == "LinearAttention"


def test_a_missing_value_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 2 is required"):
        RULE(node(3, rule="linear"), [Q, K, None], {})


def test_the_rules_and_what_they_read_are_onnx_s() -> None:
    assert UPDATE_RULES == ("linear", "gated", "delta", "gated_delta")
    assert [reads(r) for r in UPDATE_RULES] == [
        (False, False),
        (True, False),
        (False, True),
        (True, True),
    ]


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    fn = evaluate.evaluator_for(OpType.LINEAR_ATTENTION)
    assert fn is not None
    result = fn(n, list(arrays))
    assert result is not None and len(result) == 2
    return result


def test_folding_the_linear_rule_sums_the_outer_products() -> None:
    """One head, Dk = 1: S_t = sum of k_s v_s over s <= t, o_t = q_t S_t / sqrt(1)."""
    q = np.array([[[1.0], [2.0], [0.5]]], np.float32)
    k = np.array([[[1.0], [1.0], [2.0]]], np.float32)
    v = np.array([[[3.0, 1.0], [1.0, 0.0], [1.0, 1.0]]], np.float32)
    y, state = _fold(node(3, rule="linear", hq=1, hkv=1), q, k, v)
    np.testing.assert_array_equal(state, [[[[6.0, 3.0]]]])
    np.testing.assert_array_equal(y, [[[3.0, 1.0], [8.0, 2.0], [3.0, 1.5]]])


def test_folding_the_gated_delta_rule_decays_and_corrects_a_float16_state() -> None:
    q, k, v = (np.ones((1, 1, 2), np.float16) for _ in range(3))
    past = np.full((1, 1, 2, 2), 2.0, np.float16)
    decay, beta = np.full((1, 1, 1), math.log(0.5), np.float16), np.full((1, 1, 1), 0.5, np.float16)
    y, state = _fold(node(6, hq=1, hkv=1, scale=2.0), q, k, v, past, decay, beta)
    # S = 0.5 * 2 = 1 everywhere; S^T k = 2; v' = 0.5 (1 - 2) = -0.5; S += k v'^T -> 0.5
    assert state.dtype == np.float16 and y.dtype == np.float16
    np.testing.assert_allclose(state, 0.5, rtol=1e-3)
    np.testing.assert_allclose(y, 2.0 * 2 * 0.5, rtol=1e-3)


def test_linear_attention_lowers_to_op_68_with_its_attributes() -> None:
    op, lowered = lower_node(node(6, scale=0.5))
    assert op is ExecOp.LINEAR_ATTENTION == 68
    assert dict(lowered) == attrs(scale=0.5)
    arity = ARITY[OpType.LINEAR_ATTENTION]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (3, 6, 2, 2)


def _graph(n: Node) -> Graph:
    types = {
        "q": Q,
        "k": K,
        "v": V,
        "s": tt(F16, 2, 2, 2, 3),
        "g": G,
        "b": B,
        "y": tt(F32, 2, 3, 12),
        "st": tt(F16, 2, 2, 2, 3),
    }
    return Graph("g", (n,), tuple(n.inputs), tuple(n.outputs), types, {})


def test_one_output_breaks_the_arity() -> None:
    n = Node.make("la", OpType.LINEAR_ATTENTION, NAMES, ["y"], **attrs())
    with pytest.raises(VerifyError, match=r"1 outputs, expected 2\.\.2") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "la"


def test_the_graph_compiles_to_one_linear_attention_op() -> None:
    exe = compile_graph(_graph(node(6))).executable
    assert [op.op for op in exe.ops] == [ExecOp.LINEAR_ATTENTION]
    assert dict(exe.ops[0].attrs) == attrs()
    assert exe.tensor("st").dtype is ExecDType.F16 and exe.tensor("st").shape == (2, 2, 2, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 3, 12)
