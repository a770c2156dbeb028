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

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.rnn import ACTIVATIONS, DIRECTIONS, directions
from stack.compiler.shape_rules import _fail, _need, register

_OPTIONAL = ("B", "sequence_lens", "initial_h", "initial_c", "P")


def default_activations(d: int) -> str:
    """The IR LSTM's activations when the node names none: Sigmoid, Tanh, Tanh per direction."""
    return ",".join(["Sigmoid", "Tanh", "Tanh"] * d)


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, initial_c and P,
    each None when left out) no LSTM's, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) != 3:
        return f"takes a float X [S, N, I] or [N, S, I], got {x}"
    n, size = (x.shape[1] if layout == 0 else x.shape[0]), x.shape[2]
    if (w.dtype != x.dtype or len(w.shape) != 3 or w.shape[0] not in (1, 2) or w.shape[1] % 4
            or w.shape[2] != size):  # fmt: skip
        return f"takes a W {x.dtype.value}[D, 4H, {size}] (D 1 or 2) for X {x}, got {w}"
    d, h = w.shape[0], w.shape[1] // 4
    state = TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))
    want = (TensorType(x.dtype, (d, 8 * h)), TensorType(ElemType.I32, (n,)), state, state,
            TensorType(x.dtype, (d, 3 * h)))  # fmt: skip
    if r != TensorType(x.dtype, (d, 4 * h, h)):
        return f"takes an R {TensorType(x.dtype, (d, 4 * h, h))} for W {w}, got {r}"
    for name, t, fit in zip(_OPTIONAL, optional, want, strict=False):
        if t is not None and t != fit:
            return f"takes a {name} {fit} for X {x} and W {w}, got {t}"
    return None


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no LSTM's of D directions,
    or None when they fit."""
    get = node.attr if isinstance(node, Node) else node.get
    direction, layout = get("direction", "forward"), get("layout", 0)
    if direction not in DIRECTIONS or directions(direction) != d:
        return f"takes direction {', '.join(DIRECTIONS)} for W of {d} directions, got {direction!r}"
    if layout not in (0, 1):
        return f"takes layout 0 or 1, got {layout!r}"
    if get("input_forget", 0) not in (0, 1):
        return f"takes input_forget 0 or 1, got {get('input_forget', 0)!r}"
    acts = get("activations", default_activations(d))
    if not isinstance(acts, str) or len(acts.split(",")) != 3 * d:
        return f"takes {3 * d} activations, three per direction, got {acts!r}"
    if any(a not in ACTIVATIONS for a in acts.split(",")):
        return f"takes activations of {', '.join(ACTIVATIONS)}, got {acts!r}"
    for name in ("activation_alpha", "activation_beta"):
        value = get(name, (0.0,) * 3 * d)
        if not isinstance(value, tuple) or len(value) != 3 * d:
            return f"takes {3 * d} {name} values, one per activation, got {value!r}"
    clip = get("clip", None)
    if clip is not None and not (isinstance(clip, int | float) and clip > 0):
        return f"takes a clip > 0, got {clip!r}"
    return None


@register(OpType.LSTM)
def _lstm(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w, r = (_need(node, t, i) for i in range(3))
    layout = node.attr("layout", 0)
    why = problem(x, w, r, t[3:], layout if layout in (0, 1) else 0)
    why = why or attribute_problem(node, w.shape[0])
    if why is not None:
        raise _fail(node, f"LSTM {why}")
    s, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    d, h = w.shape[0], w.shape[1] // 4
    y = (s, d, n, h) if layout == 0 else (n, s, d, h)
    state = TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))
    return [TensorType(x.dtype, y), state, state]


def _operand(a: Sequence[np.ndarray], j: int, zero: tuple[int, ...], layout: int) -> np.ndarray:
    """Operand j in float64 and layout 0 (a state), zeros of ``zero``'s shape when absent."""
    if len(a) <= j:
        return np.zeros(zero)
    v = np.asarray(a[j]).astype(np.float64)
    return v if layout == 0 or v.ndim != 3 else v.transpose(1, 0, 2)


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y, Y_h and Y_c of constant operands, as the device kernel computes them; None for
    lengths outside [0, S]."""
    layout = node.attr("layout", 0)
    x = np.asarray(a[0]) if layout == 0 else np.asarray(a[0]).transpose(1, 0, 2)
    w, r = np.asarray(a[1]).astype(np.float64), np.asarray(a[2]).astype(np.float64)
    steps, n, _ = x.shape
    d, h = w.shape[0], w.shape[1] // 4
    bias = _operand(a, 3, (d, 8 * h), layout)
    lens = np.asarray(a[4]).astype(np.int64) if len(a) > 4 else np.full(n, steps)
    if ((lens < 0) | (lens > steps)).any():
        return None  # the device kernel reports them (a fault naming the op), not the folder
    h0, c0 = (_operand(a, j, (d, n, h), layout) for j in (5, 6))
    peep = _operand(a, 7, (d, 3 * h), layout)
    acts = node.attr("activations", default_activations(d)).split(",")
    alphas = node.attr("activation_alpha", (0.0,) * 3 * d)
    betas = node.attr("activation_beta", (0.0,) * 3 * d)
    clip, coupled = node.attr("clip", None), node.attr("input_forget", 0)

    def act(j: int, v: np.ndarray, bound: bool = True) -> np.ndarray:
        v = v if clip is None or not bound else np.clip(v, -clip, clip)
        return ACTIVATIONS[acts[j]](v, alphas[j], betas[j])

    y, rows = np.zeros((steps, d, n, h)), np.arange(n)
    y_h, y_c = np.zeros((d, n, h)), np.zeros((d, n, h))
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or node.attr("direction") == "reverse"
            xw = x.astype(np.float64) @ w[k].T + bias[k, : 4 * h]
            rt, rb = r[k].T, bias[k, 4 * h :]
            p_i, p_o, p_f = peep[k, :h], peep[k, h : 2 * h], peep[k, 2 * h :]
            hs, cs = h0[k], c0[k]
            for t in range(steps):
                live = t < lens
                at = np.where(live, lens - 1 - t if back else t, 0)
                g = xw[at, rows] + hs @ rt + rb
                i = act(3 * k, g[:, :h] + p_i * cs)
                f = 1 - i if coupled else act(3 * k, g[:, 2 * h : 3 * h] + p_f * cs)
                cell = f * cs + i * act(3 * k + 1, g[:, 3 * h :])
                o = act(3 * k, g[:, h : 2 * h] + p_o * cell)
                new = o * act(3 * k + 2, cell, bound=False)
                hs = np.where(live[:, None], new, hs)
                cs = np.where(live[:, None], cell, cs)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = np.where((lens > 0)[:, None], hs, 0.0)
            y_c[k] = np.where((lens > 0)[:, None], cs, 0.0)
    if layout == 1:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        return [y.astype(x.dtype), y_h.astype(x.dtype), y_c.astype(x.dtype)]
