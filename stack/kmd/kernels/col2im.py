"""Column to image (ONNX Col2Im) for any ``xp``, at any spatial rank: the blocks of
X[N, C·∏block, L] scatter-added into Y[N, C, *image] at their sliding places.

The padded image (``image + pad_begin + pad_end`` per axis) holds ``L_a = (padded_a -
dilation_a·(block_a - 1) - 1) // stride_a + 1`` block places along axis ``a``, ``L`` being
their product (row-major, as the column index of ONNX's Col2Im, and the block's own elements
row-major after the channel). A loop over the ``∏block`` block elements (not over places)
adds each one's [N, C, *L_a] plane into the strided places of the padded image, which is then
cropped by the pads. float16 accumulates in float32.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def block_places(
    image: tuple[int, ...], block: tuple[int, ...], dil: tuple[int, ...], pads: tuple[int, ...],
    strides: tuple[int, ...],
) -> tuple[int, ...]:  # fmt: skip
    """The number of block places along each axis of the padded image (below 1: none fit)."""
    r = len(image)
    return tuple(
        (image[a] + pads[a] + pads[r + a] - dil[a] * (block[a] - 1) - 1) // strides[a] + 1
        for a in range(r)
    )


def col2im(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX Col2Im: X[N, C·∏block, L] -> Y[N, C, *image]; ints (the spec, 5r values for r
    spatial axes of Y): block_shape, dilations, pads (begins then ends), strides. Shapes or a
    spec that disagree are a ValueError."""
    x, y = ins[0], outs[0]
    r = y.ndim - 2
    if r < 1 or len(ints) != 5 * r:
        raise ValueError(f"Col2Im spec {list(ints)} needs 5 values per spatial axis of Y{y.shape}")
    block, dil, pads, strides = ints[:r], ints[r : 2 * r], ints[2 * r : 4 * r], ints[4 * r :]
    image, n, c, k = tuple(y.shape[2:]), y.shape[0], y.shape[1], math.prod(block)
    fits = min(*block, *dil, *strides) >= 1 and min(pads) >= 0
    places = block_places(image, block, dil, pads, strides) if fits else (0,)
    if min(places) < 1 or x.shape != (n, c * k, math.prod(places)):
        raise ValueError(
            f"Col2Im shapes X{x.shape} Y{y.shape} block {list(block)} dilations {list(dil)} "
            f"pads {list(pads)} strides {list(strides)} disagree"
        )
    acc = np.float32 if y.dtype == np.float16 else y.dtype
    padded = xp.zeros((n, c, *(image[a] + pads[a] + pads[r + a] for a in range(r))), acc)
    cols = x.astype(acc).reshape(n, c, k, *places)
    for i, at in enumerate(itertools.product(*(range(b) for b in block))):
        where = tuple(
            slice(at[a] * dil[a], at[a] * dil[a] + strides[a] * (places[a] - 1) + 1, strides[a])
            for a in range(r)
        )
        padded[(slice(None), slice(None), *where)] += cols[:, :, i]
    crop = tuple(slice(pads[a], pads[a] + image[a]) for a in range(r))
    y[...] = padded[(slice(None), slice(None), *crop)].astype(y.dtype)


TABLE = {KernelId.COL2IM: col2im}
