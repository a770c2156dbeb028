"""LayerNorm and Softmax on the NumPy backend, over the trailing axes of a C-contiguous tensor.

The generic kernels (:mod:`stack.kmd.kernels.norm`) reduce with ufunc reductions, which on the
short rows of a transformer block cost several times an element-wise pass. Here the tensor is
seen as a (rows, n) matrix and each row sum is one matrix-vector product with a cached column
of ones (a BLAS call, through ``np.dot``: a third cheaper to call than ``np.matmul``), so
LayerNorm is nine short calls, two of them products, and Softmax six (see ``_FLOOR`` for its
shift).

Anything else takes the generic kernel: dtypes other than float32/float64, strided views,
Softmax over an inner axis or its log form, LayerNorm scale or bias of another size than the
normalised part.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from stack.kmd.kernels import norm
from stack.kmd.kernels.ids import KernelId

_FAST = (np.dtype(np.float32), np.dtype(np.float64))
#: Softmax shifts by the tensor's maximum (its ``argmax``, 4x cheaper than row maxima on 16-wide
#: rows, and the check below by ``argmin``: each 0.2 us where a ufunc reduction takes 0.8 us on
#: a transformer's 64x16 scores, the same element either way, NaN included); a row whose
#: exponentials then sum below this is shifted by its own maximum instead (the whole tensor is
#: redone), so no row loses precision to underflow.
_FLOOR = {d: float(np.sqrt(np.finfo(d).tiny)) for d in _FAST}


@functools.cache
def _column(n: int, dtype: np.dtype, value: float) -> np.ndarray:
    """A read-only (n, 1) column of ``value``: a row sum (1) or mean (1/n) as a product."""
    col = np.full((n, 1), value, dtype)
    col.flags.writeable = False
    return col


def _plain(x: Any, y: Any) -> bool:
    return (
        x.dtype in _FAST
        and y.dtype == x.dtype
        and x.size > 0
        and x.flags.c_contiguous
        and y.flags.c_contiguous
    )


def layernorm(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """The LAYERNORM ABI: normalise over the dims from ``axis`` on, then scale and shift."""
    x, y = ins[0], outs[0]
    if x.ndim == 0 or not _plain(x, y):
        norm.layernorm(np, ins, outs, ints, fl)
        return
    n = math.prod(x.shape[ints[0] % x.ndim :])
    if any(p.dtype != x.dtype or p.size != n for p in ins[1:]):
        norm.layernorm(np, ins, outs, ints, fl)
        return
    x2, y2 = x.reshape(-1, n), y.reshape(-1, n)
    mean = _column(n, x.dtype, 1.0 / n)
    col = np.dot(x2, mean)
    np.subtract(x2, col, out=y2)
    np.dot(np.square(y2), mean, out=col)
    np.add(col, fl[0], out=col, casting="unsafe")
    np.sqrt(col, out=col)
    np.divide(y2, col, out=y2)
    np.multiply(y2, ins[1].reshape(n), out=y2)
    if len(ins) > 2:
        np.add(y2, ins[2].reshape(n), out=y2)


def softmax(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
    """The SOFTMAX ABI: exp(X - max) / sum along ``axis`` (its log form: the generic kernel)."""
    x, y = ins[0], outs[0]
    if (
        x.ndim == 0
        or ints[0] % x.ndim != x.ndim - 1
        or (len(ints) > 1 and ints[1])
        or not _plain(x, y)
    ):
        norm.softmax(np, ins, outs, ints, fl)
        return
    n = x.shape[-1]
    x2, y2 = x.reshape(-1, n), y.reshape(-1, n)
    ones = _column(n, x.dtype, 1.0)
    flat = x2.reshape(-1)
    np.subtract(x2, flat[flat.argmax()], out=y2)  # argmax: a third of a full max reduction
    np.exp(y2, out=y2)
    col = np.dot(y2, ones)
    sums = col.reshape(-1)
    if sums[sums.argmin()] < _FLOOR[x.dtype]:  # a row far below the maximum
        np.subtract(x2, np.maximum.reduce(x2, axis=1, keepdims=True), out=y2)
        np.exp(y2, out=y2)
        np.dot(y2, ones, out=col)
    np.divide(y2, col, out=y2)


TABLE = {KernelId.LAYERNORM: layernorm, KernelId.SOFTMAX: softmax}
