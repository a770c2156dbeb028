"""The BINARY kernel (broadcasting two-operand functions picked by an immediate) and WHERE,
any ``xp``.

``ints = (fn, i0)``; :class:`BinaryFn` values are ABI. Comparisons and logic write BOOL; the
rest write A's dtype. Integer arithmetic stays in integers (exact in every width).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class BinaryFn(enum.IntEnum):
    """The functions of the BINARY kernel. Values are ABI (blob immediate ``fn``)."""

    POW = 1
    MOD = 2  # i0 = 1: fmod (sign of the dividend), 0: sign of the divisor
    MIN = 3
    MAX = 4
    EQUAL = 5
    LESS = 6
    LESS_EQUAL = 7
    GREATER = 8
    GREATER_EQUAL = 9
    AND = 10
    OR = 11
    XOR = 12
    BITWISE_AND = 13
    BITWISE_OR = 14
    BITWISE_XOR = 15
    SHIFT_LEFT = 16
    SHIFT_RIGHT = 17
    PRELU = 18  # B is the slope


Fn = Callable[[Any, Any, Any, int], Any]


def _pow(xp: Any, a: Any, b: Any, i0: int) -> Any:
    if a.dtype.kind == "f":
        return xp.power(a, b.astype(a.dtype))
    if b.dtype.kind == "f":  # integer base, float exponent: computed in float64, cast back
        return xp.power(a.astype(xp.float64), b.astype(xp.float64))
    return xp.power(a, b.astype(a.dtype))


def _mod(xp: Any, a: Any, b: Any, fmod: int) -> Any:
    """ONNX Mod: ``fmod`` takes the dividend's sign (C fmod), else the divisor's (Python %).
    A zero integer divisor gives 0."""
    if fmod:
        return xp.fmod(a, b)
    return xp.mod(a, b)


FNS: dict[BinaryFn, Fn] = {
    BinaryFn.POW: _pow,
    BinaryFn.MOD: _mod,
    BinaryFn.MIN: lambda xp, a, b, i: xp.minimum(a, b),
    BinaryFn.MAX: lambda xp, a, b, i: xp.maximum(a, b),
    BinaryFn.EQUAL: lambda xp, a, b, i: xp.equal(a, b),
    BinaryFn.LESS: lambda xp, a, b, i: xp.less(a, b),
    BinaryFn.LESS_EQUAL: lambda xp, a, b, i: xp.less_equal(a, b),
    BinaryFn.GREATER: lambda xp, a, b, i: xp.greater(a, b),
    BinaryFn.GREATER_EQUAL: lambda xp, a, b, i: xp.greater_equal(a, b),
    BinaryFn.AND: lambda xp, a, b, i: xp.logical_and(a, b),
    BinaryFn.OR: lambda xp, a, b, i: xp.logical_or(a, b),
    BinaryFn.XOR: lambda xp, a, b, i: xp.logical_xor(a, b),
    BinaryFn.BITWISE_AND: lambda xp, a, b, i: xp.bitwise_and(a, b),
    BinaryFn.BITWISE_OR: lambda xp, a, b, i: xp.bitwise_or(a, b),
    BinaryFn.BITWISE_XOR: lambda xp, a, b, i: xp.bitwise_xor(a, b),
    BinaryFn.SHIFT_LEFT: lambda xp, a, b, i: xp.left_shift(a, b),
    BinaryFn.SHIFT_RIGHT: lambda xp, a, b, i: xp.right_shift(a, b),
    BinaryFn.PRELU: lambda xp, a, b, i: xp.where(a < 0, a * b, a),
}


def binary(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = fn(A, B) (broadcast) with ints (fn, i0)."""
    a, b, y = ins[0], ins[1], outs[0]
    fn = FNS[BinaryFn(ints[0])]
    half = a.dtype == xp.float16
    if half:
        a = a.astype(xp.float32)
        b = b.astype(xp.float32) if b.dtype == xp.float16 else b
    with np.errstate(all="ignore"):  # IEEE results and a zero integer divisor (0) are answers
        result = fn(xp, a, b, ints[1])
    xp.copyto(y, xp.broadcast_to(xp.asarray(result), y.shape), casting="unsafe")


def where(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = cond ? X : Y (all three broadcast)."""
    xp.copyto(outs[0], xp.where(ins[0], ins[1], ins[2]))


TABLE = {KernelId.BINARY: binary, KernelId.WHERE: where}
