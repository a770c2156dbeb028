"""The IR BitCast below the importer: its shape and dtype rule (a width other than the input's a
typed error naming the node), its constant-folding evaluator on every IR type of each width,
its lowering onto Executable op 55 (``to`` travels as the output's dtype), its arity, and the
op it compiles to."""

from __future__ import annotations

from typing import Any

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

X = TensorType(ElemType.F32, (2, 3, 4))
#: Every IR element type, by width in bytes.
WIDTHS = {
    1: (ElemType.I8, ElemType.U8, ElemType.BOOL),
    2: (ElemType.F16, ElemType.I16, ElemType.U16),
    4: (ElemType.F32, ElemType.I32, ElemType.U32),
    8: (ElemType.F64, ElemType.I64, ElemType.U64),
}
PAIRS = [(a, b) for group in WIDTHS.values() for a in group for b in group if a != b]


def _node(to: ElemType, **attrs: Any) -> Node:
    return Node.make("bc", OpType.BITCAST, ["x"], ["y"], to=to.value, **attrs)


@pytest.mark.parametrize(("src", "to"), PAIRS, ids=lambda e: e.value)
def test_the_rule_gives_to_in_the_input_shape(src: ElemType, to: ElemType) -> None:
    for shape in ((2, 3, 4), (), (0, 5)):
        (y,) = rule_for(OpType.BITCAST)(_node(to), [TensorType(src, shape)], {})
        assert y == TensorType(to, shape)


@pytest.mark.parametrize(
    ("src", "to", "message"),
    [
        (ElemType.F32, ElemType.I64, "reads float32 (32 bits) as int64 (64 bits)"),
        (ElemType.F64, ElemType.F32, "reads float64 (64 bits) as float32 (32 bits)"),
        (ElemType.BOOL, ElemType.I32, "reads bool (8 bits) as int32 (32 bits)"),
        (ElemType.F16, ElemType.U8, "reads float16 (16 bits) as uint8 (8 bits)"),
    ],
    ids=["wider", "narrower", "bool to int32", "float16 to uint8"],
)
def test_another_width_is_a_typed_error_naming_the_node(
    src: ElemType, to: ElemType, message: str
) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.BITCAST)(_node(to), [TensorType(src, (2, 3))], {})
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "bc" and err.value.op == "BitCast"
    assert message in str(err.value)


@pytest.mark.parametrize(("src", "to"), PAIRS, ids=lambda e: e.value)
def test_folding_reads_the_bytes_as_to(src: ElemType, to: ElemType) -> None:
    rng = np.random.default_rng(55)
    raw = rng.integers(0, 2 if ElemType.BOOL in (src, to) else 256, 48, dtype=np.uint8)
    x = raw.view(src.numpy).reshape(2, -1)
    fold = evaluate.evaluator_for(OpType.BITCAST)
    assert fold is not None
    out = fold(_node(to), [x])
    assert out is not None
    (y,) = out
    assert y.dtype == to.numpy and y.shape == x.shape
    assert y.tobytes() == raw.tobytes()


def test_folding_takes_a_non_contiguous_constant() -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4).T
    fold = evaluate.evaluator_for(OpType.BITCAST)
    assert fold is not None
    (y,) = fold(_node(ElemType.F32), [x]) or []
    assert y.shape == (4, 3)
    np.testing.assert_array_equal(y.view(np.int32), x)


def test_bitcast_lowers_to_op_55_without_attributes() -> None:
    op, attrs = lower_node(_node(ElemType.I32))
    assert op is ExecOp.BITCAST == 55
    assert dict(attrs) == {}
    assert (ARITY[OpType.BITCAST].min_in, ARITY[OpType.BITCAST].max_in) == (1, 1)


def _graph(node: Node, to: ElemType = ElemType.I32) -> Graph:
    return Graph("g", (node,), ("x",), ("y",), {"x": X, "y": TensorType(to, X.shape)}, {})


def test_a_second_input_breaks_the_arity() -> None:
    node = Node.make("bc", OpType.BITCAST, ["x", "x"], ["y"], to="int32")
    with pytest.raises(VerifyError, match=r"2 inputs, expected 1\.\.1") as err:
        verify(_graph(node))
    assert err.value.details["check"] == "arity" and err.value.node == "bc"


def test_the_graph_compiles_to_one_bitcast_op_writing_to() -> None:
    exe = compile_graph(_graph(_node(ElemType.I32))).executable
    assert [op.op for op in exe.ops] == [ExecOp.BITCAST]
    assert dict(exe.ops[0].attrs) == {}
    assert exe.tensor("x").dtype is ExecDType.F32 and exe.tensor("y").dtype is ExecDType.I32
    assert exe.tensor("y").shape == (2, 3, 4)
