"""The stateful causal depthwise 1-D convolution (ONNX CausalConvWithState, opset 27) for any
``xp``: CAUSAL_CONV_WITH_STATE.

input is [B, C, L] of a float dtype, weight [C, 1, K] (K >= 1) of its dtype, the optional bias
[C] and past_state [B, C, K - 1] of its dtype too (a past_state needs the bias before it, the
optional inputs being a trailing run: the UMD's caller gives a zero bias). The padded input
P = concat(past_state, or K - 1 zeros, input) along the length axis is [B, C, K - 1 + L]; each
channel is convolved with its own kernel, causally (only current and past positions):

    output[b, c, t] = act(sum_k weight[c, 0, k] * P[b, c, t + k] + bias[c])
    present_state = P[:, :, L:]   (the last K - 1 positions, for the next decode step)

``activation`` (:class:`CausalConvActivation`) is none or SiLU (ONNX's "silu" and "swish"),
y * sigmoid(y). The arithmetic is float64 for every float dtype, the taps summed in order and
rounded once to output's dtype (the sigmoid as 1 / (1 + e) or e / (1 + e) with e = exp(-|y|), so
no exponential overflows); NumPy and CuPy agree to float64's rounding of ``exp``.
present_state is a copy of P's last positions, bit for bit. NaN and infinity propagate as the
products and sums carry them. Operands of another dtype or shape, or an unknown activation, are
a kernel fault (a ValueError).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class CausalConvActivation(enum.IntEnum):
    """CAUSAL_CONV_WITH_STATE's ``activation`` (its int immediate). Values are ABI."""

    NONE = 0
    SILU = 1


def check(ins: list[Any], outs: list[Any]) -> int:
    """K of the operands, checked (ValueError naming the operand that does not fit)."""
    x, w = ins[0], ins[1]
    if x.dtype.kind != "f" or x.ndim != 3:
        raise ValueError(f"CausalConvWithState input {x.dtype}{x.shape} is not a float [B, C, L]")
    n, c, length = x.shape
    if w.ndim != 3 or w.shape[:2] != (c, 1) or w.shape[2] < 1:
        raise ValueError(f"CausalConvWithState weight {w.shape} is not [{c}, 1, K >= 1]")
    k = w.shape[2]
    want = {"weight": w.shape, "bias": (c,), "past_state": (n, c, k - 1)}
    named = list(zip(("weight", "bias", "past_state"), ins[1:], strict=False))
    named += [("output", outs[0]), ("present_state", outs[1])]
    want |= {"output": (n, c, length), "present_state": (n, c, k - 1)}
    for name, t in named:
        if t.dtype != x.dtype or t.shape != want[name]:
            raise ValueError(f"CausalConvWithState {name} {t.dtype}{t.shape} is not "
                             f"{x.dtype}{want[name]}")  # fmt: skip
    return int(k)


def silu(xp: Any, y: Any) -> Any:
    """y * sigmoid(y) in y's (float64) precision, no exponential overflowing."""
    e = xp.exp(-xp.abs(y))
    return y * xp.where(y >= 0, 1 / (1 + e), e / (1 + e))


def causal_conv_with_state(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """output = act(causal depthwise conv of concat(past_state, input) + bias); present_state =
    its last K - 1 positions; ints: activation. Operands that do not fit: ValueError."""
    k = check(ins, outs)
    act = int(ints[0]) if ints else 0
    if act not in tuple(CausalConvActivation):
        raise ValueError(f"CausalConvWithState activation {act} is not a CausalConvActivation")
    x, w, y, state = ins[0], ins[1], outs[0], outs[1]
    n, c, length = x.shape
    past = ins[3] if len(ins) > 3 else xp.zeros((n, c, k - 1), x.dtype)
    padded = xp.concatenate([past, x], axis=2)
    xp.copyto(state, padded[:, :, length:])
    if y.size == 0:
        return
    taps = w[:, 0, :].astype(np.float64)
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        acc = taps[None, :, 0, None] * padded[:, :, :length].astype(np.float64)
        for j in range(1, k):
            acc += taps[None, :, j, None] * padded[:, :, j : j + length].astype(np.float64)
        if len(ins) > 2:
            acc += ins[2].astype(np.float64)[None, :, None]
        if act == CausalConvActivation.SILU:
            acc = silu(xp, acc)
        xp.copyto(y, acc, casting="unsafe")


TABLE = {KernelId.CAUSAL_CONV_WITH_STATE: causal_conv_with_state}
