"""Affine grids (ONNX AffineGrid) for any ``xp``: grid[n, *s] = theta[n] · (x, y[, z], 1), the
homogeneous normalised place of pixel s of a 2-D [H, W] or 3-D [D, H, W] image.

Along a spatial axis of S pixels the normalised places are the pixel centres
``(2i + 1) / S - 1`` (-1 and 1 the outer edges of the corner pixels), or with align_corners
``2i / (S - 1) - 1`` (-1 and 1 the corner pixels' centres; a one-pixel axis is -1, as ONNX's
reference and its function body's depth axis, where onnxruntime gives 1 and PyTorch 0). A base
place lists x (the last spatial axis, the fastest) first, then y and z, then 1 — the order of
the grid GridSample reads — so the grid is one batched matmul ``base · thetaᵀ``. Places and
products are float32 (float64 for float64 theta).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def _places(xp: Any, size: int, align: bool) -> Any:
    """The normalised places of the ``size`` pixels of one axis, in float64."""
    i = xp.arange(size, dtype=np.float64)
    if not align:
        return (2 * i + 1) / size - 1
    return 2 * i / (size - 1) - 1 if size > 1 else xp.full(1, -1.0)


def _base(xp: Any, spatial: tuple[int, ...], align: bool, ct: Any) -> Any:
    """The homogeneous base places [∏S, r + 1]: (x, y[, z], 1) per pixel, row-major over S."""
    mesh = xp.meshgrid(*(_places(xp, s, align) for s in spatial), indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]
    return xp.stack([*cols, xp.ones(math.prod(spatial))], axis=1).astype(ct)


def affine_grid(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX AffineGrid: theta[N, r, r+1] (r 2 or 3) -> grid[N, *S, r], S Y's spatial sizes;
    align_corners (ints[0], 0 or 1). Shapes that disagree or another code are a ValueError."""
    theta, y = ins[0], outs[0]
    r, align = y.ndim - 2, int(ints[0]) if ints else 0
    if r not in (2, 3) or theta.shape != (y.shape[0], r, r + 1) or y.shape[-1] != r:
        raise ValueError(f"AffineGrid shapes theta{theta.shape} grid{y.shape} disagree")
    if align not in (0, 1):
        raise ValueError(f"AffineGrid align_corners {align} is not 0 or 1")
    if y.size == 0:
        return
    ct = np.float64 if theta.dtype == np.float64 else np.float32
    base = _base(xp, tuple(y.shape[1:-1]), bool(align), ct)
    grid = xp.matmul(base, theta.astype(ct).transpose(0, 2, 1))  # [N, ∏S, r]
    y[...] = grid.reshape(y.shape).astype(y.dtype)


TABLE = {KernelId.AFFINE_GRID: affine_grid}
