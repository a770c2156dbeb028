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
naming the tensor). Constant operands fold at import.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType

_OP = "SoftmaxCrossEntropyLoss"
#: ONNX's reduction names.
REDUCTIONS = ("none", "sum", "mean")


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
    x, labels = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    if not x.dtype.is_float or len(x.shape) < 2:
        raise bad(f"takes float16, float32 or float64 scores [N, C, d1..dk], got "
                  f"{x.dtype.value}{list(x.shape)}")  # fmt: skip
    places = [x.shape[0], *x.shape[2:]]
    if labels.dtype not in (ElemType.I32, ElemType.I64) or list(labels.shape) != places:
        raise bad(f"takes int32 or int64 labels {places} for scores {list(x.shape)}, got "
                  f"{labels.dtype.value}{list(labels.shape)}")  # fmt: skip
    if len(ins) > 2:
        w = ctx.type_of(ins[2])
        if w.dtype != x.dtype or list(w.shape) != [x.shape[1]]:
            raise bad(f"takes {x.dtype.value} weights [{x.shape[1]}], got "
                      f"{w.dtype.value}{list(w.shape)}")  # fmt: skip
    a = attributes(proto)
    reduction = a.get("reduction", "mean")
    if reduction not in REDUCTIONS:
        raise bad(f"reduction {reduction!r} is not one of {', '.join(REDUCTIONS)}")
    ignore = {"ignore_index": int(a["ignore_index"])} if "ignore_index" in a else {}
    classes = ctx.const(ins[1])
    if classes is not None:
        out = (classes < 0) | (classes >= x.shape[1])
        if "ignore_index" in a:
            out &= classes != ignore["ignore_index"]
        if out.any():
            raise bad(f"constant labels hold {int(classes[out].flat[0])}, not a class in "
                      f"[0, {x.shape[1]}) nor the ignore_index")  # fmt: skip
    if len(outs) < 2:
        outs.append(ctx.fresh(f"{name}.log_prob"))
    ctx.emit(name, OpType.SOFTMAX_CROSS_ENTROPY_LOSS, ins, outs, reduction=reduction, **ignore)
