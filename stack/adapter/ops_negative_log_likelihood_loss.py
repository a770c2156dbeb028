"""The importer of NegativeLogLikelihoodLoss (opset 12+), the loss of class log-probabilities
against target classes; in a module of its own, as the adapter's other ops of one kernel
(BitCast, CenterCropPad, DeformConv), since no family module holds a loss.

The IR ``NegativeLogLikelihoodLoss`` takes ONNX's inputs as they are: input [N, C, d1..dk]
(float16, float32 or float64; k >= 0), target [N, d1..dk] (int32 or int64) and the optional
weight [C] of input's type; ``reduction`` (none, sum, mean; default mean) crosses by name and
``ignore_index`` only when the node sets it. What ONNX forbids is a ModelFormatError naming the
node: an older opset, a missing or extra input or output, an input, target or weight of another
type or shape, an unknown reduction, a constant target holding a value that is neither a class
nor the ignore_index (a bfloat16 input, which opset 22 allows, has no IR type and
is refused at the graph input, an UnsupportedTypeError naming the tensor). Constant operands
fold at import. This op ends the ONNX function body of the softmax cross-entropy loss, after
a LogSoftmax.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType

_OP = "NegativeLogLikelihoodLoss"
#: ONNX's reduction names.
REDUCTIONS = ("none", "sum", "mean")


@register(_OP)
def negative_log_likelihood_loss(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """loss = -input[n, target, d1..dk] * weight[target] per place not ignored, reduced (opset
    12+): the IR ``NegativeLogLikelihoodLoss``, of input's type in target's shape (none) or a
    scalar (sum, mean)."""
    ins, outs = present_inputs(proto, len(proto.input)), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if ctx.opset < 12 or not 2 <= len(ins) <= 3 or not all(ins) or len(outs) != 1 or not outs[0]:
        raise bad(f"(opset 12+, model opset {ctx.opset}) takes input, target and an optional "
                  f"weight, and one output, got {list(proto.input)} -> {outs}")  # fmt: skip
    attrs = loss_attributes(ctx, proto, ins, bad, ("input", "target", "weight"))
    ctx.emit(name, OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS, ins, outs, **attrs)


def loss_attributes(
    ctx: ImportContext,
    proto: onnx.NodeProto,
    ins: list[str],
    bad: Callable[[str], ModelFormatError],
    names: tuple[str, str, str],
    plural: bool = False,
) -> dict[str, Any]:
    """The checks a loss of class scores makes of its operands, named ``names`` (the scores,
    the classes, the weights; ``plural`` when the op names them so: SoftmaxCrossEntropyLoss's
    scores, labels, weights), and its attributes for the IR op: ``reduction`` and, when the
    node sets it, ``ignore_index``. ``bad(why)`` is raised for scores that are not a float
    [N, C, d1..dk], classes that are not an int32 or int64 [N, d1..dk], weights that are not
    the scores' [C], an unknown reduction, or constant classes holding a value that is neither
    a class nor the ignore_index."""
    xn, tn, wn = names
    one, an = ("", "") if plural else ("a ", "an ")
    x, target = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    if not x.dtype.is_float or len(x.shape) < 2:
        raise bad(f"takes {one}float16, float32 or float64 {xn} [N, C, d1..dk], got "
                  f"{x.dtype.value}{list(x.shape)}")  # fmt: skip
    places = [x.shape[0], *x.shape[2:]]
    if target.dtype not in (ElemType.I32, ElemType.I64) or list(target.shape) != places:
        raise bad(f"takes {an}int32 or int64 {tn} {places} for {xn} {list(x.shape)}, got "
                  f"{target.dtype.value}{list(target.shape)}")  # fmt: skip
    if len(ins) > 2:
        w = ctx.type_of(ins[2])
        if w.dtype != x.dtype or list(w.shape) != [x.shape[1]]:
            raise bad(f"takes {one}{x.dtype.value} {wn} [{x.shape[1]}], got "
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
            raise bad(f"constant {tn} {'hold' if plural else 'holds'} "
                      f"{int(classes[out].flat[0])}, not a class in [0, {x.shape[1]}) nor the "
                      "ignore_index")  # fmt: skip
    return {"reduction": reduction, **ignore}
