"""Max, average, global-average and global-Lp pooling (NCHW) for any ``xp``: separable passes
over kernel taps only (never pixels), each one strided whole-tensor operation; max unpooling
(any spatial rank), the scatter that undoes a max pool; and pooling of regions of interest:
MaxRoiPool (one whole-channel max per bin) and RoiAlign (bilinear samples per bin).

Max pooling takes any dtype with an order (floats pad with -inf, integers with their minimum).
Average pooling reads dilations from ints 9-10 when a blob carries them (the AVGPOOL ABI does
not list them yet, so through the device they are (1, 1)).
"""

from __future__ import annotations

import enum
import functools
import math
from typing import Any

import numpy as np

from stack.kmd.kernels.conv import pad_nchw
from stack.kmd.kernels.ids import KernelId


def _geometry(x: Any, y: Any, ints: tuple[int, ...], dil: tuple[int, int]) -> tuple[Any, ...]:
    kh, kw, sh, sw, pt, pl, pb, pr = ints[:8]
    h, w = x.shape[2], x.shape[3]
    oh, ow = y.shape[2], y.shape[3]
    need = (sh * (oh - 1) + dil[0] * (kh - 1) + 1, sw * (ow - 1) + dil[1] * (kw - 1) + 1)
    if y.shape[:2] != x.shape[:2] or sh * (oh - 1) >= h + pt + pb or sw * (ow - 1) >= w + pl + pr:
        raise ValueError(f"pool output Y{y.shape} does not fit X{x.shape}")
    hw = (max(h + pt + pb, need[0]), max(w + pl + pr, need[1]))
    return kh, kw, sh, sw, pt, pl, pb, pr, hw


def _separable(
    xp: Any, xpad: Any, y: Any, ints: tuple[int, ...], dil: tuple[int, int], combine: Any
) -> None:
    """Reduce each window into ``y`` as a row pass then a column pass (kh + kw strided passes
    over the tensor instead of kh * kw): max and sum are separable."""
    kh, kw, sh, sw = ints[:4]
    n, c, oh, ow = y.shape
    cols = [xpad[:, :, :, j * dil[1] : j * dil[1] + sw * (ow - 1) + 1 : sw] for j in range(kw)]
    if len(cols) == 1:
        tmp = cols[0]
    else:
        tmp = xp.empty((n, c, xpad.shape[2], ow), dtype=y.dtype)
        combine(cols[0], cols[1], out=tmp)
        for col in cols[2:]:
            combine(tmp, col, out=tmp)
    rows = [tmp[:, :, i * dil[0] : i * dil[0] + sh * (oh - 1) + 1 : sh] for i in range(kh)]
    if len(rows) == 1:
        xp.copyto(y, rows[0])
        return
    combine(rows[0], rows[1], out=y)
    for row in rows[2:]:
        combine(y, row, out=y)


def maxpool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Max over each window; padding never wins."""
    x, y = ins[0], outs[0]
    dil = (ints[8], ints[9])
    _, _, _, _, pt, pl, _, _, hw = _geometry(x, y, ints, dil)
    fill = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    _separable(xp, pad_nchw(xp, x, (pt, pl, 0, 0), hw, fill), y, ints, dil, xp.maximum)


def avgpool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Mean over each window; the divisor counts padding only with count_include_pad (a window
    with no tap inside gives 0)."""
    x, y = ins[0], outs[0]
    dil = (ints[9], ints[10]) if len(ints) >= 11 else (1, 1)
    kh, kw, sh, sw, pt, pl, pb, pr, hw = _geometry(x, y, ints, dil)
    _separable(xp, pad_nchw(xp, x, (pt, pl, 0, 0), hw, 0), y, ints, dil, xp.add)
    h, w = x.shape[2], x.shape[3]
    include_pad = bool(ints[8])
    rows = _taps_inside(
        y.shape[2], kh, sh, dil[0], (0, h + pt + pb) if include_pad else (pt, pt + h)
    )
    cols = _taps_inside(
        y.shape[3], kw, sw, dil[1], (0, w + pl + pr) if include_pad else (pl, pl + w)
    )
    # a window lying entirely in padding (count 0) averages to 0 instead of dividing by zero
    counts = np.maximum(np.multiply.outer(rows, cols), 1).astype(y.dtype)
    xp.divide(y, counts if xp is np else xp.asarray(counts), out=y)


@functools.lru_cache(maxsize=256)
def _taps_inside(n_out: int, k: int, stride: int, dil: int, span: tuple[int, int]) -> Any:
    """Per output position: how many of its k taps (padded coordinates) fall in ``span``."""
    pos = np.arange(n_out)[:, None] * stride + np.arange(k)[None, :] * dil
    counts = ((pos >= span[0]) & (pos < span[1])).sum(axis=1)
    counts.flags.writeable = False
    return counts


def globalavgpool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Mean over every axis after the channel axis."""
    x, y = ins[0], outs[0]
    n, c = x.shape[:2]
    if xp is np and x.dtype == y.dtype and x.dtype.kind == "f" and x.dtype != np.float16:
        flat = y.reshape(n, c)
        np.add.reduce(x.reshape(n, c, -1), axis=2, out=flat)
        np.multiply(flat, 1.0 / max(1, x.size // max(1, n * c)), out=flat, casting="unsafe")
        return
    axes = tuple(range(2, x.ndim))
    xp.copyto(
        y,
        x.mean(
            axis=axes, keepdims=True, dtype=xp.float32 if x.dtype == xp.float16 else None
        ).reshape(y.shape),
        casting="unsafe",
    )


def globallppool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX GlobalLpPool: the Lp norm (sum |x|^p)^(1/p) over every axis after the channel
    axis, p from ints[0] (>= 1); float16 sums in float32."""
    x, y = ins[0], outs[0]
    p = ints[0] if ints else 2
    if p < 1:
        raise ValueError(f"GlobalLpPool p must be >= 1, got {p}")
    a = xp.abs(x.astype(xp.float32) if x.dtype == xp.float16 else x)
    total = (a if p == 1 else a**p).sum(axis=tuple(range(2, x.ndim)), keepdims=True)
    xp.copyto(y, (total if p == 1 else total ** (1.0 / p)).reshape(y.shape), casting="unsafe")


def maxunpool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX MaxUnpool: Y = zeros with X[j] at Y.flat[I[j]] (the flat indices MaxPool returns); a
    place named more than once takes the last X naming it, on every backend."""
    x, idx, y = ins[0], ins[1], outs[0]
    if idx.shape != x.shape or y.ndim != x.ndim or y.shape[:2] != x.shape[:2]:
        raise ValueError(f"MaxUnpool shapes X{x.shape} I{idx.shape} Y{y.shape} disagree")
    flat = idx.reshape(-1).astype(xp.int64)
    if flat.size and (bool((flat < 0).any()) or bool((flat >= y.size).any())):
        raise IndexError("MaxUnpool index out of range")
    work = xp.zeros(y.size, dtype=y.dtype)
    if flat.size:
        # the last occurrence of each place: its first one in the reversed indices
        _, first = xp.unique(flat[::-1], return_index=True)
        last = flat.size - 1 - first
        work[flat[last]] = x.reshape(-1)[last]
    xp.copyto(y, work.reshape(y.shape))


def _roi_round(v: float) -> int:
    """C's round(): halves away from zero (numpy rounds them to even)."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def _bins(start: int, size: int, pooled: int, limit: int) -> list[tuple[int, int]]:
    """The [lo, hi) of each of ``pooled`` bins over ``size`` places from ``start``, clipped to
    [0, limit); the bin size in float32, as the ONNX reference (Caffe's) computes it."""
    step = np.float32(size) / np.float32(pooled)
    out = []
    for i in range(pooled):
        lo = math.floor(np.float32(i) * step) + start
        hi = math.ceil(np.float32(i + 1) * step) + start
        out.append((min(max(lo, 0), limit), min(max(hi, 0), limit)))
    return out


def maxroipool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX MaxRoiPool: for roi r = (batch, x1, y1, x2, y2) scaled by spatial_scale (fl[0]) and
    rounded, Y[r, :, i, j] = the max of X[batch, :] over bin (i, j) of pooled_h x pooled_w
    (ints[0:2]); an empty bin is 0. A batch index outside X is an IndexError."""
    x, rois, y = ins[0], ins[1], outs[0]
    ph, pw = ints[:2]
    scale = fl[0] if fl else 1.0
    n, c, h, w = x.shape
    if rois.ndim != 2 or rois.shape[1] != 5 or y.shape != (rois.shape[0], c, ph, pw):
        raise ValueError(f"MaxRoiPool shapes X{x.shape} rois{rois.shape} Y{y.shape} disagree")
    for r, (batch, x1, y1, x2, y2) in enumerate(rois.tolist()):
        b = int(batch)
        if not 0 <= b < n:
            raise IndexError(f"MaxRoiPool roi {r} names batch {b} of {n}")
        sw, sh, ew, eh = (_roi_round(v * scale) for v in (x1, y1, x2, y2))
        rows = _bins(sh, max(eh - sh + 1, 1), ph, h)
        cols = _bins(sw, max(ew - sw + 1, 1), pw, w)
        for i, (hs, he) in enumerate(rows):
            for j, (ws, we) in enumerate(cols):
                empty = he <= hs or we <= ws
                y[r, :, i, j] = 0 if empty else x[b, :, hs:he, ws:we].max(axis=(1, 2))


class RoiAlignMode(enum.IntEnum):
    """ROIALIGN's ``mode`` (its fourth int). Values are ABI."""

    AVG = 0
    MAX = 1


def _align_axis(
    start: Any, size: Any, pooled: int, grid: int, limit: int, ct: Any
) -> tuple[Any, Any, Any, Any]:
    """Along one axis of a roi: the low and high pixel and their weights of each of ``grid``
    samples of each of ``pooled`` bins ([pooled, grid] each), computed in ``ct`` as ONNX's
    reference does; a sample outside [-1, limit] weighs 0 (at pixel 0)."""
    b = ct(size) / ct(pooled)
    pos = (
        ct(start)
        + np.arange(pooled, dtype=ct)[:, None] * b
        + (np.arange(grid, dtype=ct)[None, :] + ct(0.5)) * b / ct(grid)
    )
    valid = (pos >= -1.0) & (pos <= limit)
    pos = np.maximum(pos, 0)
    lo = np.floor(pos).astype(np.int64)
    top = lo >= limit - 1
    lo = np.where(top, limit - 1, lo)
    hi = np.where(top, lo, lo + 1)
    frac = np.where(top, ct(0), pos - lo.astype(ct)) * valid
    lo, hi = np.where(valid, lo, 0), np.where(valid, hi, 0)
    return lo, hi, (ct(1) - frac) * valid, frac


def _weights(lo: Any, hi: Any, wl: Any, wh: Any, limit: int, ct: Any) -> Any:
    """[pooled, limit]: each bin's summed weight of every pixel over its samples (an average
    bin is separable: the matrices of both axes contract X's plane)."""
    m = np.zeros((lo.shape[0], limit), ct)
    rows = np.broadcast_to(np.arange(lo.shape[0])[:, None], lo.shape)
    np.add.at(m, (rows, lo), wl)
    np.add.at(m, (rows, hi), wh)
    return m


def roialign(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX RoiAlign: for roi r = (x1, y1, x2, y2) of image batch_indices[r], scaled by
    spatial_scale (fl[0]) and shifted by half a pixel when ints[4] (half_pixel), Y[r, :, i, j] =
    the average (ints[3] AVG) or the max (MAX, of each sample's weighted corners, as ONNX's
    reference) of the bilinear samples of bin (i, j), sampling_ratio (ints[2]; 0: ceil(bin))
    per bin axis; output_height x output_width (ints[0:2]). Coordinates in float32 (float64 for
    float64 X). A batch index outside X is an IndexError."""
    x, rois, batch, y = ins[0], ins[1], ins[2], outs[0]
    oh, ow, ratio, half = ints[0], ints[1], ints[2], ints[4]
    mode = RoiAlignMode(ints[3])
    scale = fl[0] if fl else 1.0
    n, c, h, w = x.shape
    if rois.shape != (y.shape[0], 4) or batch.shape != (y.shape[0],) or y.shape[1:] != (c, oh, ow):
        raise ValueError(f"RoiAlign shapes X{x.shape} rois{rois.shape} batch_indices"
                         f"{batch.shape} Y{y.shape} disagree")  # fmt: skip
    ct = np.float64 if x.dtype == np.float64 else np.float32
    work = x.astype(ct)
    for r, (box, b) in enumerate(zip(rois.tolist(), batch.tolist(), strict=True)):
        if not 0 <= int(b) < n:
            raise IndexError(f"RoiAlign roi {r} names batch {int(b)} of {n}")
        x1, y1, x2, y2 = (ct(v) * ct(scale) - ct(0.5 if half else 0.0) for v in box)
        rh, rw = y2 - y1, x2 - x1
        if not half:
            rh, rw = max(rh, ct(1)), max(rw, ct(1))
        gh = ratio if ratio > 0 else math.ceil(rh / ct(oh))
        gw = ratio if ratio > 0 else math.ceil(rw / ct(ow))
        if gh <= 0 or gw <= 0:
            y[r] = 0
            continue
        ys = _align_axis(y1, rh, oh, gh, h, ct)
        xs = _align_axis(x1, rw, ow, gw, w, ct)
        img = work[int(b)]
        if mode is RoiAlignMode.AVG:
            ay, ax = xp.asarray(_weights(*ys, h, ct)), xp.asarray(_weights(*xs, w, ct))
            y[r] = (ay @ img @ ax.T) / ct(gh * gw)
            continue
        ylo, yhi, wyl, wyh = (xp.asarray(a) for a in ys)
        xlo, xhi, wxl, wxh = (xp.asarray(a) for a in xs)
        best: Any = None
        for yi, wy in ((ylo, wyl), (yhi, wyh)):
            for xi, wx in ((xlo, wxl), (xhi, wxh)):
                v = (wy[:, :, None, None] * wx[None, None]) * img[:, yi[:, :, None, None], xi]
                best = v if best is None else xp.maximum(best, v)
        y[r] = best.max(axis=(2, 4))


TABLE = {
    KernelId.MAXPOOL: maxpool,
    KernelId.AVGPOOL: avgpool,
    KernelId.GLOBALAVGPOOL: globalavgpool,
    KernelId.MAXUNPOOL: maxunpool,
    KernelId.GLOBALLPPOOL: globallppool,
    KernelId.MAXROIPOOL: maxroipool,
    KernelId.ROIALIGN: roialign,
}
