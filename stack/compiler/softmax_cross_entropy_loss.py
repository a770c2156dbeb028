"""SoftmaxCrossEntropyLoss: its shape and dtype rule (registered into
:mod:`stack.compiler.shape_rules`' registry on import) and its constant-folding evaluator
(registered by :mod:`stack.compiler.evaluate_ops`), beside NegativeLogLikelihoodLoss's, whose
loss it ends in; op_rules and evaluate_ops are at their 300 lines.

scores is a float tensor [N, C, d1..dk] (k >= 0), labels int32 or int64 [N, d1..dk], the
optional weights [C] of scores' dtype; ``reduction`` is none, sum or mean and ``ignore_index``,
an int, is present only when the model names one. Two results, both of scores' dtype: output,
labels' shape for none and a scalar for sum and mean, and log_prob, scores' shape. Folding
computes as the device kernel does (:mod:`stack.kmd.kernels.softmax_cross_entropy_loss`): the
log-softmax over axis 1 in float64, the class maximum subtracted first, rounded once to scores'
dtype, then NegativeLogLikelihoodLoss's folder on that log_prob; a label outside [0, C) that is
not ignored is left to the device, which reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler import negative_log_likelihood_loss as nll
from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


@register(OpType.SOFTMAX_CROSS_ENTROPY_LOSS)
def _softmax_cross_entropy_loss(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x, labels = _need(node, t, 0), _need(node, t, 1)
    weights = t[2] if len(t) > 2 else None
    if not x.dtype.is_float or len(x.shape) < 2:
        raise _fail(node, f"SoftmaxCrossEntropyLoss takes float scores [N, C, d1..dk], got {x}")
    places = (x.shape[0], *x.shape[2:])
    if labels.dtype not in (ElemType.I32, ElemType.I64) or labels.shape != places:
        raise _fail(node, f"SoftmaxCrossEntropyLoss takes int32 or int64 labels "
                    f"{list(places)} for scores {x}, got {labels}")  # fmt: skip
    if weights is not None and weights != TensorType(x.dtype, x.shape[1:2]):
        raise _fail(node, f"SoftmaxCrossEntropyLoss takes weights {x.dtype.value}"
                    f"[{x.shape[1]}] for scores {x}, got {weights}")  # fmt: skip
    reduction = node.attr("reduction", "mean")
    if reduction not in nll.REDUCTIONS:
        raise _fail(node, f"unknown reduction {reduction!r}; known: {', '.join(nll.REDUCTIONS)}")
    if not isinstance(node.attr("ignore_index", 0), int):
        raise _fail(node, f"ignore_index {node.attr('ignore_index')!r} is not an int")
    return [TensorType(x.dtype, labels.shape if reduction == "none" else ()), x]


def log_softmax(scores: np.ndarray) -> np.ndarray:
    """The log-softmax of ``scores`` over axis 1 in float64, rounded once to scores' dtype."""
    x = scores.astype(np.float64)
    if x.shape[1]:
        with np.errstate(all="ignore"):  # IEEE results (inf - inf, log 0) are the answer
            shifted = x - x.max(axis=1, keepdims=True)
            x = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    with np.errstate(all="ignore"):
        return x.astype(scores.dtype)


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """output and log_prob of constant operands; declines a label out of range that is not
    ignored (the device kernel reports it)."""
    log_prob = log_softmax(np.asarray(a[0]))
    loss = nll.evaluate(node, [log_prob, *a[1:]])
    return None if loss is None else [*loss, log_prob]
