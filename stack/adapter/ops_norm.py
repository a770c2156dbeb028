"""Normalisations expressed with other IR ops: MeanVarianceNormalization and GroupNormalization
(statistics by ReduceMean on views, as InstanceNormalization in :mod:`ops_composite`)."""

from __future__ import annotations

import math

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_composite import EmitChain
from stack.adapter.ops_index import _axis
from stack.adapter.registry import register
from stack.compiler import OpType


@register("MeanVarianceNormalization")
def mean_variance_normalization(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """(x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9) over ``axes`` (default 0, 2, 3), as the ONNX
    function body computes it."""
    x = proto.input[0]
    t = ctx.type_of(x)
    if not t.dtype.is_float:
        raise ModelFormatError(f"MVN needs a float input, got {t}", op=proto.op_type, node=name)
    rank = len(t.shape)
    given = [int(a) for a in attributes(proto).get("axes", [0, 2, 3])]
    axes = sorted({_axis(ctx, proto, name, a, rank) for a in given})
    c = EmitChain(ctx, name)
    dt = t.dtype.numpy
    mean = c.op(OpType.REDUCE, [x], fn="ReduceMean", axes=axes, keepdims=1)
    ex2 = c.op(OpType.REDUCE, [c.op(OpType.MUL, [x, x])], fn="ReduceMean", axes=axes, keepdims=1)
    var = c.op(OpType.SUB, [ex2, c.op(OpType.MUL, [mean, mean])])
    std = c.op(OpType.UNARY, [var], fn="Sqrt")
    denom = c.op(OpType.ADD, [std, c.const(np.asarray(1e-9, dt))])
    c.op(OpType.DIV, [c.op(OpType.SUB, [x, mean]), denom], proto.output[0])


@register("GroupNormalization")
def group_normalization(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Per sample and group of C / num_groups channels: (x - mean) / sqrt(var + eps), then
    scale and bias per channel (opset 21) or per group (opset 18)."""
    x, scale, bias = proto.input[0], proto.input[1], proto.input[2]
    t = ctx.type_of(x)
    a = attributes(proto)
    groups = int(a.get("num_groups", 0))
    if len(t.shape) < 3 or not t.dtype.is_float or groups < 1 or t.shape[1] % groups:
        raise ModelFormatError(
            f"GroupNormalization needs a float N, C, ... input whose C divides into "
            f"num_groups = {groups}, got {t}",
            op=proto.op_type,
            node=name,
        )
    n, ch, rest = t.shape[0], t.shape[1], math.prod(t.shape[2:])
    per_group = ctx.opset < 21
    want = (groups,) if per_group else (ch,)
    for value in (scale, bias):
        if ctx.type_of(value).shape != want:
            raise ModelFormatError(
                f"GroupNormalization {value} is {ctx.type_of(value)}, needs shape {want}",
                op=proto.op_type,
                node=name,
            )
    eps = float(a.get("epsilon", 1e-5))
    c = EmitChain(ctx, name)
    grouped = c.op(OpType.RESHAPE, [x], shape=(n, groups, (ch // groups) * rest))
    mean = c.op(OpType.REDUCE, [grouped], fn="ReduceMean", axes=[2], keepdims=1)
    centred = c.op(OpType.SUB, [grouped, mean])
    var = c.op(OpType.REDUCE, [c.op(OpType.MUL, [centred, centred])], fn="ReduceMean",
               axes=[2], keepdims=1)  # fmt: skip
    std = c.op(OpType.UNARY, [c.op(OpType.ADD, [var, c.const(np.asarray(eps, t.dtype.numpy))])],
               fn="Sqrt")  # fmt: skip
    normed = c.op(OpType.DIV, [centred, std])
    if per_group:
        view = c.op(OpType.RESHAPE, [normed], shape=(n, groups, (ch // groups) * rest))
        affine = (groups, 1)
    else:
        view = c.op(OpType.RESHAPE, [normed], shape=(n, ch, rest))
        affine = (ch, 1)
    gamma = c.op(OpType.RESHAPE, [scale], shape=affine)
    beta = c.op(OpType.RESHAPE, [bias], shape=affine)
    out = c.op(OpType.ADD, [c.op(OpType.MUL, [view, gamma]), beta])
    c.op(OpType.RESHAPE, [out], proto.output[0], shape=t.shape)
