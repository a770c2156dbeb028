# ruff: noqa: E501 - the case tables read best one case per line
"""The IR Attention below the importer: its shape and dtype rule (Y of Q's rank, present_key and
present_value [B, Hkv, T, *], qk_matmul_output [B, Hq, L, T]; operands that do not fit a typed
error naming the node), its constant-folding evaluator (ONNX's reference, step by step in Q's
type), its lowering onto Executable op 65 with its nine attributes, its arity, and the op it
compiles to."""

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
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

F32, F16, F64, I64, I32, BOOL = (ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I64,
                                 ElemType.I32, ElemType.BOOL)  # fmt: skip
RULE = rule_for(OpType.ATTENTION)
NAMES = ["q", "k", "v", "m", "pk", "pv", "n"]


def attrs(hq: int = 3, hkv: int = 3, **over: object) -> dict:
    return {"is_causal": 0, "q_num_heads": hq, "kv_num_heads": hkv, "qk_matmul_output_mode": 0,
            "softmax_precision": 0, "left_window_size": -1, "right_window_size": -1,
            "scale": 0.5, "softcap": 0.0, **over}  # fmt: skip


def node(n_in: int = 3, **kw: object) -> Node:
    return Node.make(
        "at", OpType.ATTENTION, NAMES[:n_in], ["y", "pk_out", "pv_out", "qk"], **attrs(**kw)
    )


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("shapes", "hq", "hkv", "want"),
    [
        (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 10)), 3, 3, ((2, 3, 4, 10), (2, 3, 6, 8), (2, 3, 6, 10), (2, 3, 4, 6))),
        (((2, 6, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), (4, 6)), 6, 2, ((2, 6, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), (2, 6, 4, 6))),
        (((2, 4, 72), (2, 6, 24), (2, 6, 30)), 9, 3, ((2, 4, 90), (2, 3, 6, 8), (2, 3, 6, 10), (2, 9, 4, 6))),
        (((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), (2, 1, 4, 9), (2, 3, 3, 8), (2, 3, 3, 8)), 3, 3, ((2, 3, 4, 8), (2, 3, 9, 8), (2, 3, 9, 8), (2, 3, 4, 9))),
        (((1, 2, 1, 4), (1, 1, 7, 4), (1, 1, 7, 4), (1, 7), (1, 1, 0, 4), (1, 1, 0, 4), (1,)), 2, 1, ((1, 2, 1, 4), (1, 1, 7, 4), (1, 1, 7, 4), (1, 2, 1, 7))),
    ],
    ids=["mha", "gqa mask", "3-D gqa", "past", "nonpad"],
)  # fmt: skip
def test_the_rule_gives_four_outputs(dtype, shapes, hq, hkv, want) -> None:  # type: ignore[no-untyped-def]
    types = [tt(I64 if j == 6 else dtype, *s) for j, s in enumerate(shapes)]
    got = RULE(node(len(types), hq=hq, hkv=hkv), types, {})
    assert got == [tt(dtype, *s) for s in want]


Q, KV = tt(F32, 2, 3, 4, 8), tt(F32, 2, 3, 6, 8)


@pytest.mark.parametrize(
    ("types", "heads", "message"),
    [
        ([tt(I32, 2, 3, 4, 8), tt(I32, 2, 3, 6, 8), tt(I32, 2, 3, 6, 8)], (3, 3), r"float Q of rank 3 or 4, got int32\[2, 3, 4, 8\]"),
        ([tt(F32, 4, 8), KV, KV], (3, 3), r"got float32\[4, 8\]"),
        ([Q, tt(F16, 2, 3, 6, 8), KV], (3, 3), r"K and V of Q's type and rank"),
        ([tt(F32, 2, 4, 24), tt(F32, 2, 6, 24), tt(F32, 2, 6, 24)], (5, 3), r"q_num_heads 5 and kv_num_heads 3 splitting"),
        ([tt(F32, 2, 3, 4, 8), tt(F32, 2, 2, 6, 8), tt(F32, 2, 2, 6, 8)], (3, 2), r"kv heads dividing the query heads, got 2 for 3"),
        ([Q, tt(F32, 2, 3, 6, 4), KV], (3, 3), r"K \[B, Hkv, S, 8\]"),
        ([Q, KV, tt(F32, 2, 3, 5, 8)], (3, 3), r"K \[B, Hkv, S, 8\] and V"),
        ([Q, KV, KV, tt(F32, 4, 7)], (3, 3), r"attn_mask broadcast to \[2, 3, 4, 6\], got float32\[4, 7\]"),
        ([Q, KV, KV, tt(I32, 4, 6)], (3, 3), r"got int32\[4, 6\]"),
        ([Q, KV, KV, tt(F32, 3, 6)], (3, 3), r"got float32\[3, 6\]"),
        ([Q, KV, KV, tt(F32, 4, 9), tt(F32, 2, 3, 3, 8), None], (3, 3), r"past_key and past_value together"),
        ([Q, KV, KV, tt(F32, 4, 9), tt(F32, 2, 3, 3, 8), tt(F32, 2, 3, 3, 4)], (3, 3), r"past_value float32\[2, 3, P, 8\], got float32\[2, 3, 3, 4\]"),
        ([Q, KV, KV, tt(F32, 4, 6), tt(F32, 2, 3, 0, 8), tt(F32, 2, 3, 0, 8), tt(I32, 2)], (3, 3), r"int64 nonpad_kv_seqlen \[2\] and no past, got int32\[2\]"),
        ([Q, KV, KV, tt(F32, 4, 7), tt(F32, 2, 3, 1, 8), tt(F32, 2, 3, 1, 8), tt(I64, 2)], (3, 3), r"and no past"),
    ],
    ids=["int Q", "rank 2", "K dtype", "3-D heads", "heads not dividing", "K head size", "V length",
         "mask too long", "mask dtype", "mask not broadcasting", "past_value missing",
         "past_value shape", "nonpad dtype", "nonpad with a past"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(types, heads, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        RULE(node(len(types), hq=heads[0], hkv=heads[1]), types, {})
    assert err.value.node == "at" and err.value.op == "Attention"


def test_a_missing_value_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 2 is required"):
        RULE(node(), [Q, KV, None], {})


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    fn = evaluate.evaluator_for(OpType.ATTENTION)
    assert fn is not None
    result = fn(n, list(arrays))
    assert result is not None and len(result) == 4
    return result


def test_folding_averages_the_values_of_equal_keys_and_masks_the_future() -> None:
    q = np.zeros((1, 1, 3, 2), np.float32)
    k = np.zeros((1, 1, 3, 2), np.float32)
    v = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2)
    y, pk, pv, probs = _fold(node(hq=1, hkv=1, qk_matmul_output_mode=3), q, k, v)
    np.testing.assert_allclose(y[0, 0], np.tile([2.0, 3.0], (3, 1)), rtol=1e-6)
    assert pk.tobytes() == k.tobytes() and pv.tobytes() == v.tobytes()
    np.testing.assert_allclose(probs, np.full((1, 1, 3, 3), 1 / 3), rtol=1e-6)
    y, _, _, probs = _fold(node(hq=1, hkv=1, is_causal=1, qk_matmul_output_mode=3), q, k, v)
    np.testing.assert_allclose(y[0, 0], [[0, 1], [1, 2], [2, 3]], rtol=1e-6)
    np.testing.assert_allclose(
        probs[0, 0], [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6
    )


def test_folding_appends_the_cache_and_a_bool_mask_selects_keys() -> None:
    rng = np.random.default_rng(65)
    q, k, v = (
        rng.standard_normal(s).astype(np.float64)
        for s in ((1, 2, 1, 4), (1, 1, 2, 4), (1, 1, 2, 4))
    )
    pk, pv = rng.standard_normal((1, 1, 3, 4)), rng.standard_normal((1, 1, 3, 4))
    mask = np.array([False, False, True, False, False])
    y, present_k, present_v, logits = _fold(node(6, hq=2, hkv=1, scale=0.25), q, k, v, mask, pk, pv)
    np.testing.assert_array_equal(present_k, np.concatenate([pk, k], axis=2))
    np.testing.assert_array_equal(present_v, np.concatenate([pv, v], axis=2))
    np.testing.assert_allclose(y[0, :, 0], np.stack([pv[0, 0, 2]] * 2), rtol=1e-12)
    want = np.einsum("hd,td->ht", q[0, :, 0], present_k[0, 0]) * 0.25
    np.testing.assert_allclose(logits[0, :, 0], want, rtol=1e-12)


def test_folding_caps_the_logits_and_a_3d_q_keeps_its_layout() -> None:
    q, k, v = (
        np.full((1, 2, 4), 3.0, np.float32),
        np.full((1, 2, 4), 3.0, np.float32),
        np.ones((1, 2, 4), np.float32),
    )
    y, _, _, logits = _fold(node(hq=2, hkv=2, scale=1.0, softcap=5.0), q, k, v)
    assert y.shape == (1, 2, 4) and logits.shape == (1, 2, 2, 2)
    np.testing.assert_allclose(logits, np.float32(5 * math.tanh(18 / 5)), rtol=1e-6)
    np.testing.assert_allclose(y, 1.0, rtol=1e-6)


def test_attention_lowers_to_op_65_with_its_attributes() -> None:
    op, lowered = lower_node(node(4, is_causal=1, softcap=2.0))
    assert op is ExecOp.ATTENTION == 65
    assert dict(lowered) == attrs(is_causal=1, softcap=2.0)
    arity = ARITY[OpType.ATTENTION]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (3, 7, 4, 4)


def _graph(n: Node) -> Graph:
    types = {"q": Q, "k": KV, "v": KV, "m": tt(BOOL, 4, 6), "y": Q, "pk_out": KV, "pv_out": KV,
             "qk": tt(F32, 2, 3, 4, 6)}  # fmt: skip
    return Graph("g", (n,), tuple(n.inputs), tuple(v for v in n.outputs), types, {})


def test_three_outputs_break_the_arity() -> None:
    n = Node.make("at", OpType.ATTENTION, ["q", "k", "v"], ["y", "pk_out", "pv_out"], **attrs())
    with pytest.raises(VerifyError, match=r"3 outputs, expected 4\.\.4") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "at"


def test_the_graph_compiles_to_one_attention_op() -> None:
    exe = compile_graph(_graph(node(4, is_causal=1))).executable
    assert [op.op for op in exe.ops] == [ExecOp.ATTENTION]
    assert dict(exe.ops[0].attrs) == attrs(is_causal=1)
    assert exe.tensor("m").dtype is ExecDType.BOOL and exe.tensor("qk").shape == (2, 3, 4, 6)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 3, 4, 8)
