# ruff: noqa: E501 - the case tables read best one case per line
"""The IR GRU below the importer: its shape and dtype rule (Y [S, D, N, H] and Y_h [D, N, H]
of X's type, layout 1 batch first; operands or attributes that do not fit a typed error naming
the node), its constant-folding evaluator (the gates in float64, rounded once; lengths,
directions, linear_before_reset, clip and activations with alpha and beta; lengths out of range
declined), its lowering onto Executable op 67 with its attributes, its arity, and the op it
compiles to."""

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
RULE = rule_for(OpType.GRU)
NAMES = ["x", "w", "r", "b", "l", "h"]


def node(n_in: int = 3, **attrs: object) -> Node:
    return Node.make("gru", OpType.GRU, NAMES[:n_in], ["y", "yh"], **attrs)


def types(dtype: ElemType, d: int, layout: int, n_in: int) -> list[TensorType]:
    """X [S=5, N=2, I=4] (layout 1: [2, 5, 4]) and H = 3."""
    return recurrent.types(3, dtype, d, layout, n_in)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("n_in", [3, 4, 5, 6])
def test_the_rule_gives_y_and_y_h(dtype, direction, layout, n_in) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == "bidirectional" else 1
    n = node(n_in, direction=direction, layout=layout)
    assert_rule_gives_y_and_states(RULE, n, types(dtype, d, layout, n_in), dtype, d, layout, 1)


X, W, R = tt(F32, 5, 2, 4), tt(F32, 1, 9, 4), tt(F32, 1, 9, 3)


@pytest.mark.parametrize(
    ("ins", "attrs", "message"),
    [
        ([tt(I32, 5, 2, 4), W, R], {}, r"float X \[S, N, I\] or \[N, S, I\], got int32\[5, 2, 4\]"),
        ([X, tt(F32, 1, 9, 5), R], {}, r"W float32\[D, 3H, 4\] \(D 1 or 2\) for X float32\[5, 2, 4\], got float32\[1, 9, 5\]"),
        ([X, tt(F32, 1, 8, 4), R], {}, r"got float32\[1, 8, 4\]"),
        ([X, tt(F32, 3, 9, 4), R], {}, r"got float32\[3, 9, 4\]"),
        ([X, W, tt(F32, 1, 9, 4)], {}, r"R float32\[1, 9, 3\] for W float32\[1, 9, 4\], got float32\[1, 9, 4\]"),
        ([X, W, R, tt(F32, 1, 6)], {}, r"B float32\[1, 18\] for X .* got float32\[1, 6\]"),
        ([X, W, R, tt(F32, 1, 18), tt(ElemType.I64, 2)], {}, r"sequence_lens int32\[2\] for X .* got int64\[2\]"),
        ([X, W, R, tt(F32, 1, 18), tt(I32, 2), tt(F32, 2, 1, 3)], {}, r"initial_h float32\[1, 2, 3\] for X .* got float32\[2, 1, 3\]"),
        ([X, W, R], {"direction": "bidirectional"}, "takes direction forward, reverse, bidirectional for W of 1 directions, got 'bidirectional'"),
        ([X, W, R], {"layout": 2}, "takes layout 0 or 1, got 2"),
        ([X, W, R], {"linear_before_reset": 2}, "takes linear_before_reset 0 or 1, got 2"),
        ([X, W, R], {"activations": "Tanh"}, "takes 2 activations, two per direction, got 'Tanh'"),
        ([X, W, R], {"activations": "Sigmoid,Gelu"}, "takes activations of Tanh, Relu, .* got 'Sigmoid,Gelu'"),
        ([X, W, R], {"activation_alpha": (1.0,)}, r"takes 2 activation_alpha values, one per activation, got \(1.0,\)"),
        ([X, W, R], {"clip": 0.0}, "takes a clip > 0, got 0.0"),
    ],
    ids=["int X", "W input size", "W not 3H", "W three directions", "R shape", "B shape",
         "lengths int64", "initial_h shape", "directions of W", "layout 2", "linear_before_reset 2",
         "one activation", "unknown activation", "one alpha", "clip 0"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(ins, attrs, message) -> None:  # type: ignore[no-untyped-def]
    assert_bad_node(RULE, node(len(ins), **attrs), ins, message)


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    return fold(OpType.GRU, n, arrays, 2)


def test_folding_runs_the_gates() -> None:
    """One unit, Affine gates (alpha 1, beta 0: the identity) and weights that make z = 0.5,
    r = 1 and h = x + 2 H (reset after the product) or x + 2 H + 1 (linear before reset), so
    H_t = (x_t + 3 H_(t-1)) / 2 or (x_t + 3 H_(t-1) + 1) / 2 from H_0 = 1."""
    x = np.array([[[1.0]], [[2.0]]])
    w = np.array([[[0.0], [0.0], [1.0]]])
    r = np.array([[[0.0], [0.0], [2.0]]])
    b = np.array([[0.25, 0.5, 0.0, 0.25, 0.5, 0.0]])
    h0 = np.ones((1, 1, 1))
    attrs = {
        "activations": "Affine,Affine",
        "activation_alpha": (1.0, 1.0),
        "activation_beta": (0.0, 0.0),
    }
    y, y_h = _fold(node(6, **attrs), x, w, r, b, np.array([2], np.int32), h0)
    np.testing.assert_array_equal(y.ravel(), [2.0, 4.0])
    assert y_h.ravel().tolist() == [4.0]
    b[0, 5] = 1.0  # Rbh: inside r's product either way (r = 1)
    y, _ = _fold(node(6, linear_before_reset=1, **attrs), x, w, r, b, np.array([2], np.int32), h0)
    np.testing.assert_array_equal(y.ravel(), [2.5, 5.25])


def test_linear_before_reset_moves_the_reset_gate_past_the_product() -> None:
    """r = 0.5, z = 0 and Rbh = 1: h = 0.5 (R H) + 1 reset after, 0.5 (R H + 1) before."""
    x, w = np.zeros((1, 1, 1)), np.zeros((1, 3, 1))
    r = np.array([[[0.0], [0.0], [4.0]]])
    b = np.array([[0.0, 0.5, 0.0, 0.0, 0.0, 1.0]])
    attrs = {
        "activations": "Affine,Affine",
        "activation_alpha": (1.0, 1.0),
        "activation_beta": (0.0, 0.0),
    }
    h0 = np.ones((1, 1, 1))
    after = _fold(node(6, **attrs), x, w, r, b, np.array([1], np.int32), h0)[0]
    before = _fold(
        node(6, linear_before_reset=1, **attrs), x, w, r, b, np.array([1], np.int32), h0
    )[0]
    assert after.ravel().tolist() == [3.0] and before.ravel().tolist() == [2.5]


def test_folding_stops_each_entry_at_its_length() -> None:
    rng = np.random.default_rng(67)
    x, w, r = (
        rng.standard_normal((3, 2, 2)),
        rng.standard_normal((2, 6, 2)),
        rng.standard_normal((2, 6, 2)),
    )
    lens, h0 = np.array([2, 0], np.int32), rng.standard_normal((2, 2, 2))
    y, y_h = _fold(node(6, direction="bidirectional"), x, w, r, np.zeros((2, 12)), lens, h0)
    assert not y[2:, :, 0].any() and not y[:, :, 1].any() and not y_h[:, 1].any()
    np.testing.assert_array_equal(y_h[0, 0], y[1, 0, 0])
    np.testing.assert_array_equal(y_h[1, 0], y[0, 1, 0])


def test_folding_rounds_once_and_clips() -> None:
    rng = np.random.default_rng(66)
    x = rng.standard_normal((4, 2, 3)).astype(np.float16)
    w, r = (
        rng.standard_normal((2, 15, 3)).astype(np.float16),
        rng.standard_normal((2, 15, 5)).astype(np.float16),
    )
    attrs = {"direction": "bidirectional", "clip": 0.5, "activations": "Sigmoid,Relu,Sigmoid,Relu"}
    assert_rounded_once(OpType.GRU, node(3, **attrs), [x, w, r], 2, (4, 2, 2, 5))


def test_folding_layout_1_is_layout_0_transposed() -> None:
    rng = np.random.default_rng(7)
    x, w, r = (
        rng.standard_normal((3, 4, 2)),
        rng.standard_normal((2, 15, 2)),
        rng.standard_normal((2, 15, 5)),
    )
    h0, lens, b = (
        rng.standard_normal((2, 4, 5)),
        np.full(4, 3, np.int32),
        rng.standard_normal((2, 30)),
    )
    n0, n1 = node(6, direction="bidirectional"), node(6, direction="bidirectional", layout=1)
    assert_layout_1_is_layout_0_transposed(OpType.GRU, n0, n1, [x, w, r, b, lens], [h0])


@pytest.mark.parametrize("bad", [4, -1])
def test_folding_declines_lengths_outside_the_sequence(bad: int) -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    x, w = np.ones((3, 2, 1), np.float32), np.ones((1, 3, 1), np.float32)
    lens = np.array([1, bad], np.int32)
    assert_declines(OpType.GRU, node(5), [x, w, w, np.zeros((1, 6), np.float32), lens])


ATTRS = {"direction": "reverse", "layout": 1, "linear_before_reset": 1, "activations": "HardSigmoid,ScaledTanh",
         "activation_alpha": (0.2, 0.5), "activation_beta": (0.5, 1.5), "clip": 2.0}  # fmt: skip


def test_gru_lowers_to_op_67_with_its_attributes() -> None:
    assert ExecOp.GRU == 67
    assert_lowers(node(3, **ATTRS), ATTRS, ExecOp.GRU, (3, 6, 2, 2))


def _graph(n: Node, layout: int = 0) -> Graph:
    return recurrent.graph(n, 3, 6, 1, ("y", "yh"), layout)


def test_one_output_breaks_the_arity() -> None:
    n = Node.make("gru", OpType.GRU, ["x", "w", "r"], ["y"])
    assert_breaks_the_arity(_graph(n), r"1 outputs, expected 2\.\.2")


def test_the_graph_compiles_to_one_gru_op() -> None:
    exe = compiled(_graph(node(6, **ATTRS), layout=1), ExecOp.GRU, ATTRS)
    assert exe.tensor("l").dtype is ExecDType.I32 and exe.tensor("h").shape == (2, 1, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 5, 1, 3)
