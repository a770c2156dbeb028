"""ConvTranspose2D (NCHW; strides, pads, dilations, groups; bias) for any ``xp``.

One matmul batched over images and groups gives every kernel tap's contribution per input
pixel; a loop over the ``kh * kw`` taps (not over pixels) scatters each into the strided
positions of the full output, which is then cropped by the pads. A pad may be negative: the
output then extends beyond the full result with zeros (ONNX ``output_padding`` and an
``output_shape`` larger than the natural size both reduce to that).
"""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId


def full_size(size: int, k: int, stride: int, dil: int) -> int:
    """Spatial size of the uncropped transposed convolution of ``size`` input pixels."""
    return stride * (size - 1) + dil * (k - 1) + 1


def conv_transpose2d(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = crop(col2im(W^T X), pads) + B (B optional). X[N,C,H,W], W[C,M/group,kH,kW]."""
    sh, sw, pt, pl, pb, pr, dh, dw, group = ints[:9]
    x, w, y = ins[0], ins[1], outs[0]
    n, c, h, wd = x.shape
    cw, mg, kh, kw = w.shape
    m = mg * group
    fh, fw = full_size(h, kh, sh, dh), full_size(wd, kw, sw, dw)
    oh, ow = y.shape[2], y.shape[3]
    if cw != c or c % group or y.shape[:2] != (n, m) or (oh, ow) != (fh - pt - pb, fw - pl - pr):
        raise ValueError(
            f"conv-transpose shapes X{x.shape} W{w.shape} Y{y.shape} group {group} "
            f"pads {(pt, pl, pb, pr)} disagree"
        )
    cg = c // group
    # taps[n, g, mg*kh*kw, h*w] = W_g^T @ X_g
    wg = w.reshape(group, cg, mg * kh * kw).transpose(0, 2, 1)
    taps = xp.matmul(wg, x.reshape(n, group, cg, h * wd)).reshape(n, m, kh, kw, h, wd)
    full = xp.zeros((n, m, fh, fw), dtype=y.dtype)
    for a in range(kh):
        rows = slice(a * dh, a * dh + sh * (h - 1) + 1, sh)
        for b in range(kw):
            cols = slice(b * dw, b * dw + sw * (wd - 1) + 1, sw)
            full[:, :, rows, cols] += taps[:, :, a, b]
    y[...] = 0
    # output row o reads full row o + pt (zero where that falls outside the full result)
    r0, r1 = max(0, -pt), min(oh, fh - pt)
    c0, c1 = max(0, -pl), min(ow, fw - pl)
    if r1 > r0 and c1 > c0:
        y[:, :, r0:r1, c0:c1] = full[:, :, r0 + pt : r1 + pt, c0 + pl : c1 + pl]
    if len(ins) > 2:
        xp.add(y, ins[2].reshape(1, m, 1, 1), out=y)


TABLE = {KernelId.CONV_TRANSPOSE: conv_transpose2d}
