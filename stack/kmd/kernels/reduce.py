"""Reductions along axes, any ``xp``: REDUCE (sum, mean, max, ... over an axis set), ARG_REDUCE
(argmax / argmin), CUMSUM and TOPK.

REDUCE reads ``ints = (fn, axes_mask)``: bit ``i`` of ``axes_mask`` selects axis ``i``; the
result has Y's shape (kept or dropped axes alike). Reducing an empty set gives the operation's
identity (0 for sums, 1 for products, -inf / +inf or the integer extremes for max / min).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class ReduceFn(enum.IntEnum):
    """The functions of the REDUCE kernel. Values are ABI (blob immediate ``fn``)."""

    SUM = 1
    MEAN = 2
    MAX = 3
    MIN = 4
    PROD = 5
    L1 = 6
    L2 = 7
    LOG_SUM = 8
    LOG_SUM_EXP = 9
    SUM_SQUARE = 10


def _extreme(xp: Any, dtype: Any, fn: ReduceFn) -> Any:
    if dtype.kind == "f":
        return -np.inf if fn is ReduceFn.MAX else np.inf
    if dtype.kind == "b":
        return fn is ReduceFn.MIN
    info = np.iinfo(dtype)
    return info.min if fn is ReduceFn.MAX else info.max


def _reduce(xp: Any, x: Any, fn: ReduceFn, axes: tuple[int, ...]) -> Any:
    kw = {"axis": axes, "keepdims": True}
    if fn is ReduceFn.SUM:
        return xp.sum(x, **kw)
    if fn is ReduceFn.MEAN:
        return xp.sum(x, **kw) / max(1, int(np.prod([x.shape[a] for a in axes])))
    if fn in (ReduceFn.MAX, ReduceFn.MIN):
        if x.size == 0:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
            return xp.full(shape, _extreme(xp, x.dtype, fn), dtype=x.dtype)
        return (xp.max if fn is ReduceFn.MAX else xp.min)(x, **kw)
    if fn is ReduceFn.PROD:
        return xp.prod(x, **kw)
    if fn is ReduceFn.L1:
        return xp.sum(xp.abs(x), **kw)
    if fn is ReduceFn.L2:
        return xp.sqrt(xp.sum(x * x, **kw))
    if fn is ReduceFn.LOG_SUM:
        return xp.log(xp.sum(x, **kw))
    if fn is ReduceFn.SUM_SQUARE:
        return xp.sum(x * x, **kw)
    if x.size == 0:  # LOG_SUM_EXP of nothing: log(0)
        return xp.log(xp.sum(x, **kw))
    m = xp.max(x, **kw)
    m = xp.where(xp.isfinite(m), m, 0)
    return xp.log(xp.sum(xp.exp(x - m), **kw)) + m


def reduce(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = fn over the axes of ``axes_mask`` (ints (fn, axes_mask))."""
    x, y = ins[0], outs[0]
    fn = ReduceFn(ints[0])
    axes = tuple(i for i in range(x.ndim) if ints[1] >> i & 1)
    work = x.astype(xp.float32) if x.dtype == xp.float16 else x
    with np.errstate(all="ignore"):
        result = _reduce(xp, work, fn, axes)
    xp.copyto(y, xp.asarray(result).reshape(y.shape), casting="unsafe")


def arg_reduce(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y (I64) = argmax (fn 0) or argmin (fn 1) along ``axis``; ``select_last_index`` picks the
    last of equal extremes instead of the first."""
    x, y = ins[0], outs[0]
    fn, axis, last = ints[0], ints[1], ints[2]
    pick = xp.argmax if fn == 0 else xp.argmin
    if last:
        n = x.shape[axis]
        idx = n - 1 - pick(xp.flip(x, axis=axis), axis=axis)
    else:
        idx = pick(x, axis=axis)
    xp.copyto(y, idx.reshape(y.shape), casting="unsafe")


def cumsum(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = cumulative sum (or product) along ``axis`` (ints (axis, exclusive, reverse, prod));
    an exclusive scan starts from the identity (0, or 1 for the product)."""
    x, y = ins[0], outs[0]
    axis, exclusive, reverse = ints[0], ints[1], ints[2]
    prod = len(ints) > 3 and ints[3]
    src = xp.flip(x, axis=axis) if reverse else x
    acc = (xp.cumprod if prod else xp.cumsum)(src, axis=axis, dtype=x.dtype)
    if exclusive:
        first = xp.take(acc, xp.arange(0, 1), axis=axis)
        start = xp.ones_like(first) if prod else xp.zeros_like(first)
        acc = xp.concatenate([start, acc], axis=axis)
        acc = xp.take(acc, xp.arange(0, x.shape[axis]), axis=axis)
    xp.copyto(y, xp.flip(acc, axis=axis) if reverse else acc)


def _order_key(xp: Any, x: Any, largest: int) -> Any:
    """A key whose ascending stable sort lists ``x`` largest-first (or smallest-first)."""
    if not largest:
        return x
    if x.dtype.kind == "f":
        return -x
    if x.dtype.kind == "u":
        return np.iinfo(x.dtype).max - x
    return xp.invert(x)  # -x - 1: order-reversing without overflow at the minimum


def topk(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Values and I64 indices of the k largest (or smallest) along ``axis``, k from Y's shape;
    equal values keep their index order (ints (axis, largest, sorted))."""
    x, values, indices = ins[0], outs[0], outs[1]
    axis, largest = ints[0], ints[1]
    k = values.shape[axis]
    key = _order_key(xp, x, largest)
    # NumPy needs kind="stable" for ties in index order; CuPy's sort is always stable
    order = xp.argsort(key, axis=axis, kind="stable") if xp is np else xp.argsort(key, axis=axis)
    picked = xp.take(order, xp.arange(k), axis=axis)
    xp.copyto(indices, picked, casting="unsafe")
    xp.copyto(values, xp.take_along_axis(x, picked, axis=axis))


TABLE = {
    KernelId.REDUCE: reduce,
    KernelId.ARG_REDUCE: arg_reduce,
    KernelId.CUMSUM: cumsum,
    KernelId.TOPK: topk,
}
