"""Importers of the pooling family: MaxPool, AveragePool (1-D, 2-D, 3-D), GlobalMaxPool, LpPool,
MaxUnpool, MaxRoiPool and RoiAlign.

The pooling kernels are 2-D NCHW. 1-D pools are promoted to 2-D with a unit height (Reshape
views). A 3-D pool is separable — a window is a box, its max is the max over depth of the
maxima over height and width, and its average the average over depth of the averages over
height and width (with or without padding in the divisor, the count of a box is the product of
its per-axis counts) — so it is two 2-D pools on Reshape views: over (H, W) with depth folded
into the channels, then over (D, H'·W') with a (kd, 1) window. ``ceil_mode`` is resolved per
2-D pool. GlobalMaxPool is a ReduceMax over the spatial axes. LpPool is (Σ|x|^p)^(1/p) over
each window: an average pool counting padding (zeros add nothing) times the window size, the
ceil-mode tail made explicit end padding so every window has the full divisor. MaxUnpool is
its own IR op at any spatial rank (a scatter of X at MaxPool's flat indices into zeros); its
``output_shape`` input must be a constant. MaxRoiPool is its own IR op on a 4-D X and rois
[R, 5] (batch, x1, y1, x2, y2); so is RoiAlign, on a 4-D X, rois [R, 4] (x1, y1, x2, y2) and
batch_indices [R], its coordinate_transformation_mode output_half_pixel before opset 16.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes, present_inputs
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_composite import EmitChain
from stack.adapter.ops_nn import _window
from stack.adapter.registry import register
from stack.compiler import OpType, conv_out

Seq = Sequence[int]


def _ceil_still_needed(sizes: Seq, kernel: Seq, win: dict) -> int:
    """0 when floor mode yields the ONNX ceil-mode size (the last window would start in padding)."""
    for i in range(2):
        args = (
            sizes[i],
            kernel[i],
            win["strides"][i],
            win["pads"][i],
            win["pads"][i + 2],
            win["dilations"][i],
        )
        span = (
            sizes[i]
            + win["pads"][i]
            + win["pads"][i + 2]
            - win["dilations"][i] * (kernel[i] - 1)
            - 1
        )
        naive_ceil = -(-span // win["strides"][i]) + 1
        if conv_out(*args, 1) != naive_ceil:
            return 0
    return 1


def _pool2d(
    c: EmitChain,
    op: OpType,
    x: str,
    sizes: Seq,
    kernel: Seq,
    win: dict,
    include_pad: int,
    out: str | None = None,
) -> str:
    """One 2-D pool of ``x`` (N, C, H, W) with the window ``win`` (2-D strides, pads as top,
    left, bottom, right, dilations, ceil_mode), into ``out`` (None: a fresh value)."""
    attrs = {"kernel_shape": list(kernel), **win}
    if attrs["ceil_mode"]:
        attrs["ceil_mode"] = _ceil_still_needed(sizes, kernel, win)
    if op is OpType.AVGPOOL:
        attrs["count_include_pad"] = include_pad
    return c.op(op, [x], out, **attrs)


def pool_nd(
    c: EmitChain,
    op: OpType,
    x: str,
    shape: Seq,
    kernel: Seq,
    win: dict,
    include_pad: int,
    out: str | None = None,
) -> str:
    """A MaxPool/AveragePool of ``x`` (shape N, C, spatial…; 1 to 3 spatial axes) with the ONNX
    window ``win`` (strides, pads begin… end…, dilations, ceil_mode), into ``out`` (None: a
    fresh value); the pooled value's name."""
    n, ch, sizes, rank = shape[0], shape[1], list(shape[2:]), len(shape) - 2
    st, pads, dil, ceil = win["strides"], win["pads"], win["dilations"], win["ceil_mode"]
    if rank == 2:
        return _pool2d(c, op, x, sizes, kernel, win, include_pad, out)
    if rank == 1:
        view = c.op(OpType.RESHAPE, [x], shape=(n, ch, 1, sizes[0]))
        w2 = {"strides": [1, st[0]], "pads": [0, pads[0], 0, pads[1]],
              "dilations": [1, dil[0]], "ceil_mode": ceil}  # fmt: skip
        flat = _pool2d(c, op, view, (1, sizes[0]), (1, kernel[0]), w2, include_pad)
        return c.op(OpType.RESHAPE, [flat], out, shape=(n, ch, c.ctx.type_of(flat).shape[3]))
    d, h, w = sizes
    plane = c.op(OpType.RESHAPE, [x], shape=(n, ch * d, h, w))
    w_hw = {"strides": st[1:], "pads": [pads[1], pads[2], pads[4], pads[5]],
            "dilations": dil[1:], "ceil_mode": ceil}  # fmt: skip
    hw = _pool2d(c, op, plane, (h, w), kernel[1:], w_hw, include_pad)
    ht, wt = c.ctx.type_of(hw).shape[2:]
    deep = c.op(OpType.RESHAPE, [hw], shape=(n, ch, d, ht * wt))
    w_d = {"strides": [st[0], 1], "pads": [pads[0], 0, pads[3], 0],
           "dilations": [dil[0], 1], "ceil_mode": ceil}  # fmt: skip
    pooled = _pool2d(c, op, deep, (d, ht * wt), (kernel[0], 1), w_d, include_pad)
    depth = c.ctx.type_of(pooled).shape[2]
    return c.op(OpType.RESHAPE, [pooled], out, shape=(n, ch, depth, ht, wt))


def _checked(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> tuple[Seq, list[int]]:
    """The input shape and ``kernel_shape`` of a windowed pool, checked (ModelFormatError)."""
    shape = ctx.type_of(proto.input[0]).shape
    rank = len(shape) - 2
    if rank not in (1, 2, 3):
        raise ctx.unsupported(proto, name, f"{rank}-D spatial input: pools are 1-D to 3-D")
    kernel = [int(k) for k in attributes(proto).get("kernel_shape", [])]
    if len(kernel) != rank or min(kernel) < 1:
        raise ModelFormatError(
            f"{proto.op_type} kernel_shape {kernel} needs {rank} values >= 1 for input "
            f"{ctx.type_of(proto.input[0])}",
            op=proto.op_type,
            node=name,
        )
    return shape, kernel


@register("MaxPool", "AveragePool")
def pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    if len([o for o in proto.output if o]) > 1:
        raise ctx.unsupported(
            proto, name, "the Indices output: the pooling kernel computes values only"
        )
    shape, kernel = _checked(ctx, proto, name)
    win = _window(ctx, proto, name, shape[2:], kernel)
    op = OpType.MAXPOOL if proto.op_type == "MaxPool" else OpType.AVGPOOL
    include = int(attributes(proto).get("count_include_pad", 0))
    pool_nd(EmitChain(ctx, name), op, proto.input[0], shape, kernel, win, include, proto.output[0])


@register("GlobalMaxPool")
def global_max_pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    x = proto.input[0]
    rank = len(ctx.type_of(x).shape)
    if rank < 3:
        raise ModelFormatError(
            f"GlobalMaxPool needs an N, C, spatial… input, got {ctx.type_of(x)}",
            op=proto.op_type,
            node=name,
        )
    ctx.emit(name, OpType.REDUCE, [x], [proto.output[0]], fn="ReduceMax",
             axes=list(range(2, rank)), keepdims=1)  # fmt: skip


@register("LpPool")
def lp_pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    shape, kernel = _checked(ctx, proto, name)
    t = ctx.type_of(proto.input[0])
    if not t.dtype.is_float:
        raise ModelFormatError(f"LpPool needs a float input, got {t}", op="LpPool", node=name)
    p = int(attributes(proto).get("p", 2))
    if p < 1:
        raise ModelFormatError(f"LpPool p = {p} must be >= 1", op="LpPool", node=name)
    win = _window(ctx, proto, name, shape[2:], kernel)
    if win["ceil_mode"]:  # the ceil-mode tail as zero padding: every window then counts in full
        rank = len(kernel)
        for i in range(rank):
            args = (shape[2 + i], kernel[i], win["strides"][i], win["pads"][i],
                    win["pads"][rank + i], win["dilations"][i])  # fmt: skip
            out = conv_out(*args, 1)
            span = win["dilations"][i] * (kernel[i] - 1) + 1
            reach = (out - 1) * win["strides"][i] + span
            win["pads"][rank + i] += max(0, reach - (shape[2 + i] + win["pads"][i]
                                                     + win["pads"][rank + i]))  # fmt: skip
        win["ceil_mode"] = 0
    c = EmitChain(ctx, name)
    dt = t.dtype.numpy
    mag = c.op(OpType.UNARY, [proto.input[0]], fn="Abs")
    powered = mag if p == 1 else c.op(OpType.BINARY, [mag, c.const(np.asarray(p, dt))], fn="Pow")
    mean = pool_nd(c, OpType.AVGPOOL, powered, shape, kernel, win, 1)
    size = c.const(np.asarray(math.prod(kernel), dt))
    if p == 1:
        c.op(OpType.MUL, [mean, size], proto.output[0])
        return
    total = c.op(OpType.MUL, [mean, size])
    c.op(OpType.BINARY, [total, c.const(np.asarray(1.0 / p, dt))], proto.output[0], fn="Pow")


@register("MaxUnpool")
def max_unpool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """X written at the flat places I names in zeros of the output shape: output_shape when
    given (a constant; it may only enlarge), else (in - 1) * stride + kernel - pads."""
    ins = present_inputs(proto, 3)
    if ctx.opset < 9 or len(ins) < 2 or not all(ins[:2]) or len(proto.input) > 3:
        raise ModelFormatError(
            f"MaxUnpool (opset 9+, model opset {ctx.opset}) takes X, I and an optional "
            f"output_shape, got {list(proto.input)}",
            op="MaxUnpool",
            node=name,
        )
    a = attributes(proto)
    if "kernel_shape" not in a:
        raise ModelFormatError("MaxUnpool needs kernel_shape", op="MaxUnpool", node=name)
    attrs: dict[str, list[int]] = {
        k: [int(v) for v in a[k]] for k in ("kernel_shape", "strides", "pads") if k in a
    }
    shape = ctx.const_input(proto, name, 2, "output_shape")
    if shape is not None:
        if shape.dtype != np.int64 or shape.ndim != 1:
            raise ModelFormatError(
                f"MaxUnpool output_shape must be a 1-D int64 tensor, got {shape.dtype}"
                f"{list(shape.shape)}",
                op="MaxUnpool",
                node=name,
            )
        attrs["output_shape"] = [int(d) for d in shape]
    ctx.emit(name, OpType.MAXUNPOOL, ins[:2], [proto.output[0]], **attrs)
    indices, out = ctx.const(ins[1]), ctx.type_of(proto.output[0])
    if indices is not None and indices.size and (indices.min() < 0 or indices.max() >= out.numel):
        raise ModelFormatError(
            f"MaxUnpool indices address outside the output {out}", op="MaxUnpool", node=name
        )


@register("MaxRoiPool")
def max_roi_pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y[r] = the max of X[batch_r] over each of pooled_shape bins of roi r (its corners times
    spatial_scale)."""
    ins = present_inputs(proto, 2)
    if len(ins) != 2 or not all(ins):
        raise ModelFormatError(
            f"MaxRoiPool takes X and rois, got {list(proto.input)}", op="MaxRoiPool", node=name
        )
    x, rois = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 5:
        raise ModelFormatError(
            f"MaxRoiPool needs a 4-D X and rois [R, 5], got {x} and {rois}",
            op="MaxRoiPool",
            node=name,
        )
    a = attributes(proto)
    pooled = [int(v) for v in a.get("pooled_shape", ())]
    if len(pooled) != 2 or min(pooled) < 1:
        raise ModelFormatError(
            f"MaxRoiPool pooled_shape {pooled} must be two ints >= 1", op="MaxRoiPool", node=name
        )
    scale = float(a.get("spatial_scale", 1.0))
    ctx.emit(name, OpType.MAXROIPOOL, ins, [proto.output[0]], pooled_shape=pooled,
             spatial_scale=scale)  # fmt: skip


_ROI_NAMES = {"mode": ("avg", "max"),
              "coordinate_transformation_mode": ("half_pixel", "output_half_pixel")}  # fmt: skip


@register("RoiAlign")
def roi_align(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y[r] = the average (max) of the bilinear samples of each output bin of roi r in
    X[batch_indices[r]]; before opset 16 (no coordinate_transformation_mode) the coordinates
    are output_half_pixel."""
    ins, a = present_inputs(proto, 3), attributes(proto)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"RoiAlign {why}", op="RoiAlign", node=name)

    if len(ins) != 3 or not all(ins):
        raise bad(f"takes X, rois and batch_indices, got {list(proto.input)}")
    x, rois, idx = (ctx.type_of(i).shape for i in ins)
    if len(x) != 4 or len(rois) != 2 or rois[1] != 4 or idx != rois[:1]:
        raise bad(f"needs a 4-D X, rois [R, 4], batch_indices [R], got {x}, {rois}, {idx}")
    if ctx.opset < 16 and "coordinate_transformation_mode" in a:
        raise bad(f"has no coordinate_transformation_mode before opset 16 (opset {ctx.opset})")
    attrs: dict[str, Any] = {
        "mode": a.get("mode", "avg"),
        "coordinate_transformation_mode": a.get(
            "coordinate_transformation_mode",
            "half_pixel" if ctx.opset >= 16 else "output_half_pixel",
        ),
        "spatial_scale": float(a.get("spatial_scale", 1.0)),
    }
    for key, least in (("output_height", 1), ("output_width", 1), ("sampling_ratio", 0)):
        attrs[key] = int(a.get(key, least))
        if attrs[key] < least:
            raise bad(f"{key} {attrs[key]} must be >= {least}")
    for key, known in _ROI_NAMES.items():
        if attrs[key] not in known:
            raise bad(f"{key} {attrs[key]!r} is not one of {', '.join(known)}")
    ctx.emit(name, OpType.ROIALIGN, ins, [proto.output[0]], **attrs)
