"""The UNARY kernel: one element-wise function of one tensor, picked by an immediate, any ``xp``.

``ints = (fn, i0, i1)``, ``floats = (alpha, beta)``; :class:`UnaryFn` values are ABI. The
result is computed in the input's dtype (float16 through float32, as ONNX runtimes do) and
written to Y with a C cast (Y may be BOOL for the predicates ISNAN / ISINF).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class UnaryFn(enum.IntEnum):
    """The functions of the UNARY kernel. Values are ABI (blob immediate ``fn``): never renumber."""

    NEG = 1
    ABS = 2
    SQRT = 3
    RECIPROCAL = 4
    EXP = 5
    LOG = 6
    ERF = 7
    TANH = 8
    SIGMOID = 9
    GELU = 10  # i0 = 1: tanh approximation
    HARD_SIGMOID = 11  # max(0, min(1, alpha * x + beta))
    HARD_SWISH = 12
    LEAKY_RELU = 13  # alpha
    CLIP = 14  # [alpha, beta]; i0 / i1 = 1 when the lower / upper bound is present
    CEIL = 15
    FLOOR = 16
    ROUND = 17  # half to even
    SIN = 18
    COS = 19
    TAN = 20
    ASIN = 21
    ACOS = 22
    ATAN = 23
    SINH = 24
    COSH = 25
    ASINH = 26
    ACOSH = 27
    ATANH = 28
    SIGN = 29
    NOT = 30  # BOOL
    BITWISE_NOT = 31  # integers
    ELU = 32  # alpha
    SELU = 33  # alpha, gamma = beta
    CELU = 34  # alpha
    SOFTPLUS = 35
    SOFTSIGN = 36
    THRESHOLDED_RELU = 37  # alpha
    ISNAN = 38  # -> BOOL
    ISINF = 39  # -> BOOL; i0 / i1 = detect positive / negative
    MISH = 40
    SHRINK = 41  # bias = alpha, lambd = beta
    SWISH = 42  # x * sigmoid(alpha * x)


Fn = Callable[[Any, Any, float, float, int, int], Any]


def _erf(xp: Any, x: Any) -> Any:
    if xp is np:  # NumPy has no erf ufunc: the C library's erf, element by element (exact)
        return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(x.dtype)
    from cupyx.scipy.special import erf  # type: ignore[import-not-found,unused-ignore]

    return erf(x)


def _sigmoid(xp: Any, x: Any) -> Any:
    """1 / (1 + exp(-x)) without overflow: exp of a non-positive argument only."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(xp: Any, x: Any) -> Any:
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def _gelu(xp: Any, x: Any, tanh: int) -> Any:
    if tanh:
        c = x.dtype.type(math.sqrt(2 / math.pi))
        return 0.5 * x * (1 + xp.tanh(c * (x + x.dtype.type(0.044715) * x**3)))
    return 0.5 * x * (1 + _erf(xp, x / x.dtype.type(math.sqrt(2))))


def _clip(xp: Any, x: Any, lo: float, hi: float, has_lo: int, has_hi: int) -> Any:
    y = x
    if has_lo:
        y = xp.where(y < lo, xp.asarray(lo).astype(x.dtype), y)
    if has_hi:
        y = xp.where(y > hi, xp.asarray(hi).astype(x.dtype), y)
    return y


def _round(xp: Any, x: Any) -> Any:
    return xp.rint(x) if x.dtype.kind == "f" else x


def _sign(xp: Any, x: Any) -> Any:
    return xp.sign(x) if x.dtype.kind != "u" else (x > 0).astype(x.dtype)


def _isinf(xp: Any, x: Any, pos: int, neg: int) -> Any:
    inf = xp.isinf(x)  # isinf and a sign test: CuPy has no isposinf / isneginf
    return (inf & (x > 0) & bool(pos)) | (inf & (x < 0) & bool(neg))


FNS: dict[UnaryFn, Fn] = {
    UnaryFn.NEG: lambda xp, x, a, b, i, j: xp.negative(x),
    UnaryFn.ABS: lambda xp, x, a, b, i, j: xp.abs(x),
    UnaryFn.SQRT: lambda xp, x, a, b, i, j: xp.sqrt(x),
    UnaryFn.RECIPROCAL: lambda xp, x, a, b, i, j: xp.reciprocal(x),
    UnaryFn.EXP: lambda xp, x, a, b, i, j: xp.exp(x),
    UnaryFn.LOG: lambda xp, x, a, b, i, j: xp.log(x),
    UnaryFn.ERF: lambda xp, x, a, b, i, j: _erf(xp, x),
    UnaryFn.TANH: lambda xp, x, a, b, i, j: xp.tanh(x),
    UnaryFn.SIGMOID: lambda xp, x, a, b, i, j: _sigmoid(xp, x),
    UnaryFn.GELU: lambda xp, x, a, b, i, j: _gelu(xp, x, i),
    UnaryFn.HARD_SIGMOID: lambda xp, x, a, b, i, j: xp.clip(a * x + b, 0, 1),
    UnaryFn.HARD_SWISH: lambda xp, x, a, b, i, j: x * xp.clip(x / 6 + 0.5, 0, 1),
    UnaryFn.LEAKY_RELU: lambda xp, x, a, b, i, j: xp.where(x < 0, a * x, x),
    UnaryFn.CLIP: _clip,
    UnaryFn.CEIL: lambda xp, x, a, b, i, j: xp.ceil(x),
    UnaryFn.FLOOR: lambda xp, x, a, b, i, j: xp.floor(x),
    UnaryFn.ROUND: lambda xp, x, a, b, i, j: _round(xp, x),
    UnaryFn.SIN: lambda xp, x, a, b, i, j: xp.sin(x),
    UnaryFn.COS: lambda xp, x, a, b, i, j: xp.cos(x),
    UnaryFn.TAN: lambda xp, x, a, b, i, j: xp.tan(x),
    UnaryFn.ASIN: lambda xp, x, a, b, i, j: xp.arcsin(x),
    UnaryFn.ACOS: lambda xp, x, a, b, i, j: xp.arccos(x),
    UnaryFn.ATAN: lambda xp, x, a, b, i, j: xp.arctan(x),
    UnaryFn.SINH: lambda xp, x, a, b, i, j: xp.sinh(x),
    UnaryFn.COSH: lambda xp, x, a, b, i, j: xp.cosh(x),
    UnaryFn.ASINH: lambda xp, x, a, b, i, j: xp.arcsinh(x),
    UnaryFn.ACOSH: lambda xp, x, a, b, i, j: xp.arccosh(x),
    UnaryFn.ATANH: lambda xp, x, a, b, i, j: xp.arctanh(x),
    UnaryFn.SIGN: lambda xp, x, a, b, i, j: _sign(xp, x),
    UnaryFn.NOT: lambda xp, x, a, b, i, j: xp.logical_not(x),
    UnaryFn.BITWISE_NOT: lambda xp, x, a, b, i, j: xp.invert(x),
    UnaryFn.ELU: lambda xp, x, a, b, i, j: xp.where(x < 0, a * xp.expm1(xp.minimum(x, 0)), x),
    UnaryFn.SELU: lambda xp, x, a, b, i, j: b * xp.where(x <= 0, a * xp.expm1(xp.minimum(x, 0)), x),
    UnaryFn.CELU: lambda xp, x, a, b, i, j: (
        xp.maximum(x, 0) + xp.minimum(0, a * xp.expm1(xp.minimum(x, 0) / a))
    ),
    UnaryFn.SOFTPLUS: lambda xp, x, a, b, i, j: _softplus(xp, x),
    UnaryFn.SOFTSIGN: lambda xp, x, a, b, i, j: x / (1 + xp.abs(x)),
    UnaryFn.THRESHOLDED_RELU: lambda xp, x, a, b, i, j: xp.where(x > a, x, 0),
    UnaryFn.ISNAN: lambda xp, x, a, b, i, j: xp.isnan(x),
    UnaryFn.ISINF: lambda xp, x, a, b, i, j: _isinf(xp, x, i, j),
    UnaryFn.MISH: lambda xp, x, a, b, i, j: x * xp.tanh(_softplus(xp, x)),
    UnaryFn.SHRINK: lambda xp, x, a, b, i, j: xp.where(x < -b, x + a, xp.where(x > b, x - a, 0)),
    UnaryFn.SWISH: lambda xp, x, a, b, i, j: x * _sigmoid(xp, a * x),
}


def unary(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = fn(X) with ints (fn, i0, i1) and floats (alpha, beta)."""
    x, y = ins[0], outs[0]
    fn = FNS[UnaryFn(ints[0])]
    work = x.astype(xp.float32) if x.dtype == xp.float16 else x
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are the answer, not an error
        result = fn(xp, work, fl[0], fl[1], ints[1], ints[2])
    xp.copyto(y, xp.asarray(result).reshape(y.shape), casting="unsafe")


TABLE = {KernelId.UNARY: unary}
