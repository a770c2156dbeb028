"""Conv2D on the NumPy backend: a plan per shape, scratch per thread, one gather and one BLAS
call per convolution.

The generic kernel (:mod:`stack.kmd.kernels.conv`) builds its im2col matrix anew on every call;
on small CNN layers its Python and allocation overheads cost as much as the product itself.
Here everything that depends only on the shapes and attributes is computed once (a
:class:`ConvPlan`, shared by all threads) and the buffers are kept per thread (a
:class:`Work`, see :mod:`stack.kmd.kernels.scratch`), so a call is:

* ``POINTWISE`` (1x1, stride 1, no padding): one matmul of the weights with X itself;
* ``WIDE`` (stride 1): X copied into a zero-bordered padded plane (borders written once, at
  creation), then the columns are rows of that plane: tap (i, j) of channel c is the
  *contiguous* run of ``oH * Wp`` elements starting at ``c, i*dH, j*dW`` — one fast copy, one
  matmul producing oH rows of width Wp, whose first oW columns are the output (the others,
  windows straddling a row end, are dropped while adding the bias);
* ``STRIDED`` (stride > 1): one copy of a strided window view of X (or its padded copy) into
  the column matrix, one matmul written straight into Y;
* ``GATHER`` (stride 1, narrow planes): one ``take`` with a cached flat index instead.

The geometry (plans, per-thread buffers and views) is :mod:`stack.kmd.kernels.conv_plan`.

Bias, residual and ReLU follow while each tile of output channels is still in cache. A
single-image, ungrouped convolution runs its product and epilogue tile by tile over its launch's
grid axis, the output channels (:mod:`stack.kmd.kernels.parallel`: ``grid[0]`` tiles shared out
over the worker threads), and splits its copies by input channel over the same workers.
Groups are a batched matmul over the group axis in every method.
Other dtypes than float32/float64, or non-contiguous views, go to the generic kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels import conv, parallel, pool, scratch, winograd
from stack.kmd.kernels.conv_plan import FAST, ConvPlan, Method, Work, build_plan, window, work
from stack.kmd.kernels.elementwise import relu_

PostFn = Callable[[int, int], None]


def conv2d(
    ins: list[Any],
    outs: list[Any],
    ints: tuple[int, ...],
    fl: tuple[float, ...],
    post: PostFn | None = None,
) -> None:
    """Y = act(conv(X, W) + B + R) (the CONV2D ABI: B and the residual R optional), then the
    fused max pool when ``pool_h`` > 0. ``post(lo, hi)`` runs on each finished range of output
    channels (the fused pool's own hook)."""
    if conv.algorithm(ints):
        _winograd(ins, outs, ints, fl)
        return
    pooled = conv.pool_ints(ints)
    if pooled is not None:
        _pooled(ins, outs, ints, fl, pooled)
        return
    x, w, y = ins[0], ins[1], outs[0]
    residual = ins[3] if len(ins) > 3 else None
    key = ("conv2d", x.shape, w.shape, y.shape, ints[:9], x.dtype.char)
    wk = scratch.get(key)
    if wk is None:
        if (
            x.dtype not in FAST
            or w.dtype != x.dtype
            or y.dtype != x.dtype
            or any(extra.dtype != x.dtype for extra in ins[2:])
        ):
            conv.conv2d(np, ins, outs, ints, fl)
            if post is not None:
                post(0, y.shape[1])
            return
        p = scratch.plan(key, lambda: build_plan(x.shape, w.shape, y.shape, ints))
        wk = work(p, x.dtype)
        scratch.put(key, wk, wk.nbytes)
    if not (
        x.flags.c_contiguous
        and w.flags.c_contiguous
        and y.flags.c_contiguous
        and (residual is None or residual.flags.c_contiguous)
    ):
        conv.conv2d(np, ins, outs, ints, fl)
        if post is not None:
            post(0, y.shape[1])
        return
    _run(wk, x, w, ins[2] if len(ins) > 2 else None, y, ints[9], residual, post)


def _winograd(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """``algorithm`` 1: the planned NumPy Winograd kernel for contiguous float operands of one
    dtype, else the generic one."""
    x = ins[0]
    if x.dtype in FAST and all(a.dtype == x.dtype and a.flags.c_contiguous for a in (*ins, *outs)):
        winograd.conv2d_np(ins, outs, ints)
    else:
        conv.conv2d(np, ins, outs, ints, fl)


def _pooled(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...], pooled: tuple
) -> None:
    """The convolution into this thread's scratch, each range of output channels max-pooled
    into Y as soon as its epilogue is done (while it is in cache)."""
    x, w, y = ins[0], ins[1], outs[0]
    shape = (x.shape[0], w.shape[0], *conv.conv_hw(x.shape, w.shape, ints))
    full = scratch.buffer(("conv2d-full", shape, y.dtype.char), shape, y.dtype)

    def pool_range(lo: int, hi: int) -> None:
        pool.maxpool(np, [full[:, lo:hi]], [y[:, lo:hi]], pooled, ())

    conv2d(ins, [full], ints[:10], fl, pool_range)


def run(p: ConvPlan, x: Any, w: Any, bias: Any, y: Any, relu: bool, residual: Any = None) -> None:
    """Execute plan ``p`` with this thread's scratch (X, W, Y contiguous, one float dtype)."""
    key = ("conv2d-plan", p, x.dtype.char)
    wk = scratch.local(key, lambda: work(p, x.dtype), lambda o: o.nbytes)
    _run(wk, x, w, bias, y, relu, residual)


def _run(
    wk: Work,
    x: Any,
    w: Any,
    bias: Any,
    y: Any,
    relu: int,
    residual: Any = None,
    post: PostFn | None = None,
) -> None:
    p = wk.plan
    if parallel.whole():
        _whole(wk, x, w, bias, y, relu, residual, post)
        return
    epilogue = (bias, residual, relu, post)
    if p.method is Method.POINTWISE:
        _product(wk, w, x.reshape(wk.x_shape), y.reshape(wk.y_shape), y, epilogue)
        return
    if p.method is Method.WIDE:
        _im2col(wk.interior, x, wk.cols_taps, wk.window)
        _product(wk, w, wk.cols, wk.wide, y, epilogue)
        return
    if p.method is Method.STRIDED:
        view = wk.window if wk.interior is not None else window(p, x)
        _im2col(wk.interior, x, wk.cols_taps, view)
        _product(wk, w, wk.cols, y.reshape(wk.y_shape), y, epilogue)
        return
    if wk.interior is not None:
        _im2col(wk.interior, x, None, None)
        source = wk.source
    else:
        source = x.reshape(wk.x_shape)
    index: Any = p.index
    if source.ndim == 1:
        rows = index.shape[0]

        def take(lo: int, hi: int) -> None:
            np.take(source, index[lo:hi], out=wk.take_out[lo:hi], mode="wrap")

        parallel.split(rows, take)
    else:
        np.take(source, index, axis=1, out=wk.take_out, mode="wrap")
    _product(wk, w, wk.cols, y.reshape(wk.y_shape), y, epilogue)


def _whole(
    wk: Work, x: Any, w: Any, bias: Any, y: Any, relu: int, residual: Any, post: PostFn | None
) -> None:
    """A one-tile launch in straight-line calls: what :func:`_run` does without the per-range
    closures (on the small CNN's 4x4-16x16 layers those cost 5-10 us a convolution, a third of
    the call)."""
    p = wk.plan
    method = p.method
    out = wk.wide
    if method is Method.POINTWISE:
        cols = x.reshape(wk.x_shape)
    else:
        cols = wk.cols
        if wk.interior is not None:
            np.copyto(wk.interior, x)
        if method is Method.WIDE:
            np.copyto(wk.cols_taps, wk.window)
        elif method is Method.STRIDED:
            np.copyto(wk.cols_taps, wk.window if wk.interior is not None else window(p, x))
        else:
            source = wk.source if wk.interior is not None else x.reshape(wk.x_shape)
            index: Any = p.index
            np.take(source, index, axis=source.ndim - 1, out=wk.take_out, mode="wrap")
    np.matmul(w.reshape(wk.w_shape), cols, out=y.reshape(wk.y_shape) if out is None else out)
    src = wk.crop if wk.crop is not None else y
    if bias is not None:
        np.add(src, bias.reshape(1, -1, 1, 1), out=y)
        src = y
    if residual is not None:
        np.add(src, residual, out=y)
        src = y
    if relu:
        relu_(np, src, y)
    elif src is not y:
        np.copyto(y, src)
    if post is not None:
        post(0, p.m)


def _im2col(interior: Any, x: Any, cols_taps: Any, taps: Any) -> None:
    """Copy X into the padded plane (if any) and the taps (if any) into the columns, per input
    channel range."""

    def copy(lo: int, hi: int) -> None:
        if interior is not None:
            np.copyto(interior[:, lo:hi], x[:, lo:hi])
        if cols_taps is not None:
            np.copyto(cols_taps[:, lo:hi], taps[:, lo:hi])

    parallel.split(x.shape[1], copy)


def _product(wk: Work, w: Any, cols: Any, out: Any, y: Any, epilogue: tuple) -> None:
    """``out = W @ cols``, then the epilogue (bias, residual, ReLU) into Y while each range of
    output channels is in cache (one range when batched or grouped). WIDE: ``out`` is the wide
    product, cropped into Y."""
    p = wk.plan
    wm = w.reshape(wk.w_shape)
    crop = wk.crop
    single = wm.ndim == 2
    bias, residual, relu, post = epilogue
    b4 = bias.reshape(1, -1, 1, 1) if bias is not None else None

    def part(lo: int, hi: int) -> None:
        if single:
            np.matmul(wm[lo:hi], cols, out=out[lo:hi])
        else:
            np.matmul(wm, cols, out=out)
        ys = y[:, lo:hi]
        src = crop[:, lo:hi] if crop is not None else ys
        if b4 is not None:
            np.add(src, b4[:, lo:hi], out=ys)
            src = ys
        if residual is not None:
            np.add(src, residual[:, lo:hi], out=ys)
            src = ys
        if relu:
            relu_(np, src, ys)
        elif src is not ys:
            np.copyto(ys, src)
        if post is not None and single:
            post(lo, hi)

    if single:
        parallel.grid(p.m, part)
    else:
        part(0, p.m)
        if post is not None:
            post(0, p.m)
