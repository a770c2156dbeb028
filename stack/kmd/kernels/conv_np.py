"""Conv2D on the NumPy backend: a plan per shape, scratch per thread, one gather and one BLAS
call per convolution.

The generic kernel (:mod:`stack.kmd.kernels.conv`) builds its im2col matrix anew on every call;
on small CNN layers its Python and allocation overheads cost as much as the product itself.
Here everything that depends only on the shapes and attributes is computed once (a
:class:`ConvPlan`, shared by all threads) and the buffers are kept per thread (a
:class:`_Work`, see :mod:`stack.kmd.kernels.scratch`), so a call is:

* ``POINTWISE`` (1x1, stride 1, no padding): one matmul of the weights with X itself;
* ``WIDE`` (stride 1): X copied into a zero-bordered padded plane (borders written once, at
  creation), then the columns are rows of that plane: tap (i, j) of channel c is the
  *contiguous* run of ``oH * Wp`` elements starting at ``c, i*dH, j*dW`` — one fast copy, one
  matmul producing oH rows of width Wp, whose first oW columns are the output (the others,
  windows straddling a row end, are dropped while adding the bias);
* ``GATHER`` (strided): one ``take`` with a cached flat index from X (or its padded copy) into
  the column matrix, one matmul written straight into Y.

Bias, residual and ReLU follow while each tile of output channels is still in cache. A
single-image, ungrouped convolution runs its product and epilogue tile by tile over its launch's
grid axis, the output channels (:mod:`stack.kmd.kernels.parallel`: ``grid[0]`` tiles shared out
over the worker threads), and splits its copies by input channel over the same workers.
Groups are a batched matmul over the group axis in every method.
Other dtypes than float32/float64, or non-contiguous views, go to the generic kernel.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from stack.kmd.kernels import conv, parallel, pool, scratch
from stack.kmd.kernels.elementwise import relu_

_FAST = (np.dtype(np.float32), np.dtype(np.float64))
#: WIDE computes Wp/oW times the needed columns; past this factor GATHER is used instead.
WIDE_WASTE = 1.3


class Method(enum.Enum):
    """How a plan lays out the column matrix."""

    POINTWISE = "pointwise"
    WIDE = "wide"
    GATHER = "gather"


@dataclass(frozen=True, slots=True, eq=False)
class ConvPlan:
    """Geometry of one convolution shape (see the module docstring for the methods)."""

    method: Method
    x_shape: tuple[int, int, int, int]
    m: int
    group: int
    k: int  # rows of one group's column matrix: C/group * kH * kW
    oh: int
    ow: int
    pad_shape: tuple[int, int, int, int] | None  # the padded copy of X, None: X read directly
    top: int
    left: int
    cols: int  # columns per image
    taps: tuple[int, int, int, int]  # kH, kW, dH, dW
    index: np.ndarray | None  # GATHER: flat index (C*kH*kW, oH*oW) into one image's planes


def build_plan(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    y_shape: tuple[int, ...],
    ints: tuple[int, ...],
    method: Method | None = None,
) -> ConvPlan:
    """The plan of a convolution; ``method`` forces one (else chosen by shape)."""
    sh, sw, pt, pl, pb, pr, dh, dw, group = ints[:9]
    n, c, h, w = x_shape
    m, cg, kh, kw = w_shape
    oh, ow = y_shape[2], y_shape[3]
    if c != cg * group or m % group or tuple(y_shape[:2]) != (n, m):
        raise ValueError(f"conv shapes X{x_shape} W{w_shape} Y{y_shape} group {group} disagree")
    need = (sh * (oh - 1) + dh * (kh - 1) + 1, sw * (ow - 1) + dw * (kw - 1) + 1)
    if need[0] > h + pt + pb or need[1] > w + pl + pr:
        raise ValueError(f"output {oh}x{ow} needs more input than X{x_shape} with pads")
    hp, wp = h + pt + pb, w + pl + pr
    if method is None:
        if kh == kw == 1 and sh == sw == 1 and hp == h and wp == w:
            method = Method.POINTWISE
        elif sh == sw == 1 and wp <= WIDE_WASTE * ow:
            method = Method.WIDE
        else:
            method = Method.GATHER
    if method is Method.POINTWISE and not (kh == kw == 1 and sh == sw == 1 and (oh, ow) == (h, w)):
        raise ValueError("a pointwise plan needs a 1x1 stride-1 convolution without padding")
    if method is Method.WIDE and sh == sw == 1:
        # the last tap's run reaches (kW-1)*dW elements past the last used row: spare rows
        spare = -(-((kw - 1) * dw) // wp)
        hp = max(hp, dh * (kh - 1) + oh + spare)
        cols = oh * wp
        index = None
    elif method is Method.WIDE:
        raise ValueError("a wide plan needs stride 1")
    else:
        cols = oh * ow
        ci, ki, kj, oi, oj = np.ogrid[:c, :kh, :kw, :oh, :ow]
        flat = ci * (hp * wp) + (ki * dh + oi * sh) * wp + (kj * dw + oj * sw)
        index = np.ascontiguousarray(flat.reshape(c * kh * kw, oh * ow), dtype=np.intp)
        index.flags.writeable = False
    padded = method is Method.WIDE or (hp, wp) != (h, w)
    return ConvPlan(
        method, (n, c, h, w), m, group, cg * kh * kw, oh, ow,
        (n, c, hp, wp) if padded and method is not Method.POINTWISE else None,
        pt, pl, cols, (kh, kw, dh, dw), index,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Work:
    """One thread's buffers for one plan, and every view a call needs, made once."""

    plan: ConvPlan
    w_shape: tuple[int, ...]  # W as the matmul's left operand
    y_shape: tuple[int, ...]  # Y as the matmul's output (POINTWISE, GATHER)
    x_shape: tuple[int, ...]  # X as the matmul's right operand (POINTWISE) / take source
    interior: Any  # where X is copied in the padded plane (None: no padded copy)
    source: Any  # GATHER: what ``take`` reads (None: X itself, reshaped to x_shape)
    take_out: Any  # GATHER: the column matrix as ``take`` writes it
    window: Any  # WIDE: the strided tap view of the padded plane
    cols_taps: Any  # WIDE: the column matrix as (N, C, kH, kW, cols)
    cols: Any  # the matmul's right operand (WIDE, GATHER)
    wide: Any  # WIDE: the matmul's output
    crop: Any  # WIDE: the valid columns of ``wide`` as (N, M, oH, oW)
    nbytes: int


def _work(p: ConvPlan, dtype: np.dtype) -> _Work:
    n, c, h, w = p.x_shape
    kh, kw, dh, dw = p.taps
    m, group = p.m, p.group
    single = n == 1 and group == 1
    w_shape = (m, p.k) if single else (group, m // group, p.k)
    y_shape = (m, p.cols) if single else (n, group, m // group, p.cols)
    interior = source = take_out = window = cols_taps = cols = wide = crop = None
    x_shape: tuple[int, ...] = (c, p.cols) if single else (n, group, c // group, p.cols)
    nbytes = 0
    if p.method is Method.POINTWISE:
        return _Work(p, w_shape, y_shape, x_shape, *(None,) * 8, 0)
    if p.pad_shape is not None:
        pad = np.zeros(p.pad_shape, dtype)
        nbytes += pad.nbytes
        interior = pad[:, :, p.top : p.top + h, p.left : p.left + w]
        source = pad.reshape(n, -1)
    buf = np.empty((n, group, p.k, p.cols), dtype)
    nbytes += buf.nbytes
    cols = buf[0, 0] if single else buf
    if p.method is Method.WIDE:
        assert p.pad_shape is not None and source is not None
        wp, item = p.pad_shape[3], dtype.itemsize
        plane = p.pad_shape[2] * wp * item
        window = np.ndarray(
            (n, c, kh, kw, p.cols), dtype, buffer=source,
            strides=(source.strides[0], plane, dh * wp * item, dw * item, item),
        )  # fmt: skip
        cols_taps = buf.reshape(n, c, kh, kw, p.cols)
        out = np.empty((n, group, m // group, p.cols), dtype)
        nbytes += out.nbytes
        wide = out[0, 0] if single else out
        crop = out.reshape(n, m, p.oh, wp)[:, :, :, : p.ow]
    else:
        x_shape = (c * h * w,) if n == 1 else (n, c * h * w)
        if source is not None and n == 1:
            source = source[0]
        take_out = buf.reshape(-1, p.cols) if n == 1 else buf.reshape(n, -1, p.cols)
    return _Work(
        p, w_shape, y_shape, x_shape, interior, source, take_out, window, cols_taps, cols, wide,
        crop, nbytes,
    )  # fmt: skip


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
            x.dtype not in _FAST
            or w.dtype != x.dtype
            or y.dtype != x.dtype
            or any(extra.dtype != x.dtype for extra in ins[2:])
        ):
            conv.conv2d(np, ins, outs, ints, fl)
            if post is not None:
                post(0, y.shape[1])
            return
        p = scratch.plan(key, lambda: build_plan(x.shape, w.shape, y.shape, ints))
        wk = _work(p, x.dtype)
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
    wk = scratch.local(key, lambda: _work(p, x.dtype), lambda o: o.nbytes)
    _run(wk, x, w, bias, y, relu, residual)


def _run(
    wk: _Work,
    x: Any,
    w: Any,
    bias: Any,
    y: Any,
    relu: int,
    residual: Any = None,
    post: PostFn | None = None,
) -> None:
    p = wk.plan
    epilogue = (bias, residual, relu, post)
    if p.method is Method.POINTWISE:
        _product(wk, w, x.reshape(wk.x_shape), y.reshape(wk.y_shape), y, epilogue)
        return
    if p.method is Method.WIDE:
        _im2col(wk.interior, x, wk.cols_taps, wk.window)
        _product(wk, w, wk.cols, wk.wide, y, epilogue)
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


def _im2col(interior: Any, x: Any, cols_taps: Any, window: Any) -> None:
    """Copy X into the padded plane (and, WIDE, the taps into the columns), per channel range."""

    def copy(lo: int, hi: int) -> None:
        np.copyto(interior[:, lo:hi], x[:, lo:hi])
        if cols_taps is not None:
            np.copyto(cols_taps[:, lo:hi], window[:, lo:hi])

    parallel.split(x.shape[1], copy)


def _product(wk: _Work, w: Any, cols: Any, out: Any, y: Any, epilogue: tuple) -> None:
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
