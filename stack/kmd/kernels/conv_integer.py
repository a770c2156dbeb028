"""ConvInteger (ONNX; 2-D NCHW; strides, pads, dilations, groups; zero points) for any ``xp``.

Y = conv(x - x_zero_point, w - w_zero_point) in int32: x and w (int8 or uint8, each its own)
less their zero points (x's one per tensor, w's per tensor or per output channel) are widened
to float64 and convolved by CONV2D's generic kernel (:func:`stack.kmd.kernels.conv.conv2d`:
im2col through a strided window view and one matmul batched over images and groups, on BLAS /
cuBLAS), then stored as int32. The padding is zeros of ``x - x_zero_point``, as ONNX's
reference and onnxruntime. Every product is at most 255² and float64 holds every integer below
2⁵³, so the sums are exact, equal to int32 accumulation while they fit int32 (GEMM_I8's
argument).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels import conv
from stack.kmd.kernels.ids import KernelId

_QUANT = (np.dtype(np.int8), np.dtype(np.uint8))


def _fits(ins: list[Any], y: Any, ints: tuple[int, ...]) -> bool:
    """Whether the operands, Y and the immediates make one convolution ConvInteger defines."""
    sh, sw, pt, pl, pb, pr, dh, dw, group = ints[:9]
    x, w = ins[0], ins[1]
    zps = ins[2:]
    if x.dtype not in _QUANT or w.dtype not in _QUANT or y.dtype != np.int32:
        return False
    if any(z.dtype != ref.dtype for z, ref in zip(zps, (x, w), strict=False)):
        return False
    if x.ndim != 4 or w.ndim != 4 or min(sh, sw, dh, dw, group) < 1 or min(pt, pl, pb, pr) < 0:
        return False
    (n, c, h, wd), (m, cg, kh, kw) = x.shape, w.shape
    if c != cg * group or m % group or (zps and zps[0].size != 1):
        return False
    if len(zps) > 1 and zps[1].size not in (1, m):
        return False
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    return bool(min(oh, ow) >= 1 and y.shape == (n, m, oh, ow))


def conv_integer(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX ConvInteger: x[N,C,H,W] and w[M,C/group,kH,kW] (I8/U8 each), the optional
    x_zero_point (one element, x's dtype) and w_zero_point (one element or M, w's dtype)
    -> y[N,M,oH,oW] I32; ints: stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right,
    dilation_h, dilation_w, group. Dtypes, shapes or immediates that disagree are a ValueError."""
    y = outs[0]
    if not _fits(ins, y, ints):
        raise ValueError(
            f"ConvInteger operands {[f'{a.dtype}{tuple(a.shape)}' for a in ins]} -> "
            f"{y.dtype}{tuple(y.shape)} with strides {ints[0:2]} pads {ints[2:6]} dilations "
            f"{ints[6:8]} group {ints[8]} disagree (x, w I8/U8 4-D, the zero points of their "
            "dtypes, x's one element and w's one or M, y I32 of the convolution's shape)"
        )
    if y.size == 0:
        return
    x = ins[0].astype(xp.float64)
    w = ins[1].astype(xp.float64)
    if len(ins) > 2:
        x -= ins[2].astype(xp.float64).reshape(())
    if len(ins) > 3:
        zp = ins[3].astype(xp.float64)
        w -= zp.reshape(()) if zp.size == 1 else zp.reshape(-1, 1, 1, 1)
    acc = xp.empty(y.shape, xp.float64)
    conv.conv2d(xp, [x, w], [acc], (*ints[:9], 0), ())
    xp.copyto(y, acc, casting="unsafe")


TABLE = {KernelId.CONV_INTEGER: conv_integer}
