"""BatchNorm (inference), LayerNorm and Softmax for any ``xp``."""

from __future__ import annotations

from typing import Any

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


def layernorm(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Normalise over the dims from ``axis`` to the end, then scale and shift."""
    x, y = ins[0], outs[0]
    axes = tuple(range(ints[0] % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    xp.subtract(x, mean, out=y)
    var = (y * y).mean(axis=axes, keepdims=True)
    xp.multiply(y, 1.0 / xp.sqrt(var + fl[0]), out=y, casting="unsafe")
    xp.multiply(y, ins[1], out=y)
    if len(ins) > 2:
        xp.add(y, ins[2], out=y)


def softmax(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """exp(X - max) / sum along ``axis``."""
    x, y = ins[0], outs[0]
    axis = ints[0]
    xp.subtract(x, x.max(axis=axis, keepdims=True), out=y)
    xp.exp(y, out=y)
    xp.divide(y, y.sum(axis=axis, keepdims=True), out=y)


TABLE = {
    KernelId.BATCHNORM: batchnorm,
    KernelId.LAYERNORM: layernorm,
    KernelId.SOFTMAX: softmax,
}
