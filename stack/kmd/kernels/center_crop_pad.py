"""Centred crops and pads (ONNX CenterCropPad) for any ``xp``: CENTER_CROP_PAD.

Y's shape is the target (one size per axis of X, as the output descriptor gives it). Along an
axis where Y is shorter than X, Y is the centred window of X starting at ``(in - out) // 2``;
where Y is longer, X sits at ``(out - in) // 2`` in zeros (the extra element of an odd
difference goes to the end in both cases, as ONNX's reference and onnxruntime). The geometry is
fully determined by the two shapes, so the kernel takes no immediates; any dtype.
"""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId


def _windows(src: tuple[int, ...], dst: tuple[int, ...]) -> tuple[tuple[slice, ...], ...]:
    """The part of X each axis keeps and where it lands in Y: (X's slices, Y's slices)."""
    take, put = [], []
    for n, m in zip(src, dst, strict=True):
        k = min(n, m)
        take.append(slice((n - k) // 2, (n - k) // 2 + k))
        put.append(slice((m - k) // 2, (m - k) // 2 + k))
    return tuple(take), tuple(put)


def center_crop_pad(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X cropped or zero-padded about its centre to Y's shape, axis by axis; X and Y of
    another rank or dtype are a ValueError."""
    x, y = ins[0], outs[0]
    if x.ndim != y.ndim or x.dtype != y.dtype:
        raise ValueError(
            f"CenterCropPad X {x.dtype}{x.shape} and Y {y.dtype}{y.shape} differ in rank or dtype"
        )
    take, put = _windows(x.shape, y.shape)
    if any(m > n for n, m in zip(x.shape, y.shape, strict=True)):
        y[...] = 0
    xp.copyto(y[(*put, ...)], x[(*take, ...)])  # the Ellipsis keeps a 0-d Y a view


TABLE = {KernelId.CENTER_CROP_PAD: center_crop_pad}
