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

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def gemm(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
    """Y = act(alpha * op(A) @ op(B) + beta * C) (the GEMM ABI), tile by tile of Y's rows."""
    if parallel.whole():
        _whole_gemm(ins, outs, ints, fl)
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


def dot_fits(a: Any, b: Any, y: Any) -> bool:
    """Whether ``np.dot(a, b, out=y)`` computes ``a @ b`` into ``y``: 2-D operands of one float
    dtype and a C-contiguous Y (``np.dot`` costs a third less to call than ``np.matmul``)."""
    return (
        a.ndim == 2
        and b.ndim == 2
        and y.dtype in _FLOATS
        and a.dtype == y.dtype
        and b.dtype == y.dtype
        and y.flags.c_contiguous
    )


def _whole_gemm(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """The untiled GEMM: the generic kernel, with its product through ``np.dot`` where it fits."""
    a = ins[0].T if ints[0] else ins[0]
    b = ins[1].T if ints[1] else ins[1]
    y = outs[0]
    if not dot_fits(a, b, y):
        linalg.gemm(np, ins, outs, ints, fl)
        return
    alpha, beta = fl[0], fl[1]
    np.dot(a, b, out=y)
    if alpha != 1.0:
        np.multiply(y, alpha, out=y, casting="unsafe")
    if len(ins) > 2 and beta != 0.0:
        c = ins[2] if beta == 1.0 else ins[2] * beta
        np.add(y, c, out=y, casting="unsafe")
    if ints[2]:
        relu_(np, y, y)


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
