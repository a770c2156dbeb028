"""Launch configurations for the CPU (NumPy) device: how many tiles a launch's grid axis is cut
into, which the KMD then shares out over its worker threads.

On the CPU the KMD reads ``grid[0]`` as the tile count of the kernel's grid axis (the axis is
named per kernel by :attr:`stack.kmd.kernels.abi.KernelAbi.grid`; see
:mod:`stack.kmd.kernels.parallel`); ``block[0]`` is set to the tile size it implies, for
readers, and the other dims are 1. Kernels without a grid axis get ``grid = block = (1, 1, 1)``.

The default choice (what ``refstack tune`` varies):

* below ``MIN_WORK`` multiply-adds (or elements) one tile: handing a range to another thread
  costs tens of microseconds;
* else one tile per worker thread (``threads``, capped by the extent), times as many as it
  takes to keep each tile's output under ``TILE_BYTES`` (so the epilogue reads it from cache).
"""

from __future__ import annotations

import math

from stack.kmd.blob import LaunchConfig
from stack.kmd.kernels.ids import KernelId
from stack.umd.plan import KernelCall

#: Below this much work (multiply-adds, or elements) a launch is one tile.
MIN_WORK = 1 << 20
#: Target output bytes of one tile.
TILE_BYTES = 4 << 20

WHOLE = LaunchConfig((1, 1, 1), (1, 1, 1), 0)


def grid_of(call: KernelCall) -> tuple[int, int] | None:
    """The extent of ``call``'s grid axis and its total work, or None when it has none."""
    kid = call.kernel_id
    y = call.outs[0].shape
    if kid is KernelId.CONV2D:
        x, w = call.ins[0].shape, call.ins[1].shape
        if x[0] != 1 or int(call.attrs.get("group", 1)) != 1:  # type: ignore[arg-type]
            return None  # batched or grouped: one batched product, run whole
        # output pixels from X and the strides: Y may be the smaller output of a fused pool
        strides = int(call.attrs.get("stride_h", 1)) * int(call.attrs.get("stride_w", 1))  # type: ignore[arg-type]
        plane = x[1] * x[2] if call.attrs.get("layout", 0) else x[2] * x[3]  # NHWC: [N,H,W,C]
        pixels = plane // max(1, strides)
        if int(call.attrs.get("algorithm", 0)):  # type: ignore[arg-type]
            # Winograd W[4, 4, M, C]: 16 products per 2x2 outputs
            return w[2], w[2] * w[3] * 4 * pixels
        return w[0], w[0] * math.prod(w[1:]) * pixels
    if kid in (KernelId.GEMM, KernelId.MATMUL) and len(y) >= 2:
        a = call.ins[0].shape
        if len(a) < 2:
            return None
        trans_a = kid is KernelId.GEMM and bool(call.attrs.get("trans_a", 0))
        k = a[0] if trans_a else a[-1]
        return y[-2], math.prod(y) * k
    return None


def tiles_for(extent: int, work: int, out_bytes: int, threads: int) -> int:
    """The default tile count (see the module docstring)."""
    if extent < 2 or work < MIN_WORK:
        return 1
    workers = max(1, min(threads, extent))
    per_worker = max(1, math.ceil(out_bytes / (workers * TILE_BYTES)))
    return min(extent, workers * per_worker)


def launch_cpu(call: KernelCall, threads: int, tiles: int | None = None) -> LaunchConfig:
    """The CPU launch of ``call`` on a device of ``threads`` compute threads (``tiles``: a
    tile count chosen elsewhere, e.g. by a tuner; clamped to 1..extent)."""
    found = grid_of(call)
    if found is None:
        return WHOLE
    extent, work = found
    y = call.outs[0]
    if tiles is None:
        tiles = tiles_for(extent, work, math.prod(y.shape) * y.dtype.itemsize, threads)
    tiles = max(1, min(tiles, extent))
    return LaunchConfig((tiles, 1, 1), (-(-extent // tiles), 1, 1), 0)
