"""RNN: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the checks of its operands and attributes the importer shares, and its
constant-folding evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is
at its 300 lines). GRU and LSTM share its checks, shape rule and folding loop, each op's
differences a :class:`Recurrent`.

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
from dataclasses import dataclass

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

#: How many activations a gated op takes per direction, in words.
_PER = {2: "two", 3: "three"}


@dataclass(frozen=True)
class Recurrent:
    """What tells RNN, GRU and LSTM apart in the checks and the folding they share: the op's
    name, its gates (W's rows per H), its optional inputs, its activations per direction by
    default, its 0-or-1 attribute (None: none) and its states (Y_h, and LSTM's Y_c)."""

    op: str
    gates: int
    optional: tuple[str, ...]
    defaults: tuple[str, ...]
    flag: str | None = None
    states: int = 1

    def default_activations(self, d: int) -> str:
        """The activations when the node names none, per direction."""
        return ",".join(list(self.defaults) * d)


RNN = Recurrent("RNN", 1, _OPTIONAL, ("Tanh",))


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


def operand_problem(
    spec: Recurrent,
    x: TensorType,
    w: TensorType,
    r: TensorType,
    optional: Sequence[TensorType | None],
    layout: int,
) -> str | None:
    """What makes these operands (``optional``: spec's optional inputs, each None when left
    out) no ``spec`` op's, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) != 3:
        return f"takes a float X [S, N, I] or [N, S, I], got {x}"
    n, size, g = (x.shape[1] if layout == 0 else x.shape[0]), x.shape[2], spec.gates
    if (w.dtype != x.dtype or len(w.shape) != 3 or w.shape[0] not in (1, 2) or w.shape[1] % g
            or w.shape[2] != size):  # fmt: skip
        rows = "H" if g == 1 else f"{g}H"
        return f"takes a W {x.dtype.value}[D, {rows}, {size}] (D 1 or 2) for X {x}, got {w}"
    d, h = w.shape[0], w.shape[1] // g
    state = TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))
    want = (TensorType(x.dtype, (d, 2 * g * h)), TensorType(ElemType.I32, (n,)), state, state,
            TensorType(x.dtype, (d, 3 * h)))  # fmt: skip
    if r != TensorType(x.dtype, (d, g * h, h)):
        return f"takes an R {TensorType(x.dtype, (d, g * h, h))} for W {w}, got {r}"
    for name, t, fit in zip(spec.optional, optional, want, strict=False):
        if t is not None and t != fit:
            return f"takes a {name} {fit} for X {x} and W {w}, got {t}"
    return None


def attributes_problem(spec: Recurrent, node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no ``spec`` op's of D
    directions, or None when they fit."""
    get = node.attr if isinstance(node, Node) else node.get
    direction, layout = get("direction", "forward"), get("layout", 0)
    if direction not in DIRECTIONS or directions(direction) != d:
        return f"takes direction {', '.join(DIRECTIONS)} for W of {d} directions, got {direction!r}"
    if layout not in (0, 1):
        return f"takes layout 0 or 1, got {layout!r}"
    if spec.flag is not None and get(spec.flag, 0) not in (0, 1):
        return f"takes {spec.flag} 0 or 1, got {get(spec.flag, 0)!r}"
    per = len(spec.defaults)
    k = per * d
    acts = get("activations", spec.default_activations(d))
    if not isinstance(acts, str) or len(acts.split(",")) != k:
        each = "" if per == 1 else f" {_PER[per]} per direction,"
        return f"takes {k} activations,{each} got {acts!r}"
    if any(a not in ACTIVATIONS for a in acts.split(",")):
        return f"takes activations of {', '.join(ACTIVATIONS)}, got {acts!r}"
    for name in ("activation_alpha", "activation_beta"):
        value = get(name, (0.0,) * k)
        if not isinstance(value, tuple) or len(value) != k:
            one = "direction" if per == 1 else "activation"
            return f"takes {k} {name} values, one per {one}, got {value!r}"
    clip = get("clip", None)
    if clip is not None and not (isinstance(clip, int | float) and clip > 0):
        return f"takes a clip > 0, got {clip!r}"
    return None


def result_types(spec: Recurrent, node: Node, t: Sequence[TensorType | None]) -> list:
    """The shape and dtype rule of a ``spec`` op: Y and its states, or a ShapeInferenceError."""
    x, w, r = (_need(node, t, i) for i in range(3))
    layout = node.attr("layout", 0)
    why = operand_problem(spec, x, w, r, t[3:], layout if layout in (0, 1) else 0)
    why = why or attributes_problem(spec, node, w.shape[0])
    if why is not None:
        raise _fail(node, f"{spec.op} {why}")
    s, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    d, h = w.shape[0], w.shape[1] // spec.gates
    y = (s, d, n, h) if layout == 0 else (n, s, d, h)
    state = TensorType(x.dtype, (d, n, h) if layout == 0 else (n, d, h))
    return [TensorType(x.dtype, y), *[state] * spec.states]


def problem(
    x: TensorType, w: TensorType, r: TensorType, optional: Sequence[TensorType | None], layout: int
) -> str | None:
    """What makes these operands (``optional``: B, sequence_lens, initial_h, each None when
    left out) no RNN's, or None when they fit."""
    return operand_problem(RNN, x, w, r, optional, layout)


def attribute_problem(node: Node | Mapping[str, object], d: int) -> str | None:
    """What makes the IR attributes (a node's, or a mapping of them) no RNN's of D directions,
    or None when they fit."""
    return attributes_problem(RNN, node, d)


def shape_rule(spec: Recurrent) -> Callable[..., list]:
    """The shape and dtype rule of a ``spec`` op, for :mod:`stack.compiler.shape_rules`."""

    def rule(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
        return result_types(spec, node, t)

    return rule


register(OpType.RNN)(shape_rule(RNN))


#: An activation of the node by its index, applied to a pre-activation (clipped when bound).
Act = Callable[..., np.ndarray]
#: One step of a direction: its X_t W^T + Wb and states -> its new states (the output first).
Step = Callable[[np.ndarray, list[np.ndarray]], list[np.ndarray]]
#: A direction k's step from its B row, R^T and the activations: X's bias and the step.
Cell = Callable[[int, np.ndarray, np.ndarray, Act], tuple[np.ndarray, Step]]


def _operand(a: Sequence[np.ndarray], j: int, zero: tuple[int, ...], layout: int) -> np.ndarray:
    """Operand j in float64 and layout 0 (a state), zeros of ``zero``'s shape when absent."""
    if len(a) <= j:
        return np.zeros(zero)
    v = np.asarray(a[j]).astype(np.float64)
    return v if layout == 0 or v.ndim != 3 else v.transpose(1, 0, 2)


def unroll(spec: Recurrent, node: Node, a: Sequence[np.ndarray], cell: Cell) -> list | None:
    """Y and the states of a ``spec`` op's constant operands, each direction's steps ``cell``'s,
    as the device kernel computes them; None for lengths outside [0, S]."""
    layout = node.attr("layout", 0)
    x = np.asarray(a[0]) if layout == 0 else np.asarray(a[0]).transpose(1, 0, 2)
    w, r = np.asarray(a[1]).astype(np.float64), np.asarray(a[2]).astype(np.float64)
    steps, n, _ = x.shape
    d, h = w.shape[0], w.shape[1] // spec.gates
    bias = _operand(a, 3, (d, 2 * spec.gates * h), layout)
    lens = np.asarray(a[4]).astype(np.int64) if len(a) > 4 else np.full(n, steps)
    if ((lens < 0) | (lens > steps)).any():
        return None  # the device kernel reports them (a fault naming the op), not the folder
    initial = [_operand(a, 5 + j, (d, n, h), layout) for j in range(spec.states)]
    acts = node.attr("activations", spec.default_activations(d)).split(",")
    alphas = node.attr("activation_alpha", (0.0,) * len(acts))
    betas = node.attr("activation_beta", (0.0,) * len(acts))
    clip = node.attr("clip", None)

    def act(j: int, v: np.ndarray, bound: bool = True) -> np.ndarray:
        v = v if clip is None or not bound else np.clip(v, -clip, clip)
        return ACTIVATIONS[acts[j]](v, alphas[j], betas[j])

    y, rows = np.zeros((steps, d, n, h)), np.arange(n)
    finals = [np.zeros((d, n, h)) for _ in initial]
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or node.attr("direction") == "reverse"
            xb, step = cell(k, bias[k], r[k].T, act)
            xw = x.astype(np.float64) @ w[k].T + xb
            states = [s[k] for s in initial]
            for t in range(steps):
                live = t < lens
                at = np.where(live, lens - 1 - t if back else t, 0)
                new = step(xw[at, rows], states)
                states = [np.where(live[:, None], v, s) for v, s in zip(new, states, strict=True)]
                y[at[live], k, rows[live]] = new[0][live]
            for final, s in zip(finals, states, strict=True):
                final[k] = np.where((lens > 0)[:, None], s, 0.0)
    if layout == 1:
        y, finals = y.transpose(2, 0, 1, 3), [f.transpose(1, 0, 2) for f in finals]
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        return [y.astype(x.dtype), *(f.astype(x.dtype) for f in finals)]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y and Y_h of constant operands, as the device kernel computes them; None for lengths
    outside [0, S]."""

    def cell(k: int, b: np.ndarray, rt: np.ndarray, act: Act) -> tuple[np.ndarray, Step]:
        h = rt.shape[0]
        return b[:h] + b[h:], lambda xt, s: [act(k, xt + s[0] @ rt)]

    return unroll(RNN, node, a, cell)
