"""The gated recurrent unit (ONNX GRU, opsets 7, 14 and 22) for any ``xp``: GRU.

Operands in ONNX's order: X [S, N, I] (layout 0) or [N, S, I] (layout 1) of a float dtype,
W [D, 3H, I], R [D, 3H, H] (the gates' rows in ONNX's order z, r, h), then the optional
B [D, 6H] (Wb then Rb, each z, r, h), sequence_lens [N] int32 and initial_h [D, N, H] (layout 1:
[N, D, H]), a trailing run (the UMD's caller fills the ones left out before a given one: zero
biases, full lengths, a zero state). D is 1 for the forward and reverse directions, 2 for
bidirectional (direction 0 runs forward, direction 1 in reverse). Each direction d runs its
batch entries b over their first sequence_lens[b] steps, f and g its two activations:

    z_t = f(clip(X_t Wz^T + H_(t-1) Rz^T + Wbz + Rbz))
    r_t = f(clip(X_t Wr^T + H_(t-1) Rr^T + Wbr + Rbr))
    h_t = g(clip(X_t Wh^T + (r_t * H_(t-1)) Rh^T + Rbh + Wbh))     linear_before_reset 0
    h_t = g(clip(X_t Wh^T + r_t * (H_(t-1) Rh^T + Rbh) + Wbh))     linear_before_reset 1
    H_t = (1 - z_t) * h_t + z_t * H_(t-1)

Y [S, D, N, H] (layout 1: [N, S, D, H]) holds H_t at its time step, zeros past an entry's
length; Y_h [D, N, H] (layout 1: [N, D, H]) the last H of each direction, zeros for an entry of
length 0 (as onnxruntime). ``clip`` (0: none) bounds every pre-activation to [-clip, clip];
``activation_{2d}`` and ``activation_{2d+1}`` (:class:`~stack.kmd.kernels.rnn.RnnActivation`,
RNN's codes) with their alphas and betas are f and g of direction d. The arithmetic is float64
for every float dtype, the state carried unrounded and rounded once to the outputs' dtype; NaN
and infinity propagate. Operands of another dtype or shape, a length outside [0, S], or an
unknown direction, layout or activation are a kernel fault (a ValueError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnActivation, RnnDirection, activate

_NAMES = ("W", "R", "B", "sequence_lens", "initial_h")


def shapes(x: tuple[int, ...], w: tuple[int, ...], layout: int) -> dict[str, tuple[int, ...]]:
    """Every operand's shape for X and W of these shapes and ``layout`` (x and w of rank 3, W's
    second axis 3H)."""
    s, n = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    d, h = w[0], w[1] // 3
    state = (d, n, h) if layout == 0 else (n, d, h)
    return {"W": (d, 3 * h, x[2]), "R": (d, 3 * h, h), "B": (d, 6 * h), "sequence_lens": (n,),
            "initial_h": state, "Y": (s, d, n, h) if layout == 0 else (n, s, d, h),
            "Y_h": state}  # fmt: skip


def check(ins: list[Any], outs: list[Any], direction: int, layout: int) -> None:
    """The operands checked against X and W (ValueError naming the one that does not fit)."""
    x, w = ins[0], ins[1]
    if x.dtype.kind != "f" or x.ndim != 3 or w.ndim != 3 or w.shape[1] % 3:
        raise ValueError(f"GRU X {x.dtype}{x.shape} and W {w.shape} are not float, rank 3, 3H")
    if layout not in (0, 1) or direction not in tuple(RnnDirection):
        raise ValueError(f"GRU direction {direction} or layout {layout} is unknown")
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    want = shapes(x.shape, w.shape, layout)
    if w.shape[0] != d:
        raise ValueError(f"GRU W {w.shape} has not {d} directions")
    for name, t in [*zip(_NAMES, ins[1:], strict=False), ("Y", outs[0]), ("Y_h", outs[1])]:
        dtype = np.dtype(np.int32) if name == "sequence_lens" else x.dtype
        if t.dtype != dtype or t.shape != want[name]:
            raise ValueError(f"GRU {name} {t.dtype}{t.shape} is not {dtype}{want[name]}")


def gru(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y and Y_h of the GRU; ints: direction, layout, linear_before_reset, activation_0 ..
    activation_3 (f and g of each direction); floats: clip (0: none), then alpha_k and beta_k of
    each activation k. Operands that do not fit: ValueError."""
    direction, layout, linear, *acts = (*ints, 0, 0, 0, 2, 0, 2, 0)[:7]
    clip, *params = (*fl, *(0.0,) * 9)[:9]
    check(ins, outs, direction, layout)
    if linear not in (0, 1) or any(a not in tuple(RnnActivation) for a in acts):
        raise ValueError(f"GRU linear_before_reset {linear} or activations {acts} are unknown")
    x = ins[0] if layout == 0 else ins[0].transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = ins[1].shape[0], ins[1].shape[1] // 3
    bias = ins[3].astype(np.float64) if len(ins) > 3 else xp.zeros((d, 6 * h), np.float64)
    lens = ins[4].astype(np.int64) if len(ins) > 4 else xp.full((n,), steps, np.int64)
    if n and bool(xp.any((lens < 0) | (lens > steps))):
        raise ValueError(f"GRU sequence_lens must lie in [0, {steps}]")
    h0 = xp.zeros((d, n, h), np.float64)
    if len(ins) > 5:
        h0 = ins[5].astype(np.float64)
        h0 = h0 if layout == 0 else h0.transpose(1, 0, 2)
    y = xp.zeros((steps, d, n, h), np.float64)
    y_h = xp.zeros((d, n, h), np.float64)
    rows = xp.arange(n)

    def act(k: int, v: Any) -> Any:
        v = xp.clip(v, -clip, clip) if clip > 0 else v
        return activate(xp, acts[k], v, params[2 * k], params[2 * k + 1])

    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or direction == RnnDirection.REVERSE
            wb, rb = bias[k, : 3 * h], bias[k, 3 * h :]
            xw = x.astype(np.float64) @ ins[1][k].astype(np.float64).T + wb
            r_t = ins[2][k].astype(np.float64).T
            state = h0[k]
            for t in range(steps):
                live = t < lens
                at = xp.where(live, lens - 1 - t if back else t, 0)
                xt = xw[at, rows]
                zr = xt[:, : 2 * h] + state @ r_t[:, : 2 * h] + rb[: 2 * h]
                z, r = act(2 * k, zr[:, :h]), act(2 * k, zr[:, h:])
                if linear:
                    cand = xt[:, 2 * h :] + r * (state @ r_t[:, 2 * h :] + rb[2 * h :])
                else:
                    cand = xt[:, 2 * h :] + (r * state) @ r_t[:, 2 * h :] + rb[2 * h :]
                new = (1 - z) * act(2 * k + 1, cand) + z * state
                state = xp.where(live[:, None], new, state)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = xp.where((lens > 0)[:, None], state, 0.0)
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        xp.copyto(outs[0], y, casting="unsafe")
        xp.copyto(outs[1], y_h, casting="unsafe")


TABLE = {KernelId.GRU: gru}
