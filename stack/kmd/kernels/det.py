"""Determinants (ONNX Det) for any ``xp``: DET.

X is [*, M, M], Y is [*] of X's dtype: Y[i] = det(X[i]), one determinant per trailing square
matrix (a 2-D X gives a 0-d Y). The determinants come from the array module's batched
``linalg.det`` (an LU factorisation with partial pivoting: LAPACK on NumPy, CUDA's LU routines
on CuPy), computed in float64 for every float dtype and rounded once to X's (NumPy's LAPACK
computes a float32 determinant in float64 anyway; float16 has no routine at all), so the two
backends agree to float64's rounding. An empty matrix (M = 0) has determinant 1 and an empty
batch writes nothing. A matrix holding a NaN has a NaN determinant (LAPACK's pivot search can
step over a NaN and return a finite number); infinities propagate as the factorisation carries
them. A Y of another shape or dtype than X's batch is a kernel fault.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def det(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = det(X) per trailing M x M matrix; a shape or dtype that does not fit is a ValueError."""
    x, y = ins[0], outs[0]
    if x.dtype.kind != "f" or x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"Det X {x.dtype}{x.shape} is not a float [*, M, M]")
    if y.shape != x.shape[:-2] or y.dtype != x.dtype:
        raise ValueError(f"Det Y {y.dtype}{y.shape} is not X's batch {x.dtype}{x.shape[:-2]}")
    if y.size == 0:
        return
    if x.shape[-1] == 0:
        y.fill(1)
        return
    wide = x.astype(np.float64, copy=False)
    nan = xp.isnan(wide).any(axis=(-2, -1))
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are the answer, not an error
        xp.copyto(y, xp.where(nan, np.nan, xp.linalg.det(wide)), casting="unsafe")


TABLE = {KernelId.DET: det}
