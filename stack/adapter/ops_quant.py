"""Importers of the quantisation family: QuantizeLinear, DequantizeLinear, QLinearMatMul,
MatMulInteger (int8/uint8; blocked quantisation and narrow float types are refused),
DynamicQuantizeLinear (float32 to uint8, the scale and zero point computed from the input),
ConvInteger (MatMulInteger's convolution) and QLinearConv (QLinearMatMul's): the integer
convolutions share Conv's window, resolved by :mod:`stack.adapter.ops_nn`'s helpers (1-D
promoted to 2-D, 3-D refused), checked by :func:`_integer_window`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, elem_type, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_nn import _finish, _ints, _promote, _spatial, _to2d, _window
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType, TensorType, conv_out

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


_AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
Bad = Callable[[str], ModelFormatError]


def _integer_window(
    ctx: ImportContext, proto: onnx.NodeProto, name: str, bad: Bad, xt: TensorType, wt: TensorType
) -> tuple[int, dict]:
    """The spatial rank (1 or 2; 3-D an UnsupportedOpError naming the layers) and the 2-D
    window attributes (group, strides, pads, dilations; auto_pad resolved) of an integer
    convolution of x by w. ONNX types x and w int8 or uint8 and gives Conv's attributes, so a
    dtype, a rank, an attribute, channels or a kernel that do not fit is ``bad`` (a
    ModelFormatError naming the node)."""
    if xt.dtype not in QUANT_TYPES or wt.dtype not in QUANT_TYPES:
        raise bad(f"takes an int8 or uint8 x and w, got {xt} and {wt}")
    if len(xt.shape) < 3 or len(wt.shape) != len(xt.shape):
        raise bad(f"x {xt} needs N, C and a spatial axis, w {wt} x's rank")
    rank = _spatial(ctx, proto, name)  # 1-D or 2-D: the kernels are 2-D (NCHW)
    a = attributes(proto)
    (c, m, cg), kernel = (xt.shape[1], *wt.shape[:2]), list(wt.shape[2:])
    group = int(a.get("group", 1))
    if list(a.get("kernel_shape", kernel)) != kernel:
        raise bad(f"kernel_shape {list(a['kernel_shape'])} differs from w {wt}")
    if group < 1 or c != cg * group or m % group:
        raise bad(f"x's {c} channels, w {wt} and group {group} disagree")
    if a.get("auto_pad", "NOTSET") not in _AUTO_PADS:
        raise bad(f"auto_pad {a['auto_pad']!r} is not one of {', '.join(_AUTO_PADS)}")
    for key, n, least in (("strides", rank, 1), ("dilations", rank, 1), ("pads", 2 * rank, 0)):
        _ints(proto, name, key, n, least, least)  # n values >= least (the default), else bad
    win = _window(ctx, proto, name, xt.shape[2:], kernel)
    win.pop("ceil_mode")
    s, p, d = win["strides"], win["pads"], win["dilations"]
    out = [conv_out(xt.shape[2 + i], kernel[i], s[i], p[i], p[rank + i], d[i], 0)
           for i in range(rank)]  # fmt: skip
    if min(out) < 1:
        raise bad(f"w {wt}'s kernel is larger than x {xt} with pads {win['pads']}")
    return rank, {"group": group, **_to2d(win, rank)}


def _check_vector(bad: Bad, what: str, t: TensorType | None, dtype: ElemType, counts: tuple,
                  want: str) -> None:  # fmt: skip
    """``t`` (input ``what``, when given) is a scalar or a vector of ``dtype`` with one of the
    element ``counts``, else ``bad`` saying it must be ``want``."""
    if t is not None and (t.dtype != dtype or len(t.shape) > 1
                          or math.prod(t.shape) not in counts):  # fmt: skip
        raise bad(f"{what} {t} must be {want}")


def _to_4d(ctx: ImportContext, name: str, rank: int, x: str, w: str) -> tuple[str, str]:
    """x and w as the 2-D kernel takes them (a 1-D convolution's promoted)."""
    if rank == 2:
        return x, w
    return _promote(ctx, name, x, "x"), _promote(ctx, name, w, "w")


@register("ConvInteger")
def conv_integer(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """y = ConvInteger(x, w[, x_zero_point[, w_zero_point]]) (opset 10+, its only version): the
    IR ``ConvInteger`` with Conv's attributes resolved (auto_pad to pads; 1-D promoted to 2-D
    through Reshape views, 3-D refused naming the layers). ONNX types x and w int8 or uint8,
    each zero point as its tensor, x's a scalar and w's a scalar or one per output channel, so
    anything else is a malformed model; a w_zero_point without an x_zero_point is given a zero
    one, the kernel's optional inputs being a trailing run."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"ConvInteger {why}", op="ConvInteger", node=name)

    ins, outs = list(proto.input), list(proto.output)
    arity = 2 <= len(ins) <= 4 and all(ins[:2]) and len(outs) == 1 and bool(outs[0])
    if ctx.opset < 10 or not arity:
        raise bad(f"(opset 10+, model opset {ctx.opset}) takes x, w and the optional "
                  f"x_zero_point and w_zero_point and gives y, got inputs {ins} and outputs "
                  f"{outs}")  # fmt: skip
    xt, wt = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    zps = [ctx.type_of(v) if v else None for v in (*ins[2:], "", "")[:2]]
    rank, window = _integer_window(ctx, proto, name, bad, xt, wt)
    m = wt.shape[0]
    _check_vector(bad, "x_zero_point", zps[0], xt.dtype, (1,), f"one {xt.dtype.value} (a scalar)")
    _check_vector(bad, "w_zero_point", zps[1], wt.dtype, (1, m),
                  f"one {wt.dtype.value}, or [{m}]: one per output")  # fmt: skip
    x, w = _to_4d(ctx, name, rank, ins[0], ins[1])
    zero_points = [v for v in ins[2:] if v]
    if zps[1] is not None and zps[0] is None:  # w's zero point needs x's before it: a zero one
        zero_points.insert(0, ctx.add_const(ctx.fresh(f"{name}.x_zero_point"),
                                            np.zeros((), xt.dtype.numpy)))  # fmt: skip
    _finish(ctx, name, OpType.CONV_INTEGER, [x, w, *zero_points], outs[0], rank, **window)


@register("QLinearConv")
def qlinear_conv(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """y = QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
    y_zero_point[, B]) (opset 10+, its only version): the IR ``QLinearConv`` with ConvInteger's
    window (:func:`_integer_window`). ONNX types x, w and y_zero_point int8 or uint8, each
    zero point as its tensor (y's as y), the scales float32, x's and y's scales and zero points
    scalars, w's scalars or one per output channel, and B int32 [M], so anything else is a
    malformed model; a one-element vector stands for a scalar, as onnxruntime takes it."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"QLinearConv {why}", op="QLinearConv", node=name)

    ins, outs = list(proto.input), list(proto.output)
    arity = 8 <= len(ins) <= 9 and all(ins[:8]) and len(outs) == 1 and bool(outs[0])
    if ctx.opset < 10 or not arity:
        raise bad(f"(opset 10+, model opset {ctx.opset}) takes x, x_scale, x_zero_point, w, "
                  f"w_scale, w_zero_point, y_scale, y_zero_point and the optional B and gives "
                  f"y, got inputs {ins} and outputs {outs}")  # fmt: skip
    xt, x_s, x_zp, wt, w_s, w_zp, y_s, y_zp = (ctx.type_of(v) for v in ins[:8])
    bt = ctx.type_of(ins[8]) if len(ins) > 8 and ins[8] else None
    rank, window = _integer_window(ctx, proto, name, bad, xt, wt)
    if y_zp.dtype not in QUANT_TYPES:
        raise bad(f"y_zero_point {y_zp} must be int8 or uint8 (y's type)")
    m, f32 = wt.shape[0], ElemType.F32
    per_channel = f"or [{m}]: one per output"
    for what, t, dtype, counts, want in (
        ("x_scale", x_s, f32, (1,), "one float32 (a scalar)"),
        ("x_zero_point", x_zp, xt.dtype, (1,), f"one {xt.dtype.value} (a scalar)"),
        ("w_scale", w_s, f32, (1, m), f"one float32, {per_channel}"),
        ("w_zero_point", w_zp, wt.dtype, (1, m), f"one {wt.dtype.value}, {per_channel}"),
        ("y_scale", y_s, f32, (1,), "one float32 (a scalar)"),
        ("y_zero_point", y_zp, y_zp.dtype, (1,), f"one {y_zp.dtype.value} (a scalar)"),
    ):  # fmt: skip
        _check_vector(bad, what, t, dtype, counts, want)
    if bt is not None and (bt.dtype is not ElemType.I32 or bt.shape != (m,)):
        raise bad(f"B {bt} must be int32 [{m}]: one per output channel")
    x, w = _to_4d(ctx, name, rank, ins[0], ins[3])
    operands = [x, *ins[1:3], w, *ins[4:8], *([ins[8]] if bt is not None else [])]
    _finish(ctx, name, OpType.QLINEARCONV, operands, outs[0], rank, **window)
