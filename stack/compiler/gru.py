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

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.rnn import ACTIVATIONS, DIRECTIONS, directions
from stack.compiler.shape_rules import _fail, _need, register

_OPTIONAL = ("B", "sequence_lens", "initial_h")


def default_activations(d: int) -> str:
    """The IR GRU's activations when the node names none: Sigmoid then Tanh per direction."""
    return ",".join(["Sigmoid", "Tanh"] * d)


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, each None when
    left out) no GRU's, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) != 3:
        return f"takes a float X [S, N, I] or [N, S, I], got {x}"
    n, size = (x.shape[1] if layout == 0 else x.shape[0]), x.shape[2]
    if (w.dtype != x.dtype or len(w.shape) != 3 or w.shape[0] not in (1, 2) or w.shape[1] % 3
            or w.shape[2] != size):  # fmt: skip
        return f"takes a W {x.dtype.value}[D, 3H, {size}] (D 1 or 2) for X {x}, got {w}"
    d, h = w.shape[0], w.shape[1] // 3
    state = (d, n, h) if layout == 0 else (n, d, h)
    want = (TensorType(x.dtype, (d, 6 * h)), TensorType(ElemType.I32, (n,)),
            TensorType(x.dtype, state))  # fmt: skip
    if r != TensorType(x.dtype, (d, 3 * h, h)):
        return f"takes an R {TensorType(x.dtype, (d, 3 * h, h))} for W {w}, got {r}"
    for name, t, fit in zip(_OPTIONAL, optional, want, strict=False):
        if t is not None and t != fit:
            return f"takes a {name} {fit} for X {x} and W {w}, got {t}"
    return None


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no GRU's of D directions,
    or None when they fit."""
    get = node.attr if isinstance(node, Node) else node.get
    direction, layout = get("direction", "forward"), get("layout", 0)
    if direction not in DIRECTIONS or directions(direction) != d:
        return f"takes direction {', '.join(DIRECTIONS)} for W of {d} directions, got {direction!r}"
    if layout not in (0, 1):
        return f"takes layout 0 or 1, got {layout!r}"
    if get("linear_before_reset", 0) not in (0, 1):
        return f"takes linear_before_reset 0 or 1, got {get('linear_before_reset', 0)!r}"
    acts = get("activations", default_activations(d))
    if not isinstance(acts, str) or len(acts.split(",")) != 2 * d:
        return f"takes {2 * d} activations, two per direction, got {acts!r}"
    if any(a not in ACTIVATIONS for a in acts.split(",")):
        return f"takes activations of {', '.join(ACTIVATIONS)}, got {acts!r}"
    for name in ("activation_alpha", "activation_beta"):
        value = get(name, (0.0,) * 2 * d)
        if not isinstance(value, tuple) or len(value) != 2 * d:
            return f"takes {2 * d} {name} values, one per activation, got {value!r}"
    clip = get("clip", None)
    if clip is not None and not (isinstance(clip, int | float) and clip > 0):
        return f"takes a clip > 0, got {clip!r}"
    return None


@register(OpType.GRU)
def _gru(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w, r = (_need(node, t, i) for i in range(3))
    layout = node.attr("layout", 0)
    why = problem(x, w, r, t[3:], layout if layout in (0, 1) else 0)
    why = why or attribute_problem(node, w.shape[0])
    if why is not None:
        raise _fail(node, f"GRU {why}")
    s, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    d, h = w.shape[0], w.shape[1] // 3
    y = (s, d, n, h) if layout == 0 else (n, s, d, h)
    return [TensorType(x.dtype, y), TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y and Y_h of constant operands, as the device kernel computes them; None for lengths
    outside [0, S]."""
    layout = node.attr("layout", 0)
    x = np.asarray(a[0]) if layout == 0 else np.asarray(a[0]).transpose(1, 0, 2)
    w, r = np.asarray(a[1]).astype(np.float64), np.asarray(a[2]).astype(np.float64)
    steps, n, _ = x.shape
    d, h = w.shape[0], w.shape[1] // 3
    bias = np.asarray(a[3]).astype(np.float64) if len(a) > 3 else np.zeros((d, 6 * h))
    lens = np.asarray(a[4]).astype(np.int64) if len(a) > 4 else np.full(n, steps)
    if ((lens < 0) | (lens > steps)).any():
        return None  # the device kernel reports them (a fault naming the op), not the folder
    h0 = np.zeros((d, n, h)) if len(a) <= 5 else np.asarray(a[5]).astype(np.float64)
    h0 = h0 if layout == 0 else h0.transpose(1, 0, 2)
    acts = node.attr("activations", default_activations(d)).split(",")
    alphas = node.attr("activation_alpha", (0.0,) * 2 * d)
    betas = node.attr("activation_beta", (0.0,) * 2 * d)
    clip, linear = node.attr("clip", None), node.attr("linear_before_reset", 0)

    def act(j: int, v: np.ndarray) -> np.ndarray:
        v = v if clip is None else np.clip(v, -clip, clip)
        return ACTIVATIONS[acts[j]](v, alphas[j], betas[j])

    y, y_h, rows = np.zeros((steps, d, n, h)), np.zeros((d, n, h)), np.arange(n)
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or node.attr("direction") == "reverse"
            xw = x.astype(np.float64) @ w[k].T + bias[k, : 3 * h]
            rt, rb = r[k].T, bias[k, 3 * h :]
            state = h0[k]
            for t in range(steps):
                live = t < lens
                at = np.where(live, lens - 1 - t if back else t, 0)
                xt = xw[at, rows]
                zr = xt[:, : 2 * h] + state @ rt[:, : 2 * h] + rb[: 2 * h]
                z, rg = act(2 * k, zr[:, :h]), act(2 * k, zr[:, h:])
                if linear:
                    cand = xt[:, 2 * h :] + rg * (state @ rt[:, 2 * h :] + rb[2 * h :])
                else:
                    cand = xt[:, 2 * h :] + (rg * state) @ rt[:, 2 * h :] + rb[2 * h :]
                new = (1 - z) * act(2 * k + 1, cand) + z * state
                state = np.where(live[:, None], new, state)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = np.where((lens > 0)[:, None], state, 0.0)
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        return [y.astype(x.dtype), y_h.astype(x.dtype)]
