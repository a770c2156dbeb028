"""The negative log-likelihood loss (ONNX NegativeLogLikelihoodLoss) for any ``xp``:
NEGATIVE_LOG_LIKELIHOOD_LOSS.

input is [N, C, d1..dk] (k >= 0) of a float dtype, target [N, d1..dk] I32 or I64 of class
indices, the optional weight [C] of input's dtype. Each place p = (n, d1..dk) whose target
c = target[p] is not ``ignore_index`` (when ``has_ignore_index`` is 1) loses
-input[n, c, d1..dk] * weight[c] (weight 1 when absent); an ignored place loses 0 and weighs 0.
A target outside [0, C) that is not ignored is a kernel fault (onnxruntime's refusal; ONNX's
reference wraps a negative one). ``reduction`` (:class:`LossReduction`) writes the loss per
place (none: of target's shape), their sum or their weighted mean (the sum over the sum of the
weights of the places not ignored: 0 / 0, NaN, when every place is ignored), the last two as a
0-d output.

Every product and sum is computed in float64 for float16, float32 and float64 alike and rounded
once to input's dtype: a product of two float32 (or float16) values is exact in float64, so the
loss per place is ONNX's exactly, and the reductions round once, so NumPy and CuPy agree to
float64's rounding of the sum. An input, target, weight or loss that does not fit is a kernel
fault.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class LossReduction(enum.IntEnum):
    """NEGATIVE_LOG_LIKELIHOOD_LOSS's ``reduction`` (an int immediate). Values are ABI."""

    NONE = 0
    SUM = 1
    MEAN = 2


def _check(x: Any, t: Any, w: Any, loss: Any, reduction: LossReduction) -> None:
    """ValueError naming the operand that does not fit."""
    if x.dtype.kind != "f" or x.ndim < 2:
        raise ValueError(f"NegativeLogLikelihoodLoss input {x.dtype}{x.shape} is not a float "
                         "[N, C, d1..dk]")  # fmt: skip
    if t.dtype not in (np.int32, np.int64) or t.shape != (x.shape[0], *x.shape[2:]):
        raise ValueError(f"NegativeLogLikelihoodLoss target {t.dtype}{t.shape} is not an "
                         f"int32 or int64 {(x.shape[0], *x.shape[2:])}")  # fmt: skip
    if w is not None and (w.dtype != x.dtype or w.shape != x.shape[1:2]):
        raise ValueError(f"NegativeLogLikelihoodLoss weight {w.dtype}{w.shape} is not "
                         f"{x.dtype}{x.shape[1:2]}")  # fmt: skip
    want = t.shape if reduction is LossReduction.NONE else ()
    if loss.dtype != x.dtype or loss.shape != want:
        raise ValueError(f"NegativeLogLikelihoodLoss loss {loss.dtype}{loss.shape} is not "
                         f"{x.dtype}{want} (reduction {reduction.name.lower()})")  # fmt: skip


def negative_log_likelihood_loss(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """loss = the (weighted, reduced) -input[n, target, ...]; ints: reduction,
    has_ignore_index, ignore_index. An operand that does not fit is a ValueError, a target out
    of range an IndexError."""
    x, target, loss = ins[0], ins[1], outs[0]
    weight = ins[2] if len(ins) > 2 else None
    reduction = LossReduction(ints[0])
    _check(x, target, weight, loss, reduction)
    n, c = x.shape[:2]
    places = math.prod(x.shape[2:])
    t = target.reshape(n, places).astype(np.int64)
    kept = t != ints[2] if ints[1] else xp.ones(t.shape, dtype=bool)
    if t.size and bool((((t < 0) | (t >= c)) & kept).any()):
        raise IndexError(f"NegativeLogLikelihoodLoss target out of range for {c} classes")
    cls = xp.where(kept, t, 0)
    if c:
        picked = xp.take_along_axis(x.reshape(n, c, places), cls[:, None, :], axis=1)[:, 0]
    else:  # no class at all: every place is ignored (or the target was out of range)
        picked = xp.zeros(t.shape, dtype=x.dtype)
    w = weight.astype(np.float64)[cls] if weight is not None else xp.ones(t.shape)
    w = xp.where(kept, w, 0.0)
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN, 0 / 0) are the answer
        per = xp.where(kept, -picked.astype(np.float64) * w, 0.0)
        if reduction is LossReduction.NONE:
            xp.copyto(loss, per.reshape(loss.shape), casting="unsafe")
        elif reduction is LossReduction.SUM:
            xp.copyto(loss, per.sum(), casting="unsafe")
        else:
            xp.copyto(loss, per.sum() / w.sum(), casting="unsafe")


TABLE = {KernelId.NEGATIVE_LOG_LIKELIHOOD_LOSS: negative_log_likelihood_loss}
