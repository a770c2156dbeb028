"""Prepared launches on the NumPy backend: a kernel's launch turned into one closure at record
time, so that an execution of a command buffer does nothing but the NumPy calls.

A kernel checks its operands, reshapes them and picks a path on every call; for a launch of a
command buffer, whose views, shapes and immediates never change between executions, all of
that is decided once. A *preparer* receives the launch's operands when the buffer is bound and
returns a closure that computes exactly what the kernel would (the same NumPy calls in the same
order, so bit-identical results), or
None when the launch takes a path it does not cover; that launch then calls the kernel as
before. Only untiled launches (``grid[0]`` = 1) are prepared:
a tiled launch shares its tiles out at run time (:mod:`stack.kmd.kernels.parallel`).

Scratch a kernel would allocate per call (a column of row sums, squared deviations) is
allocated here once per launch, up to ``SCRATCH_LIMIT`` elements; larger launches allocate per
call as the kernel does. A launch's scratch belongs to its command buffer, whose executions
must not overlap anyway (each writes the same outputs; the runtime runs a model once at a time).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels import linalg_np, norm_np
from stack.kmd.kernels.elementwise import relu_, relu_row, zero_row

Run = Callable[[], None]
#: Largest scratch (elements) a prepared launch keeps allocated between executions.
SCRATCH_LIMIT = 1 << 16


def relu_rows(src: Any, out: Any) -> Run:
    """``out = max(src, 0)`` as the kernel's :func:`~stack.kmd.kernels.elementwise.relu_`
    computes it, with its zero row (:func:`~stack.kmd.kernels.elementwise.relu_row`) chosen
    once."""
    n = relu_row(src, out)
    if not n:
        return functools.partial(relu_, np, src, out)
    rows = (out.size // n, n)
    return functools.partial(
        np.maximum, src.reshape(rows), zero_row(n, out.dtype), out=out.reshape(rows)
    )


def _then(first: Run, second: Run) -> Run:
    def run() -> None:
        first()
        second()

    return run


def gemm(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """GEMM: ``np.dot`` into Y (as the kernel), then the bias C (beta 1) and the ReLU (alpha 1
    only)."""
    trans_a, trans_b, relu = ints[0], ints[1], ints[2]
    alpha, beta = fl[0], fl[1]
    c = ins[2] if len(ins) > 2 and beta != 0.0 else None
    if alpha != 1.0 or (c is not None and beta != 1.0):
        return None
    a = ins[0].T if trans_a else ins[0]
    b = ins[1].T if trans_b else ins[1]
    y = outs[0]
    if not linalg_np.dot_fits(a, b, y):  # the kernel's own path (its np.dot product)
        return None
    product: Run = functools.partial(np.dot, a, b, out=y)
    if c is not None:
        mm, add = np.dot, np.add

        def biased() -> None:
            mm(a, b, out=y)
            add(y, c, out=y, casting="unsafe")

        product = biased
    return _then(product, relu_rows(y, y)) if relu else product


def matmul(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """MATMUL with both operands at least 2-D and Y of A's dtype: one ``matmul`` into Y."""
    a, b, y = ins[0], ins[1], outs[0]
    if a.ndim < 2 or b.ndim < 2 or y.dtype != a.dtype:
        return None
    return functools.partial(np.matmul, a, b, out=y)


def layernorm(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """LAYERNORM on NumPy's fast path (:func:`stack.kmd.kernels.norm_np.layernorm`)."""
    x, y = ins[0], outs[0]
    if x.ndim == 0 or not norm_np._plain(x, y):
        return None
    n = math.prod(x.shape[ints[0] % x.ndim :])
    if any(p.dtype != x.dtype or p.size != n for p in ins[1:]):
        return None
    x2, y2 = x.reshape(-1, n), y.reshape(-1, n)
    mean = norm_np._column(n, x.dtype, 1.0 / n)
    col = np.empty((x2.shape[0], 1), x.dtype)
    square = np.empty_like(y2) if y2.size <= SCRATCH_LIMIT else None
    eps = np.array(fl[0], x.dtype)  # as the kernel's cast of it, a third cheaper to add
    scale = ins[1].reshape(n)
    shift = ins[2].reshape(n) if len(ins) > 2 else None
    mm, sub, sq, add, sqrt, div, mul = (
        np.dot, np.subtract, np.square, np.add, np.sqrt, np.divide, np.multiply
    )  # fmt: skip

    def run() -> None:
        mm(x2, mean, out=col)
        sub(x2, col, out=y2)
        mm(sq(y2, out=square), mean, out=col)
        add(col, eps, out=col)
        sqrt(col, out=col)
        div(y2, col, out=y2)
        mul(y2, scale, out=y2)
        if shift is not None:
            add(y2, shift, out=y2)

    return run


def softmax(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """SOFTMAX over the last axis on NumPy's fast path (:func:`stack.kmd.kernels.norm_np.softmax`,
    its underflow fallback included)."""
    x, y = ins[0], outs[0]
    if (
        x.ndim == 0
        or ints[0] % x.ndim != x.ndim - 1
        or (len(ints) > 1 and ints[1])
        or not norm_np._plain(x, y)
    ):
        return None
    n = x.shape[-1]
    x2, y2 = x.reshape(-1, n), y.reshape(-1, n)
    ones = norm_np._column(n, x.dtype, 1.0)
    col = np.empty((x2.shape[0], 1), x.dtype)
    floor = norm_np._FLOOR[x.dtype]
    flat, sums = x2.reshape(-1), col.reshape(-1)
    mm, sub, exp, div, top = np.dot, np.subtract, np.exp, np.divide, np.maximum.reduce

    def run() -> None:
        sub(x2, flat[flat.argmax()], out=y2)
        exp(y2, out=y2)
        mm(y2, ones, out=col)
        if sums[sums.argmin()] < floor:  # a row far below the maximum: shift per row
            sub(x2, top(x2, axis=1, keepdims=True), out=y2)
            exp(y2, out=y2)
            mm(y2, ones, out=col)
        div(y2, col, out=y2)

    return run


def transpose(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """TRANSPOSE: one copy from the permuted view (an item assignment: the copy ``np.copyto``
    makes, without its dispatch, 0.44 against 0.56 us on a transformer's heads); operands of
    two dtypes take the kernel (an assignment would cast where the kernel's copy refuses)."""
    x, y = ins[0], outs[0]
    if x.dtype != y.dtype:
        return None
    return functools.partial(y.__setitem__, Ellipsis, x.transpose(ints if ints else None))


def add(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """ADD (and its ReLU)."""
    y = outs[0]
    total: Run = functools.partial(np.add, ins[0], ins[1], out=y)
    return _then(total, relu_rows(y, y)) if ints[0] else total


def mul(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """MUL."""
    return functools.partial(np.multiply, ins[0], ins[1], out=outs[0])


def relu(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """RELU."""
    return relu_rows(ins[0], outs[0])


def globalavgpool(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """GLOBALAVGPOOL on the kernel's float path (C-contiguous X and Y of one float dtype): the
    row sums into Y, then the scale by 1 / (H * W); ``layout`` 1 (X[N,H,W,C]): the sums over
    the pixel axis."""
    x, y = ins[0], outs[0]
    plain = x.dtype == y.dtype and x.dtype.kind == "f" and x.dtype != np.float16
    if x.ndim < 3 or not plain or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return None
    nhwc = bool(ints and ints[0]) and x.ndim == 4
    n, c = (x.shape[0], x.shape[3]) if nhwc else x.shape[:2]
    rows = x.reshape(n, -1, c) if nhwc else x.reshape(n, c, -1)
    flat, axis = y.reshape(n, c), 1 if nhwc else 2
    scale = 1.0 / max(1, x.size // max(1, n * c))
    total, mul = np.add.reduce, np.multiply

    def run() -> None:
        total(rows, axis=axis, out=flat)
        mul(flat, scale, out=flat, casting="unsafe")

    return run
