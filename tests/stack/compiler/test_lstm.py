# ruff: noqa: E501 - the case tables read best one case per line
"""The IR LSTM below the importer: its shape and dtype rule (Y [S, D, N, H], Y_h and Y_c
[D, N, H] of X's type, layout 1 batch first; operands or attributes that do not fit a typed error
naming the node), its constant-folding evaluator (the gates in float64, rounded once; lengths,
directions, peepholes, input_forget, clip and activations; lengths out of range declined), its
lowering onto Executable op 69 with its attributes, its arity, and the op it compiles to."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import ElemType, Graph, Node, OpType, TensorType, rule_for
from stack.runtime import ExecDType, ExecOp
from tests.stack.compiler import recurrent
from tests.stack.compiler.recurrent import (
    assert_bad_node,
    assert_breaks_the_arity,
    assert_declines,
    assert_layout_1_is_layout_0_transposed,
    assert_lowers,
    assert_rounded_once,
    assert_rule_gives_y_and_states,
    compiled,
    fold,
    tt,
)

F32, F16, F64, I32 = ElemType.F32, ElemType.F16, ElemType.F64, ElemType.I32
RULE = rule_for(OpType.LSTM)
NAMES = ["x", "w", "r", "b", "l", "h", "c", "p"]
IDENTITY = {
    "activations": "Affine,Affine,Affine",
    "activation_alpha": (1.0,) * 3,
    "activation_beta": (0.0,) * 3,
}


def node(n_in: int = 3, **attrs: object) -> Node:
    return Node.make("lstm", OpType.LSTM, NAMES[:n_in], ["y", "yh", "yc"], **attrs)


def types(dtype: ElemType, d: int, layout: int, n_in: int) -> list[TensorType]:
    """X [S=5, N=2, I=4] (layout 1: [2, 5, 4]) and H = 3."""
    return recurrent.types(4, dtype, d, layout, n_in)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("n_in", [3, 4, 6, 8])
def test_the_rule_gives_y_y_h_and_y_c(dtype, direction, layout, n_in) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == "bidirectional" else 1
    n = node(n_in, direction=direction, layout=layout)
    assert_rule_gives_y_and_states(RULE, n, types(dtype, d, layout, n_in), dtype, d, layout, 2)


X, W, R = tt(F32, 5, 2, 4), tt(F32, 1, 12, 4), tt(F32, 1, 12, 3)
B, L, S0 = tt(F32, 1, 24), tt(I32, 2), tt(F32, 1, 2, 3)


@pytest.mark.parametrize(
    ("ins", "attrs", "message"),
    [
        ([tt(I32, 5, 2, 4), W, R], {}, r"float X \[S, N, I\] or \[N, S, I\], got int32\[5, 2, 4\]"),
        ([X, tt(F32, 1, 9, 4), R], {}, r"W float32\[D, 4H, 4\] \(D 1 or 2\) for X float32\[5, 2, 4\], got float32\[1, 9, 4\]"),
        ([X, W, tt(F32, 1, 12, 4)], {}, r"R float32\[1, 12, 3\] for W float32\[1, 12, 4\], got float32\[1, 12, 4\]"),
        ([X, W, R, tt(F32, 1, 6)], {}, r"B float32\[1, 24\] for X .* got float32\[1, 6\]"),
        ([X, W, R, B, L, S0, tt(F32, 2, 1, 3)], {}, r"initial_c float32\[1, 2, 3\] for X .* got float32\[2, 1, 3\]"),
        ([X, W, R, B, L, S0, S0, tt(F32, 1, 6)], {}, r"P float32\[1, 9\] for X .* got float32\[1, 6\]"),
        ([X, W, R], {"direction": "bidirectional"}, "takes direction forward, reverse, bidirectional for W of 1 directions, got 'bidirectional'"),
        ([X, W, R], {"layout": 2}, "takes layout 0 or 1, got 2"),
        ([X, W, R], {"input_forget": 2}, "takes input_forget 0 or 1, got 2"),
        ([X, W, R], {"activations": "Sigmoid,Tanh"}, "takes 3 activations, three per direction, got 'Sigmoid,Tanh'"),
        ([X, W, R], {"activations": "Sigmoid,Gelu,Tanh"}, "takes activations of Tanh, Relu, .* got 'Sigmoid,Gelu,Tanh'"),
        ([X, W, R], {"activation_alpha": (1.0,)}, r"takes 3 activation_alpha values, one per activation, got \(1.0,\)"),
        ([X, W, R], {"clip": 0.0}, "takes a clip > 0, got 0.0"),
    ],
    ids=["int X", "W not 4H", "R shape", "B shape", "initial_c shape", "P shape", "directions of W",
         "layout 2", "input_forget 2", "two activations", "unknown activation", "one alpha", "clip 0"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(ins, attrs, message) -> None:  # type: ignore[no-untyped-def]
    assert_bad_node(RULE, node(len(ins), **attrs), ins, message)


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    return fold(OpType.LSTM, n, arrays, 3)


def test_folding_runs_the_gates_and_the_peepholes() -> None:
    """One unit, identity activations and weights that make i = 0.5, f = 0.25 + 0.5 C_(t-1)
    (a peephole), c = x and o = 1 + C_t (a peephole), from H_0 = 0 and C_0 = 1."""
    x = np.array([[[2.0]], [[4.0]]])
    w = np.array([[[0.0], [0.0], [0.0], [1.0]]])
    r = np.zeros((1, 4, 1))
    b = np.array([[0.5, 1.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0]])
    p = np.array([[0.0, 1.0, 0.5]])
    y, y_h, y_c = _fold(
        node(8, **IDENTITY),
        x,
        w,
        r,
        b,
        np.array([2], np.int32),
        np.zeros((1, 1, 1)),
        np.ones((1, 1, 1)),
        p,
    )
    # C_1 = (0.25 + 0.5) 1 + 0.5 2 = 1.75, H_1 = 2.75 * 1.75; C_2 = (0.25 + 0.875) 1.75 + 2
    c1, c2 = 1.75, 1.125 * 1.75 + 2.0
    np.testing.assert_allclose(y.ravel(), [(1 + c1) * c1, (1 + c2) * c2])
    assert y_c.ravel().tolist() == [c2] and y_h.ravel().tolist() == [y.ravel()[1]]


def test_input_forget_couples_the_forget_gate_to_the_input_gate() -> None:
    """i = 0.25 and the forget gate's own rows 0.9: coupled, f = 0.75."""
    x, w, r = np.ones((1, 1, 1)), np.zeros((1, 4, 1)), np.zeros((1, 4, 1))
    b = np.array([[0.25, 1.0, 0.9, 1.0, 0.0, 0.0, 0.0, 0.0]])
    ones = np.ones((1, 1, 1))
    lens = np.array([1], np.int32)
    own = _fold(node(7, **IDENTITY), x, w, r, b, lens, ones, ones)[2]
    coupled = _fold(node(7, input_forget=1, **IDENTITY), x, w, r, b, lens, ones, ones)[2]
    assert own.ravel().tolist() == [0.9 + 0.25] and coupled.ravel().tolist() == [0.75 + 0.25]


def test_folding_stops_each_entry_at_its_length() -> None:
    rng = np.random.default_rng(69)
    x, w, r = (
        rng.standard_normal((3, 2, 2)),
        rng.standard_normal((2, 8, 2)),
        rng.standard_normal((2, 8, 2)),
    )
    lens, h0, c0 = (
        np.array([2, 0], np.int32),
        rng.standard_normal((2, 2, 2)),
        rng.standard_normal((2, 2, 2)),
    )
    y, y_h, y_c = _fold(
        node(7, direction="bidirectional"), x, w, r, np.zeros((2, 16)), lens, h0, c0
    )
    assert (
        not y[2:, :, 0].any()
        and not y[:, :, 1].any()
        and not y_h[:, 1].any()
        and not y_c[:, 1].any()
    )
    np.testing.assert_array_equal(y_h[0, 0], y[1, 0, 0])
    np.testing.assert_array_equal(y_h[1, 0], y[0, 1, 0])


def test_folding_rounds_once_and_clips() -> None:
    rng = np.random.default_rng(66)
    x = rng.standard_normal((4, 2, 3)).astype(np.float16)
    w, r = (
        rng.standard_normal((2, 20, 3)).astype(np.float16),
        rng.standard_normal((2, 20, 5)).astype(np.float16),
    )
    attrs = {
        "direction": "bidirectional",
        "clip": 0.5,
        "activations": "Sigmoid,Relu,Relu,Sigmoid,Tanh,Relu",
    }
    assert_rounded_once(OpType.LSTM, node(3, **attrs), [x, w, r], 3, (4, 2, 2, 5))


def test_folding_layout_1_is_layout_0_transposed() -> None:
    rng = np.random.default_rng(7)
    x, w, r = (
        rng.standard_normal((3, 4, 2)),
        rng.standard_normal((2, 20, 2)),
        rng.standard_normal((2, 20, 5)),
    )
    h0, c0, b, p = (rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 40)),
                    rng.standard_normal((2, 15)))  # fmt: skip
    lens = np.full(4, 3, np.int32)
    n0, n1 = node(8, direction="bidirectional"), node(8, direction="bidirectional", layout=1)
    assert_layout_1_is_layout_0_transposed(OpType.LSTM, n0, n1, [x, w, r, b, lens], [h0, c0], [p])


@pytest.mark.parametrize("bad", [4, -1])
def test_folding_declines_lengths_outside_the_sequence(bad: int) -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    x, w = np.ones((3, 2, 1), np.float32), np.ones((1, 4, 1), np.float32)
    lens = np.array([1, bad], np.int32)
    assert_declines(OpType.LSTM, node(5), [x, w, w, np.zeros((1, 8), np.float32), lens])


ATTRS = {"direction": "reverse", "layout": 1, "input_forget": 1, "activations": "HardSigmoid,ScaledTanh,Affine",
         "activation_alpha": (0.2, 0.5, 1.0), "activation_beta": (0.5, 1.5, 0.0), "clip": 2.0}  # fmt: skip


def test_lstm_lowers_to_op_69_with_its_attributes() -> None:
    assert ExecOp.LSTM == 69
    assert_lowers(node(3, **ATTRS), ATTRS, ExecOp.LSTM, (3, 8, 3, 3))


def _graph(n: Node, layout: int = 0) -> Graph:
    return recurrent.graph(n, 4, 8, 2, n.outputs, layout)


def test_two_outputs_break_the_arity() -> None:
    n = Node.make("lstm", OpType.LSTM, ["x", "w", "r"], ["y", "yh"])
    assert_breaks_the_arity(_graph(n), r"2 outputs, expected 3\.\.3")


def test_the_graph_compiles_to_one_lstm_op() -> None:
    exe = compiled(_graph(node(8, **ATTRS), layout=1), ExecOp.LSTM, ATTRS)
    assert exe.tensor("l").dtype is ExecDType.I32 and exe.tensor("c").shape == (2, 1, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 5, 1, 3)
    assert exe.tensor("p").shape == (1, 9)
