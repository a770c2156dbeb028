"""Importers of the indexing and reduction family: Gather, GatherElements, GatherND,
ScatterND, ScatterElements, Slice, Split, Expand, Tile, Pad, Size, Range, NonZero, Reduce*,
ArgMax / ArgMin, CumSum and TopK.

Inputs that carry attributes (Slice's bounds, Expand's shape, TopK's k, reduction axes...)
must be constants at import: a run-time one is a DynamicShapeError naming the tensor. Axes
are resolved to non-negative values and Slice bounds clamped here, so the IR carries resolved
attributes only.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from stack.adapter.registry import register
from stack.compiler import OpType, ShapeInferenceError
from stack.compiler.op_rules import SCATTER_REDUCTIONS, clamp_slice

REDUCE = (
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
)  # fmt: skip
INT64_MAX = np.iinfo(np.int64).max


def _rank(ctx: ImportContext, value: str) -> int:
    return len(ctx.type_of(value).shape)


def _axis(ctx: ImportContext, proto: onnx.NodeProto, name: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeInferenceError(
            f"axis {axis} is out of range for a rank-{rank} tensor", op=proto.op_type, node=name
        )
    return axis + rank if axis < 0 else axis


def _ints(arr: np.ndarray | None) -> list[int] | None:
    return None if arr is None else [int(v) for v in np.asarray(arr).reshape(-1)]


@register("GatherND")
def gather_nd(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    b = int(attributes(proto).get("batch_dims", 0))
    ctx.emit(name, OpType.GATHER_ND, list(proto.input[:2]), [proto.output[0]], batch_dims=b)


def _scatter_reduction(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> str:
    """A scatter node's reduction, checked with its three inputs (data, indices, updates)
    against what the model's opset allows: none from 11, add and mul from 16, max and min
    from 18; a ModelFormatError naming the node otherwise."""
    op = proto.op_type
    if len(proto.input) != 3 or not all(proto.input):
        raise ModelFormatError(
            f"{op} takes data, indices and updates, got {list(proto.input)}", op=op, node=name
        )
    reduction = str(attributes(proto).get("reduction", "none"))
    known = SCATTER_REDUCTIONS[: 1 if ctx.opset < 16 else 3 if ctx.opset < 18 else 5]
    if reduction not in known:
        raise ModelFormatError(
            f"{op} reduction {reduction!r} is not one of {', '.join(known)} (opset {ctx.opset})",
            op=op,
            node=name,
        )
    return reduction


@register("ScatterND")
def scatter_nd(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """ONNX leaves repeated places undefined without a reduction; here the last update wins."""
    reduction = _scatter_reduction(ctx, proto, name)
    data, indices = ctx.type_of(proto.input[0]), ctx.const(proto.input[1])
    if indices is not None and indices.ndim and indices.shape[-1] <= len(data.shape):
        dims = np.array(data.shape[: indices.shape[-1]], np.int64)
        if indices.size and ((indices < -dims).any() or (indices >= dims).any()):
            raise ModelFormatError(
                f"ScatterND indices address outside data {data}", op="ScatterND", node=name
            )
    ctx.emit(name, OpType.SCATTER_ND, list(proto.input), [proto.output[0]], reduction=reduction)


@register("ScatterElements")
def scatter_elements(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """ONNX leaves repeated places undefined without a reduction; here the last update wins."""
    reduction = _scatter_reduction(ctx, proto, name)
    attrs = attributes(proto)
    data = ctx.type_of(proto.input[0])
    axis = _axis(ctx, proto, name, int(attrs.get("axis", 0)), len(data.shape))
    indices = ctx.const(proto.input[1])
    n = data.shape[axis]
    if indices is not None and indices.size and ((indices < -n).any() or (indices >= n).any()):
        raise ModelFormatError(
            f"ScatterElements indices address outside data {data} on axis {axis}",
            op="ScatterElements",
            node=name,
        )
    ctx.emit(
        name,
        OpType.SCATTER_ELEMENTS,
        list(proto.input),
        [proto.output[0]],
        axis=axis,
        reduction=reduction,
    )


@register("Gather", "GatherElements")
def gather(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    op = OpType.GATHER if proto.op_type == "Gather" else OpType.GATHER_ELEMENTS
    rank = _rank(ctx, proto.input[0])
    axis = _axis(ctx, proto, name, int(attributes(proto).get("axis", 0)), rank)
    ctx.emit(name, op, list(proto.input[:2]), [proto.output[0]], axis=axis)


def emit_slice(
    ctx: ImportContext,
    name: str,
    src: str,
    dst: str,
    bounds: dict[int, tuple[int, int, int]],
) -> None:
    """A Slice node over every axis of ``src`` (axes not in ``bounds`` taken whole)."""
    shape = ctx.type_of(src).shape
    spec = [clamp_slice(n, *bounds.get(i, (0, n, 1))) for i, n in enumerate(shape)]
    ctx.emit(
        name,
        OpType.SLICE,
        [src],
        [dst],
        starts=[s[0] for s in spec],
        ends=[s[1] for s in spec],
        steps=[s[2] for s in spec],
    )


@register("Slice")
def slice_(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    rank = _rank(ctx, proto.input[0])
    if ctx.opset < 10:
        a = attributes(proto)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts = _ints(ctx.const_input(proto, name, 1, "starts"))
        ends = _ints(ctx.const_input(proto, name, 2, "ends"))
        axes = _ints(ctx.const_input(proto, name, 3, "axes"))
        steps = _ints(ctx.const_input(proto, name, 4, "steps"))
    starts, ends = list(starts or []), list(ends or [])
    axes = list(axes) if axes is not None else list(range(len(starts)))
    steps = list(steps) if steps is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ShapeInferenceError(
            "Slice's starts, ends, axes and steps differ in length", op="Slice", node=name
        )
    bounds: dict[int, tuple[int, int, int]] = {}
    for s, e, ax, st in zip(starts, ends, axes, steps, strict=True):
        axis = _axis(ctx, proto, name, int(ax), rank)
        if axis in bounds or st == 0:
            raise ShapeInferenceError(
                f"Slice repeats axis {axis} or has step 0", op="Slice", node=name
            )
        bounds[axis] = (int(s), int(e), int(st))
    emit_slice(ctx, name, proto.input[0], proto.output[0], bounds)


@register("Split")
def split(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """One Slice per output along ``axis``."""
    a = attributes(proto)
    shape = ctx.type_of(proto.input[0]).shape
    axis = _axis(ctx, proto, name, int(a.get("axis", 0)), len(shape))
    outs = [o for o in proto.output]
    sizes = a.get("split") if ctx.opset < 13 else _ints(ctx.const_input(proto, name, 1, "split"))
    if sizes is None:
        n, parts = shape[axis], len(outs)
        if "num_outputs" in a:
            parts = int(a["num_outputs"])
        chunk = -(-n // parts)
        sizes = [min(chunk, n - i * chunk) for i in range(parts)]
    sizes = [int(v) for v in sizes]
    if len(sizes) != len(outs) or sum(sizes) != shape[axis] or min(sizes) < 0:
        raise ShapeInferenceError(
            f"Split sizes {sizes} do not cover axis {axis} of {shape} in {len(outs)} parts",
            op="Split",
            node=name,
        )
    start = 0
    for i, (out, size) in enumerate(zip(outs, sizes, strict=True)):
        if out:
            emit_slice(ctx, f"{name}.{i}" if i else name, proto.input[0], out,
                       {axis: (start, start + size, 1)})  # fmt: skip
        start += size


@register("Expand")
def expand(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    shape = _ints(ctx.const_input(proto, name, 1, "shape"))
    ctx.emit(name, OpType.EXPAND, [proto.input[0]], [proto.output[0]], shape=shape)


@register("Tile")
def tile(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    reps = _ints(ctx.const_input(proto, name, 1, "repeats"))
    ctx.emit(name, OpType.TILE, [proto.input[0]], [proto.output[0]], repeats=reps)


@register("Pad")
def pad(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    x = proto.input[0]
    rank = _rank(ctx, x)
    if ctx.opset < 11:
        pads, value, axes = list(a["pads"]), float(a.get("value", 0.0)), None
    else:
        pads = _ints(ctx.const_input(proto, name, 1, "pads")) or []
        v = ctx.const_input(proto, name, 2, "constant_value")
        value = float(v.reshape(-1)[0]) if v is not None and v.size else 0.0
        axes = _ints(ctx.const_input(proto, name, 3, "axes"))
    if axes is not None:
        full = [0] * (2 * rank)
        for i, ax in enumerate(axes):
            axis = _axis(ctx, proto, name, ax, rank)
            full[axis], full[rank + axis] = pads[i], pads[len(axes) + i]
        pads = full
    mode = str(a.get("mode", "constant"))
    ctx.emit(name, OpType.PAD, [x], [proto.output[0]], mode=mode, pads=pads, value=value)


@register("Size")
def size(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Shapes are static, so Size is a constant."""
    ctx.add_const(proto.output[0], np.asarray(ctx.type_of(proto.input[0]).numel, np.int64))


@register("Range", "NonZero")
def value_shaped(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Ops whose output length depends on input values: folded when those are constants."""
    for i, value in enumerate(proto.input):
        if value and ctx.const(value) is None:
            raise DynamicShapeError(proto.op_type, name, value, f"input {i}")
    op = OpType.RANGE if proto.op_type == "Range" else OpType.NONZERO
    ctx.emit(name, op, list(proto.input), [proto.output[0]])


@register(*REDUCE)
def reduce(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    x = proto.input[0]
    rank = _rank(ctx, x)
    axes_in = ctx.opset >= 18 or (proto.op_type == "ReduceSum" and ctx.opset >= 13)
    axes = _ints(ctx.const_input(proto, name, 1, "axes")) if axes_in else a.get("axes")
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            ctx.alias(name, x, proto.output[0])
            return
        axes = list(range(rank))
    resolved = sorted({_axis(ctx, proto, name, int(ax), rank) for ax in axes})
    keep = int(a.get("keepdims", 1))
    ctx.emit(
        name, OpType.REDUCE, [x], [proto.output[0]], fn=proto.op_type, axes=resolved, keepdims=keep
    )


@register("ArgMax", "ArgMin")
def arg_reduce(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    axis = _axis(ctx, proto, name, int(a.get("axis", 0)), _rank(ctx, proto.input[0]))
    ctx.emit(
        name,
        OpType.ARG_REDUCE,
        [proto.input[0]],
        [proto.output[0]],
        fn=proto.op_type,
        axis=axis,
        keepdims=int(a.get("keepdims", 1)),
        select_last_index=int(a.get("select_last_index", 0)),
    )


@register("CumSum", "CumProd")
def cumsum(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    ax = _ints(ctx.const_input(proto, name, 1, "axis")) or [0]
    axis = _axis(ctx, proto, name, ax[0], _rank(ctx, proto.input[0]))
    ctx.emit(
        name,
        OpType.CUMSUM,
        [proto.input[0]],
        [proto.output[0]],
        axis=axis,
        exclusive=int(a.get("exclusive", 0)),
        reverse=int(a.get("reverse", 0)),
        prod=int(proto.op_type == "CumProd"),
    )


@register("TopK")
def topk(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    k = [int(a["k"])] if ctx.opset < 10 else _ints(ctx.const_input(proto, name, 1, "k"))
    axis = _axis(ctx, proto, name, int(a.get("axis", -1)), _rank(ctx, proto.input[0]))
    ctx.emit(
        name,
        OpType.TOPK,
        [proto.input[0]],
        list(proto.output[:2]),
        axis=axis,
        k=(k or [0])[0],
        largest=int(a.get("largest", 1)),
        sorted=int(a.get("sorted", 1)),
    )
