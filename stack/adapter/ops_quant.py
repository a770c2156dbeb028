"""Importers of the quantisation family: QuantizeLinear, DequantizeLinear, QLinearMatMul,
MatMulInteger (int8/uint8; blocked quantisation and narrow float types are refused) and
DynamicQuantizeLinear (float32 to uint8, the scale and zero point computed from the input)."""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext, attributes, elem_type, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType

QUANT_TYPES = (ElemType.I8, ElemType.U8)


def _check_block(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    if int(attributes(proto).get("block_size", 0)):
        raise ctx.unsupported(
            proto,
            name,
            "blocked quantisation (block_size > 0)",
            layers=("adapter", "compiler", "umd", "kmd"),
        )


def _axis(ctx: ImportContext, proto: onnx.NodeProto) -> int:
    rank = len(ctx.type_of(proto.input[0]).shape)
    axis = int(attributes(proto).get("axis", 1))
    return axis % rank if rank else 0


@register("QuantizeLinear")
def quantize(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    _check_block(ctx, proto, name)
    a = attributes(proto)
    ins = present_inputs(proto, 3)
    target = (
        ctx.type_of(ins[2]).dtype
        if len(ins) > 2
        else (elem_type(int(a["output_dtype"]), name) if "output_dtype" in a else ElemType.U8)
    )
    if target not in QUANT_TYPES:
        raise ctx.unsupported(
            proto,
            name,
            f"quantised type {target.value}: kernels take int8/uint8",
            layers=("compiler", "umd", "kmd"),
        )
    ctx.emit(
        name,
        OpType.QUANTIZE,
        ins,
        [proto.output[0]],
        axis=_axis(ctx, proto),
        output_dtype=target.value,
    )


@register("DequantizeLinear")
def dequantize(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    _check_block(ctx, proto, name)
    src = ctx.type_of(proto.input[0]).dtype
    if src not in (*QUANT_TYPES, ElemType.I32):
        raise ctx.unsupported(
            proto,
            name,
            f"quantised type {src.value}: kernels take int8/uint8/int32",
            layers=("compiler", "umd", "kmd"),
        )
    ins = present_inputs(proto, 3)
    ctx.emit(name, OpType.DEQUANTIZE, ins, [proto.output[0]], axis=_axis(ctx, proto))


@register("QLinearMatMul")
def qlinear_matmul(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, OpType.QLINEARMATMUL, list(proto.input[:8]), [proto.output[0]])


@register("MatMulInteger")
def matmul_integer(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ins = present_inputs(proto, 4)
    ctx.emit(name, OpType.MATMUL_INTEGER, ins, [proto.output[0]])


@register("DynamicQuantizeLinear")
def dynamic_quantize_linear(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """y, y_scale, y_zero_point = DynamicQuantizeLinear(x) (opset 11+, its only version): the
    IR op of that name. ONNX types x float32 and all three outputs required, so another x, a
    missing or extra input or output, or an older opset is a malformed model."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(
            f"DynamicQuantizeLinear {why}", op="DynamicQuantizeLinear", node=name
        )

    ins, outs = list(proto.input), list(proto.output)
    if ctx.opset < 11 or len(ins) != 1 or len(outs) != 3 or not all((*ins, *outs)):
        raise bad(f"(opset 11+, model opset {ctx.opset}) takes x and gives y, y_scale and "
                  f"y_zero_point, got inputs {ins} and outputs {outs}")  # fmt: skip
    x = ctx.type_of(ins[0])
    if x.dtype is not ElemType.F32:
        raise bad(f"takes a float32 x, got {x}")
    ctx.emit(name, OpType.DYNAMIC_QUANTIZE_LINEAR, ins, outs)
