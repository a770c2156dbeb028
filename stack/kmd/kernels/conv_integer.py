"""The integer convolutions, ConvInteger and QLinearConv (ONNX; 2-D NCHW; strides, pads,
dilations, groups; zero points), for any ``xp``.

CONV_INTEGER: y = conv(x - x_zero_point, w - w_zero_point) in int32: x and w (int8 or uint8,
each its own) less their zero points (x's one per tensor, w's per tensor or per output channel)
are widened to float64 and convolved by CONV2D's generic kernel
(:func:`stack.kmd.kernels.conv.conv2d`: im2col through a strided window view and one matmul
batched over images and groups, on BLAS / cuBLAS), then stored as int32. The padding is zeros of
``x - x_zero_point``, as ONNX's reference and onnxruntime. Every product is at most 255² and
float64 holds every integer below 2⁵³, so the sums are exact, equal to int32 accumulation while
they fit int32 (GEMM_I8's argument).

QLINEARCONV: the same exact accumulation plus the int32 bias B, requantised as QLINEARMATMUL
and onnxruntime do: y = saturate(round_half_even(float32(acc) · (x_scale · w_scale / y_scale))
+ y_zero_point), worked in float32 (w_scale per tensor or per output channel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels import conv
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.quant import store_saturated

_QUANT = (np.dtype(np.int8), np.dtype(np.uint8))
_F32, _I32 = np.dtype(np.float32), np.dtype(np.int32)


def _window_fits(x: Any, w: Any, y: Any, ints: tuple[int, ...]) -> bool:
    """Whether x and w (I8/U8, 4-D), the immediates and y's shape make one convolution."""
    sh, sw, pt, pl, pb, pr, dh, dw, group = ints[:9]
    if x.dtype not in _QUANT or w.dtype not in _QUANT:
        return False
    if x.ndim != 4 or w.ndim != 4 or min(sh, sw, dh, dw, group) < 1 or min(pt, pl, pb, pr) < 0:
        return False
    (n, c, h, wd), (m, cg, kh, kw) = x.shape, w.shape
    if c != cg * group or m % group:
        return False
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    return bool(min(oh, ow) >= 1 and y.shape == (n, m, oh, ow))


def _fits(ins: list[Any], y: Any, ints: tuple[int, ...]) -> bool:
    """Whether the operands, Y and the immediates make one convolution ConvInteger defines."""
    x, w = ins[0], ins[1]
    zps = ins[2:]
    if y.dtype != _I32 or not _window_fits(x, w, y, ints):
        return False
    if any(z.dtype != ref.dtype for z, ref in zip(zps, (x, w), strict=False)):
        return False
    if zps and zps[0].size != 1:
        return False
    return not (len(zps) > 1 and zps[1].size not in (1, w.shape[0]))


def _per_channel(xp: Any, v: Any, dtype: Any, trailing: int) -> Any:
    """``v`` as ``dtype``: a scalar for one element, else one per output channel (axis 0 of w,
    axis 1 of y), shaped to broadcast over the ``trailing`` axes after it."""
    v = v.astype(dtype)
    return v.reshape(()) if v.size == 1 else v.reshape(-1, *(1,) * trailing)


def _accumulate(
    xp: Any, x: Any, w: Any, x_zp: Any, w_zp: Any, b: Any, ints: tuple[int, ...], shape: tuple
) -> Any:
    """conv(x - x_zp, w - w_zp) + b, exact in float64 (a zero point or b None: absent)."""
    xf = x.astype(xp.float64)
    wf = w.astype(xp.float64)
    if x_zp is not None:
        xf -= x_zp.astype(xp.float64).reshape(())
    if w_zp is not None:
        wf -= _per_channel(xp, w_zp, xp.float64, 3)
    acc = xp.empty(shape, xp.float64)
    extra = [] if b is None else [b.astype(xp.float64)]
    conv.conv2d(xp, [xf, wf, *extra], [acc], (*ints[:9], 0), ())
    return acc


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
    x_zp, w_zp = (ins[i] if len(ins) > i else None for i in (2, 3))
    acc = _accumulate(xp, ins[0], ins[1], x_zp, w_zp, None, ints, y.shape)
    xp.copyto(y, acc, casting="unsafe")


def _qlinear_fits(ins: list[Any], y: Any, ints: tuple[int, ...]) -> bool:
    """Whether the operands, Y and the immediates make one convolution QLinearConv defines."""
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = ins[:8]
    if len(ins) > 9 or y.dtype not in _QUANT or not _window_fits(x, w, y, ints):
        return False
    m = w.shape[0]
    typed = ((x_zp, x.dtype), (w_zp, w.dtype), (y_zp, y.dtype), (x_s, _F32), (w_s, _F32),
             (y_s, _F32))  # fmt: skip
    if any(v.dtype != dtype for v, dtype in typed):
        return False
    if any(v.size != 1 for v in (x_s, x_zp, y_s, y_zp)) or w_s.size not in (1, m):
        return False
    b = ins[8] if len(ins) > 8 else None
    return w_zp.size in (1, m) and (b is None or (b.dtype == _I32 and b.shape == (m,)))


def qlinear_conv(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX QLinearConv: x[N,C,H,W] (I8/U8), x_scale (F32, one element), x_zero_point (one,
    x's dtype), w[M,C/group,kH,kW] (I8/U8), w_scale (F32, one or M), w_zero_point (one or M,
    w's dtype), y_scale (F32, one), y_zero_point (one, y's dtype, I8/U8) and the optional
    B[M] I32 -> y[N,M,oH,oW] = saturate(round_half_even((conv(x - x_zp, w - w_zp) + B) ·
    x_scale · w_scale / y_scale) + y_zero_point), requantised in float32; ints as CONV_INTEGER's.
    Dtypes, shapes or immediates that disagree are a ValueError."""
    y = outs[0]
    if not _qlinear_fits(ins, y, ints):
        raise ValueError(
            f"QLinearConv operands {[f'{a.dtype}{tuple(a.shape)}' for a in ins]} -> "
            f"{y.dtype}{tuple(y.shape)} with strides {ints[0:2]} pads {ints[2:6]} dilations "
            f"{ints[6:8]} group {ints[8]} disagree (x, w I8/U8 4-D, the scales F32, x's and "
            "y's one element and w's one or M, the zero points of x's, w's and y's dtypes, "
            "B I32 [M], y I8/U8 of the convolution's shape)"
        )
    if y.size == 0:
        return
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = ins[:8]
    b = ins[8] if len(ins) > 8 else None
    acc = _accumulate(xp, x, w, x_zp, w_zp, b, ints, y.shape).astype(xp.float32)
    scale = x_s.astype(xp.float32).reshape(()) * _per_channel(xp, w_s, xp.float32, 2)
    acc *= scale / y_s.astype(xp.float32).reshape(())
    xp.rint(acc, out=acc)
    acc += y_zp.astype(xp.float32).reshape(())
    store_saturated(xp, acc, y)


TABLE = {KernelId.CONV_INTEGER: conv_integer, KernelId.QLINEARCONV: qlinear_conv}
