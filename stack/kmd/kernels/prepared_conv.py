"""Prepared Conv2D launches on the NumPy backend (the scheme of
:mod:`stack.kmd.kernels.prepared_np`): a direct convolution's checks, plan, reshaped views and
epilogue are decided when the command buffer records it, so that an execution is its NumPy
calls and one look-up of this thread's buffers. On the small CNN's 16x16-4x4 layers the
kernel's per-call Python (checks, the scratch key, method dispatch, reshapes) cost about as
much as its copies and epilogue.

The column matrix, padded plane and wide product are the kernel's own per-thread scratch
(:func:`stack.kmd.kernels.conv_plan.work`, under the kernel's key): launches of one shape
share them, as kernel calls do. Buffers of its own per launch were measured 17 % slower on the
small CNN's run (1822 against 1555 us in one process, alternating): 21 column matrices of up
to 166 KB no longer stay in cache between layers. Only the fused max pool's input and row
buffer belong to the launch (its command buffer's executions never overlap), at most
``SCRATCH_BYTES``; a larger pooled launch calls the kernel.

The calls are the untiled kernel's (:func:`stack.kmd.kernels.conv_np._whole`) in the same
order, so results are bit-identical, except that the product is ``np.dot`` (the same BLAS call
as ``np.matmul`` on 2-D operands, cheaper to make).

Covered: algorithm 0 (direct), one image, group 1, C-contiguous float32/float64 operands of one
dtype, with or without the fused max pool (without padding: the separable ``maximum`` passes
of :func:`stack.kmd.kernels.pool._separable` over prepared views; with padding: the pool
kernel). Everything else calls the kernel as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels import conv, pool, scratch
from stack.kmd.kernels.conv_plan import FAST, Method, Work, build_plan, window, work
from stack.kmd.kernels.elementwise import relu_
from stack.kmd.kernels.prepared_np import relu_rows

Run = Callable[[], None]
#: Largest buffers (bytes) a prepared pooled convolution keeps of its own.
SCRATCH_BYTES = 1 << 18


def conv2d(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """CONV2D (see the module docstring for what is covered), or None."""
    x, w, y = ins[0], ins[1], outs[0]
    if conv.algorithm(ints) or x.ndim != 4 or x.shape[0] != 1 or ints[8] != 1:
        return None
    if x.dtype not in FAST or any(
        a.dtype != x.dtype or not a.flags.c_contiguous for a in (*ins, *outs)
    ):
        return None
    full = y  # the convolution's own output: Y, or the fused pool's input
    pooling: list[Run] = []
    pooled = conv.pool_ints(ints)
    if pooled is not None:
        full = np.empty((1, w.shape[0], *conv.conv_hw(x.shape, w.shape, ints)), y.dtype)
        pooling, nbytes = _maxpool(full, y, pooled)
        if nbytes > SCRATCH_BYTES:
            return None
    key = ("conv2d", x.shape, w.shape, full.shape, ints[:9], x.dtype.char)  # the kernel's
    try:
        p = scratch.plan(key, lambda: build_plan(x.shape, w.shape, full.shape, ints))
    except ValueError:  # the kernel raises it at run time, as before
        return None
    dtype = x.dtype

    def fresh() -> Work:
        wk = work(p, dtype)
        return scratch.put(key, wk, wk.nbytes)

    method, wm = p.method, w.reshape(p.m, p.k)
    y2 = full.reshape(p.m, p.cols) if method is not Method.WIDE else None
    direct: Any = x.reshape(p.k, p.cols) if method is Method.POINTWISE else None
    unpadded = p.pad_shape is None
    source: Any = x.reshape(-1) if unpadded and method is Method.GATHER else None  # taken from
    taps: Any = window(p, x) if unpadded and method is Method.STRIDED else None
    index: Any = p.index
    bias = ins[2] if len(ins) > 2 else None
    head, tail = _epilogue(full, bias, ins[3] if len(ins) > 3 else None, ints[9])
    tail += pooling
    get, copyto, dot = scratch.get, np.copyto, np.dot

    def run() -> None:
        wk = get(key) or fresh()
        if wk.interior is not None:
            copyto(wk.interior, x)
        if method is Method.WIDE:
            copyto(wk.cols_taps, wk.window)
            dot(wm, wk.cols, out=wk.wide)
            head(wk.crop)
        else:
            if method is Method.STRIDED:
                copyto(wk.cols_taps, wk.window if wk.interior is not None else taps)
            elif method is Method.GATHER:
                src = wk.source if wk.interior is not None else source
                np.take(src, index, axis=0, out=wk.take_out, mode="wrap")
            dot(wm, wk.cols if direct is None else direct, out=y2)
            head(full)
        for step in tail:
            step()

    return run


def _epilogue(
    y: Any, bias: Any, residual: Any, relu: int
) -> tuple[Callable[[Any], None], list[Run]]:
    """Y = act(src + B + R) as the kernel computes it (bias, residual, ReLU, in that order): the
    first step, given the product ``src`` (Y itself, or the valid columns of a wide product),
    and the steps after it, on Y."""
    terms = [t for t in (bias, residual) if t is not None]
    if bias is not None:
        terms[0] = bias.reshape(1, -1, 1, 1)
    rectify = relu_rows(y, y)
    if terms:
        first, add = terms[0], np.add

        def head(src: Any) -> None:
            add(src, first, out=y)

        tail: list[Run] = [functools.partial(np.add, y, term, out=y) for term in terms[1:]]
        return head, [*tail, rectify] if relu else tail

    def plain(src: Any) -> None:
        if src is y:  # a ReLU of Y in place reads the zero row
            if relu:
                rectify()
        elif relu:
            relu_(np, src, y)
        else:
            np.copyto(y, src)

    return plain, []


def _maxpool(x: Any, y: Any, ints: tuple[int, ...]) -> tuple[list[Run], int]:
    """The fused max pool of ``x`` (the convolution's own output) into ``y`` (MAXPOOL
    immediates ``ints``, dilation 1): the kernel's separable passes over prepared views when no
    padding is needed, else one call of the kernel; and the bytes of the buffers kept."""
    kh, kw, sh, sw, pt, pl, pb, pr = ints[:8]
    _, c, oh, ow = y.shape
    h, w = x.shape[2], x.shape[3]
    fits = sh * (oh - 1) + kh <= h and sw * (ow - 1) + kw <= w
    if (pt, pl, pb, pr) != (0, 0, 0, 0) or not fits:
        return [functools.partial(pool.maxpool, np, [x], [y], ints, ())], x.nbytes
    steps: list[Run] = []
    cols = [x[:, :, :, j : j + sw * (ow - 1) + 1 : sw] for j in range(kw)]
    tmp = cols[0]
    if kw > 1:
        tmp = np.empty((1, c, h, ow), y.dtype)
        steps.append(functools.partial(np.maximum, cols[0], cols[1], out=tmp))
        steps += [functools.partial(np.maximum, tmp, col, out=tmp) for col in cols[2:]]
    rows = [tmp[:, :, i : i + sh * (oh - 1) + 1 : sh] for i in range(kh)]
    nbytes = x.nbytes + (tmp.nbytes if kw > 1 else 0)
    if kh == 1:
        steps.append(functools.partial(np.copyto, y, rows[0]))
        return steps, nbytes
    steps.append(functools.partial(np.maximum, rows[0], rows[1], out=y))
    steps += [functools.partial(np.maximum, y, row, out=y) for row in rows[2:]]
    return steps, nbytes
