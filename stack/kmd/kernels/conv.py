"""Conv2D (NCHW; strides, pads, dilations, groups; fused bias and ReLU) for any ``xp``.

im2col through a strided window view (no Python loop over pixels) and one matmul batched over
images and groups, writing straight into the output view; 1x1 stride-1 convolutions skip im2col
(depthwise ones too are a batched matmul: faster than summing taps in NumPy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels import winograd
from stack.kmd.kernels.elementwise import relu_
from stack.kmd.kernels.ids import KernelId


def pad_nchw(
    xp: Any, x: Any, pads: tuple[int, int, int, int], hw: tuple[int, int], fill: float
) -> Any:
    """``x`` placed at (top, left) in an array of spatial size ``hw`` filled with ``fill``."""
    top, left = pads[0], pads[1]
    n, c, h, w = x.shape
    if (top, left) == (0, 0) and hw == (h, w):
        return x
    out = xp.full((n, c, hw[0], hw[1]), fill, dtype=x.dtype)
    out[:, :, top : top + h, left : left + w] = x
    return out


def conv_hw(x_shape: tuple[int, ...], w_shape: tuple[int, ...], ints: tuple[int, ...]) -> tuple:
    """The convolution's own output height and width (before a fused pool)."""
    sh, sw, pt, pl, pb, pr, dh, dw = ints[:8]
    oh = (x_shape[2] + pt + pb - dh * (w_shape[2] - 1) - 1) // sh + 1
    ow = (x_shape[3] + pl + pr - dw * (w_shape[3] - 1) - 1) // sw + 1
    return oh, ow


def pool_ints(ints: tuple[int, ...]) -> tuple[int, ...] | None:
    """The fused max pool's MAXPOOL immediates (window, strides, pads, dilations 1), or None."""
    if len(ints) < 12 or ints[10] <= 0:
        return None
    return (*ints[10:18], 1, 1)


def algorithm(ints: tuple[int, ...]) -> int:
    """The ``algorithm`` immediate (0 direct, 1 Winograd F(2x2,3x3); ABI int 18)."""
    return ints[18] if len(ints) > 18 else 0


def conv2d(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = act(conv(X, W) + B + R) (B, R optional; R a fused residual of the convolution's
    output), then the fused max pool when ``pool_h`` > 0; ``algorithm`` 1: W holds Winograd
    weights (:mod:`stack.kmd.kernels.winograd`)."""
    if algorithm(ints):
        winograd.conv2d(xp, ins, outs, ints)
        return
    pooled = pool_ints(ints)
    if pooled is not None:
        from stack.kmd.kernels import pool  # pool builds on this module: imported when used

        x, w, y = ins[0], ins[1], outs[0]
        full = xp.empty((x.shape[0], w.shape[0], *conv_hw(x.shape, w.shape, ints)), y.dtype)
        conv2d(xp, ins, [full], ints[:10], fl)
        pool.maxpool(xp, [full], [y], pooled, ())
        return
    sh, sw, pt, pl, pb, pr, dh, dw, group, relu = ints[:10]
    x, w, y = ins[0], ins[1], outs[0]
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = y.shape[2], y.shape[3]
    if c != cg * group or m % group or y.shape[:2] != (n, m):
        raise ValueError(f"conv shapes X{x.shape} W{w.shape} Y{y.shape} group {group} disagree")
    need = (sh * (oh - 1) + dh * (kh - 1) + 1, sw * (ow - 1) + dw * (kw - 1) + 1)
    if need[0] > h + pt + pb or need[1] > wd + pl + pr:
        raise ValueError(f"output {oh}x{ow} needs more input than X{x.shape} with pads")
    xpad = pad_nchw(xp, x, (pt, pl, pb, pr), (h + pt + pb, wd + pl + pr), 0)
    mg = m // group
    if kh == kw == 1 and sh == sw == 1:
        cols = xpad[:, :, :oh, :ow].reshape(n, group, cg, oh * ow)
    else:  # im2col: a strided window view, copied once by the reshape
        s = xpad.strides
        shape = (n, group, cg, kh, kw, oh, ow)
        strides = (s[0], s[1] * cg, s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw)
        if xp is np and xpad.flags.c_contiguous:  # the direct constructor: a third of the cost
            win = np.ndarray(shape, xpad.dtype, buffer=xpad, strides=strides)
        else:
            win = xp.lib.stride_tricks.as_strided(xpad, shape=shape, strides=strides)
        cols = win.reshape(n, group, cg * kh * kw, oh * ow)
    xp.matmul(w.reshape(group, mg, cg * kh * kw), cols, out=y.reshape(n, group, mg, oh * ow))
    if len(ins) > 2:
        xp.add(y, ins[2].reshape(1, m, 1, 1), out=y)
    if len(ins) > 3:
        xp.add(y, ins[3], out=y)
    if relu:
        relu_(xp, y, y)


TABLE = {KernelId.CONV2D: conv2d}
