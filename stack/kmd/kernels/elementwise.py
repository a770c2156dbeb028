"""Broadcasting element-wise kernels (Add with optional ReLU, Mul, Sub, Div, ReLU), any ``xp``."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId

_ROW = 1024


@functools.cache
def _zero_row(n: int, dtype: Any) -> Any:
    return np.zeros(n, dtype=dtype)


def relu_(xp: Any, src: Any, out: Any) -> None:
    """out = max(src, 0). On NumPy, large contiguous tensors go through a zero *row* rather than
    a broadcast scalar: NumPy's maximum only vectorises when no operand has stride 0 (2-3x)."""
    if (
        xp is np
        and out.size >= 4 * _ROW
        and out.size % _ROW == 0
        and src.shape == out.shape
        and src.flags.c_contiguous
        and out.flags.c_contiguous
    ):
        np.maximum(src.reshape(-1, _ROW), _zero_row(_ROW, out.dtype), out=out.reshape(-1, _ROW))
    else:
        xp.maximum(src, 0, out=out)


def add(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A + B, then ReLU when ints[0]."""
    y = outs[0]
    xp.add(ins[0], ins[1], out=y)
    if ints[0]:
        relu_(xp, y, y)


def mul(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A * B."""
    xp.multiply(ins[0], ins[1], out=outs[0])


def sub(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A - B."""
    xp.subtract(ins[0], ins[1], out=outs[0])


def trunc_divide(xp: Any, a: Any, b: Any) -> Any:
    """Integer division truncating toward zero (C and ONNX semantics), exact for every integer
    width: floor division corrected by one where the remainder is non-zero and the signs differ.
    A zero divisor gives 0 (ONNX leaves it undefined; NumPy's and CuPy's floor division agree)."""
    with np.errstate(divide="ignore", over="ignore"):
        q = xp.floor_divide(a, b)
        r = xp.remainder(a, b)
    fix = (r != 0) & ((a < 0) != (b < 0))
    return q + fix.astype(q.dtype)


def div(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A / B; integers truncate toward zero (C semantics, as ONNX runtimes do), exactly."""
    y = outs[0]
    if y.dtype.kind == "f":
        with np.errstate(divide="ignore", invalid="ignore"):  # IEEE: x/0 is inf or NaN
            xp.divide(ins[0], ins[1], out=y)
    else:
        xp.copyto(y, trunc_divide(xp, ins[0], ins[1]), casting="unsafe")


def relu(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = max(X, 0)."""
    relu_(xp, ins[0], outs[0])


TABLE = {
    KernelId.ADD: add,
    KernelId.MUL: mul,
    KernelId.SUB: sub,
    KernelId.DIV: div,
    KernelId.RELU: relu,
}
