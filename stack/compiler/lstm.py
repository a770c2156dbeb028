"""LSTM: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the checks of its operands and attributes the importer shares, and its
constant-folding evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is
at its 300 lines). Its activations are RNN's (:data:`stack.compiler.rnn.ACTIVATIONS`).

X is a float tensor [S, N, I] (``layout`` 1: [N, S, I]), W [D, 4H, I] (D 2 for a bidirectional
``direction``, else 1; the gates' rows i, o, f, c), R [D, 4H, H], then the optional B [D, 8H],
sequence_lens [N] int32, initial_h and initial_c [D, N, H] (layout 1: [N, D, H]) and P [D, 3H]
(the peepholes i, o, f), a trailing run, all but sequence_lens of X's type. ``activations``
names three of RNN's ACTIVATIONS per direction (f, g then h), joined by commas,
``activation_alpha`` and ``activation_beta`` hold one number per activation (0 where it takes
none), ``input_forget`` is 0 or 1 and ``clip`` (> 0; absent: none) bounds every gate's
pre-activation. Three results of X's type: Y [S, D, N, H] (layout 1: [N, S, D, H]), Y_h and
Y_c of initial_h's shape. Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.lstm`): each direction's i_t = f(clip(X_t Wi^T + H_(t-1) Ri^T +
Pi C_(t-1) + Wbi + Rbi)), f_t likewise with Pf (input_forget: 1 - i_t), c_t = g(clip(X_t Wc^T +
H_(t-1) Rc^T + Wbc + Rbc)), C_t = f_t C_(t-1) + i_t c_t, o_t = f(clip(X_t Wo^T + H_(t-1) Ro^T +
Po C_t + Wbo + Rbo)), H_t = o_t h(C_t) in float64 over each entry's first sequence_lens[b]
steps (direction 1, and reverse, from the last back), the states unrounded, zeros past a length
and zero Y_h and Y_c for a length 0, rounded once to X's type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.rnn import (
    Act,
    Recurrent,
    Step,
    attributes_problem,
    operand_problem,
    shape_rule,
    unroll,
)
from stack.compiler.shape_rules import register

LSTM = Recurrent("LSTM", 4, ("B", "sequence_lens", "initial_h", "initial_c", "P"),
                ("Sigmoid", "Tanh", "Tanh"), "input_forget", states=2)  # fmt: skip


def default_activations(d: int) -> str:
    """The IR LSTM's activations when the node names none: Sigmoid, Tanh, Tanh per direction."""
    return LSTM.default_activations(d)


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, initial_c and P,
    each None when left out) no LSTM's, or None when they fit."""
    return operand_problem(LSTM, x, w, r, optional, layout)


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no LSTM's of D directions,
    or None when they fit."""
    return attributes_problem(LSTM, node, d)


register(OpType.LSTM)(shape_rule(LSTM))


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y, Y_h and Y_c of constant operands, as the device kernel computes them; None for
    lengths outside [0, S]."""
    coupled = node.attr("input_forget", 0)

    def cell(k: int, b: np.ndarray, rt: np.ndarray, act: Act) -> tuple[np.ndarray, Step]:
        h = rt.shape[0]
        rb = b[4 * h :]
        peep = np.asarray(a[7]).astype(np.float64)[k] if len(a) > 7 else np.zeros(3 * h)
        p_i, p_o, p_f = peep[:h], peep[h : 2 * h], peep[2 * h :]

        def step(xt: np.ndarray, s: list[np.ndarray]) -> list[np.ndarray]:
            hs, cs = s
            g = xt + hs @ rt + rb
            i = act(3 * k, g[:, :h] + p_i * cs)
            f = 1 - i if coupled else act(3 * k, g[:, 2 * h : 3 * h] + p_f * cs)
            cell = f * cs + i * act(3 * k + 1, g[:, 3 * h :])
            o = act(3 * k, g[:, h : 2 * h] + p_o * cell)
            return [o * act(3 * k + 2, cell, bound=False), cell]

        return b[: 4 * h], step

    return unroll(LSTM, node, a, cell)
