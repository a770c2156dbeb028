"""The long short-term memory (ONNX LSTM, opsets 7, 14 and 22) for any ``xp``: LSTM.

Operands in ONNX's order: X [S, N, I] (layout 0) or [N, S, I] (layout 1) of a float dtype,
W [D, 4H, I], R [D, 4H, H] (the gates' rows in ONNX's order i, o, f, c), then the optional
B [D, 8H] (Wb then Rb, each i, o, f, c), sequence_lens [N] int32, initial_h and initial_c
[D, N, H] (layout 1: [N, D, H]) and P [D, 3H] (the peepholes i, o, f), a trailing run (the UMD's
caller fills the ones left out before a given one: zero biases, full lengths, zero states, zero
peepholes). D is 1 for the forward and reverse directions, 2 for bidirectional (direction 0 runs
forward, direction 1 in reverse). Each direction d runs its batch entries b over their first
sequence_lens[b] steps, f, g and h its three activations:

    i_t = f(clip(X_t Wi^T + H_(t-1) Ri^T + Pi * C_(t-1) + Wbi + Rbi))
    f_t = f(clip(X_t Wf^T + H_(t-1) Rf^T + Pf * C_(t-1) + Wbf + Rbf))   input_forget: 1 - i_t
    c_t = g(clip(X_t Wc^T + H_(t-1) Rc^T + Wbc + Rbc))
    C_t = f_t * C_(t-1) + i_t * c_t
    o_t = f(clip(X_t Wo^T + H_(t-1) Ro^T + Po * C_t + Wbo + Rbo))
    H_t = o_t * h(C_t)

Y [S, D, N, H] (layout 1: [N, S, D, H]) holds H_t at its time step, zeros past an entry's
length; Y_h and Y_c [D, N, H] (layout 1: [N, D, H]) the last H and C of each direction, zeros
for an entry of length 0 (as onnxruntime). ``clip`` (0: none) bounds every gate's pre-activation
to [-clip, clip]; ``activation_{3d}`` to ``activation_{3d+2}``
(:class:`~stack.kmd.kernels.rnn.RnnActivation`, RNN's codes) with their alphas and betas are f,
g and h of direction d. The arithmetic is float64 for every float dtype, the states carried
unrounded and rounded once to the outputs' dtype; NaN and infinity propagate. Operands of
another dtype or shape, a length outside [0, S], or an unknown direction, layout, input_forget
or activation are a kernel fault (a ValueError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnActivation, RnnDirection, activate

_NAMES = ("W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
_DEFAULTS = (0, 0, 0, 2, 0, 0, 2, 0, 0)  # direction, layout, input_forget, then f, g, h twice


def shapes(x: tuple[int, ...], w: tuple[int, ...], layout: int) -> dict[str, tuple[int, ...]]:
    """Every operand's shape for X and W of these shapes and ``layout`` (x and w of rank 3, W's
    second axis 4H)."""
    s, n = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    d, h = w[0], w[1] // 4
    state = (d, n, h) if layout == 0 else (n, d, h)
    return {"W": (d, 4 * h, x[2]), "R": (d, 4 * h, h), "B": (d, 8 * h), "sequence_lens": (n,),
            "initial_h": state, "initial_c": state, "P": (d, 3 * h),
            "Y": (s, d, n, h) if layout == 0 else (n, s, d, h), "Y_h": state,
            "Y_c": state}  # fmt: skip


def check(ins: list[Any], outs: list[Any], direction: int, layout: int) -> None:
    """The operands checked against X and W (ValueError naming the one that does not fit)."""
    x, w = ins[0], ins[1]
    if x.dtype.kind != "f" or x.ndim != 3 or w.ndim != 3 or w.shape[1] % 4:
        raise ValueError(f"LSTM X {x.dtype}{x.shape} and W {w.shape} are not float, rank 3, 4H")
    if layout not in (0, 1) or direction not in tuple(RnnDirection):
        raise ValueError(f"LSTM direction {direction} or layout {layout} is unknown")
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    want = shapes(x.shape, w.shape, layout)
    if w.shape[0] != d:
        raise ValueError(f"LSTM W {w.shape} has not {d} directions")
    named = [*zip(_NAMES, ins[1:], strict=False), *zip(("Y", "Y_h", "Y_c"), outs, strict=True)]
    for name, t in named:
        dtype = np.dtype(np.int32) if name == "sequence_lens" else x.dtype
        if t.dtype != dtype or t.shape != want[name]:
            raise ValueError(f"LSTM {name} {t.dtype}{t.shape} is not {dtype}{want[name]}")


def _operand(xp: Any, ins: list[Any], j: int, zero: tuple[int, ...], layout: int) -> Any:
    """Input j in float64 and layout 0 (a state), zeros of ``zero``'s shape when absent."""
    if len(ins) <= j:
        return xp.zeros(zero, np.float64)
    v = ins[j].astype(np.float64)
    return v if layout == 0 or v.ndim != 3 else v.transpose(1, 0, 2)


def lstm(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y, Y_h and Y_c of the LSTM; ints: direction, layout, input_forget, activation_0 ..
    activation_5 (f, g and h of each direction); floats: clip (0: none), then alpha_k and beta_k
    of each activation k. Operands that do not fit: ValueError."""
    direction, layout, coupled, *acts = (*ints, *_DEFAULTS[len(ints) :])[:9]
    clip, *params = (*fl, *(0.0,) * 13)[:13]
    check(ins, outs, direction, layout)
    if coupled not in (0, 1) or any(a not in tuple(RnnActivation) for a in acts):
        raise ValueError(f"LSTM input_forget {coupled} or activations {acts} are unknown")
    x = ins[0] if layout == 0 else ins[0].transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = ins[1].shape[0], ins[1].shape[1] // 4
    bias = _operand(xp, ins, 3, (d, 8 * h), layout)
    lens = ins[4].astype(np.int64) if len(ins) > 4 else xp.full((n,), steps, np.int64)
    if n and bool(xp.any((lens < 0) | (lens > steps))):
        raise ValueError(f"LSTM sequence_lens must lie in [0, {steps}]")
    h0, c0 = (_operand(xp, ins, j, (d, n, h), layout) for j in (5, 6))
    peep = _operand(xp, ins, 7, (d, 3 * h), layout)
    y = xp.zeros((steps, d, n, h), np.float64)
    y_h, y_c = xp.zeros((d, n, h), np.float64), xp.zeros((d, n, h), np.float64)
    rows = xp.arange(n)

    def act(k: int, v: Any, bound: bool = True) -> Any:
        v = xp.clip(v, -clip, clip) if clip > 0 and bound else v
        return activate(xp, acts[k], v, params[2 * k], params[2 * k + 1])

    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for k in range(d):
            back = k == 1 or direction == RnnDirection.REVERSE
            xw = x.astype(np.float64) @ ins[1][k].astype(np.float64).T + bias[k, : 4 * h]
            r_t, rb = ins[2][k].astype(np.float64).T, bias[k, 4 * h :]
            p_i, p_o, p_f = peep[k, :h], peep[k, h : 2 * h], peep[k, 2 * h :]
            hs, cs = h0[k], c0[k]
            for t in range(steps):
                live = t < lens
                at = xp.where(live, lens - 1 - t if back else t, 0)
                g = xw[at, rows] + hs @ r_t + rb
                i = act(3 * k, g[:, :h] + p_i * cs)
                f = 1 - i if coupled else act(3 * k, g[:, 2 * h : 3 * h] + p_f * cs)
                c = f * cs + i * act(3 * k + 1, g[:, 3 * h :])
                o = act(3 * k, g[:, h : 2 * h] + p_o * c)
                new = o * act(3 * k + 2, c, bound=False)
                hs = xp.where(live[:, None], new, hs)
                cs = xp.where(live[:, None], c, cs)
                y[at[live], k, rows[live]] = new[live]
            y_h[k] = xp.where((lens > 0)[:, None], hs, 0.0)
            y_c[k] = xp.where((lens > 0)[:, None], cs, 0.0)
    if layout == 1:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    with np.errstate(over="ignore"):  # a state past float16's range rounds to infinity
        for out, v in zip(outs, (y, y_h, y_c), strict=True):
            xp.copyto(out, v, casting="unsafe")


TABLE = {KernelId.LSTM: lstm}
