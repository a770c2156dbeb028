"""The simple recurrent network (ONNX RNN, opsets 7, 14 and 22) for any ``xp``: RNN.

Operands in ONNX's order: X [S, N, I] (layout 0) or [N, S, I] (layout 1) of a float dtype,
W [D, H, I], R [D, H, H], then the optional B [D, 2H] (Wb then Rb), sequence_lens [N] int32
and initial_h [D, N, H] (layout 1: [N, D, H]), a trailing run (the UMD's caller fills the ones
left out before a given one: zero biases, full lengths, a zero state). D is 1 for the forward
and reverse directions, 2 for bidirectional (direction 0 runs forward, direction 1 in reverse).
Each direction d runs its batch entries b over their first sequence_lens[b] steps:

    H_t = act_d(clip(X_t @ W[d]^T + H_(t-1) @ R[d]^T + Wb[d] + Rb[d]))

Y [S, D, N, H] (layout 1: [N, S, D, H]) holds H_t at its time step, zeros past an entry's
length; Y_h [D, N, H] (layout 1: [N, D, H]) the last H of each direction, zeros for an entry of
length 0 (as onnxruntime). ``clip`` (0: none) bounds the pre-activation to [-clip, clip];
``activation_d`` (:class:`RnnActivation`) with its ``alpha_d`` and ``beta_d`` is act_d. The
arithmetic is float64 for every float dtype, the state carried unrounded from step to step and
rounded once to the outputs' dtype (sigmoids from exp(-|x|), so no exponential overflows);
NaN and infinity propagate. Operands of another dtype or shape, a length outside [0, S], or an
unknown direction, layout or activation are a kernel fault (a ValueError).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class RnnDirection(enum.IntEnum):
    """RNN's ``direction`` (its first int immediate). Values are ABI."""

    FORWARD = 0
    REVERSE = 1
    BIDIRECTIONAL = 2


class RnnActivation(enum.IntEnum):
    """RNN's ``activation_0`` and ``activation_1`` (ONNX's RNN activation functions, with
    their alpha and beta where they take them). Values are ABI."""

    TANH = 0
    RELU = 1
    SIGMOID = 2
    AFFINE = 3  # alpha * x + beta
    LEAKY_RELU = 4  # x >= 0 ? x : alpha * x
    THRESHOLDED_RELU = 5  # x > alpha ? x : 0
    SCALED_TANH = 6  # alpha * tanh(beta * x)
    HARD_SIGMOID = 7  # min(max(alpha * x + beta, 0), 1)
    ELU = 8  # x >= 0 ? x : alpha * (exp(x) - 1)
    SOFTSIGN = 9  # x / (1 + |x|)
    SOFTPLUS = 10  # log(1 + exp(x))


def _sigmoid(xp: Any, x: Any) -> Any:
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def activate(xp: Any, code: int, x: Any, alpha: float, beta: float) -> Any:
    """act(x) for the RnnActivation ``code`` in x's (float64) precision."""
    a = RnnActivation
    table = {
        a.TANH: lambda: xp.tanh(x),
        a.RELU: lambda: xp.maximum(x, 0),
        a.SIGMOID: lambda: _sigmoid(xp, x),
        a.AFFINE: lambda: alpha * x + beta,
        a.LEAKY_RELU: lambda: xp.where(x >= 0, x, alpha * x),
        a.THRESHOLDED_RELU: lambda: xp.where(x > alpha, x, 0.0),
        a.SCALED_TANH: lambda: alpha * xp.tanh(beta * x),
        a.HARD_SIGMOID: lambda: xp.clip(alpha * x + beta, 0.0, 1.0),
        a.ELU: lambda: xp.where(x >= 0, x, alpha * xp.expm1(xp.minimum(x, 0))),
        a.SOFTSIGN: lambda: x / (1 + xp.abs(x)),
        a.SOFTPLUS: lambda: xp.logaddexp(0.0, x),
    }
    return table[RnnActivation(code)]()


def shapes(x: tuple[int, ...], w: tuple[int, ...], layout: int) -> dict[str, tuple[int, ...]]:
    """Every operand's shape for X and W of these shapes and ``layout`` (x and w of rank 3)."""
    s, n = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    d, h = w[0], w[1]
    state = (d, n, h) if layout == 0 else (n, d, h)
    return {"W": (d, h, x[2]), "R": (d, h, h), "B": (d, 2 * h), "sequence_lens": (n,),
            "initial_h": state, "Y": (s, d, n, h) if layout == 0 else (n, s, d, h),
            "Y_h": state}  # fmt: skip


def check(ins: list[Any], outs: list[Any], direction: int, layout: int) -> None:
    """The operands checked against X and W (ValueError naming the one that does not fit)."""
    x, w = ins[0], ins[1]
    if x.dtype.kind != "f" or x.ndim != 3 or w.ndim != 3:
        raise ValueError(f"RNN X {x.dtype}{x.shape} and W {w.shape} are not float, rank 3")
    if layout not in (0, 1) or direction not in tuple(RnnDirection):
        raise ValueError(f"RNN direction {direction} or layout {layout} is unknown")
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    want = shapes(x.shape, w.shape, layout)
    if w.shape[0] != d:
        raise ValueError(f"RNN W {w.shape} has not {d} directions")
    names = ("W", "R", "B", "sequence_lens", "initial_h")
    for name, t in [*zip(names, ins[1:], strict=False), ("Y", outs[0]), ("Y_h", outs[1])]:
        dtype = np.dtype(np.int32) if name == "sequence_lens" else x.dtype
        if t.dtype != dtype or t.shape != want[name]:
            raise ValueError(f"RNN {name} {t.dtype}{t.shape} is not {dtype}{want[name]}")


def rnn(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y and Y_h of the simple RNN; ints: direction, layout, activation_0, activation_1; floats:
    clip (0: none), alpha_0, beta_0, alpha_1, beta_1. Operands that do not fit: ValueError."""
    direction, layout, *acts = (*ints, 0, 0, 0, 0)[:4]
    clip, *params = (*fl, 0.0, 0.0, 0.0, 0.0, 0.0)[:5]
    check(ins, outs, direction, layout)
    if any(a not in tuple(RnnActivation) for a in acts):
        raise ValueError(f"RNN activations {acts} are not RnnActivations")
    x = ins[0] if layout == 0 else ins[0].transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = ins[1].shape[:2]
    if len(ins) > 3:
        bias = ins[3].astype(np.float64)
        bias = bias[:, :h] + bias[:, h:]
    else:
        bias = xp.zeros((d, h), np.float64)
    lens = ins[4].astype(np.int64) if len(ins) > 4 else xp.full((n,), steps, np.int64)
    if n and bool(xp.any((lens < 0) | (lens > steps))):
        raise ValueError(f"RNN sequence_lens must lie in [0, {steps}]")
    h0 = xp.zeros((d, n, h), np.float64)
    if len(ins) > 5:
        h0 = ins[5].astype(np.float64)
        h0 = h0 if layout == 0 else h0.transpose(1, 0, 2)
    y = xp.zeros((steps, d, n, h), np.float64)
    y_h = xp.zeros((d, n, h), np.float64)
    rows = xp.arange(n)
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or direction == RnnDirection.REVERSE
            xw = x.astype(np.float64) @ ins[1][k].astype(np.float64).T + bias[k]
            r_t = ins[2][k].astype(np.float64).T
            state = h0[k]
            for t in range(steps):
                live = t < lens
                at = xp.where(live, lens - 1 - t if back else t, 0)
                pre = xw[at, rows] + state @ r_t
                if clip > 0:
                    pre = xp.clip(pre, -clip, clip)
                new = activate(xp, acts[k], pre, params[2 * k], params[2 * k + 1])
                state = xp.where(live[:, None], new, state)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = xp.where((lens > 0)[:, None], state, 0.0)
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        xp.copyto(outs[0], y, casting="unsafe")
        xp.copyto(outs[1], y_h, casting="unsafe")


TABLE = {KernelId.RNN: rnn}
