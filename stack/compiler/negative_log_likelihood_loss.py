"""NegativeLogLikelihoodLoss: its shape and dtype rule (registered into
:mod:`stack.compiler.shape_rules`' registry on import) and its constant-folding evaluator
(registered by :mod:`stack.compiler.evaluate_ops`); op_rules, where the reductions' rule is, and
evaluate_ops are at their 300 lines.

input is a float tensor [N, C, d1..dk] (k >= 0), target int32 or int64 [N, d1..dk], the optional
weight [C] of input's dtype; ``reduction`` is none, sum or mean and ``ignore_index``, an int, is
present only when the model names one. The result is of input's dtype: target's shape for none,
a scalar for sum and mean. Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.negative_log_likelihood_loss`): the loss per place and its reductions in
float64, rounded once to input's dtype; an ignored place loses 0 and weighs 0, so a mean over
places all ignored is NaN. A target outside [0, C) that is not ignored is left to the device,
which reports it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: NegativeLogLikelihoodLoss's ``reduction`` values.
REDUCTIONS = ("none", "sum", "mean")


@register(OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS)
def _negative_log_likelihood_loss(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x, target = _need(node, t, 0), _need(node, t, 1)
    weight = t[2] if len(t) > 2 else None
    if not x.dtype.is_float or len(x.shape) < 2:
        raise _fail(node, f"NegativeLogLikelihoodLoss takes a float input [N, C, d1..dk], got {x}")
    places = (x.shape[0], *x.shape[2:])
    if target.dtype not in (ElemType.I32, ElemType.I64) or target.shape != places:
        raise _fail(node, f"NegativeLogLikelihoodLoss takes an int32 or int64 target "
                    f"{list(places)} for input {x}, got {target}")  # fmt: skip
    if weight is not None and weight != TensorType(x.dtype, x.shape[1:2]):
        raise _fail(node, f"NegativeLogLikelihoodLoss takes a weight {x.dtype.value}"
                    f"[{x.shape[1]}] for input {x}, got {weight}")  # fmt: skip
    reduction = node.attr("reduction", "mean")
    if reduction not in REDUCTIONS:
        raise _fail(node, f"unknown reduction {reduction!r}; known: {', '.join(REDUCTIONS)}")
    if not isinstance(node.attr("ignore_index", 0), int):
        raise _fail(node, f"ignore_index {node.attr('ignore_index')!r} is not an int")
    return [TensorType(x.dtype, target.shape if reduction == "none" else ())]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The loss of constant operands, in float64 rounded once; declines a target out of range
    that is not ignored (the device kernel reports it)."""
    x, target = np.asarray(a[0]), np.asarray(a[1])
    weight = np.asarray(a[2]) if len(a) > 2 else None
    n, c = x.shape[:2]
    places = math.prod(x.shape[2:])
    t = target.reshape(n, places).astype(np.int64)
    ignore = node.attr("ignore_index")
    kept = t != ignore if ignore is not None else np.ones(t.shape, dtype=bool)
    if t.size and bool((((t < 0) | (t >= c)) & kept).any()):
        return None
    cls = np.where(kept, t, 0)
    if c:
        picked = np.take_along_axis(x.reshape(n, c, places), cls[:, None, :], axis=1)[:, 0]
    else:
        picked = np.zeros(t.shape, dtype=x.dtype)
    w = weight.astype(np.float64)[cls] if weight is not None else np.ones(t.shape)
    w = np.where(kept, w, 0.0)
    reduction = node.attr("reduction", "mean")
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN, 0 / 0) are the answer
        per = np.where(kept, -picked.astype(np.float64) * w, 0.0)
        if reduction == "none":
            return [per.reshape(target.shape).astype(x.dtype)]
        total = per.sum() if reduction == "sum" else per.sum() / w.sum()
        return [np.asarray(total).astype(x.dtype)]
