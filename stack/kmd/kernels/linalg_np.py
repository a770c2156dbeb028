"""GEMM and MatMul on the NumPy backend, tiled over the rows of Y.

Each tile is one BLAS call on a block of rows of A (and Y) followed by its epilogue (alpha,
the bias C, ReLU) while those rows are in cache; the tiles are the launch's grid
(:func:`stack.kmd.kernels.parallel.grid`), shared out over the worker threads. Operands the
tiling does not cover (1-D MatMul operands, a result dtype unlike A's) take the generic kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels import linalg, parallel
from stack.kmd.kernels.elementwise import relu_
from stack.kmd.kernels.ids import KernelId


def gemm(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
    """Y = act(alpha * op(A) @ op(B) + beta * C) (the GEMM ABI), tile by tile of Y's rows."""
    if parallel.whole():
        linalg.gemm(np, ins, outs, ints, fl)
        return
    trans_a, trans_b, relu = ints[0], ints[1], ints[2]
    alpha, beta = fl[0], fl[1]
    a = ins[0].T if trans_a else ins[0]
    b = ins[1].T if trans_b else ins[1]
    y = outs[0]
    c = None
    if len(ins) > 2 and beta != 0.0:
        c = np.broadcast_to(ins[2], y.shape)

    def tile(lo: int, hi: int) -> None:
        yt = y[lo:hi]
        np.matmul(a[lo:hi], b, out=yt)
        if alpha != 1.0:
            np.multiply(yt, alpha, out=yt, casting="unsafe")
        if c is not None:
            np.add(yt, c[lo:hi] if beta == 1.0 else c[lo:hi] * beta, out=yt, casting="unsafe")
        if relu:
            relu_(np, yt, yt)

    parallel.grid(y.shape[0], tile)


def matmul(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
    """numpy.matmul semantics (the MATMUL ABI), tile by tile of Y's rows (axis -2)."""
    a, b, y = ins[0], ins[1], outs[0]
    if parallel.whole() or a.ndim < 2 or b.ndim < 2 or y.dtype != a.dtype:
        linalg.matmul(np, ins, outs, ints, fl)
        return

    def tile(lo: int, hi: int) -> None:
        np.matmul(a[..., lo:hi, :], b, out=y[..., lo:hi, :])

    parallel.grid(y.shape[-2], tile)


TABLE = {KernelId.GEMM: gemm, KernelId.MATMUL: matmul}
