# ruff: noqa: E501 - the case tables read best one case per line
"""The IR RNN below the importer: its shape and dtype rule (Y [S, D, N, H] and Y_h [D, N, H]
of X's type, layout 1 batch first; operands or attributes that do not fit a typed error naming
the node), its constant-folding evaluator (the recurrence in float64, rounded once; lengths,
directions, clip and activations with alpha and beta; lengths out of range declined), its
lowering onto Executable op 66 with its attributes, its arity, and the op it compiles to."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import ElemType, Graph, Node, OpType, ShapeInferenceError, TensorType, rule_for
from stack.compiler.rnn import activation_params
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
RULE = rule_for(OpType.RNN)
NAMES = ["x", "w", "r", "b", "l", "h"]


def node(n_in: int = 3, **attrs: object) -> Node:
    return Node.make("rnn", OpType.RNN, NAMES[:n_in], ["y", "yh"], **attrs)


def types(dtype: ElemType, d: int, layout: int, n_in: int) -> list[TensorType]:
    """X [S=5, N=2, I=4] (layout 1: [2, 5, 4]) and H = 3."""
    return recurrent.types(1, dtype, d, layout, n_in)


@pytest.mark.parametrize("dtype", [F32, F16, F64], ids=lambda e: e.value)
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("n_in", [3, 4, 5, 6])
def test_the_rule_gives_y_and_y_h(dtype, direction, layout, n_in) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == "bidirectional" else 1
    n = node(n_in, direction=direction, layout=layout)
    assert_rule_gives_y_and_states(RULE, n, types(dtype, d, layout, n_in), dtype, d, layout, 1)


X, W, R = tt(F32, 5, 2, 4), tt(F32, 1, 3, 4), tt(F32, 1, 3, 3)


@pytest.mark.parametrize(
    ("ins", "attrs", "message"),
    [
        ([tt(I32, 5, 2, 4), W, R], {}, r"float X \[S, N, I\] or \[N, S, I\], got int32\[5, 2, 4\]"),
        ([tt(F32, 5, 4), W, R], {}, r"got float32\[5, 4\]"),
        ([X, tt(F32, 1, 3, 5), R], {}, r"W float32\[D, H, 4\] \(D 1 or 2\) for X float32\[5, 2, 4\], got float32\[1, 3, 5\]"),
        ([X, tt(F32, 3, 3, 4), R], {}, r"got float32\[3, 3, 4\]"),
        ([X, tt(F16, 1, 3, 4), R], {}, r"got float16\[1, 3, 4\]"),
        ([X, W, tt(F32, 1, 3, 4)], {}, r"R float32\[1, 3, 3\] for W float32\[1, 3, 4\], got float32\[1, 3, 4\]"),
        ([X, W, R, tt(F32, 1, 3)], {}, r"B float32\[1, 6\] for X .* got float32\[1, 3\]"),
        ([X, W, R, tt(F32, 1, 6), tt(ElemType.I64, 2)], {}, r"sequence_lens int32\[2\] for X .* got int64\[2\]"),
        ([X, W, R, tt(F32, 1, 6), tt(I32, 2), tt(F32, 2, 1, 3)], {}, r"initial_h float32\[1, 2, 3\] for X .* got float32\[2, 1, 3\]"),
        ([X, W, R], {"direction": "bidirectional"}, "takes direction forward, reverse, bidirectional for W of 1 directions, got 'bidirectional'"),
        ([X, W, R], {"direction": "up"}, "got 'up'"),
        ([X, W, R], {"layout": 2}, "takes layout 0 or 1, got 2"),
        ([X, W, R], {"activations": "Tanh,Tanh"}, "takes 1 activations, got 'Tanh,Tanh'"),
        ([X, W, R], {"activations": "Gelu"}, "takes activations of Tanh, Relu, .* got 'Gelu'"),
        ([X, W, R], {"activation_alpha": (1.0, 2.0)}, r"takes 1 activation_alpha values, one per direction, got \(1.0, 2.0\)"),
        ([X, W, R], {"activation_beta": 1.0}, "takes 1 activation_beta values"),
        ([X, W, R], {"clip": 0.0}, "takes a clip > 0, got 0.0"),
    ],
    ids=["int X", "rank 2", "W input size", "W three directions", "W dtype", "R shape", "B shape",
         "lengths int64", "initial_h shape", "directions of W", "unknown direction", "layout 2",
         "two activations", "unknown activation", "two alphas", "beta not a tuple", "clip 0"],
)  # fmt: skip
def test_a_bad_node_is_a_shape_inference_error_naming_it(ins, attrs, message) -> None:  # type: ignore[no-untyped-def]
    assert_bad_node(RULE, node(len(ins), **attrs), ins, message)


def test_a_missing_r_is_a_shape_inference_error() -> None:
    with pytest.raises(ShapeInferenceError, match="input 2 is required"):
        RULE(node(), [X, W, None], {})


def _fold(n: Node, *arrays: np.ndarray) -> list[np.ndarray]:
    return fold(OpType.RNN, n, arrays, 2)


def test_folding_runs_the_recurrence() -> None:
    """One unit, weights 1: H_t = relu(x_t + H_(t-1) + 1) from 0.5; forward, then reverse."""
    x = np.array([[[1.0]], [[2.0]], [[3.0]]], np.float32)
    one = np.ones((1, 1, 1), np.float32)
    b, h0 = np.array([[0.25, 0.75]], np.float32), np.array([[[0.5]]], np.float32)
    lens = np.array([3], np.int32)
    y, y_h = _fold(node(6, activations="Relu"), x, one, one, b, lens, h0)
    np.testing.assert_array_equal(y.ravel(), [2.5, 5.5, 9.5])
    np.testing.assert_array_equal(y_h.ravel(), [9.5])
    y, y_h = _fold(node(6, activations="Relu", direction="reverse"), x, one, one, b, lens, h0)
    np.testing.assert_array_equal(y.ravel(), [9.5, 7.5, 4.5])
    np.testing.assert_array_equal(y_h.ravel(), [9.5])


def test_folding_stops_each_entry_at_its_length() -> None:
    """Two entries of lengths 2 and 0: zeros past the first's length, a zero Y_h for the second
    although it has an initial state; reverse starts at the entry's last valid step."""
    x = np.arange(1, 7, dtype=np.float64).reshape(3, 2, 1)
    one = np.ones((1, 1, 1))
    lens, h0 = np.array([2, 0], np.int32), np.full((1, 2, 1), 7.0)
    for direction, first in (("forward", [8.0, 11.0]), ("reverse", [11.0, 10.0])):
        y, y_h = _fold(node(6, activations="Affine", activation_alpha=(1.0,), activation_beta=(0.0,),
                            direction=direction), x, one, one, np.zeros((1, 2)), lens, h0)  # fmt: skip
        np.testing.assert_array_equal(y[:, 0, 0, 0], [*first, 0.0])
        assert not y[:, 0, 1].any() and y_h[0, 1, 0] == 0.0
        assert y_h[0, 0, 0] == (first[-1] if direction == "forward" else first[0])


def test_folding_clips_and_applies_alpha_and_beta_rounded_once() -> None:
    rng = np.random.default_rng(66)
    x = rng.standard_normal((4, 2, 3)).astype(np.float16)
    w, r = (
        rng.standard_normal((2, 5, 3)).astype(np.float16),
        rng.standard_normal((2, 5, 5)).astype(np.float16),
    )
    attrs = {"direction": "bidirectional", "activations": "ScaledTanh,HardSigmoid",
             "activation_alpha": (0.5, 0.2), "activation_beta": (1.5, 0.5), "clip": 1.0}  # fmt: skip
    wide, _ = assert_rounded_once(OpType.RNN, node(3, **attrs), [x, w, r], 2, (4, 2, 2, 5))
    assert np.abs(wide[:, 0]).max() <= 0.5 * np.tanh(1.5) and wide[:, 1].min() >= 0.5 - 0.2


def test_folding_layout_1_is_layout_0_transposed() -> None:
    rng = np.random.default_rng(7)
    x, w, r = (
        rng.standard_normal((3, 4, 2)),
        rng.standard_normal((2, 5, 2)),
        rng.standard_normal((2, 5, 5)),
    )
    h0 = rng.standard_normal((2, 4, 5))
    operands = [x, w, r, np.zeros((2, 10)), np.full(4, 3, np.int32)]
    n0, n1 = node(6, direction="bidirectional"), node(6, direction="bidirectional", layout=1)
    assert_layout_1_is_layout_0_transposed(OpType.RNN, n0, n1, operands, [h0])


@pytest.mark.parametrize("bad", [4, -1])
def test_folding_declines_lengths_outside_the_sequence(bad: int) -> None:
    """The device kernel reports them (a fault naming the op), not the folder."""
    x, one = np.ones((3, 2, 1), np.float32), np.ones((1, 1, 1), np.float32)
    lens = np.array([1, bad], np.int32)
    assert_declines(OpType.RNN, node(5), [x, one, one, np.zeros((1, 2), np.float32), lens])


ATTRS = {"direction": "reverse", "layout": 1, "activations": "LeakyRelu", "activation_alpha": (0.1,),
         "activation_beta": (0.0,), "clip": 2.0}  # fmt: skip


def test_rnn_lowers_to_op_66_with_its_attributes() -> None:
    assert ExecOp.RNN == 66
    assert_lowers(node(3, **ATTRS), ATTRS, ExecOp.RNN, (3, 6, 2, 2))


def _graph(n: Node, layout: int = 0) -> Graph:
    return recurrent.graph(n, 1, 6, 1, ("y", "yh"), layout)


def test_one_output_breaks_the_arity() -> None:
    n = Node.make("rnn", OpType.RNN, ["x", "w", "r"], ["y"])
    assert_breaks_the_arity(_graph(n), r"1 outputs, expected 2\.\.2")


def test_the_graph_compiles_to_one_rnn_op() -> None:
    exe = compiled(_graph(node(6, **ATTRS), layout=1), ExecOp.RNN, ATTRS)
    assert exe.tensor("l").dtype is ExecDType.I32 and exe.tensor("h").shape == (2, 1, 3)
    assert exe.tensor("y").dtype is ExecDType.F32 and exe.tensor("y").shape == (2, 5, 1, 3)


@pytest.mark.parametrize(
    ("acts", "alpha", "beta", "want"),
    [
        (["Tanh", "Relu"], None, None, ((0.0, 0.0), (0.0, 0.0))),
        (["Tanh"], [3.0], [4.0], ((0.0,), (0.0,))),
        (["LeakyRelu", "Elu"], [0.1, 0.2], None, ((0.1, 0.2), (0.0, 0.0))),
        (["Affine", "HardSigmoid"], [0.5, 0.2], [0.25, 0.5], ((0.5, 0.2), (0.25, 0.5))),
        (["Elu", "Affine"], [0.5, 0.2], [0.25, 0.5], None),
        (["Tanh", "Elu"], [0.5, 0.2], None, None),
        (["Tanh", "Elu"], [0.2], None, None),
        (["Elu", "Elu"], [0.2], None, None),
        (["LeakyRelu"], None, None, None),
        (["ScaledTanh"], [1.0], None, None),
    ],
    ids=["none take them", "unused ones left out", "alpha each", "alpha and beta each",
         "beta for one of two", "alpha for one of two", "one alpha for the second",
         "one alpha for two", "alpha left out", "beta left out"],
)  # fmt: skip
def test_alpha_and_beta_resolve_only_where_both_readings_agree(acts, alpha, beta, want) -> None:  # type: ignore[no-untyped-def]
    assert activation_params(acts, alpha, beta) == want
