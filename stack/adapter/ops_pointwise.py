"""Importers of the point-wise family: unary functions (Exp, Sqrt, Erf, Gelu, Clip, ...),
binary functions (Pow, Mod, comparisons, logic, bit operations, PRelu), variadic Min / Max /
Mean, Where, Cast and CastLike.

Each becomes the IR's ``Unary`` / ``Binary`` node with ``fn`` = the ONNX op name and its
attributes mapped onto ``alpha``, ``beta``, ``i0``, ``i1`` (see the kernel ABI).
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, elem_type
from stack.adapter.registry import register
from stack.compiler import OpType

#: ONNX unary op -> {ONNX attribute: (IR attribute, default)}.
UNARY: dict[str, dict[str, tuple[str, float]]] = {
    "Neg": {}, "Abs": {}, "Sqrt": {}, "Reciprocal": {}, "Exp": {}, "Log": {}, "Erf": {},
    "Tanh": {}, "Sigmoid": {}, "HardSwish": {}, "Ceil": {}, "Floor": {}, "Round": {},
    "Sin": {}, "Cos": {}, "Tan": {}, "Asin": {}, "Acos": {}, "Atan": {}, "Sinh": {},
    "Cosh": {}, "Asinh": {}, "Acosh": {}, "Atanh": {}, "Sign": {}, "Not": {},
    "BitwiseNot": {}, "Softplus": {}, "Softsign": {}, "IsNaN": {}, "Mish": {},
    "LeakyRelu": {"alpha": ("alpha", 0.01)},
    "Elu": {"alpha": ("alpha", 1.0)},
    "Celu": {"alpha": ("alpha", 1.0)},
    "ThresholdedRelu": {"alpha": ("alpha", 1.0)},
    "Selu": {"alpha": ("alpha", 1.67326319217681884765625),
             "gamma": ("beta", 1.05070102214813232421875)},
    "HardSigmoid": {"alpha": ("alpha", 0.2), "beta": ("beta", 0.5)},
    "Shrink": {"bias": ("alpha", 0.0), "lambd": ("beta", 0.5)},
    "IsInf": {"detect_positive": ("i0", 1), "detect_negative": ("i1", 1)},
    "Swish": {"alpha": ("alpha", 1.0)},
}  # fmt: skip
BINARY = (
    "Pow", "Mod", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or",
    "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu",
)  # fmt: skip


@register(*UNARY)
def unary(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    ir: dict[str, float | int] = {}
    for key, (target, default) in UNARY[proto.op_type].items():
        value = a.get(key, default)
        ir[target] = int(value) if target.startswith("i") else float(value)
    ctx.emit(name, OpType.UNARY, [proto.input[0]], [proto.output[0]], fn=proto.op_type, **ir)


@register("Gelu")
def gelu(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    tanh = attributes(proto).get("approximate", "none") == "tanh"
    ctx.emit(name, OpType.UNARY, [proto.input[0]], [proto.output[0]], fn="Gelu", i0=int(tanh))


@register("Clip")
def clip(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    if ctx.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    else:
        lo_t = ctx.const_input(proto, name, 1, "min")
        hi_t = ctx.const_input(proto, name, 2, "max")
        lo = None if lo_t is None else lo_t.reshape(-1)[0].item()
        hi = None if hi_t is None else hi_t.reshape(-1)[0].item()
    ctx.emit(
        name,
        OpType.UNARY,
        [proto.input[0]],
        [proto.output[0]],
        fn="Clip",
        i0=int(lo is not None),
        i1=int(hi is not None),
        alpha=float(lo if lo is not None else 0.0),
        beta=float(hi if hi is not None else 0.0),
    )


@register(*BINARY)
def binary(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    fmod = int(attributes(proto).get("fmod", 0)) if proto.op_type == "Mod" else 0
    ctx.emit(
        name, OpType.BINARY, list(proto.input[:2]), [proto.output[0]], fn=proto.op_type, i0=fmod
    )


@register("BitShift")
def bit_shift(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    left = attributes(proto).get("direction", "LEFT") == "LEFT"
    fn = "BitShiftLeft" if left else "BitShiftRight"
    ctx.emit(name, OpType.BINARY, list(proto.input[:2]), [proto.output[0]], fn=fn)


@register("Min", "Max", "Mean")
def variadic(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """A chain of two-input Min / Max (Mean: Sum, then a division by the count)."""
    parts = [v for v in proto.input if v]
    out = proto.output[0]
    if proto.op_type == "Mean":
        total = ctx.fresh(f"{name}.sum") if len(parts) > 1 else parts[0]
        if len(parts) > 1:
            ctx.emit(ctx.fresh(f"{name}.sum"), OpType.SUM, parts, [total])
        dtype = ctx.type_of(total).dtype.numpy
        count = ctx.add_const(ctx.fresh(f"{name}.count"), np.asarray(len(parts), dtype))
        ctx.emit(name, OpType.DIV, [total, count], [out])
        return
    if len(parts) == 1:
        ctx.alias(name, parts[0], out)
        return
    acc = parts[0]
    for i, part in enumerate(parts[1:], start=1):
        target = out if i == len(parts) - 1 else ctx.fresh(f"{name}.partial")
        step = name if target == out else ctx.fresh(name)
        ctx.emit(step, OpType.BINARY, [acc, part], [target], fn=proto.op_type)
        acc = target


@register("Where")
def where(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(name, OpType.WHERE, list(proto.input[:3]), [proto.output[0]])


@register("Cast", "CastLike")
def cast(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    if proto.op_type == "CastLike":
        to = ctx.type_of(proto.input[1]).dtype
    else:
        to = elem_type(int(attributes(proto)["to"]), name)
    src = ctx.type_of(proto.input[0]).dtype
    if src == to:
        ctx.alias(name, proto.input[0], proto.output[0])
        return
    ctx.emit(name, OpType.CAST, [proto.input[0]], [proto.output[0]], to=to.value)
