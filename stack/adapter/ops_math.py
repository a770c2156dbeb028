"""Importers of the arithmetic family: Gemm, MatMul, Einsum, Det, Add/Sub/Mul/Div, SwiGLU, Sum,
Relu, Softmax, LayerNormalization."""

from __future__ import annotations

import math

import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import OpType, ShapeInferenceError
from stack.compiler.einsum import problem as einsum_problem
from stack.compiler.swiglu import problem as swiglu_problem

_BINARY = {"Add": OpType.ADD, "Sub": OpType.SUB, "Mul": OpType.MUL, "Div": OpType.DIV}


@register("Gemm")
def gemm(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    ins = present_inputs(proto, 3)
    ctx.emit(
        name,
        OpType.GEMM,
        ins,
        [proto.output[0]],
        trans_a=int(a.get("transA", 0)),
        trans_b=int(a.get("transB", 0)),
        alpha=float(a.get("alpha", 1.0)),
        beta=float(a.get("beta", 1.0)),
    )


@register("MatMul")
def matmul(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, OpType.MATMUL, list(proto.input[:2]), [proto.output[0]])


@register("Einsum")
def einsum(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = the Einstein sum of the inputs by ``equation`` (opset 12+): the IR ``Einsum`` with
    the equation as ONNX gives it. An older opset, no input or a missing one, not one output, no
    equation, inputs of mixed types or of a type other than float16, float32, float64, int32 or
    int64, or an equation that is not one term of letters (at most one '...') per input, whose
    terms do not fit the inputs' ranks, whose letters' sizes clash or whose output repeats a
    letter or names one no input has, is a ModelFormatError naming the node."""
    ins, outs = list(proto.input), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"Einsum {why}", op="Einsum", node=name)

    if ctx.opset < 12 or not ins or not all(ins) or len(outs) != 1 or not outs[0]:
        raise bad(f"(opset 12+, model opset {ctx.opset}) takes one or more inputs and one "
                  f"output, got {ins} -> {outs}")  # fmt: skip
    equation = attributes(proto).get("equation")
    if equation is None:
        raise bad("needs its equation attribute")
    why = einsum_problem(equation, [ctx.type_of(i) for i in ins])
    if why is not None:
        raise bad(why)
    ctx.emit(name, OpType.EINSUM, ins, outs, equation=equation)


@register("Det")
def det(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y[*] = det(X[*, M, M]) (opset 11+): the IR ``Det``. An older opset, a missing or extra
    input or output, an X that is not float16, float32 or float64 (bfloat16 has no IR type and
    is refused at the graph input), of rank below 2 or whose trailing axes differ is a
    ModelFormatError naming the node."""
    ins, outs = list(proto.input), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"Det {why}", op="Det", node=name)

    if ctx.opset < 11 or len(ins) != 1 or not ins[0] or len(outs) != 1 or not outs[0]:
        raise bad(f"(opset 11+, model opset {ctx.opset}) takes one input and one output, "
                  f"got {ins} -> {outs}")  # fmt: skip
    x = ctx.type_of(ins[0])
    if not x.dtype.is_float:
        raise bad(f"takes a float16, float32 or float64 X, got {x.dtype.value}")
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise bad(f"takes X of shape [*, M, M] (square trailing matrices), got {list(x.shape)}")
    ctx.emit(name, OpType.DET, ins, outs)


@register(*_BINARY)
def binary(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, _BINARY[proto.op_type], list(proto.input[:2]), [proto.output[0]])


@register("SwiGLU")
def swiglu(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = A * sigmoid(alpha * A) * B, the Swish of the gate A times the linear value B (opset
    28+): the IR ``SwiGLU`` of A and B with ``alpha`` (default 1.0) always set. An older opset,
    a missing or extra input or output, an A that is not float16, float32 or float64 (bfloat16
    has no IR type and is refused at the graph input) or a B of another type or shape (SwiGLU
    does not broadcast) is a ModelFormatError naming the node."""
    ins, outs = list(proto.input), list(proto.output)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"SwiGLU {why}", op="SwiGLU", node=name)

    if ctx.opset < 28 or len(ins) != 2 or not all(ins) or len(outs) != 1 or not outs[0]:
        raise bad(f"(opset 28+, model opset {ctx.opset}) takes A and B, and one output Y, "
                  f"got {ins} -> {outs}")  # fmt: skip
    why = swiglu_problem(ctx.type_of(ins[0]), ctx.type_of(ins[1]))
    if why is not None:
        raise bad(why)
    alpha = float(attributes(proto).get("alpha", 1.0))
    ctx.emit(name, OpType.SWIGLU, ins, outs, alpha=alpha)


@register("Sum")
def sum_(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, OpType.SUM, [v for v in proto.input if v], [proto.output[0]])


@register("Relu")
def relu(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, OpType.RELU, [proto.input[0]], [proto.output[0]])


@register("Softmax", "LogSoftmax")
def softmax(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    log = int(proto.op_type == "LogSoftmax")
    x = proto.input[0]
    shape = ctx.type_of(x).shape
    default = -1 if ctx.opset >= 13 else 1
    axis = int(attributes(proto).get("axis", default))
    if shape and not -len(shape) <= axis < len(shape):
        raise ShapeInferenceError(
            f"axis {axis} is out of range for a rank-{len(shape)} tensor",
            op=proto.op_type,
            node=name,
        )
    axis = axis % max(len(shape), 1)
    if ctx.opset >= 13 or axis == len(shape) - 1:
        ctx.emit(name, OpType.SOFTMAX, [x], [proto.output[0]], axis=axis, log=log)
        return
    # opset < 13: softmax over the flattened trailing block [axis:]
    flat = (math.prod(shape[:axis]), math.prod(shape[axis:]))
    x2, y2 = ctx.fresh(f"{name}.x2d"), ctx.fresh(f"{name}.y2d")
    ctx.emit(ctx.fresh(f"{name}.view"), OpType.RESHAPE, [x], [x2], shape=flat)
    ctx.emit(name, OpType.SOFTMAX, [x2], [y2], axis=1, log=log)
    ctx.emit(ctx.fresh(f"{name}.view"), OpType.RESHAPE, [y2], [proto.output[0]], shape=shape)


@register("LayerNormalization")
def layernorm(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    ins = present_inputs(proto, 3)
    ctx.emit(
        name,
        OpType.LAYERNORM,
        ins,
        list(proto.output),
        axis=int(a.get("axis", -1)),
        epsilon=float(a.get("epsilon", 1e-5)),
    )
