"""The softmax cross-entropy loss (ONNX SoftmaxCrossEntropyLoss) for any ``xp``:
SOFTMAX_CROSS_ENTROPY_LOSS.

scores is [N, C, d1..dk] (k >= 0) of a float dtype, labels [N, d1..dk] I32 or I64 of class
indices, the optional weights [C] of scores' dtype. The kernel writes log_prob, the log-softmax
of scores over the class axis (axis 1), computed stably in float64 (the class maximum is
subtracted before the exponentials) and rounded once to scores' dtype; then output, the loss of
that log_prob against labels exactly as NEGATIVE_LOG_LIKELIHOOD_LOSS computes it (its kernel
function runs on log_prob: -log_prob[n, c, d1..dk] * weights[c] per place whose label c is not
``ignore_index``, an ignored place losing 0 and weighing 0; ``reduction`` a
:class:`~stack.kmd.kernels.negative_log_likelihood_loss.LossReduction`: none of labels' shape,
sum, or mean over the sum of the weights, NaN when every place is ignored, the last two 0-d),
as ONNX's function body does after its LogSoftmax. Both outputs are always written. A label
outside [0, C) that is not ignored is a kernel fault, as is an operand of another dtype or
shape. NaN and infinity propagate as onnxruntime's and ONNX's reference carry them: a place
whose scores hold a NaN or a +inf, or are all -inf, has a NaN log_prob for every class; a -inf
score among finite ones a -inf log_prob.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.negative_log_likelihood_loss import negative_log_likelihood_loss


def log_softmax(xp: Any, scores: Any) -> Any:
    """The float64 log-softmax of ``scores`` over axis 1 (an axis of 0 classes gives nothing)."""
    x = scores.astype(np.float64)
    if x.shape[1] == 0:
        return x
    with np.errstate(all="ignore"):  # IEEE results (inf - inf, log 0) are the answer
        shifted = x - x.max(axis=1, keepdims=True)
        return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


def softmax_cross_entropy_loss(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """log_prob = log_softmax(scores, axis 1); output = NEGATIVE_LOG_LIKELIHOOD_LOSS(log_prob,
    labels, weights); ints: reduction, has_ignore_index, ignore_index. An operand that does not
    fit is a ValueError, a label out of range an IndexError."""
    scores, log_prob = ins[0], outs[1]
    if scores.dtype.kind != "f" or scores.ndim < 2:
        raise ValueError(f"SoftmaxCrossEntropyLoss scores {scores.dtype}{scores.shape} is not a "
                         "float [N, C, d1..dk]")  # fmt: skip
    if log_prob.dtype != scores.dtype or log_prob.shape != scores.shape:
        raise ValueError(f"SoftmaxCrossEntropyLoss log_prob {log_prob.dtype}{log_prob.shape} is "
                         f"not {scores.dtype}{scores.shape}")  # fmt: skip
    with np.errstate(all="ignore"):  # a log-probability past the dtype's range rounds to -inf
        xp.copyto(log_prob, log_softmax(xp, scores), casting="unsafe")
    negative_log_likelihood_loss(xp, [log_prob, *ins[1:]], outs[:1], ints, fl)


TABLE = {KernelId.SOFTMAX_CROSS_ENTROPY_LOSS: softmax_cross_entropy_loss}
