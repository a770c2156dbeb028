"""RNN: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the checks of its operands and attributes the importer shares, and its
constant-folding evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is
at its 300 lines).

X is a float tensor [S, N, I] (``layout`` 1: [N, S, I]), W [D, H, I] (D 2 for a bidirectional
``direction``, else 1), R [D, H, H], then the optional B [D, 2H], sequence_lens [N] int32 and
initial_h [D, N, H] (layout 1: [N, D, H]), a trailing run, all but sequence_lens of X's type.
``activations`` names one of ACTIVATIONS per direction, joined by commas (the IR has no list of
strings), ``activation_alpha`` and ``activation_beta`` hold one number per direction (0 where
its activation takes none) and ``clip`` (> 0; absent: none) bounds the pre-activation. Two
results of X's type: Y [S, D, N, H] (layout 1: [N, S, D, H]) and Y_h of initial_h's shape.
Folding computes as the device kernel does (:mod:`stack.kmd.kernels.rnn`): each direction's
H_t = act(clip(X_t W^T + H_(t-1) R^T + Wb + Rb)) in float64 over each entry's first
sequence_lens[b] steps (direction 1, and reverse, from the last back), the state unrounded,
zeros past a length and a zero Y_h for a length 0, rounded once to X's type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: The values of the IR op's ``direction`` (ONNX's).
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


#: ONNX's RNN activation functions of x with alpha a and beta b, by their names.
ACTIVATIONS: dict[str, Callable[[np.ndarray, float, float], np.ndarray]] = {
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "Sigmoid": lambda x, a, b: _sigmoid(x),
    "Affine": lambda x, a, b: a * x + b,
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "ThresholdedRelu": lambda x, a, b: np.where(x > a, x, 0.0),
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0.0, 1.0),
    "Elu": lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0))),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "Softplus": lambda x, a, b: np.logaddexp(0.0, x),
}

#: The activations that take an alpha, and those that take a beta too.
WITH_ALPHA = frozenset({"Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid",
                        "Elu"})  # fmt: skip
WITH_BETA = frozenset({"Affine", "ScaledTanh", "HardSigmoid"})

_OPTIONAL = ("B", "sequence_lens", "initial_h")


def directions(direction: object) -> int:
    """D, the directions ``direction`` runs (2 for bidirectional, else 1)."""
    return 2 if direction == "bidirectional" else 1


def activation_params(
    acts: Sequence[str], alpha: Sequence[float] | None, beta: Sequence[float] | None
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """ONNX's activation_alpha and activation_beta (None: absent) resolved into one number per
    activation in ``acts``, 0 where it takes none; None where onnxruntime (which deals the
    values out in order to the activations that take one) and ONNX's reference (one value per
    direction) would read them differently: an attribute that some activations take and others
    do not, or that does not hold one value per activation (one no activation takes is left
    out)."""
    resolved: list[tuple[float, ...]] = []
    for given, takes in ((alpha, WITH_ALPHA), (beta, WITH_BETA)):
        users = [a in takes for a in acts]
        if not any(users):
            resolved.append((0.0,) * len(acts))
        elif all(users) and given is not None and len(given) == len(acts):
            resolved.append(tuple(float(v) for v in given))
        else:
            return None
    return resolved[0], resolved[1]


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, each None when
    left out) no RNN's, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) != 3:
        return f"takes a float X [S, N, I] or [N, S, I], got {x}"
    n, size = (x.shape[1] if layout == 0 else x.shape[0]), x.shape[2]
    if w.dtype != x.dtype or len(w.shape) != 3 or w.shape[0] not in (1, 2) or w.shape[2] != size:
        return f"takes a W {x.dtype.value}[D, H, {size}] (D 1 or 2) for X {x}, got {w}"
    d, h = w.shape[:2]
    state = (d, n, h) if layout == 0 else (n, d, h)
    want = (TensorType(x.dtype, (d, 2 * h)), TensorType(ElemType.I32, (n,)),
            TensorType(x.dtype, state))  # fmt: skip
    if r != TensorType(x.dtype, (d, h, h)):
        return f"takes an R {TensorType(x.dtype, (d, h, h))} for W {w}, got {r}"
    for name, t, fit in zip(_OPTIONAL, optional, want, strict=False):
        if t is not None and t != fit:
            return f"takes a {name} {fit} for X {x} and W {w}, got {t}"
    return None


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no RNN's of D directions,
    or None when they fit."""
    get = node.attr if isinstance(node, Node) else node.get
    direction, layout = get("direction", "forward"), get("layout", 0)
    if direction not in DIRECTIONS or directions(direction) != d:
        return f"takes direction {', '.join(DIRECTIONS)} for W of {d} directions, got {direction!r}"
    if layout not in (0, 1):
        return f"takes layout 0 or 1, got {layout!r}"
    acts = get("activations", ",".join(["Tanh"] * d))
    if not isinstance(acts, str) or len(acts.split(",")) != d:
        return f"takes {d} activations, got {acts!r}"
    if any(a not in ACTIVATIONS for a in acts.split(",")):
        return f"takes activations of {', '.join(ACTIVATIONS)}, got {acts!r}"
    for name in ("activation_alpha", "activation_beta"):
        value = get(name, (0.0,) * d)
        if not isinstance(value, tuple) or len(value) != d:
            return f"takes {d} {name} values, one per direction, got {value!r}"
    clip = get("clip", None)
    if clip is not None and not (isinstance(clip, int | float) and clip > 0):
        return f"takes a clip > 0, got {clip!r}"
    return None


@register(OpType.RNN)
def _rnn(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w, r = (_need(node, t, i) for i in range(3))
    layout = node.attr("layout", 0)
    why = problem(x, w, r, t[3:], layout if layout in (0, 1) else 0)
    why = why or attribute_problem(node, w.shape[0])
    if why is not None:
        raise _fail(node, f"RNN {why}")
    s, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    d, h = w.shape[:2]
    y = (s, d, n, h) if layout == 0 else (n, s, d, h)
    return [TensorType(x.dtype, y), TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y and Y_h of constant operands, as the device kernel computes them; None for lengths
    outside [0, S]."""
    layout = node.attr("layout", 0)
    x = np.asarray(a[0]) if layout == 0 else np.asarray(a[0]).transpose(1, 0, 2)
    w, r = np.asarray(a[1]).astype(np.float64), np.asarray(a[2]).astype(np.float64)
    steps, n, _ = x.shape
    d, h = w.shape[:2]
    bias = np.asarray(a[3]).astype(np.float64) if len(a) > 3 else np.zeros((d, 2 * h))
    bias = bias[:, :h] + bias[:, h:]
    lens = np.asarray(a[4]).astype(np.int64) if len(a) > 4 else np.full(n, steps)
    if ((lens < 0) | (lens > steps)).any():
        return None  # the device kernel reports them (a fault naming the op), not the folder
    h0 = np.zeros((d, n, h)) if len(a) <= 5 else np.asarray(a[5]).astype(np.float64)
    h0 = h0 if layout == 0 else h0.transpose(1, 0, 2)
    acts = node.attr("activations", ",".join(["Tanh"] * d)).split(",")
    alphas, betas = (
        node.attr("activation_alpha", (0.0,) * d),
        node.attr("activation_beta", (0.0,) * d),
    )
    clip = node.attr("clip", None)
    y, y_h, rows = np.zeros((steps, d, n, h)), np.zeros((d, n, h)), np.arange(n)
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or node.attr("direction") == "reverse"
            xw = x.astype(np.float64) @ w[k].T + bias[k]
            state = h0[k]
            for t in range(steps):
                live = t < lens
                at = np.where(live, lens - 1 - t if back else t, 0)
                pre = xw[at, rows] + state @ r[k].T
                pre = pre if clip is None else np.clip(pre, -clip, clip)
                new = ACTIVATIONS[acts[k]](pre, alphas[k], betas[k])
                state = np.where(live[:, None], new, state)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = np.where((lens > 0)[:, None], state, 0.0)
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        return [y.astype(x.dtype), y_h.astype(x.dtype)]
