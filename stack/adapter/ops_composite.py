"""Importers of ONNX ops expressed with other IR ops (no kernel of their own): Trilu,
LpNormalization, RMSNormalization, OneHot, LRN, InstanceNormalization.

Static shapes make their masks and index ranges constants: Trilu is a Where on a constant
triangular mask, OneHot an Equal against a constant range.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.ops_index import _axis, _ints
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType, ShapeInferenceError


class EmitChain:
    """Emit helper: fresh value names under one node's name."""

    def __init__(self, ctx: ImportContext, name: str) -> None:
        self.ctx, self.name = ctx, name

    def const(self, array: np.ndarray) -> str:
        return self.ctx.add_const(self.ctx.fresh(f"{self.name}.const"), array)

    def op(self, op: OpType, ins: list[str], out: str | None = None, **attrs: object) -> str:
        target = out or self.ctx.fresh(f"{self.name}.t")
        node = self.name if out is not None else self.ctx.fresh(self.name)
        self.ctx.emit(node, op, ins, [target], **attrs)
        return target


@register("Trilu")
def trilu(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    x = proto.input[0]
    t = ctx.type_of(x)
    if len(t.shape) < 2:
        raise ShapeInferenceError(f"Trilu needs rank >= 2, got {t}", op="Trilu", node=name)
    k = (_ints(ctx.const_input(proto, name, 1, "k")) or [0])[0]
    n, m = t.shape[-2:]
    upper = int(attributes(proto).get("upper", 1))
    mask = (np.triu if upper else np.tril)(np.ones((n, m), bool), k)
    c = EmitChain(ctx, name)
    zero = c.const(np.zeros((), t.dtype.numpy))
    c.op(OpType.WHERE, [c.const(mask), x, zero], proto.output[0])


@register("LpNormalization")
def lp_normalization(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """x / ||x||_p along axis (p 1 or 2); a zero norm gives 0, as the ONNX reference does."""
    a = attributes(proto)
    x = proto.input[0]
    t = ctx.type_of(x)
    axis = _axis(ctx, proto, name, int(a.get("axis", -1)), len(t.shape))
    p = int(a.get("p", 2))
    if p not in (1, 2):
        raise ShapeInferenceError(f"LpNormalization p = {p}: only 1 and 2", op="Lp", node=name)
    c = EmitChain(ctx, name)
    fn = "ReduceL2" if p == 2 else "ReduceL1"
    norm = c.op(OpType.REDUCE, [x], fn=fn, axes=[axis], keepdims=1)
    zero = c.const(np.zeros((), t.dtype.numpy))
    is_zero = c.op(OpType.BINARY, [norm, zero], fn="Equal")
    ratio = c.op(OpType.DIV, [x, norm])
    c.op(OpType.WHERE, [is_zero, zero, ratio], proto.output[0])


@register("RMSNormalization")
def rms_normalization(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """x / sqrt(mean(x^2 over axis..) + eps) * scale, in float32 when stash_type is 1."""
    a = attributes(proto)
    x, scale = proto.input[0], proto.input[1]
    t = ctx.type_of(x)
    axis = _axis(ctx, proto, name, int(a.get("axis", -1)), len(t.shape))
    eps = float(a.get("epsilon", 1e-5))
    stash = int(a.get("stash_type", 1)) == 1 and t.dtype is not ElemType.F32
    c = EmitChain(ctx, name)
    work = c.op(OpType.CAST, [x], to="float32") if stash else x
    wtype = ElemType.F32 if stash else t.dtype
    sq = c.op(OpType.MUL, [work, work])
    mean = c.op(
        OpType.REDUCE, [sq], fn="ReduceMean", axes=list(range(axis, len(t.shape))), keepdims=1
    )
    rms = c.op(OpType.UNARY, [c.op(OpType.ADD, [mean, c.const(np.asarray(eps, wtype.numpy))])],
               fn="Sqrt")  # fmt: skip
    normed = c.op(OpType.DIV, [work, rms])
    if stash:
        normed = c.op(OpType.CAST, [normed], to=t.dtype.value)
    c.op(OpType.MUL, [normed, scale], proto.output[0])


@register("OneHot")
def one_hot(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """values[1] where the (wrapped) index equals the position along ``axis``, else values[0]."""
    idx, values = proto.input[0], proto.input[2]
    depth_arr = ctx.const_input(proto, name, 1, "depth")
    assert depth_arr is not None
    depth = int(np.asarray(depth_arr).reshape(-1)[0])
    rank = len(ctx.type_of(idx).shape) + 1
    axis = _axis(ctx, proto, name, int(attributes(proto).get("axis", -1)), rank)
    c = EmitChain(ctx, name)
    i64 = c.op(OpType.CAST, [idx], to="int64") if ctx.type_of(idx).dtype != ElemType.I64 else idx
    neg = c.op(OpType.BINARY, [i64, c.const(np.zeros((), np.int64))], fn="Less")
    wrapped = c.op(OpType.WHERE, [neg, c.op(OpType.ADD, [i64, c.const(np.asarray(depth))]), i64])
    shape = list(ctx.type_of(idx).shape)
    shape.insert(axis, 1)
    col = c.op(OpType.RESHAPE, [wrapped], shape=tuple(shape))
    positions = np.arange(depth, dtype=np.int64).reshape(
        [-1 if i == axis else 1 for i in range(rank)]
    )
    mask = c.op(OpType.BINARY, [col, c.const(positions)], fn="Equal")
    off = c.op(OpType.GATHER, [values, c.const(np.asarray(0, np.int64))], axis=0)
    on = c.op(OpType.GATHER, [values, c.const(np.asarray(1, np.int64))], axis=0)
    c.op(OpType.WHERE, [mask, on, off], proto.output[0])


@register("LRN")
def lrn(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """x / (bias + alpha / size * sum of x^2 over a window of ``size`` channels) ^ beta: the
    window sum is an average pool (counting padding) over the channel axis of a 4-D view."""
    a = attributes(proto)
    x = proto.input[0]
    t = ctx.type_of(x)
    if len(t.shape) < 3 or not t.dtype.is_float:
        raise ShapeInferenceError(f"LRN needs a float NC... input, got {t}", op="LRN", node=name)
    size = int(a["size"])
    alpha, beta, bias = (
        float(a.get("alpha", 1e-4)),
        float(a.get("beta", 0.75)),
        float(a.get("bias", 1.0)),
    )
    n, ch = t.shape[:2]
    rest = int(np.prod(t.shape[2:]))
    c = EmitChain(ctx, name)
    sq = c.op(OpType.MUL, [x, x])
    view = c.op(OpType.RESHAPE, [sq], shape=(n, 1, ch, rest))
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    mean = c.op(
        OpType.AVGPOOL,
        [view],
        kernel_shape=(size, 1),
        strides=(1, 1),
        pads=(lo, 0, hi, 0),
        dilations=(1, 1),
        ceil_mode=0,
        count_include_pad=1,
    )
    back = c.op(OpType.RESHAPE, [mean], shape=t.shape)
    dt = t.dtype.numpy
    scaled = c.op(OpType.MUL, [back, c.const(np.asarray(alpha, dt))])
    base = c.op(OpType.ADD, [scaled, c.const(np.asarray(bias, dt))])
    denom = c.op(OpType.BINARY, [base, c.const(np.asarray(beta, dt))], fn="Pow")
    c.op(OpType.DIV, [x, denom], proto.output[0])


@register("InstanceNormalization")
def instance_normalization(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """(x - mean) / sqrt(var + eps) * scale + bias, statistics per sample and channel over the
    spatial axes; scale and bias broadcast along the channel axis."""
    x, scale, bias = proto.input[0], proto.input[1], proto.input[2]
    t = ctx.type_of(x)
    if len(t.shape) < 3 or not t.dtype.is_float:
        raise ShapeInferenceError(
            f"InstanceNormalization needs a float N, C, ... input, got {t}",
            op="InstanceNormalization",
            node=name,
        )
    eps = float(attributes(proto).get("epsilon", 1e-5))
    spatial = list(range(2, len(t.shape)))
    per_channel = (t.shape[1], *(1 for _ in spatial))
    c = EmitChain(ctx, name)
    mean = c.op(OpType.REDUCE, [x], fn="ReduceMean", axes=spatial, keepdims=1)
    centred = c.op(OpType.SUB, [x, mean])
    var = c.op(OpType.REDUCE, [c.op(OpType.MUL, [centred, centred])], fn="ReduceMean",
               axes=spatial, keepdims=1)  # fmt: skip
    std = c.op(OpType.UNARY, [c.op(OpType.ADD, [var, c.const(np.asarray(eps, t.dtype.numpy))])],
               fn="Sqrt")  # fmt: skip
    normed = c.op(OpType.DIV, [centred, std])
    gamma = c.op(OpType.RESHAPE, [scale], shape=per_channel)
    beta = c.op(OpType.RESHAPE, [bias], shape=per_channel)
    c.op(OpType.ADD, [c.op(OpType.MUL, [normed, gamma]), beta], proto.output[0])
