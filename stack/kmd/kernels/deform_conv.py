"""Deformable convolution (ONNX DeformConv, 2-D NCHW; strides, pads, dilations, groups, offset
groups; bias and mask) for any ``xp``.

Tap (i, j) of output pixel (oh, ow) reads X at ``(oh·stride_h - pad_top + i·dilation_h + Δh,
ow·stride_w - pad_left + j·dilation_w + Δw)``, its offset (Δh, Δw) read from
offset[n, ((g·kH + i)·kW + j)·2 + (0, 1), oh, ow] for the offset group g of the input channel,
and weighs the bilinear sample there by mask[n, (g·kH + i)·kW + j, oh, ow] (1 when absent). A
sample corner outside X weighs 0, as ONNX's reference and onnxruntime. The samples form the
im2col columns [N, C·kH·kW, oH·oW] of an ordinary convolution: four whole-tensor gathers (one
per bilinear corner, no Python loop over pixels or taps), then one matmul batched over images
and groups, plus the bias. Places and weights are float32 (float64 for float64 X); float16
computes in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def _columns(
    xp: Any, x: Any, off: Any, mask: Any | None, kernel: tuple[int, int], ints: tuple[int, ...],
    out_hw: tuple[int, int], ct: Any,
) -> Any:  # fmt: skip
    """The deformed im2col columns [N, C, kH·kW·oH·oW] of X (in ``ct``), bilinear samples
    weighted by the mask."""
    sh, sw, pt, pl, _, _, dh, dw, _, og = ints[:10]
    n, c, h, wd = x.shape
    (kh, kw), (oh, ow) = kernel, out_hw
    places = kh * kw * oh * ow
    o = off.astype(ct).reshape(n, og, kh, kw, 2, oh, ow)
    rows = (xp.arange(kh, dtype=ct) * dh)[:, None, None, None] + (
        xp.arange(oh, dtype=ct) * sh - pt
    )[None, None, :, None]
    cols = (xp.arange(kw, dtype=ct) * dw)[None, :, None, None] + (
        xp.arange(ow, dtype=ct) * sw - pl
    )[None, None, None, :]
    ys, xs = o[:, :, :, :, 0] + rows, o[:, :, :, :, 1] + cols  # [N, og, kH, kW, oH, oW]
    scale = None if mask is None else mask.astype(ct).reshape(ys.shape)
    y0, x0 = xp.floor(ys), xp.floor(xs)
    ly, lx = ys - y0, xs - x0
    flat_x = x.astype(ct).reshape(n, og, c // og, h * wd)
    acc = xp.zeros((n, og, c // og, places), ct)
    if flat_x.size == 0:
        return acc.reshape(n, c, places)
    for r, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for q, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            weight = wy * wx if scale is None else wy * wx * scale
            inside = (r >= 0) & (r <= h - 1) & (q >= 0) & (q <= wd - 1)
            weight = xp.where(inside, weight, ct(0)).reshape(n, og, 1, places)
            flat = xp.clip(r, 0, h - 1) * wd + xp.clip(q, 0, wd - 1)
            idx = flat.astype(np.int64).reshape(n, og, 1, places)
            picked = xp.take_along_axis(flat_x, xp.broadcast_to(idx, acc.shape), axis=3)
            acc += weight * picked
    return acc.reshape(n, c, places)


def deform_conv2d(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX DeformConv: X[N,C,H,W], W[oC,C/group,kH,kW], offset[N,og·kH·kW·2,oH,oW], B[oC]
    and mask[N,og·kH·kW,oH,oW] (both optional) -> Y[N,oC,oH,oW]; ints: stride_h, stride_w,
    pad_top, pad_left, pad_bottom, pad_right, dilation_h, dilation_w, group, offset_group
    (og). Shapes or attributes that disagree are a ValueError."""
    sh, sw, pt, pl, pb, pr, dh, dw, group, og = ints[:10]
    x, w, off, y = ins[0], ins[1], ins[2], outs[0]
    bias = ins[3] if len(ins) > 3 else None
    mask = ins[4] if len(ins) > 4 else None
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = y.shape[2], y.shape[3]
    k = kh * kw
    fits = min(sh, sw, dh, dw, group, og) >= 1 and min(pt, pl, pb, pr) >= 0
    want = (
        ((h + pt + pb - dh * (kh - 1) - 1) // sh + 1, (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1)
        if fits
        else ()
    )
    if (
        not fits
        or c != cg * group
        or m % group
        or c % og
        or y.shape != (n, m, *want)
        or off.shape != (n, og * k * 2, oh, ow)
        or (bias is not None and bias.shape != (m,))
        or (mask is not None and mask.shape != (n, og * k, oh, ow))
    ):
        raise ValueError(
            f"DeformConv shapes X{x.shape} W{w.shape} offset{off.shape} Y{y.shape} group {group} "
            f"offset_group {og} strides {(sh, sw)} pads {(pt, pl, pb, pr)} dilations {(dh, dw)} "
            "disagree"
        )
    if y.size == 0:
        return
    ct = np.float64 if y.dtype == np.float64 else np.float32
    cols = _columns(xp, x, off, mask, (kh, kw), ints, (oh, ow), ct)
    cols = cols.reshape(n, group, cg * k, oh * ow)
    out = xp.matmul(w.astype(ct).reshape(group, m // group, cg * k), cols).reshape(n, m, oh, ow)
    if bias is not None:
        out = out + bias.astype(ct).reshape(1, m, 1, 1)
    y[...] = out.astype(y.dtype)


TABLE = {KernelId.DEFORM_CONV: deform_conv2d}
