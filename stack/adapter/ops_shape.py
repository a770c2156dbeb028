"""Importers of the data-layout family: Reshape, Flatten, Identity, Concat, Transpose,
Constant, ConstantOfShape."""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType


@register("Reshape")
def reshape(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    shape = ctx.const(proto.input[1])
    if shape is None:
        raise ctx.unsupported(
            proto,
            name,
            "a run-time shape input: shapes are static (bind it as a constant)",
            layers=("adapter",),
        )
    ctx.emit(
        name,
        OpType.RESHAPE,
        list(proto.input[:2]),
        [proto.output[0]],
        allowzero=int(attributes(proto).get("allowzero", 0)),
    )


@register("Flatten")
def flatten(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(
        name,
        OpType.FLATTEN,
        [proto.input[0]],
        [proto.output[0]],
        axis=int(attributes(proto).get("axis", 1)),
    )


@register("Identity")
def identity(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.alias(name, proto.input[0], proto.output[0])


@register("Concat")
def concat(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ctx.emit(
        name,
        OpType.CONCAT,
        [v for v in proto.input if v],
        [proto.output[0]],
        axis=int(attributes(proto)["axis"]),
    )


@register("Transpose")
def transpose(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    rank = len(ctx.type_of(proto.input[0]).shape)
    perm = attributes(proto).get("perm", list(reversed(range(rank))))
    ctx.emit(name, OpType.TRANSPOSE, [proto.input[0]], [proto.output[0]], perm=list(perm))


_SCALAR_ATTRS = {
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
}


@register("Constant")
def constant(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    if "value" in a:
        value = np.asarray(a["value"])
    else:
        key = next((k for k in _SCALAR_ATTRS if k in a), None)
        if key is None:
            raise ctx.unsupported(
                proto, name, f"attribute(s) {sorted(a)}: only numeric tensors", layers=("adapter",)
            )
        value = np.asarray(a[key], dtype=_SCALAR_ATTRS[key])
    try:
        ElemType.from_numpy(value.dtype)
    except (ValueError, TypeError):
        raise ctx.unsupported(
            proto,
            name,
            f"constant of type {value.dtype}",
            layers=("adapter", "compiler", "umd", "kmd"),
        ) from None
    ctx.add_const(proto.output[0], value)


@register("ConstantOfShape")
def constant_of_shape(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    value = np.asarray(attributes(proto).get("value", np.zeros(1, np.float32)))
    dtype = ElemType.from_numpy(value.dtype)
    fill = value.ravel()[0].item() if value.size else 0
    if ctx.const(proto.input[0]) is None:
        raise ctx.unsupported(
            proto, name, "a run-time shape input: shapes are static", layers=("adapter",)
        )
    ctx.emit(
        name,
        OpType.CONSTANT_OF_SHAPE,
        [proto.input[0]],
        [proto.output[0]],
        value=float(fill) if dtype.is_float else int(fill),
        dtype=dtype.value,
    )


def _axes(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> list[int] | None:
    if len(proto.input) > 1 and proto.input[1]:
        arr = ctx.const(proto.input[1])
        if arr is None:
            raise ctx.unsupported(
                proto, name, "run-time axes: shapes are static", layers=("adapter",)
            )
        return [int(v) for v in arr.ravel()]
    axes = attributes(proto).get("axes")
    return None if axes is None else [int(v) for v in axes]


@register("Squeeze", "Unsqueeze")
def squeeze(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Both are views: a Reshape to the resolved shape."""
    shape = list(ctx.type_of(proto.input[0]).shape)
    axes = _axes(ctx, proto, name)
    if proto.op_type == "Squeeze":
        rank = len(shape)
        drop = (
            {a % rank for a in axes}
            if axes is not None
            else {i for i, d in enumerate(shape) if d == 1}
        )
        out = [d for i, d in enumerate(shape) if i not in drop]
    else:
        rank = len(shape) + len(axes or [])
        out = shape
        for a in sorted(x % rank for x in axes or []):
            out.insert(a, 1)
    ctx.emit(name, OpType.RESHAPE, [proto.input[0]], [proto.output[0]], shape=tuple(out))


@register("Shape")
def shape_of(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Shapes are static, so Shape is a constant."""
    dims = ctx.type_of(proto.input[0]).shape
    a = attributes(proto)
    start, end = int(a.get("start", 0)), a.get("end")
    ctx.add_const(proto.output[0], np.array(dims[start:end], dtype=np.int64))
