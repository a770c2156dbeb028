"""The importer of CenterCropPad (opset 18+), the centred crop or zero pad of chosen axes to a
target size; in a module of its own beside :mod:`stack.adapter.ops_index`, whose Pad it
follows (ops_index is past its 300 lines).

The target (ONNX's ``shape`` input) decides the output's shape, so it must be a constant: a
run-time one is a DynamicShapeError naming the tensor. With ``axes`` it resolves to the IR
``CenterCropPad``'s ``shape``, one size per axis of the input (an axis not listed keeps its
size), as Pad's importer resolves its pads over every axis.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import OpType


@register("CenterCropPad")
def center_crop_pad(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = input_data cropped (from ``(in - target) // 2``) or zero-padded (at ``(target - in)
    // 2``) about its centre on ``axes``, default every axis (opset 18+): the IR
    ``CenterCropPad``, the constant target over every axis as its ``shape``."""
    ins = list(proto.input)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"CenterCropPad {why}", op="CenterCropPad", node=name)

    if ctx.opset < 18 or len(ins) != 2 or not all(ins):
        raise bad(f"(opset 18+, model opset {ctx.opset}) takes input_data and shape, got {ins}")
    x = ctx.type_of(ins[0]).shape
    target = ctx.const_input(proto, name, 1, "shape")  # a run-time one: a DynamicShapeError
    if target is None or target.dtype not in (np.int64, np.int32) or target.ndim != 1:
        raise bad(f"shape {target} must be a 1-D int64 or int32 tensor")
    rank = len(x)
    axes = [int(v) for v in attributes(proto).get("axes", range(rank))]
    if any(not -rank <= ax < rank for ax in axes):
        raise bad(f"axes {axes} must lie in [{-rank}, {rank}) for input_data {list(x)}")
    resolved = [ax + rank if ax < 0 else ax for ax in axes]
    if len(set(resolved)) != len(resolved):
        raise bad(f"axes {axes} name an axis twice")
    sizes = [int(v) for v in target]
    if len(sizes) != len(axes) or min(sizes, default=0) < 0:
        raise bad(f"shape {sizes} must be one size >= 0 for each of the {len(axes)} axes")
    shape = list(x)
    for ax, size in zip(resolved, sizes, strict=True):
        shape[ax] = size
    ctx.emit(name, OpType.CENTER_CROP_PAD, [ins[0]], [proto.output[0]], shape=shape)
