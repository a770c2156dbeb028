"""Importers of ops that move or select elements: SpaceToDepth, DepthToSpace (Reshape →
Transpose → Reshape), Hardmax (ArgMax compared with a constant range, cast back) and EyeLike
(a constant: shapes are static), expressed with other IR ops; ReverseSequence (opset 10+) and
TensorScatter (opset 24+), each its own IR op."""

from __future__ import annotations

import math

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, elem_type, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_composite import EmitChain
from stack.adapter.ops_index import _axis
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType
from stack.compiler.tensor_scatter import TENSOR_SCATTER_MODES


def _blocked(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> tuple[int, ...]:
    """N, C, H, W and the block size of a SpaceToDepth / DepthToSpace, checked."""
    t = ctx.type_of(proto.input[0])
    b = int(attributes(proto).get("blocksize", 0))
    if len(t.shape) != 4 or b < 1:
        raise ModelFormatError(
            f"{proto.op_type} needs a 4-D input and a blocksize >= 1, got {t} and {b}",
            op=proto.op_type,
            node=name,
        )
    n, c, h, w = t.shape
    fits = c % (b * b) == 0 if proto.op_type == "DepthToSpace" else h % b == 0 == w % b
    if not fits:
        what = "channels" if proto.op_type == "DepthToSpace" else "height and width"
        raise ModelFormatError(
            f"{proto.op_type}: the {what} of {t} are not divisible by blocksize {b}",
            op=proto.op_type,
            node=name,
        )
    return n, c, h, w, b


def _mode(proto: onnx.NodeProto, name: str) -> str:
    mode = attributes(proto).get("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise ModelFormatError(f"{proto.op_type} mode {mode!r}", op=proto.op_type, node=name)
    return str(mode)


@register("SpaceToDepth")
def space_to_depth(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """DCR (the default): output channel (bh·b + bw)·C + c; CRD (opset 28): c·b² + bh·b + bw."""
    n, c, h, w, b = _blocked(ctx, proto, name)
    perm = [0, 3, 5, 1, 2, 4] if _mode(proto, name) == "DCR" else [0, 1, 3, 5, 2, 4]
    e = EmitChain(ctx, name)
    blocks = e.op(OpType.RESHAPE, [proto.input[0]], shape=(n, c, h // b, b, w // b, b))
    moved = e.op(OpType.TRANSPOSE, [blocks], perm=perm)
    e.op(OpType.RESHAPE, [moved], proto.output[0], shape=(n, c * b * b, h // b, w // b))


@register("DepthToSpace")
def depth_to_space(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    n, c, h, w, b = _blocked(ctx, proto, name)
    mode = _mode(proto, name)
    e = EmitChain(ctx, name)
    if mode == "DCR":
        view, perm = (n, b, b, c // (b * b), h, w), [0, 3, 4, 1, 5, 2]
    else:
        view, perm = (n, c // (b * b), b, b, h, w), [0, 1, 4, 2, 5, 3]
    moved = e.op(OpType.TRANSPOSE, [e.op(OpType.RESHAPE, [proto.input[0]], shape=view)], perm=perm)
    e.op(OpType.RESHAPE, [moved], proto.output[0], shape=(n, c // (b * b), h * b, w * b))


@register("Hardmax")
def hardmax(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """1 at the first maximum along ``axis``, 0 elsewhere. Before opset 13 the input is seen
    as 2-D (the axes before ``axis`` flattened, and those from it), default axis 1."""
    x = proto.input[0]
    t = ctx.type_of(x)
    legacy = ctx.opset < 13
    axis = _axis(ctx, proto, name, int(attributes(proto).get("axis", 1 if legacy else -1)),
                 len(t.shape))  # fmt: skip
    e = EmitChain(ctx, name)
    work, shape = x, t.shape
    if legacy:
        shape = (math.prod(t.shape[:axis]), math.prod(t.shape[axis:]))
        work, axis = e.op(OpType.RESHAPE, [x], shape=shape), 1
    best = e.op(OpType.ARG_REDUCE, [work], fn="ArgMax", axis=axis, keepdims=1,
                select_last_index=0)  # fmt: skip
    positions = np.arange(shape[axis], dtype=np.int64).reshape(
        [-1 if i == axis else 1 for i in range(len(shape))]
    )
    mask = e.op(OpType.BINARY, [best, e.const(positions)], fn="Equal")
    if not legacy:
        e.op(OpType.CAST, [mask], proto.output[0], to=t.dtype.value)
        return
    flat = e.op(OpType.CAST, [mask], to=t.dtype.value)
    e.op(OpType.RESHAPE, [flat], proto.output[0], shape=t.shape)


@register("EyeLike")
def eye_like(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    t = ctx.type_of(proto.input[0])
    if len(t.shape) != 2:
        raise ModelFormatError(f"EyeLike needs a 2-D input, got {t}", op="EyeLike", node=name)
    a = attributes(proto)
    dtype = elem_type(int(a["dtype"]), name) if "dtype" in a else t.dtype
    eye = np.eye(t.shape[0], t.shape[1], int(a.get("k", 0)), dtype=dtype.numpy)
    ctx.add_const(proto.output[0], eye)


@register("ReverseSequence")
def reverse_sequence(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """For batch b the first sequence_lens[b] steps on time_axis reversed, the rest copied.
    Opsets 10 and 28 agree but for bfloat16 (28), which the stack has no type for."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"ReverseSequence {why}", op="ReverseSequence", node=name)

    ins = present_inputs(proto, 3)
    if ctx.opset < 10 or len(ins) != 2 or not all(ins):
        raise bad(f"(opset 10+, model opset {ctx.opset}) takes input and sequence_lens, "
                  f"got {list(proto.input)}")  # fmt: skip
    a = attributes(proto)
    time_axis, batch_axis = int(a.get("time_axis", 0)), int(a.get("batch_axis", 1))
    if {time_axis, batch_axis} != {0, 1}:
        raise bad(f"time_axis {time_axis} and batch_axis {batch_axis} must be 0 and 1")
    x, lens = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    if len(x.shape) < 2 or lens.dtype is not ElemType.I64 or lens.shape != (x.shape[batch_axis],):
        raise bad(f"needs an input of rank >= 2 and int64 sequence_lens of its batch axis, "
                  f"got {x} and {lens}")  # fmt: skip
    given = ctx.const(ins[1])
    steps = x.shape[time_axis]
    if given is not None and given.size and ((given < 0).any() or (given > steps).any()):
        raise bad(f"sequence_lens {given.tolist()} must lie in [0, {steps}]")
    ctx.emit(name, OpType.REVERSE_SEQUENCE, ins, [proto.output[0]], time_axis=time_axis,
             batch_axis=batch_axis)  # fmt: skip


@register("TensorScatter")
def tensor_scatter(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """The KV-cache update: batch b's update steps written on the sequence axis of past_cache
    from write_indices[b] (absent: 0), modulo the axis in circular mode. Opset 24 is the only
    definition."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"TensorScatter {why}", op="TensorScatter", node=name)

    ins = present_inputs(proto, 4)
    if ctx.opset < 24 or len(ins) not in (2, 3) or not all(ins):
        raise bad(f"(opset 24+, model opset {ctx.opset}) takes past_cache, update and an optional "
                  f"write_indices, got {list(proto.input)}")  # fmt: skip
    a = attributes(proto)
    mode = str(a.get("mode", "linear"))
    if mode not in TENSOR_SCATTER_MODES:
        raise bad(f"mode {mode!r} is not one of {', '.join(TENSOR_SCATTER_MODES)}")
    past, upd = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    rank, axis = len(past.shape), int(a.get("axis", -2))
    if not -rank <= axis < rank or axis % max(rank, 1) == 0:
        raise bad(f"axis {int(a.get('axis', -2))} must be a non-batch axis of past_cache {past}")
    axis = axis + rank if axis < 0 else axis
    if (
        len(upd.shape) != rank
        or upd.dtype != past.dtype
        or upd.shape[axis] > past.shape[axis]
        or any(
            u != n for d, (u, n) in enumerate(zip(upd.shape, past.shape, strict=True)) if d != axis
        )
    ):
        raise bad(f"update {upd} must be past_cache {past} at most as long on axis {axis}")
    if len(ins) == 3:
        index = ctx.type_of(ins[2])
        if index.dtype is not ElemType.I64 or index.shape != past.shape[:1]:
            raise bad(f"write_indices {index} must be int64[{past.shape[0]}]")
        given = ctx.const(ins[2])
        room = past.shape[axis] - upd.shape[axis]
        if (
            mode == "linear"
            and given is not None
            and given.size
            and ((given < 0).any() or (given > room).any())
        ):
            raise bad(f"linear write_indices {given.tolist()} must lie in [0, {room}]")
    ctx.emit(name, OpType.TENSOR_SCATTER, ins, [proto.output[0]], axis=axis, mode=mode)
