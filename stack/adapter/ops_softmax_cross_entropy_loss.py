"""The importer of SoftmaxCrossEntropyLoss (opset 12+), the loss of class scores against label
classes after a log-softmax over the classes; in a module of its own, as the adapter's other
ops of one kernel (NegativeLogLikelihoodLoss, BitCast, CenterCropPad, DeformConv).

The IR ``SoftmaxCrossEntropyLoss`` takes ONNX's inputs as they are: scores [N, C, d1..dk]
(float16, float32 or float64; k >= 0), labels [N, d1..dk] (int32 or int64) and the optional
weights [C] of scores' type; ``reduction`` (none, sum, mean; default mean) crosses by name and
``ignore_index`` only when the node sets it. It always has two outputs, output and log_prob: a
node that does not ask for log_prob gets a fresh value for it, which nothing reads. What ONNX
forbids is a ModelFormatError naming the node: an older opset, a missing or extra input or
output, scores, labels or weights of another type or shape, an unknown reduction, a constant
labels holding a value that is neither a class nor the ignore_index (a bfloat16 scores, which
opset 22 allows, has no IR type and is refused at the graph input, an UnsupportedTypeError
naming the tensor). Constant operands fold at import. The operands and attributes are checked
as NegativeLogLikelihoodLoss's are (:func:`~stack.adapter.ops_negative_log_likelihood_loss.
loss_attributes`), under this op's names for them.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_negative_log_likelihood_loss import loss_attributes
from stack.adapter.registry import register
from stack.compiler import OpType

_OP = "SoftmaxCrossEntropyLoss"


@register(_OP)
def softmax_cross_entropy_loss(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """log_prob = LogSoftmax(scores, axis 1); output = -log_prob[n, labels, d1..dk] *
    weights[labels] per place not ignored, reduced (opset 12+): the IR
    ``SoftmaxCrossEntropyLoss`` of scores' type, output in labels' shape (none) or a scalar (sum,
    mean), log_prob in scores' shape."""
    ins, outs = present_inputs(proto, len(proto.input)), list(proto.output)
    while len(outs) > 1 and not outs[-1]:
        outs.pop()

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if (ctx.opset < 12 or not 2 <= len(ins) <= 3 or not all(ins) or not 1 <= len(outs) <= 2
            or not outs[0]):  # fmt: skip
        raise bad(f"(opset 12+, model opset {ctx.opset}) takes scores, labels and optional "
                  f"weights, and output and an optional log_prob, got {list(proto.input)} -> "
                  f"{list(proto.output)}")  # fmt: skip
    attrs = loss_attributes(ctx, proto, ins, bad, ("scores", "labels", "weights"), plural=True)
    if len(outs) < 2:
        outs.append(ctx.fresh(f"{name}.log_prob"))
    ctx.emit(name, OpType.SOFTMAX_CROSS_ENTROPY_LOSS, ins, outs, **attrs)
