"""BatchNorm (inference), LayerNorm and Softmax for any ``xp``."""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.elementwise import relu_
from stack.kmd.kernels.ids import KernelId


def batchnorm(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Per channel (axis 1): (X - mean) / sqrt(var + eps) * scale + bias, optional ReLU."""
    x, scale, bias, mean, var = ins
    y = outs[0]
    a = scale / xp.sqrt(var + fl[0])
    b = bias - mean * a
    shape = (1, -1) + (1,) * (x.ndim - 2)
    xp.multiply(x, a.reshape(shape), out=y)
    xp.add(y, b.reshape(shape), out=y)
    if ints[0]:
        relu_(xp, y, y)


def _mean(xp: Any, a: Any, axes: tuple[int, ...]) -> Any:
    """Mean over ``axes`` (kept); on NumPy through the ufunc reduction (a third of ``.mean``)."""
    if xp is not np or a.dtype == np.float16:  # float16: .mean accumulates in float32
        return a.mean(axis=axes, keepdims=True)
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    total = np.add.reduce(a, axis=axes, keepdims=True)
    return np.multiply(total, 1.0 / max(n, 1), out=total, casting="unsafe")


def layernorm(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Normalise over the dims from ``axis`` to the end, then scale and shift."""
    x, y = ins[0], outs[0]
    axes = tuple(range(ints[0] % x.ndim, x.ndim))
    xp.subtract(x, _mean(xp, x, axes), out=y)
    var = _mean(xp, y * y, axes)
    var += fl[0]
    xp.sqrt(var, out=var)
    xp.divide(y, var, out=y, casting="unsafe")
    xp.multiply(y, ins[1], out=y)
    if len(ins) > 2:
        xp.add(y, ins[2], out=y)


def softmax(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """exp(X - max) / sum along ``axis``; with ``log`` (ints[1]) its logarithm,
    X - max - log(sum(exp(X - max)))."""
    x, y = ins[0], outs[0]
    axis = ints[0]
    if xp is np:  # the ufunc reductions: the array methods add a Python layer (µs per call)
        xp.subtract(x, np.maximum.reduce(x, axis=axis, keepdims=True), out=y)
        if not (len(ints) > 1 and ints[1]):
            np.exp(y, out=y)
            np.divide(y, np.add.reduce(y, axis=axis, keepdims=True), out=y)
            return
    else:
        xp.subtract(x, x.max(axis=axis, keepdims=True), out=y)
    if len(ints) > 1 and ints[1]:
        y -= xp.log(xp.exp(y).sum(axis=axis, keepdims=True))
        return
    xp.exp(y, out=y)
    xp.divide(y, y.sum(axis=axis, keepdims=True), out=y)


TABLE = {
    KernelId.BATCHNORM: batchnorm,
    KernelId.LAYERNORM: layernorm,
    KernelId.SOFTMAX: softmax,
}
