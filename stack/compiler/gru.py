"""GRU: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the checks of its operands and attributes the importer shares, and its
constant-folding evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is
at its 300 lines). Its activations are RNN's (:data:`stack.compiler.rnn.ACTIVATIONS`).

X is a float tensor [S, N, I] (``layout`` 1: [N, S, I]), W [D, 3H, I] (D 2 for a bidirectional
``direction``, else 1; the gates' rows z, r, h), R [D, 3H, H], then the optional B [D, 6H],
sequence_lens [N] int32 and initial_h [D, N, H] (layout 1: [N, D, H]), a trailing run, all but
sequence_lens of X's type. ``activations`` names two of RNN's ACTIVATIONS per direction (f then
g), joined by commas, ``activation_alpha`` and ``activation_beta`` hold one number per
activation (0 where it takes none), ``linear_before_reset`` is 0 or 1 and ``clip`` (> 0; absent:
none) bounds every pre-activation. Two results of X's type: Y [S, D, N, H] (layout 1:
[N, S, D, H]) and Y_h of initial_h's shape. Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.gru`): each direction's z_t, r_t = f(clip(X_t W^T + H_(t-1) R^T + Wb +
Rb)), h_t = g(clip(X_t Wh^T + (r_t H_(t-1)) Rh^T + Rbh + Wbh)) (linear_before_reset: r_t
(H_(t-1) Rh^T + Rbh)), H_t = (1 - z_t) h_t + z_t H_(t-1) in float64 over each entry's first
sequence_lens[b] steps (direction 1, and reverse, from the last back), the state unrounded,
zeros past a length and a zero Y_h for a length 0, rounded once to X's type.
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

GRU = Recurrent(
    "GRU", 3, ("B", "sequence_lens", "initial_h"), ("Sigmoid", "Tanh"), "linear_before_reset"
)


def default_activations(d: int) -> str:
    """The IR GRU's activations when the node names none: Sigmoid then Tanh per direction."""
    return GRU.default_activations(d)


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, each None when
    left out) no GRU's, or None when they fit."""
    return operand_problem(GRU, x, w, r, optional, layout)


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no GRU's of D directions,
    or None when they fit."""
    return attributes_problem(GRU, node, d)


register(OpType.GRU)(shape_rule(GRU))


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y and Y_h of constant operands, as the device kernel computes them; None for lengths
    outside [0, S]."""
    linear = node.attr("linear_before_reset", 0)

    def cell(k: int, b: np.ndarray, rt: np.ndarray, act: Act) -> tuple[np.ndarray, Step]:
        h = rt.shape[0]
        rb = b[3 * h :]

        def step(xt: np.ndarray, s: list[np.ndarray]) -> list[np.ndarray]:
            state = s[0]
            zr = xt[:, : 2 * h] + state @ rt[:, : 2 * h] + rb[: 2 * h]
            z, rg = act(2 * k, zr[:, :h]), act(2 * k, zr[:, h:])
            if linear:
                cand = xt[:, 2 * h :] + rg * (state @ rt[:, 2 * h :] + rb[2 * h :])
            else:
                cand = xt[:, 2 * h :] + (rg * state) @ rt[:, 2 * h :] + rb[2 * h :]
            return [(1 - z) * act(2 * k + 1, cand) + z * state]

        return b[: 3 * h], step

    return unroll(GRU, node, a, cell)
