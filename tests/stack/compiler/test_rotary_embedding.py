# ruff: noqa: E501 - the case tables read best one case per line
"""The IR RotaryEmbedding below the importer: its shape and dtype rule (Y of X's type; X, the
caches, position_ids or the attributes that do not fit a typed error naming the node), its
constant-folding evaluator (the pairs rotated in float64 and rounded once to X's dtype, the
channels past the rotary dimension copied, a position id out of range declined), its lowering
onto Executable op 59 with its three attributes, its arity, and the op it compiles to."""

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

F32, F16, F64, I32, I64 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32, ElemType.I64
ATTRS = {"interleaved": 0, "num_heads": 0, "rotary_embedding_dim": 0}


def node(n_in: int = 3, **attrs: int) -> Node:
    return Node.make("r", OpType.ROTARY_EMBEDDING, ["x", "c", "s", "p"][:n_in], ["y"],
                     **{**ATTRS, **attrs})  # fmt: skip


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize(
    ("x", "cache", "ids", "attrs"),
    [
        ((2, 3, 5, 8), (2, 5, 4), None, {}),
        ((2, 3, 5, 8), (9, 2), (2, 5), {"rotary_embedding_dim": 4, "interleaved": 1}),
        ((2, 5, 24), (2, 5, 4), None, {"num_heads": 3}),
        ((1, 4, 16), (7, 1), (1, 4), {"num_heads": 2, "rotary_embedding_dim": 2}),
        ((0, 3, 0, 8), (0, 0, 4), None, {}),
    ],
    ids=["4-D", "4-D ids partial", "3-D", "3-D ids partial", "empty"],
)  # fmt: skip
def test_the_rule_gives_x_type(dtype, x, cache, ids, attrs) -> None:  # type: ignore[no-untyped-def]
    types = [tt(dtype, *x), tt(dtype, *cache), tt(dtype, *cache)]
    if ids is not None:
        types.append(tt(I64, *ids))
    (y,) = rule_for(OpType.ROTARY_EMBEDDING)(node(len(types), **attrs), types, {})
    assert y == tt(dtype, *x)


X4, C4 = tt(F32, 1, 2, 3, 4), tt(F32, 1, 3, 2)


@pytest.mark.parametrize(
    ("types", "attrs", "message"),
    [
        ([tt(I32, 1, 2, 3, 4), C4, C4], {}, r"float X \[B, H, S, D\] or \[B, S, H \* D\], got int32\[1, 2, 3, 4\]"),
        ([tt(F32, 3, 4), C4, C4], {}, r"got float32\[3, 4\]"),
        ([X4, C4, C4], {"interleaved": 3}, "interleaved 0 or 1"),
        ([X4, C4, C4], {"num_heads": -1}, "got 0, -1, 0"),
        ([tt(F32, 1, 3, 8), C4, C4], {}, r"num_heads that divides the hidden size of the 3-D X float32\[1, 3, 8\], got 0"),
        ([tt(F32, 1, 3, 8), C4, C4], {"num_heads": 3}, "got 3"),
        ([X4, C4, C4], {"rotary_embedding_dim": 3}, "even rotary_embedding_dim at most the head size 4, got 3"),
        ([X4, C4, C4], {"rotary_embedding_dim": 8}, "got 8"),
        ([X4, tt(F16, 1, 3, 2), C4], {}, r"cos_cache float32\[1, 3, 2\] for X float32\[1, 2, 3, 4\], got float16\[1, 3, 2\]"),
        ([X4, C4, tt(F32, 1, 3, 1)], {}, r"sin_cache .* got float32\[1, 3, 1\]"),
        ([X4, C4, C4, tt(I64, 1, 3)], {}, r"cos_cache float32\[P, 2\]"),
        ([X4, tt(F32, 5, 2), tt(F32, 5, 2), tt(I32, 1, 3)], {}, r"int64 position_ids \[1, 3\] for X float32\[1, 2, 3, 4\], got int32\[1, 3\]"),
        ([X4, tt(F32, 5, 2), tt(F32, 5, 2), tt(I64, 3, 1)], {}, r"got int64\[3, 1\]"),
    ],
    ids=["int X", "rank 2", "interleaved", "negative heads", "3-D no heads", "3-D heads",
         "odd dim", "dim past head", "cos dtype", "sin shape", "caches with ids", "ids dtype",
         "ids shape"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(types, attrs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeInferenceError, match=message) as err:
        rule_for(OpType.ROTARY_EMBEDDING)(node(len(types), **attrs), types, {})
    assert err.value.node == "r" and err.value.op == "RotaryEmbedding"


def test_a_missing_cache_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 2 is required"):
        rule_for(OpType.ROTARY_EMBEDDING)(node(), [X4, C4, None], {})


def _fold(n: Node, *arrays: np.ndarray) -> np.ndarray:
    fn = evaluate.evaluator_for(OpType.ROTARY_EMBEDDING)
    assert fn is not None
    result = fn(n, list(arrays))
    assert result is not None
    return result[0]


def test_folding_rotates_each_pair_and_copies_the_rest() -> None:
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 1, 8)
    cos, sin = np.array([[[0.0, 1.0]]], np.float32), np.array([[[1.0, 0.0]]], np.float32)
    halves = _fold(node(rotary_embedding_dim=4), x, cos, sin)
    np.testing.assert_array_equal(halves.ravel(), [-3, 2, 1, 4, 5, 6, 7, 8])
    neighbours = _fold(node(rotary_embedding_dim=4, interleaved=1), x, cos, sin)
    np.testing.assert_array_equal(neighbours.ravel(), [-2, 1, 3, 4, 5, 6, 7, 8])


def test_folding_a_3d_x_reads_its_rows_through_position_ids() -> None:
    rng = np.random.default_rng(59)
    x = rng.standard_normal((2, 3, 8)).astype(np.float16)
    theta = rng.uniform(0, 6, (5, 2))
    cos, sin = np.cos(theta).astype(np.float16), np.sin(theta).astype(np.float16)
    ids = np.array([[4, 0, 4], [1, 2, 3]], np.int64)
    got = _fold(node(4, num_heads=2), x, cos, sin, ids)
    per_place = _fold(node(num_heads=2), x, cos[ids], sin[ids])
    assert got.dtype == np.float16 and got.shape == x.shape
    np.testing.assert_array_equal(got, per_place)
    x1, x2 = x[0, 0, :2].astype(np.float64), x[0, 0, 2:4].astype(np.float64)
    c, s = cos[4].astype(np.float64), sin[4].astype(np.float64)
    np.testing.assert_array_equal(
        got[0, 0, :4], np.concatenate([c * x1 - s * x2, s * x1 + c * x2]).astype(np.float16)
    )


@pytest.mark.parametrize("bad", [-1, 5])
def test_folding_declines_a_position_id_out_of_range(bad: int) -> None:
    fn = evaluate.evaluator_for(OpType.ROTARY_EMBEDDING)
    x, cache = np.ones((1, 1, 2, 4), np.float32), np.ones((5, 2), np.float32)
    assert fn is not None and fn(node(4), [x, cache, cache, np.array([[0, bad]])]) is None


def test_rotary_embedding_lowers_to_op_59_with_its_attributes() -> None:
    op, attrs = lower_node(node(rotary_embedding_dim=2, interleaved=1))
    assert op is ExecOp.ROTARY_EMBEDDING == 59
    assert dict(attrs) == {"interleaved": 1, "num_heads": 0, "rotary_embedding_dim": 2}
    arity = ARITY[OpType.ROTARY_EMBEDDING]
    assert (arity.min_in, arity.max_in, arity.min_out, arity.max_out) == (3, 4, 1, 1)


def _graph(n: Node) -> Graph:
    types = {"x": X4, "c": C4, "s": C4, "y": X4}
    return Graph("g", (n,), tuple(n.inputs), ("y",), types, {})


def test_two_inputs_break_the_arity() -> None:
    n = Node.make("r", OpType.ROTARY_EMBEDDING, ["x", "c"], ["y"], **ATTRS)
    with pytest.raises(VerifyError, match=r"2 inputs, expected 3\.\.4") as err:
        verify(_graph(n))
    assert err.value.details["check"] == "arity" and err.value.node == "r"


def test_the_graph_compiles_to_one_rotary_embedding_op() -> None:
    exe = compile_graph(_graph(node(interleaved=1))).executable
    assert [op.op for op in exe.ops] == [ExecOp.ROTARY_EMBEDDING]
    assert dict(exe.ops[0].attrs) == {"interleaved": 1, "num_heads": 0, "rotary_embedding_dim": 0}
    assert exe.tensor("x").dtype is ExecDType.F32 and exe.tensor("x").shape == (1, 2, 3, 4)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (1, 2, 3, 4)
