"""The scaffolding the IR RNN, GRU and LSTM tests share: the operand types of a node with
``gates`` H rows per direction (:func:`types`: X [S=5, N=2, I=4], H = 3), the graph of one node
(:func:`graph`), the folding (:func:`fold`) and the checks of a bad node, a declined fold, the
lowering and the compiled op (:func:`assert_bad_node`, :func:`assert_declines`,
:func:`assert_lowers`, :func:`assert_breaks_the_arity`, :func:`compiled`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    verify,
)
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecOp
from stack.runtime.executable import Executable

F32, F16, F64, I32 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32
#: The operand names, in ONNX's order: X, W, R, B, sequence_lens, initial_h, initial_c, P.
NAMES = ["x", "w", "r", "b", "l", "h", "c", "p"]


def tt(dtype: ElemType, *shape: int) -> TensorType:
    return TensorType(dtype, shape)


def types(gates: int, dtype: ElemType, d: int, layout: int, n_in: int) -> list[TensorType]:
    """The first ``n_in`` operand types: X [S=5, N=2, I=4] (layout 1: [2, 5, 4]) and H = 3."""
    x, h0 = ((5, 2, 4), (d, 2, 3)) if layout == 0 else ((2, 5, 4), (2, d, 3))
    w, r, b = tt(dtype, d, 3 * gates, 4), tt(dtype, d, 3 * gates, 3), tt(dtype, d, 6 * gates)
    full = [tt(dtype, *x), w, r, b, tt(I32, 2), tt(dtype, *h0), tt(dtype, *h0), tt(dtype, d, 9)]
    return full[:n_in]


def graph(
    n: Node, gates: int, n_in: int, states: int, outputs: Sequence[str], layout: int = 0
) -> Graph:
    """A graph of node ``n`` on F32 operands of D 1, its Y and ``states`` states typed."""
    ts = dict(zip(NAMES[:n_in], types(gates, F32, 1, layout, n_in), strict=True))
    state = tt(F32, 1, 2, 3) if layout == 0 else tt(F32, 2, 1, 3)
    ts["y"] = tt(F32, 5, 1, 2, 3) if layout == 0 else tt(F32, 2, 5, 1, 3)
    ts |= dict.fromkeys(("yh", "yc")[:states], state)
    return Graph("g", (n,), tuple(n.inputs), tuple(outputs), ts, {})


def fold(op: OpType, n: Node, arrays: Sequence[np.ndarray], count: int) -> list[np.ndarray]:
    """The ``count`` results of folding ``n`` on ``arrays``."""
    fn = evaluate.evaluator_for(op)
    assert fn is not None
    result = fn(n, list(arrays))
    assert result is not None and len(result) == count
    return result


def assert_declines(op: OpType, n: Node, arrays: Sequence[np.ndarray]) -> None:
    fn = evaluate.evaluator_for(op)
    assert fn is not None
    assert fn(n, list(arrays)) is None


def assert_bad_node(rule: Callable, n: Node, ins: list, message: str) -> None:
    with pytest.raises(ShapeInferenceError, match=message) as err:
        rule(n, ins, {})
    assert err.value.node == n.name and err.value.op == n.op.value


def assert_lowers(n: Node, attrs: dict, exec_op: ExecOp, arity: tuple[int, ...]) -> None:
    op, lowered = lower_node(n)
    assert op is exec_op
    assert dict(lowered) == attrs
    a = ARITY[n.op]
    assert (a.min_in, a.max_in, a.min_out, a.max_out) == arity


def assert_breaks_the_arity(g: Graph, message: str) -> None:
    with pytest.raises(VerifyError, match=message) as err:
        verify(g)
    assert err.value.details["check"] == "arity" and err.value.node == g.nodes[0].name


def compiled(g: Graph, exec_op: ExecOp, attrs: dict) -> Executable:
    """The executable of ``g``, checked to be one ``exec_op`` op with ``attrs``."""
    exe = compile_graph(g).executable
    assert [op.op for op in exe.ops] == [exec_op]
    assert dict(exe.ops[0].attrs) == attrs
    return exe


def assert_rule_gives_y_and_states(
    rule: Callable,
    n: Node,
    ins: list[TensorType],
    dtype: ElemType,
    d: int,
    layout: int,
    states: int,
) -> None:
    """The rule gives Y [S=5, D, N=2, H=3] (layout 1: [N, S, D, H]) and ``states`` states
    [D, N, H] (layout 1: [N, D, H]), all of ``dtype``."""
    y, *rest = rule(n, ins, {})
    assert len(rest) == states
    assert y == (tt(dtype, 5, d, 2, 3) if layout == 0 else tt(dtype, 2, 5, d, 3))
    assert all(s == (tt(dtype, d, 2, 3) if layout == 0 else tt(dtype, 2, d, 3)) for s in rest)


def assert_rounded_once(
    op: OpType, n: Node, arrays: Sequence[np.ndarray], count: int, y_shape: tuple[int, ...]
) -> list[np.ndarray]:
    """Folding ``n`` on float16 ``arrays`` gives Y of ``y_shape`` and every result equal to the
    float64 fold rounded once to float16; the float64 results are returned."""
    got = fold(op, n, arrays, count)
    wide = fold(op, n, [a.astype(np.float64) for a in arrays], count)
    assert got[0].dtype == np.float16 and got[0].shape == y_shape
    for g, v in zip(got, wide, strict=True):
        np.testing.assert_array_equal(g, v.astype(np.float16))
    return wide


def assert_layout_1_is_layout_0_transposed(
    op: OpType,
    n0: Node,
    n1: Node,
    operands: Sequence[np.ndarray],
    states: Sequence[np.ndarray],
    rest: Sequence[np.ndarray] = (),
) -> None:
    """Folding ``n1`` (layout 1) on X and the initial ``states`` batch first gives ``n0``'s
    (layout 0) Y and final states transposed; ``operands`` are X, W, R, B and sequence_lens,
    ``rest`` what follows the states (LSTM's P)."""
    t = (1, 0, 2)
    x, *mid = operands
    count = 1 + len(states)
    got0 = fold(op, n0, [x, *mid, *states, *rest], count)
    batch_first = [s.transpose(t) for s in states]
    got1 = fold(op, n1, [x.transpose(t), *mid, *batch_first, *rest], count)
    np.testing.assert_array_equal(got1[0], got0[0].transpose(2, 0, 1, 3))
    for s1, s0 in zip(got1[1:], got0[1:], strict=True):
        np.testing.assert_array_equal(s1, s0.transpose(t))
