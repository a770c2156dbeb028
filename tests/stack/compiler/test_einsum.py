"""The IR Einsum below the importer: its shape and dtype rule (explicit and implicit outputs,
ellipsis broadcasting; a bad equation, a term that does not fit, sizes that clash or mixed types
a typed error naming the node), its constant-folding evaluator (float64 or int64, written once
to the inputs' type), its lowering onto Executable op 60 with the equation, its arity, and the
op it compiles to."""

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

F32, F64, I32 = ElemType.F32, ElemType.F64, ElemType.I32


def node(equation: object, n: int = 2) -> Node:
    return Node.make("e", OpType.EINSUM, [f"x{i}" for i in range(n)], ["y"], equation=equation)


def T(*shape: int, dtype: ElemType = F32) -> TensorType:
    return TensorType(dtype, shape)


@pytest.mark.parametrize(
    ("equation", "ins", "out"),
    [
        ("ij,jk->ik", [T(2, 3), T(3, 4)], (2, 4)),
        ("ij,jk", [T(2, 3), T(3, 4)], (2, 4)),
        ("bij,bjk->bik", [T(5, 2, 3), T(5, 3, 4)], (5, 2, 4)),
        ("ij->ji", [T(2, 3)], (3, 2)),
        ("ji", [T(2, 3)], (3, 2)),
        ("ii->i", [T(4, 4)], (4,)),
        ("ii", [T(4, 4)], ()),
        ("ij->j", [T(3, 5)], (5,)),
        ("i,j", [T(3), T(4)], (3, 4)),
        ("ij,jk,kl->il", [T(2, 3), T(3, 4), T(4, 5)], (2, 5)),
        ("...ij,...jk->...ik", [T(2, 1, 3, 4), T(5, 4, 2)], (2, 5, 3, 2)),
        ("...ij,jk", [T(7, 2, 3), T(3, 4)], (7, 2, 4)),
        ("...ii->...i", [T(2, 3, 3)], (2, 3)),
        ("...ij->j", [T(2, 3, 4)], (4,)),
        ("aB", [T(2, 3)], (3, 2)),
        (" i j -> j i ", [T(2, 3)], (3, 2)),
        ("ij->i", [T(0, 3)], (0,)),
    ],
)  # fmt: skip
@pytest.mark.parametrize(
    "dtype", [F32, ElemType.F16, F64, I32, ElemType.I64], ids=lambda e: e.value
)
def test_the_rule_gives_the_output_labels_sizes(
    equation: str, ins: list, out: tuple, dtype: ElemType
) -> None:
    ts = [TensorType(dtype, t.shape) for t in ins]
    (y,) = rule_for(OpType.EINSUM)(node(equation, len(ts)), ts, {})
    assert y == TensorType(dtype, out)


@pytest.mark.parametrize(
    ("equation", "ins", "message"),
    [
        (None, [T(2, 3)], "takes a string equation, got None"),
        ("ij,jk->ik", [T(2, 3)], "has 2 input terms for 1 inputs"),
        ("i1->i", [T(2, 3)], "term 'i1' is not letters"),
        ("i.j->i", [T(2, 3)], "term 'i.j' is not letters"),
        ("...i...->i", [T(2, 3)], "at most one '...'"),
        ("ij->ii", [T(2, 3)], "repeats a letter"),
        ("ij->k", [T(2, 3)], "names one no input has"),
        ("ijk->i", [T(2, 3)], "term 'ijk' does not fit input 0"),
        ("i->i", [T(2, 3)], "term 'i' does not fit input 0"),
        ("ii->i", [T(2, 3)], "letter 'i' has size 3 on input 0"),
        ("ij,jk->ik", [T(2, 3), T(1, 4)], "letter 'j' has size 1 on input 1"),
        ("...i,...i", [T(2, 3), T(4, 3)], "do not broadcast"),
        ("ij,jk", [T(2, 3), T(3, 4, dtype=F64)], "input 1 is float64, not float32"),
        ("i->i", [T(3, dtype=ElemType.I8)], "takes one or more inputs of float32"),
    ],
)  # fmt: skip
def test_a_bad_einsum_is_a_typed_error_naming_the_node(
    equation: object, ins: list, message: str
) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.EINSUM)(node(equation, len(ins)), ins, {})
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "e" and err.value.op == "Einsum"
    assert message in str(err.value)


def _fold(equation: str, *xs: np.ndarray) -> np.ndarray:
    fold = evaluate.evaluator_for(OpType.EINSUM)
    assert fold is not None
    out = fold(node(equation, len(xs)), list(xs))
    assert out is not None
    (y,) = out
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
def test_folding_computes_in_float64_and_rounds_once(dtype: type) -> None:
    rng = np.random.default_rng(60)
    a, b = rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal((3, 5)).astype(dtype)
    y = _fold("ij,jk->ik", a, b)
    assert y.dtype == dtype and y.shape == (4, 5)
    np.testing.assert_array_equal(y, (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype))


def test_folding_integers_wraps_as_the_device() -> None:
    x = np.full((4,), 2**20, np.int32)
    y = _fold("i,i", x, x)
    assert y.dtype == np.int32 and y == np.int64(4 * 2**40).astype(np.int32)


def test_folding_diagonals_transposes_and_ellipses() -> None:
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    np.testing.assert_array_equal(_fold("ii->i", m), np.diag(m))
    assert _fold("ii", m) == 12
    np.testing.assert_array_equal(_fold("ij->ji", m), m.T)
    a, b = np.ones((2, 1, 3, 4)), np.ones((5, 4, 2))
    assert _fold("...ij,...jk->...ik", a, b).shape == (2, 5, 3, 2)


def test_einsum_lowers_to_op_60_with_its_equation() -> None:
    op, attrs = lower_node(node("ij,jk->ik"))
    assert op is ExecOp.EINSUM == 60
    assert dict(attrs) == {"equation": "ij,jk->ik"}
    assert (ARITY[OpType.EINSUM].min_in, ARITY[OpType.EINSUM].max_in) == (1, -1)
    assert (ARITY[OpType.EINSUM].min_out, ARITY[OpType.EINSUM].max_out) == (1, 1)


def _graph(n: Node) -> Graph:
    types = {"x0": T(2, 3), "x1": T(3, 4), "y": T(2, 4)}
    return Graph("g", (n,), ("x0", "x1"), ("y",), types, {})


def test_no_input_breaks_the_arity() -> None:
    n = Node.make("e", OpType.EINSUM, [], ["y"], equation="->")
    with pytest.raises(VerifyError, match=r"0 inputs") as err:
        verify(Graph("g", (n,), (), ("y",), {"y": T()}, {}))
    assert err.value.details["check"] == "arity" and err.value.node == "e"


def test_the_graph_compiles_to_one_einsum_op() -> None:
    exe = compile_graph(_graph(node("ij,jk->ik"))).executable
    assert [op.op for op in exe.ops] == [ExecOp.EINSUM]
    assert dict(exe.ops[0].attrs) == {"equation": "ij,jk->ik"}
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 4)
