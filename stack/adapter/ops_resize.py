"""Importers of Resize, Upsample, GridSample and AffineGrid. Resize and Upsample: each resized
axis becomes constant-index Gathers (one per interpolation tap) weighted by constant
coefficients and summed.

Shapes are static, so the source coordinates of every output position — ONNX's
coordinate_transformation_mode, then nearest rounding or linear / cubic taps with edge
clamping — are computed here, once, into index and weight constants: nearest is one GATHER per
axis, linear two (weights ``1 - r`` and ``r``), cubic four (Keys' cubic convolution with
``cubic_coeff_a``; ``exclude_outside`` renormalises the taps that stay inside).
``tf_crop_and_resize`` and ``antialias`` are refused with a typed error.

GridSample samples at places its grid input gives at run time, so it is its own IR op (no
constant taps): 4-D X with modes bilinear, nearest, bicubic in opsets 16-19; any spatial rank
with linear, nearest, cubic from opset 20 (the IR names are opset 20's). AffineGrid (opset 20+)
makes such a grid from a run-time theta, its own IR op too: its constant size becomes an
attribute.
"""

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

_LAYERS = ("adapter",)


def source_coords(mode: str, o: np.ndarray, n: int, m: int, scale: float) -> np.ndarray:
    """Input coordinate of each output position ``o`` on an axis of ``n`` resized to ``m``."""
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if m > 1 else np.zeros_like(o)
    if mode == "align_corners":  # the resized length is n * scale, not the integer m
        return o * (n - 1) / (n * scale - 1) if m > 1 else np.zeros_like(o)
    if mode == "asymmetric":
        return o / scale
    if mode == "half_pixel_symmetric":
        adjustment = m / (scale * n)
        offset = n / 2 * (1 - adjustment)
        return offset + (o + 0.5) / scale - 0.5
    raise ValueError(mode)


def _nearest(x: np.ndarray, rule: str) -> np.ndarray:
    if rule == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if rule == "round_prefer_ceil":
        return np.floor(x + 0.5)
    return np.floor(x) if rule == "floor" else np.ceil(x)


def _cubic(r: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic-convolution weights of the taps at -1, 0, 1, 2 for fractional offset r."""
    d = np.stack([1 + r, r, 1 - r, 2 - r], axis=-1)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far)


def taps(
    mode: str, coords: np.ndarray, n: int, rule: str, a: float, exclude_outside: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Per output position: source indices ``[m, taps]`` and weights (None for nearest)."""
    if mode == "nearest":
        idx = np.clip(_nearest(coords, rule), 0, n - 1).astype(np.int64)
        return idx[:, None], None
    base = np.floor(coords)
    r = coords - base
    if mode == "linear":
        offsets, weights = np.array([0, 1]), np.stack([1 - r, r], axis=-1)
    else:
        offsets, weights = np.array([-1, 0, 1, 2]), _cubic(r, a)
    idx = base[:, None].astype(np.int64) + offsets[None, :]
    if exclude_outside:
        weights = np.where((idx >= 0) & (idx < n), weights, 0.0)
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(idx, 0, n - 1), weights


def _out_sizes(
    ctx: ImportContext, proto: onnx.NodeProto, name: str, shape: tuple[int, ...]
) -> tuple[list[int], list[float]]:
    a = attributes(proto)
    rank = len(shape)
    if proto.op_type == "Upsample":
        s = a.get("scales") if ctx.opset < 9 else ctx.const_input(proto, name, 1, "scales")
        scales = [float(v) for v in np.asarray(s).ravel()]
        return [math.floor(d * f) for d, f in zip(shape, scales, strict=True)], scales
    axes = [_axis(ctx, proto, name, int(v), rank) for v in a.get("axes", range(rank))]
    scales_in = ctx.const_input(proto, name, 2 if ctx.opset >= 11 else 1, "scales")
    sizes_in = ctx.const_input(proto, name, 3, "sizes") if ctx.opset >= 11 else None
    out, scales = list(shape), [1.0] * rank
    if sizes_in is not None and sizes_in.size:
        sizes = [int(v) for v in sizes_in.ravel()]
        ratios = [sizes[i] / shape[ax] for i, ax in enumerate(axes)]
        policy = a.get("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            common = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [common] * len(axes)
            sizes = [math.floor(common * shape[ax] + 0.5) for ax in axes]
        for i, ax in enumerate(axes):
            out[ax], scales[ax] = sizes[i], ratios[i]
        return out, scales
    if scales_in is None:
        raise ctx.unsupported(proto, name, "neither scales nor sizes is given", layers=_LAYERS)
    for i, ax in enumerate(axes):
        scales[ax] = float(scales_in.ravel()[i])
        out[ax] = math.floor(shape[ax] * scales[ax])
    return out, scales


@register("Resize", "Upsample")
def resize(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    a = attributes(proto)
    x = proto.input[0]
    t = ctx.type_of(x)
    mode = str(a.get("mode", "nearest"))
    if proto.op_type == "Upsample":
        coord, rule = "asymmetric", "floor"
    else:
        coord = str(a.get("coordinate_transformation_mode", "half_pixel"))
        rule = str(a.get("nearest_mode", "round_prefer_floor"))
    if int(a.get("antialias", 0)) or coord == "tf_crop_and_resize":
        what = "antialias" if int(a.get("antialias", 0)) else "tf_crop_and_resize"
        raise ctx.unsupported(proto, name, f"{what} is not implemented", layers=_LAYERS)
    if mode != "nearest" and not t.dtype.is_float:
        raise ctx.unsupported(proto, name, f"{mode} resize of {t.dtype.value}", layers=_LAYERS)
    out_shape, scales = _out_sizes(ctx, proto, name, t.shape)
    c = EmitChain(ctx, name)
    cur = x
    changed = [ax for ax, (d, m) in enumerate(zip(t.shape, out_shape, strict=True)) if d != m]
    changed = changed or [0]
    for k, ax in enumerate(changed):
        n, m = t.shape[ax], out_shape[ax]
        coords = source_coords(coord, np.arange(m, dtype=np.float64), n, m, scales[ax])
        idx, weights = taps(
            mode, coords, n, rule, float(a.get("cubic_coeff_a", -0.75)),
            bool(int(a.get("exclude_outside", 0))),
        )  # fmt: skip
        last = k == len(changed) - 1
        target = proto.output[0] if last else None
        if weights is None:
            cur = c.op(OpType.GATHER, [cur, c.const(idx[:, 0])], target, axis=ax)
            continue
        view = [1] * len(t.shape)
        view[ax] = m
        acc = None
        for j in range(idx.shape[1]):
            picked = c.op(OpType.GATHER, [cur, c.const(idx[:, j])], axis=ax)
            w = c.const(weights[:, j].reshape(view).astype(t.dtype.numpy))
            term = c.op(OpType.MUL, [picked, w])
            done = last and j == idx.shape[1] - 1
            acc = term if acc is None else c.op(OpType.ADD, [acc, term], target if done else None)
        cur = acc  # type: ignore[assignment]


#: GridSample's mode names before opset 20 -> opset 20's (the IR's).
_GRID_MODES_16 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
_GRID_MODES = ("linear", "nearest", "cubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


@register("GridSample")
def grid_sample(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y[n, c, *o] = X[n, c] interpolated at the normalised place grid[n, *o] (opset 16+;
    before opset 20 a 4-D X and the modes bilinear, nearest, bicubic)."""
    ins, a = list(proto.input), attributes(proto)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"GridSample {why}", op="GridSample", node=name)

    if ctx.opset < 16:
        raise bad(f"does not exist before opset 16 (opset {ctx.opset})")
    if len(ins) != 2 or not all(ins):
        raise bad(f"takes X and grid, got {list(proto.input)}")
    xt, gt = ctx.type_of(ins[0]), ctx.type_of(ins[1])
    x, grid = xt.shape, gt.shape
    r = len(x) - 2
    if r < 1 or (ctx.opset < 20 and r != 2):
        raise bad(f"X{list(x)} must be {'4-D' if ctx.opset < 20 else 'of rank >= 3'} "
                  f"at opset {ctx.opset}")  # fmt: skip
    if len(grid) != r + 2 or grid[0] != x[0] or grid[-1] != r:
        raise bad(f"grid{list(grid)} must be [{x[0]}, *out, {r}] for X{list(x)}")
    if not gt.dtype.is_float:
        raise bad(f"grid is {gt.dtype.value}, not a float dtype")
    if not xt.dtype.is_float:
        raise ctx.unsupported(proto, name, f"GridSample of {xt.dtype.value}",
                              layers=("adapter", "compiler", "umd", "kmd"))  # fmt: skip
    modes = _GRID_MODES_16 if ctx.opset < 20 else {m: m for m in _GRID_MODES}
    mode = str(a.get("mode", next(iter(modes))))
    if mode not in modes:
        raise bad(f"mode {mode!r} is not one of {', '.join(modes)} at opset {ctx.opset}")
    padding = str(a.get("padding_mode", "zeros"))
    if padding not in _GRID_PADDINGS:
        raise bad(f"padding_mode {padding!r} is not one of {', '.join(_GRID_PADDINGS)}")
    align = int(a.get("align_corners", 0))
    if align not in (0, 1):
        raise bad(f"align_corners {align} must be 0 or 1")
    ctx.emit(name, OpType.GRID_SAMPLE, ins, [proto.output[0]], mode=modes[mode],
             padding_mode=padding, align_corners=align)  # fmt: skip


@register("AffineGrid")
def affine_grid(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """grid[n, *s] = theta[n] applied to the normalised place of pixel s of an image of size
    (N, C, *S) (opset 20+): the IR ``AffineGrid``, size (a constant) as an attribute."""
    ins, a = list(proto.input), attributes(proto)

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"AffineGrid {why}", op="AffineGrid", node=name)

    if ctx.opset < 20 or len(ins) != 2 or not all(ins):
        raise bad(f"(opset 20+, model opset {ctx.opset}) takes theta and size, got {ins}")
    size = ctx.const_input(proto, name, 1, "size")  # a run-time one: a DynamicShapeError
    if size is None or size.dtype != np.int64 or size.shape not in ((4,), (5,)):
        raise bad(f"size {size} must be int64 [4] (N, C, H, W) or [5] (N, C, D, H, W)")
    if size[:2].min() < 0 or size[2:].min() < 1:
        raise bad(f"size {list(size)} must have N, C >= 0 and spatial sizes >= 1")
    n, r, tt = int(size[0]), len(size) - 2, ctx.type_of(ins[0])
    if not tt.dtype.is_float:
        raise bad(f"theta is {tt.dtype.value}, not a float dtype")
    if tt.shape != (n, r, r + 1):
        raise bad(f"theta{list(tt.shape)} must be [{n}, {r}, {r + 1}] for size {list(size)}")
    align = int(a.get("align_corners", 0))
    if align not in (0, 1):
        raise bad(f"align_corners {align} must be 0 or 1")
    ctx.emit(name, OpType.AFFINE_GRID, [ins[0]], [proto.output[0]],
             size=[int(v) for v in size], align_corners=align)  # fmt: skip
