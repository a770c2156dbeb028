"""Max, average and global-average pooling (NCHW) for any ``xp``: separable passes over kernel
taps only (never pixels), each one strided whole-tensor operation."""

from __future__ import annotations

from typing import Any

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
    tmp = xp.empty((n, c, xpad.shape[2], ow), dtype=y.dtype)
    for j in range(kw):
        col = xpad[:, :, :, j * dil[1] : j * dil[1] + sw * (ow - 1) + 1 : sw]
        xp.copyto(tmp, col) if j == 0 else combine(tmp, col, out=tmp)
    for i in range(kh):
        row = tmp[:, :, i * dil[0] : i * dil[0] + sh * (oh - 1) + 1 : sh]
        xp.copyto(y, row) if i == 0 else combine(y, row, out=y)


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
    """Mean over each window; the divisor counts padding only with count_include_pad."""
    x, y = ins[0], outs[0]
    kh, kw, sh, sw, pt, pl, pb, pr, hw = _geometry(x, y, ints, (1, 1))
    include_pad = ints[8]
    _separable(xp, pad_nchw(xp, x, (pt, pl, 0, 0), hw, 0), y, ints, (1, 1), xp.add)
    h, w = x.shape[2], x.shape[3]
    lo_h, hi_h = (0, h + pt + pb) if include_pad else (pt, pt + h)
    lo_w, hi_w = (0, w + pl + pr) if include_pad else (pl, pl + w)
    oh_idx = xp.arange(y.shape[2]) * sh
    ow_idx = xp.arange(y.shape[3]) * sw
    cnt_h = xp.minimum(oh_idx + kh, hi_h) - xp.maximum(oh_idx, lo_h)
    cnt_w = xp.minimum(ow_idx + kw, hi_w) - xp.maximum(ow_idx, lo_w)
    counts = (cnt_h[:, None] * cnt_w[None, :]).astype(y.dtype)
    xp.divide(y, counts, out=y)


def globalavgpool(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Mean over every axis after the channel axis."""
    x, y = ins[0], outs[0]
    axes = tuple(range(2, x.ndim))
    xp.copyto(
        y,
        x.mean(
            axis=axes, keepdims=True, dtype=xp.float32 if x.dtype == xp.float16 else None
        ).reshape(y.shape),
        casting="unsafe",
    )


TABLE = {
    KernelId.MAXPOOL: maxpool,
    KernelId.AVGPOOL: avgpool,
    KernelId.GLOBALAVGPOOL: globalavgpool,
}
