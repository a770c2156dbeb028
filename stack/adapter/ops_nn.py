"""Importers of the convolution family: Conv, ConvTranspose, Col2Im, GlobalAveragePool,
GlobalLpPool, BatchNormalization and Dropout (inference); the pools are in
:mod:`stack.adapter.ops_pool`.

The kernels are 2-D NCHW: 1-D ops are promoted to 2-D with a unit height through Reshape
views; a 3-D ConvTranspose is two 2-D ones (:mod:`stack.adapter.ops_conv3d`), other 3-D ops
are refused with a typed error. ``auto_pad`` and ``ceil_mode`` are resolved to
explicit pads here, so the IR carries only ``pads`` (top, left, bottom, right); ConvTranspose's
``output_padding`` and ``output_shape`` become its end pads (negative ones extend with zeros).
Col2Im is N-D (its own kernel): its constant image_shape and block_shape become attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_conv3d import conv_transpose_3d
from stack.adapter.registry import register
from stack.compiler import OpType, conv_out

SPATIAL_LAYERS = ("compiler", "umd", "kmd")
Seq = Sequence[int]


def _auto_pads(mode: str, sizes: Seq, kernel: Seq, strides: Seq, dilations: Seq) -> list[int]:
    begin: list[int] = []
    end: list[int] = []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(large if mode == "SAME_LOWER" else small)
        end.append(small if mode == "SAME_LOWER" else large)
    return begin + end


def _window(ctx: ImportContext, proto: onnx.NodeProto, name: str, sizes: Seq, kernel: Seq) -> dict:
    a = attributes(proto)
    rank = len(kernel)
    strides = list(a.get("strides", [1] * rank))
    dil = list(a.get("dilations", [1] * rank))
    mode = a.get("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        pads = _auto_pads(mode, sizes, kernel, strides, dil)
    elif mode == "VALID":
        pads = [0] * (2 * rank)
    else:
        pads = list(a.get("pads", [0] * (2 * rank)))
    return {
        "strides": strides,
        "pads": pads,
        "dilations": dil,
        "ceil_mode": int(a.get("ceil_mode", 0)),
    }


def _to2d(w: dict, rank: int) -> dict:
    if rank == 2:
        return w
    return {
        "strides": [1, *w["strides"]],
        "pads": [0, w["pads"][0], 0, w["pads"][1]],
        "dilations": [1, *w["dilations"]],
        **({"ceil_mode": w["ceil_mode"]} if "ceil_mode" in w else {}),
    }


def _promote(ctx: ImportContext, name: str, value: str, tag: str) -> str:
    t = ctx.type_of(value)
    shape = (*t.shape[:2], 1, *t.shape[2:])
    arr = ctx.const(value)
    out = ctx.fresh(f"{name}.{tag}4d")
    if arr is not None:
        return ctx.add_const(out, arr.reshape(shape))
    ctx.emit(ctx.fresh(f"{name}.view"), OpType.RESHAPE, [value], [out], shape=shape)
    return out


def _spatial(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> int:
    rank = len(ctx.type_of(proto.input[0]).shape) - 2
    if rank not in (1, 2):
        raise ctx.unsupported(
            proto,
            name,
            f"{rank}-D spatial input: the kernels are 2-D (NCHW)",
            layers=SPATIAL_LAYERS,
        )
    return rank


def _finish(
    ctx: ImportContext, name: str, op: OpType, ins: list[str], out: str, rank: int, **attrs: Any
) -> None:
    if rank == 2:
        ctx.emit(name, op, ins, [out], **attrs)
        return
    tmp = ctx.fresh(f"{name}.out4d")
    ctx.emit(name, op, ins, [tmp], **attrs)
    t = ctx.type_of(tmp)
    ctx.emit(
        ctx.fresh(f"{name}.view"), OpType.RESHAPE, [tmp], [out], shape=(*t.shape[:2], t.shape[3])
    )


@register("Conv")
def conv(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    rank = _spatial(ctx, proto, name)
    x, w = proto.input[0], proto.input[1]
    kernel = ctx.type_of(w).shape[2:]
    win = _window(ctx, proto, name, ctx.type_of(x).shape[2:], kernel)
    win.pop("ceil_mode")
    ins = [x, w] if rank == 2 else [_promote(ctx, name, x, "x"), _promote(ctx, name, w, "w")]
    if len(proto.input) > 2 and proto.input[2]:
        ins.append(proto.input[2])
    group = int(attributes(proto).get("group", 1))
    _finish(ctx, name, OpType.CONV, ins, proto.output[0], rank, group=group, **_to2d(win, rank))


def _ints(proto: onnx.NodeProto, name: str, key: str, n: int, default: int, low: int) -> list[int]:
    value = [int(v) for v in attributes(proto).get(key, [default] * n)]
    if len(value) != n or min(value, default=low) < low:
        raise ModelFormatError(
            f"{proto.op_type} {key} {value} needs {n} values >= {low}", op=proto.op_type, node=name
        )
    return value


@register("ConvTranspose")
def conv_transpose(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    rank = len(ctx.type_of(proto.input[0]).shape) - 2
    if rank != 3:  # 3-D: two 2-D ConvTransposes (stack.adapter.ops_conv3d)
        _spatial(ctx, proto, name)
    x, w = proto.input[0], proto.input[1]
    xt, wt = ctx.type_of(x), ctx.type_of(w)
    if len(wt.shape) != rank + 2:
        raise ModelFormatError(
            f"ConvTranspose W {wt} must have the rank of X {xt}", op=proto.op_type, node=name
        )
    a = attributes(proto)
    kernel = list(wt.shape[2:])
    if list(a.get("kernel_shape", kernel)) != kernel:
        raise ModelFormatError(
            f"ConvTranspose kernel_shape {list(a['kernel_shape'])} differs from W {wt}",
            op=proto.op_type,
            node=name,
        )
    strides = _ints(proto, name, "strides", rank, 1, 1)
    dil = _ints(proto, name, "dilations", rank, 1, 1)
    out_pad = _ints(proto, name, "output_padding", rank, 0, 0)
    sizes = xt.shape[2:]
    full = [
        s * (n - 1) + d * (k - 1) + 1
        for n, k, s, d in zip(sizes, kernel, strides, dil, strict=True)
    ]
    mode = a.get("auto_pad", "NOTSET")
    given = [int(v) for v in a.get("output_shape", [])][-rank:] or None
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        target = given or [n * s for n, s in zip(sizes, strides, strict=True)]
        total = [f + p - t for f, p, t in zip(full, out_pad, target, strict=True)]
        begin = [t // 2 if mode == "SAME_UPPER" else t - t // 2 for t in total]
    else:
        pads = [0] * 2 * rank if mode == "VALID" else _ints(proto, name, "pads", 2 * rank, 0, 0)
        begin = pads[:rank]
        target = given or [
            f + p - b - e for f, p, b, e in zip(full, out_pad, begin, pads[rank:], strict=True)
        ]
    # the kernel's end pads: what is cut from (negative: added to) the uncropped result
    end = [f - b - t for f, b, t in zip(full, begin, target, strict=True)]
    if rank == 3:
        ins3 = [i for i in proto.input[:3] if i]
        group3 = int(a.get("group", 1))
        conv_transpose_3d(ctx, name, ins3, proto.output[0], begin, end, strides, dil, group3)
        return
    win = _to2d({"strides": strides, "pads": begin + end, "dilations": dil}, rank)
    ins = [x, w] if rank == 2 else [_promote(ctx, name, x, "x"), _promote(ctx, name, w, "w")]
    if len(proto.input) > 2 and proto.input[2]:
        ins.append(proto.input[2])
    group = int(a.get("group", 1))
    _finish(ctx, name, OpType.CONV_TRANSPOSE, ins, proto.output[0], rank, group=group, **win)


@register("Col2Im")
def col2im(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """The blocks of input [N, C*prod(block_shape), L] scatter-added into [N, C, *image_shape]
    (opset 18+): the IR ``Col2Im``, image_shape and block_shape (constants) as attributes."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"Col2Im {why}", op="Col2Im", node=name)

    def shape_input(i: int, key: str) -> list[int]:
        arr = ctx.const_input(proto, name, i, key)  # a run-time one: a DynamicShapeError
        if arr is None or arr.dtype != np.int64 or arr.ndim != 1 or not arr.size or arr.min() < 1:
            raise bad(f"{key} {arr} must be int64 [r] of values >= 1")
        return [int(v) for v in arr]

    ins = list(proto.input)
    if ctx.opset < 18 or len(ins) != 3 or not all(ins):
        raise bad(f"(opset 18+, model opset {ctx.opset}) takes input, image_shape and "
                  f"block_shape, got {ins}")  # fmt: skip
    img, blk = shape_input(1, "image_shape"), shape_input(2, "block_shape")
    r = len(img)
    if len(blk) != r:
        raise bad(f"block_shape {blk} must have image_shape {img}'s {r} values")
    dil, strides = (_ints(proto, name, k, r, 1, 1) for k in ("dilations", "strides"))
    pads = _ints(proto, name, "pads", 2 * r, 0, 0)
    xt = ctx.type_of(ins[0])
    if not xt.dtype.is_float:
        raise ctx.unsupported(proto, name, f"Col2Im of {xt.dtype.value}",
                              layers=("adapter", "compiler", "umd", "kmd"))  # fmt: skip
    places = [conv_out(img[a], blk[a], strides[a], pads[a], pads[r + a], dil[a], 0)
              for a in range(r)]  # fmt: skip
    k = int(np.prod(blk))
    if len(xt.shape) != 3 or min(places) < 1 or xt.shape[1] % k or xt.shape[2] != np.prod(places):
        raise bad(f"input {list(xt.shape)} must be [N, C*{k}, L], L the {places} block places")
    ctx.emit(name, OpType.COL2IM, [ins[0]], [proto.output[0]], image_shape=img, block_shape=blk,
             dilations=dil, pads=pads, strides=strides)  # fmt: skip


@register("GlobalAveragePool")
def global_avg_pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    rank = _spatial(ctx, proto, name)
    x = proto.input[0] if rank == 2 else _promote(ctx, name, proto.input[0], "x")
    _finish(ctx, name, OpType.GLOBALAVGPOOL, [x], proto.output[0], rank)


@register("GlobalLpPool")
def global_lp_pool(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    p = int(attributes(proto).get("p", 2))
    if p < 1:
        raise ModelFormatError(f"GlobalLpPool p {p} must be >= 1", op=proto.op_type, node=name)
    rank = _spatial(ctx, proto, name)
    x = proto.input[0] if rank == 2 else _promote(ctx, name, proto.input[0], "x")
    _finish(ctx, name, OpType.GLOBALLPPOOL, [x], proto.output[0], rank, p=p)


@register("BatchNormalization")
def batchnorm(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    if int(a.get("training_mode", 0)) or len([o for o in proto.output if o]) > 1:
        raise ctx.unsupported(
            proto, name, "training mode (running statistics): the stack is inference-only"
        )
    ctx.emit(
        name,
        OpType.BATCHNORM,
        list(proto.input[:5]),
        [proto.output[0]],
        epsilon=float(a.get("epsilon", 1e-5)),
    )


@register("Dropout")
def dropout(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    ratio = float(attributes(proto).get("ratio", 0.5))
    training = False
    if len(proto.input) > 1 and proto.input[1]:
        r = ctx.const(proto.input[1])
        ratio = float(r) if r is not None else ratio
    if len(proto.input) > 2 and proto.input[2]:
        t = ctx.const(proto.input[2])
        if t is None:
            raise ctx.unsupported(proto, name, "training_mode must be a constant")
        training = bool(t)
    if training and ratio != 0.0:
        raise ctx.unsupported(
            proto, name, "training-mode Dropout draws a random mask: the stack is inference-only"
        )
    x = proto.input[0]
    ctx.alias(name, x, proto.output[0])
    if len(proto.output) > 1 and proto.output[1]:
        ctx.add_const(proto.output[1], np.ones(ctx.type_of(x).shape, dtype=np.bool_))
