"""Grid sampling (ONNX GridSample) for any ``xp``, at any spatial rank: Y[n, c, *o] = X[n, c]
interpolated at the place grid[n, *o] names (normalised to [-1, 1], the last axis first).

Per spatial axis the grid's coordinates become pixel positions (align_corners: -1 and 1 are the
corner pixels' centres, else their outer edges), rounded half to even for NEAREST; a position
outside the borders is clamped (BORDER; not for CUBIC, whose taps alone are clamped, as
onnxruntime and PyTorch, where ONNX's reference clamps the place too) or reflected (REFLECTION)
into them, as onnxruntime does. Each axis then gives its taps — one (NEAREST), two (LINEAR)
or four (CUBIC, Keys' cubic convolution with a = -0.75) pixel indices and weights — a tap
outside the image weighing 0 (ZEROS), clamped (BORDER) or reflected (REFLECTION). Y is the sum
over every combination of one tap per axis of the weights' product times one whole-tensor
gather of X.
Coordinates and weights are float32 (float64 for float64 X), as ONNX's reference.
"""

from __future__ import annotations

import enum
import itertools
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class GridSampleMode(enum.IntEnum):
    """GRID_SAMPLE's ``mode`` (its first int). Values are ABI."""

    LINEAR = 0
    NEAREST = 1
    CUBIC = 2


class GridSamplePadding(enum.IntEnum):
    """GRID_SAMPLE's ``padding_mode`` (its second int). Values are ABI."""

    ZEROS = 0
    BORDER = 1
    REFLECTION = 2


#: Keys' cubic-convolution coefficient (ONNX GridSample fixes it).
CUBIC_A = -0.75


def _reflect(xp: Any, v: Any, lo: float, hi: float) -> Any:
    """``v`` reflected by the borders ``lo`` and ``hi`` until inside them (ONNX's reference)."""
    span = hi - lo
    if span <= 0:
        return xp.full_like(v, lo)
    below, above = v < lo, v > hi
    dx = xp.where(below, lo - v, v - hi)
    times = xp.floor(dx / span)
    r = dx - times * span
    even = (times % 2) == 0
    from_lo, from_hi = lo + r, hi - r
    inside = xp.where(above, xp.where(even, from_hi, from_lo), v)
    return xp.where(below, xp.where(even, from_lo, from_hi), inside)


def _cubic(xp: Any, t: Any) -> list[Any]:
    """The weights of the taps at -1, 0, 1, 2 for the fractional offset ``t``."""
    a = CUBIC_A

    def near(d: Any) -> Any:
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: Any) -> Any:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _axis_taps(
    xp: Any, g: Any, size: int, mode: GridSampleMode, pad: GridSamplePadding, align: bool
) -> list[tuple[Any, Any]]:
    """The (index, weight) of each tap along one axis of ``size`` pixels, for coordinates ``g``."""
    ct = g.dtype.type
    pos = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if mode is GridSampleMode.NEAREST:
        pos = xp.rint(pos)
    if pad is GridSamplePadding.BORDER and mode is not GridSampleMode.CUBIC:  # from outside
        pos = xp.where((pos < lo) | (pos > hi), xp.clip(pos, 0, size - 1), pos)
    elif pad is GridSamplePadding.REFLECTION:
        pos = _reflect(xp, pos, lo, hi)
    if mode is GridSampleMode.NEAREST:
        base, weights = xp.trunc(pos), [xp.ones_like(pos)]
    else:
        base = xp.floor(pos)
        t = pos - base
        weights = [1 - t, t] if mode is GridSampleMode.LINEAR else _cubic(xp, t)
        base = base - (1 if mode is GridSampleMode.CUBIC else 0)
    taps = []
    for k, w in enumerate(weights):
        at = base + k
        if pad is GridSamplePadding.ZEROS:
            w = xp.where((at >= 0) & (at <= size - 1), w, ct(0))
        elif pad is GridSamplePadding.REFLECTION:
            at = xp.trunc(_reflect(xp, at, lo, hi))
        idx = xp.clip(at, 0, size - 1).astype(np.int64)
        taps.append((idx, w.astype(ct)))
    return taps


def grid_sample(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX GridSample: X[N, C, *S] (r spatial axes), grid[N, *O, r] (grid[..., 0] along the
    last axis of S) -> Y[N, C, *O]; mode (ints[0], GridSampleMode), padding_mode (ints[1],
    GridSamplePadding) and align_corners (ints[2]). An unknown code is a ValueError."""
    x, grid, y = ins[0], ins[1], outs[0]
    mode, pad, align = GridSampleMode(ints[0]), GridSamplePadding(ints[1]), bool(ints[2])
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    r, out = len(spatial), tuple(grid.shape[1:-1])
    if r < 1 or grid.shape != (n, *out, r) or y.shape != (n, c, *out):
        raise ValueError(f"GridSample shapes X{x.shape} grid{grid.shape} Y{y.shape} disagree")
    ct = np.float64 if x.dtype == np.float64 else np.float32
    places = int(np.prod(out, dtype=np.int64))
    if y.size == 0:
        return
    if x.size == 0:
        y[...] = 0
        return
    g = grid.astype(ct).reshape(n, places, r)
    axes = [_axis_taps(xp, g[:, :, r - 1 - a], spatial[a], mode, pad, align) for a in range(r)]
    strides = [int(np.prod(spatial[a + 1 :], dtype=np.int64)) for a in range(r)]
    flat_x = x.astype(ct).reshape(n, c, -1)
    acc = xp.zeros((n, c, places), ct)
    for combo in itertools.product(*axes):
        flat = combo[0][0] * strides[0]
        weight = combo[0][1]
        for a in range(1, r):
            flat = flat + combo[a][0] * strides[a]
            weight = weight * combo[a][1]
        picked = xp.take_along_axis(flat_x, xp.broadcast_to(flat[:, None, :], acc.shape), axis=2)
        acc += weight[:, None, :] * picked
    y[...] = acc.reshape(y.shape).astype(y.dtype)


TABLE = {KernelId.GRID_SAMPLE: grid_sample}
