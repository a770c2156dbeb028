"""Shape and dtype rules of the windowed ops: Conv, ConvTranspose, Col2Im (a 3-D float input
[N, C·∏block_shape, L], L the block places in the padded image), DeformConv (2-D: X, W,
offset [N, og·kH·kW·2, oH, oW] and the optional B [oC] and mask [N, og·kH·kW, oH, oW] of one
float dtype, og the offset_group dividing C), the pools (GlobalLpPool's
p at least 1; MaxRoiPool's rois [R, 5] of X's dtype; RoiAlign's rois [R, 4] of X's dtype and
int64 batch_indices [R]), GridSample (X [N, C, *S] and grid [N, *O, r] of float dtypes),
AffineGrid (a float theta [N, r, r + 1] for size (N, C, *S), r 2 or 3: the grid [N, *S, r]) and
MaxUnpool (registered into :mod:`stack.compiler.shape_rules`' registry on import).

Spatial axes follow N, C; a window's output size is :func:`~stack.compiler.shape_rules.conv_out`
(the adapter sizes pads with the same rule). Every rule raises a :class:`ShapeInferenceError`
naming the node for a bad rank, channel count, window or padding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, conv_out, register


@register(OpType.CONV)
def _conv(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w = _need(node, t, 0), _need(node, t, 1)
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise _fail(node, f"Conv needs 4-D X and W, got {x} and {w}")
    if node.attr("algorithm", 0):  # Winograd weights U[4, 4, M, C] of a 3x3 kernel
        if w.shape[:2] != (4, 4):
            raise _fail(node, f"Winograd weights must be [4, 4, M, C], got {w}")
        w = TensorType(w.dtype, (w.shape[2], w.shape[3], 3, 3))
    group = int(node.attr("group", 1))
    if x.shape[1] != w.shape[1] * group:
        raise _fail(node, f"X has {x.shape[1]} channels, W expects {w.shape[1]}x{group}")
    s, p, d = node.attr("strides"), node.attr("pads"), node.attr("dilations")
    hw = tuple(
        conv_out(x.shape[2 + i], w.shape[2 + i], s[i], p[i], p[i + 2], d[i], 0) for i in range(2)
    )
    out = TensorType(x.dtype, (x.shape[0], w.shape[0], *hw))
    if node.input(3):  # a fused residual: added to the output before the activation
        r = _need(node, t, 3)
        if r != out:
            raise _fail(node, f"the residual {r} must equal the output {out}")
    pk = node.attr("pool_kernel")
    if pk is not None:  # a fused max pool after the epilogue
        ps, pp = node.attr("pool_strides", (1, 1)), node.attr("pool_pads", (0, 0, 0, 0))
        ceil = int(node.attr("pool_ceil", 0))
        hw = tuple(conv_out(hw[i], pk[i], ps[i], pp[i], pp[i + 2], 1, ceil) for i in range(2))
        out = TensorType(x.dtype, (x.shape[0], w.shape[0], *hw))
    return [out]


@register(OpType.CONV_TRANSPOSE)
def _conv_transpose(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x, w = _need(node, t, 0), _need(node, t, 1)
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise _fail(node, f"ConvTranspose needs 4-D X and W, got {x} and {w}")
    if w.dtype != x.dtype:
        raise _fail(node, f"X is {x.dtype.value} but W is {w.dtype.value}")
    group = int(node.attr("group", 1))
    if group < 1 or x.shape[1] != w.shape[0] or x.shape[1] % group:
        raise _fail(
            node, f"X has {x.shape[1]} channels, W {w} expects {w.shape[0]} in {group} groups"
        )
    m = w.shape[1] * group
    b = t[2] if len(t) > 2 else None
    if b is not None and b.shape != (m,):
        raise _fail(node, f"the bias {b} must be ({m},)")
    s, p = node.attr("strides", (1, 1)), node.attr("pads", (0, 0, 0, 0))
    d = node.attr("dilations", (1, 1))
    if len(s) != 2 or len(d) != 2 or len(p) != 4 or min(*s, *d) < 1:
        raise _fail(node, f"strides {s} / dilations {d} need 2 values >= 1, pads {p} 4 values")
    hw = tuple(
        s[i] * (x.shape[2 + i] - 1) + d[i] * (w.shape[2 + i] - 1) + 1 - p[i] - p[i + 2]
        for i in range(2)
    )
    if min(hw) < 1:
        raise _fail(node, f"pads {list(p)} leave an empty output {hw}")
    return [TensorType(x.dtype, (x.shape[0], m, *hw))]


@register(OpType.COL2IM)
def _col2im(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    image, block = (tuple(int(v) for v in node.attr(k, ())) for k in ("image_shape", "block_shape"))
    r = len(image)
    d, s = (tuple(int(v) for v in node.attr(k, (1,) * r)) for k in ("dilations", "strides"))
    p = tuple(int(v) for v in node.attr("pads", (0,) * 2 * r))
    if not x.dtype.is_float or len(x.shape) != 3:
        raise _fail(node, f"input {x} must be a 3-D float [N, C*prod(block_shape), L]")
    sizes = (len(block), len(d), len(s), len(p))
    if r < 1 or sizes != (r, r, r, 2 * r) or min(*image, *block, *d, *s) < 1 or min(p) < 0:
        raise _fail(node, f"image_shape {list(image)}, block_shape {list(block)}, dilations "
                    f"{list(d)}, strides {list(s)} need {r} values >= 1, pads {list(p)} "
                    f"{2 * r} values >= 0")  # fmt: skip
    places = [conv_out(image[a], block[a], s[a], p[a], p[r + a], d[a], 0) for a in range(r)]
    k = int(np.prod(block))
    if min(places) < 1 or x.shape[1] % k or x.shape[2] != int(np.prod(places)):
        raise _fail(node, f"input {list(x.shape)} must be [N, C*{k}, L], L the "
                    f"{' x '.join(map(str, places))} block places")  # fmt: skip
    return [TensorType(x.dtype, (x.shape[0], x.shape[1] // k, *image))]


@register(OpType.DEFORM_CONV)
def _deform_conv(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w, off = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    b, mask = (t[i] if len(t) > i and node.input(i) else None for i in (3, 4))
    if not x.dtype.is_float or any(v is not None and v.dtype != x.dtype for v in (w, off, b, mask)):
        raise _fail(node, f"X {x.dtype.value}, W, offset, B and mask must be one float dtype")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(off.shape) != 4:
        raise _fail(node, f"DeformConv needs 4-D X, W and offset, got {x}, {w} and {off}")
    s, d = (tuple(int(v) for v in node.attr(k, (1, 1))) for k in ("strides", "dilations"))
    p = tuple(int(v) for v in node.attr("pads", (0, 0, 0, 0)))
    group, og = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    if len(s) != 2 or len(d) != 2 or len(p) != 4 or min(*s, *d, group, og) < 1 or min(p) < 0:
        raise _fail(node, f"strides {list(s)}, dilations {list(d)} need 2 values >= 1, pads "
                    f"{list(p)} 4 >= 0, group {group} and offset_group {og} >= 1")  # fmt: skip
    n, ch, m = x.shape[0], x.shape[1], w.shape[0]
    if ch != w.shape[1] * group or m % group or ch % og:
        raise _fail(node, f"X has {ch} channels, W {list(w.shape)} expects {w.shape[1]}x{group} "
                    f"and {m} outputs in {group} groups; offset_group {og}")  # fmt: skip
    hw = tuple(conv_out(x.shape[2 + i], w.shape[2 + i], s[i], p[i], p[i + 2], d[i], 0)
               for i in range(2))  # fmt: skip
    if min(hw) < 1:
        raise _fail(node, f"W {list(w.shape)}'s kernel is larger than X {x} with pads {list(p)}")
    k = og * w.shape[2] * w.shape[3]
    for what, v, want in (("offset", off, (n, 2 * k, *hw)), ("B", b, (m,)),
                          ("mask", mask, (n, k, *hw))):  # fmt: skip
        if v is not None and v.shape != want:
            raise _fail(node, f"{what} {v} must be {list(want)} for X {x} and W {w}")
    return [TensorType(x.dtype, (n, m, *hw))]


def _pool(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    if len(x.shape) != 4:
        raise _fail(node, f"pooling needs a 4-D input, got {x}")
    k, s, p = node.attr("kernel_shape"), node.attr("strides"), node.attr("pads")
    d, ceil = node.attr("dilations", (1, 1)), int(node.attr("ceil_mode", 0))
    hw = tuple(conv_out(x.shape[2 + i], k[i], s[i], p[i], p[i + 2], d[i], ceil) for i in range(2))
    return [TensorType(x.dtype, (*x.shape[:2], *hw))]


register(OpType.MAXPOOL)(_pool)
register(OpType.AVGPOOL)(_pool)


def unpool_shape(node: Node, x: TensorType) -> tuple[int, ...]:
    """MaxUnpool's output shape for input ``x``: ``output_shape`` when the node has one (it may
    only enlarge the spatial axes), else ``(in - 1) * stride + kernel - pad_begin - pad_end``
    per spatial axis; a ShapeInferenceError naming the node for attributes that do not fit."""
    n = len(x.shape) - 2
    if n < 1:
        raise _fail(node, f"X needs N, C and at least one spatial axis, got {x}")
    k = tuple(node.attr("kernel_shape", ()))
    s, p = tuple(node.attr("strides", (1,) * n)), tuple(node.attr("pads", (0,) * 2 * n))
    if len(k) != n or len(s) != n or len(p) != 2 * n or min(*k, *s) < 1 or min(p) < 0:
        raise _fail(
            node,
            f"kernel_shape {list(k)} and strides {list(s)} need {n} values >= 1, pads {list(p)} "
            f"{2 * n} values >= 0 for X {x}",
        )
    spatial = tuple((x.shape[2 + i] - 1) * s[i] + k[i] - p[i] - p[n + i] for i in range(n))
    if min(spatial) < 1:
        raise _fail(node, f"pads {list(p)} leave an empty output {spatial} for X {x}")
    default = (*x.shape[:2], *spatial)
    given = node.attr("output_shape")
    if given is None:
        return default
    out = tuple(int(d) for d in given)
    if (
        len(out) != len(default)
        or out[:2] != default[:2]
        or any(o < d for o, d in zip(out, default, strict=True))
    ):
        raise _fail(node, f"output_shape {list(out)} must be at least {list(default)} (N, C equal)")
    return out


@register(OpType.MAXUNPOOL)
def _max_unpool(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, i = _need(node, t, 0), _need(node, t, 1)
    if not x.dtype.is_float:
        raise _fail(node, f"X is {x.dtype.value}; MaxUnpool takes float16, float32, float64")
    if i.dtype is not ElemType.I64 or i.shape != x.shape:
        raise _fail(node, f"the indices {i} must be int64 of X's shape {list(x.shape)}")
    return [TensorType(x.dtype, unpool_shape(node, x))]


@register(OpType.GLOBALAVGPOOL)
def _gap(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    return [TensorType(x.dtype, (*x.shape[:2], *(1 for _ in x.shape[2:])))]


@register(OpType.GLOBALLPPOOL)
def _global_lp_pool(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x = _need(node, t, 0)
    if not x.dtype.is_float:
        raise _fail(node, f"X is {x.dtype.value}; GlobalLpPool takes float16, float32, float64")
    if int(node.attr("p", 2)) < 1:
        raise _fail(node, f"p {node.attr('p', 2)} must be >= 1")
    return [TensorType(x.dtype, (*x.shape[:2], *(1 for _ in x.shape[2:])))]


@register(OpType.MAXROIPOOL)
def _max_roi_pool(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, rois = _need(node, t, 0), _need(node, t, 1)
    if not x.dtype.is_float or rois.dtype != x.dtype:
        raise _fail(node, f"X {x.dtype.value} and rois {rois.dtype.value} must be one float dtype")
    if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 5:
        raise _fail(node, f"X{list(x.shape)} must be 4-D and rois{list(rois.shape)} [R, 5]")
    pooled = tuple(int(v) for v in node.attr("pooled_shape", ()))
    if len(pooled) != 2 or min(pooled) < 1:
        raise _fail(node, f"pooled_shape {list(pooled)} must be two ints >= 1")
    return [TensorType(x.dtype, (rois.shape[0], x.shape[1], *pooled))]


@register(OpType.ROIALIGN)
def _roi_align(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, rois, idx = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    if not x.dtype.is_float or rois.dtype != x.dtype or idx.dtype is not ElemType.I64:
        raise _fail(node, f"X {x.dtype.value} and rois {rois.dtype.value} must be one float "
                    f"dtype, batch_indices {idx.dtype.value} int64")  # fmt: skip
    if len(x.shape) != 4 or rois.shape[1:] != (4,) or idx.shape != rois.shape[:1]:
        raise _fail(node, f"X{list(x.shape)} must be 4-D, rois{list(rois.shape)} [R, 4] and "
                    f"batch_indices{list(idx.shape)} [R]")  # fmt: skip
    size = tuple(int(node.attr(k, 1)) for k in ("output_height", "output_width"))
    if min(size) < 1 or int(node.attr("sampling_ratio", 0)) < 0:
        raise _fail(node, f"output size {list(size)} must be >= 1, sampling_ratio >= 0")
    return [TensorType(x.dtype, (rois.shape[0], x.shape[1], *size))]


_GRID_NAMES = {"mode": ("linear", "nearest", "cubic"),
               "padding_mode": ("zeros", "border", "reflection")}  # fmt: skip


@register(OpType.GRID_SAMPLE)
def _grid_sample(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, grid = _need(node, t, 0), _need(node, t, 1)
    if not x.dtype.is_float or not grid.dtype.is_float:
        raise _fail(node, f"X {x.dtype.value} and grid {grid.dtype.value} must be float dtypes")
    r = len(x.shape) - 2
    if r < 1 or len(grid.shape) != r + 2 or grid.shape[0] != x.shape[0] or grid.shape[-1] != r:
        raise _fail(node, f"X{list(x.shape)} needs a spatial axis and grid{list(grid.shape)} "
                    f"[{x.shape[0]}, *out, {r}]")  # fmt: skip
    for key, known in _GRID_NAMES.items():
        if node.attr(key, known[0]) not in known:
            raise _fail(node, f"{key} {node.attr(key)!r} is not one of {', '.join(known)}")
    if int(node.attr("align_corners", 0)) not in (0, 1):
        raise _fail(node, f"align_corners {node.attr('align_corners')} must be 0 or 1")
    return [TensorType(x.dtype, (x.shape[0], x.shape[1], *grid.shape[1:-1]))]


@register(OpType.AFFINE_GRID)
def _affine_grid(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    theta = _need(node, t, 0)
    size = tuple(int(v) for v in node.attr("size", ()))
    r = len(size) - 2
    if not theta.dtype.is_float:
        raise _fail(node, f"theta is {theta.dtype.value}, not a float dtype")
    if r not in (2, 3) or min(size[:2]) < 0 or min(size[2:]) < 1:
        raise _fail(node, f"size {list(size)} must be N, C >= 0 and 2 or 3 spatial sizes >= 1")
    if theta.shape != (size[0], r, r + 1):
        raise _fail(node, f"theta{list(theta.shape)} must be [{size[0]}, {r}, {r + 1}] for size "
                    f"{list(size)}")  # fmt: skip
    if int(node.attr("align_corners", 0)) not in (0, 1):
        raise _fail(node, f"align_corners {node.attr('align_corners')} must be 0 or 1")
    return [TensorType(theta.dtype, (size[0], *size[2:], r))]
