"""CausalConvWithState: its shape and dtype rule (registered into
:mod:`stack.compiler.shape_rules`' registry on import), the check of its operands and activation
the importer shares, and its constant-folding evaluator (registered by
:mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300 lines); spatial_rules, where
Conv's rule is, is near its 300 lines too.

input is a float tensor [B, C, L], weight [C, 1, K] (K >= 1, one kernel per channel), the
optional bias [C] and past_state [B, C, K - 1], all of input's dtype; ``activation`` (a string,
default none) is none, silu or swish (SiLU either way). Two results of input's dtype: output
[B, C, L] and present_state [B, C, K - 1]. Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.causal_conv_with_state`): P = concat(past_state or zeros, input) on
the length axis, output = act(sum_k weight[c, 0, k] * P[b, c, t + k] + bias[c]) in float64,
the taps summed in order, rounded once to input's dtype; present_state P's last K - 1
positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: The values of the IR op's ``activation`` (ONNX's names); silu and swish are both SiLU.
ACTIVATIONS = ("none", "silu", "swish")


def problem(
    x: TensorType, w: TensorType, bias: TensorType | None, past: TensorType | None
) -> str | None:
    """What makes these operands no CausalConvWithState's, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) != 3:
        return f"takes a float input [B, C, L], got {x}"
    n, c, _ = x.shape
    if w.dtype != x.dtype or len(w.shape) != 3 or w.shape[:2] != (c, 1) or w.shape[2] < 1:
        return f"takes a weight {x.dtype.value}[{c}, 1, K] (K >= 1) for input {x}, got {w}"
    state = TensorType(x.dtype, (n, c, w.shape[2] - 1))
    if bias is not None and bias != TensorType(x.dtype, (c,)):
        return f"takes a bias {x.dtype.value}[{c}] for input {x}, got {bias}"
    if past is not None and past != state:
        return f"takes a past_state {state} for input {x} and weight {w}, got {past}"
    return None


def activation_problem(activation: object) -> str | None:
    """What makes ``activation`` none of ACTIVATIONS, or None when it is one."""
    if activation in ACTIVATIONS:
        return None
    return f"takes activation {', '.join(ACTIVATIONS)}, got {activation!r}"


@register(OpType.CAUSAL_CONV_WITH_STATE)
def _causal_conv_with_state(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x, w = _need(node, t, 0), _need(node, t, 1)
    bias, past = (t[i] if len(t) > i else None for i in (2, 3))
    why = problem(x, w, bias, past) or activation_problem(node.attr("activation", "none"))
    if why is not None:
        raise _fail(node, f"CausalConvWithState {why}")
    return [x, TensorType(x.dtype, (*x.shape[:2], w.shape[2] - 1))]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """output and present_state of constant operands, as the device kernel computes them."""
    x, w = np.asarray(a[0]), np.asarray(a[1])
    n, c, length = x.shape
    k = w.shape[2]
    past = np.asarray(a[3]) if len(a) > 3 else np.zeros((n, c, k - 1), x.dtype)
    padded = np.concatenate([past, x], axis=2)
    taps = w[:, 0, :].astype(np.float64)
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        acc = taps[None, :, 0, None] * padded[:, :, :length].astype(np.float64)
        for j in range(1, k):
            acc += taps[None, :, j, None] * padded[:, :, j : j + length].astype(np.float64)
        if len(a) > 2:
            acc += np.asarray(a[2]).astype(np.float64)[None, :, None]
        if node.attr("activation", "none") != "none":
            e = np.exp(-np.abs(acc))
            acc = acc * np.where(acc >= 0, 1 / (1 + e), e / (1 + e))
        return [acc.astype(x.dtype), padded[:, :, length:].copy()]
