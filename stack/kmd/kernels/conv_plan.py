"""Geometry of the NumPy Conv2D: a plan per shape (shared by all threads) and each thread's
buffers and views for it, built once (see :mod:`stack.kmd.kernels.conv_np` for how a call
uses them).

Methods, chosen by shape:

* ``POINTWISE`` (1x1, stride 1, no padding): the matmul reads X itself;
* ``WIDE`` (stride 1, while Wp <= ``WIDE_WASTE`` * oW and the waste is cheap, see
  ``WIDE_MACS``): tap (i, j) of channel c is the
  contiguous run of ``oH * Wp`` elements of the zero-bordered padded plane starting at
  ``c, i*dH, j*dW``; one copy of all taps, a product Wp/oW wider than needed, cropped;
* ``STRIDED`` (stride > 1): one copy of a strided window view (N, C, kH, kW, oH, oW) of X or
  of its padded plane into the column matrix (measured 2.6-2.9x faster than a ``take`` with a
  flat index on ResNet-50's strided layers: 3x224x224 7x7/2 0.69 ms against 1.99 ms,
  128x56x56 3x3/2 0.25 ms against 0.71 ms, 256x56x56 1x1/2 0.056 ms against 0.110 ms);
* ``GATHER`` (stride 1 otherwise: narrow planes, where WIDE wastes too much): one ``take``
  with a cached flat index (faster than the window copy on 4x4..8x8 planes).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

FAST = (np.dtype(np.float32), np.dtype(np.float64))
#: WIDE computes Wp/oW times the needed columns; past this factor GATHER is used instead.
WIDE_WASTE = 1.3
#: WIDE saves a copy per column but spends M * (Wp - oW) / oW multiply-adds per needed column on
#: the waste (M: output channels per group); past this many GATHER is used instead. One thread,
#: float32, 3x3 pad 1 (WIDE against GATHER): 32x8x8 20.6 against 24.9 us (8), 128x28x28 kept
#: WIDE (9.1), 64x7x7 55 against 51 us (18), 128x8x8 206 against 190 us (32), 512x7x7 2.89
#: against 2.17 ms (146: ResNet-50's last stage).
WIDE_MACS = 12


class Method(enum.Enum):
    """How a plan lays out the column matrix."""

    POINTWISE = "pointwise"
    WIDE = "wide"
    STRIDED = "strided"
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
    strides: tuple[int, int]  # sH, sW
    index: np.ndarray | None  # GATHER: flat index (C*kH*kW, oH*oW) into one image's planes


def _choose(x_shape: tuple[int, ...], w_shape: tuple[int, ...], ints: tuple[int, ...]) -> Method:
    sh, sw, pt, pl, pb, pr = ints[:6]
    kh, kw = w_shape[2], w_shape[3]
    w = x_shape[3]
    ow = (w + pl + pr - ints[7] * (kw - 1) - 1) // sw + 1
    if kh == kw == 1 and sh == sw == 1 and pt == pl == pb == pr == 0:
        return Method.POINTWISE
    if sh == sw == 1:
        wp, m = w + pl + pr, w_shape[0] // max(1, ints[8])
        cheap = wp <= WIDE_WASTE * ow and m * (wp - ow) <= WIDE_MACS * ow
        return Method.WIDE if cheap else Method.GATHER
    return Method.STRIDED


def build_plan(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    y_shape: tuple[int, ...],
    ints: tuple[int, ...],
    method: Method | None = None,
) -> ConvPlan:
    """The plan of a convolution; ``method`` forces one (else chosen by shape). ValueError when
    the shapes disagree or the forced method does not apply."""
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
        method = _choose(x_shape, w_shape, ints)
    if method is Method.POINTWISE and not (kh == kw == 1 and sh == sw == 1 and (oh, ow) == (h, w)):
        raise ValueError("a pointwise plan needs a 1x1 stride-1 convolution without padding")
    index = None
    cols = oh * ow
    if method is Method.WIDE:
        if (sh, sw) != (1, 1):
            raise ValueError("a wide plan needs stride 1")
        # the last tap's run reaches (kW-1)*dW elements past the last used row: spare rows
        spare = -(-((kw - 1) * dw) // wp)
        hp = max(hp, dh * (kh - 1) + oh + spare)
        cols = oh * wp
    elif method is Method.GATHER:
        ci, ki, kj, oi, oj = np.ogrid[:c, :kh, :kw, :oh, :ow]
        flat = ci * (hp * wp) + (ki * dh + oi * sh) * wp + (kj * dw + oj * sw)
        index = np.ascontiguousarray(flat.reshape(c * kh * kw, oh * ow), dtype=np.intp)
        index.flags.writeable = False
    padded = method is Method.WIDE or (hp, wp) != (h, w)
    return ConvPlan(
        method, (n, c, h, w), m, group, cg * kh * kw, oh, ow,
        (n, c, hp, wp) if padded and method is not Method.POINTWISE else None,
        pt, pl, cols, (kh, kw, dh, dw), (sh, sw), index,
    )  # fmt: skip


def window(p: ConvPlan, plane: Any) -> Any:
    """STRIDED: the (N, C, kH, kW, oH, oW) tap view of ``plane`` (X or its padded copy, C
    order)."""
    kh, kw, dh, dw = p.taps
    sh, sw = p.strides
    s = plane.strides
    return np.ndarray(
        (plane.shape[0], plane.shape[1], kh, kw, p.oh, p.ow), plane.dtype, buffer=plane,
        strides=(s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Work:
    """One thread's buffers for one plan, and every view a call needs, made once."""

    plan: ConvPlan
    w_shape: tuple[int, ...]  # W as the matmul's left operand
    y_shape: tuple[int, ...]  # Y as the matmul's output (POINTWISE, STRIDED, GATHER)
    x_shape: tuple[int, ...]  # X as the matmul's right operand (POINTWISE) / take source
    interior: Any  # where X is copied in the padded plane (None: no padded copy)
    source: Any  # GATHER: what ``take`` reads (None: X itself, reshaped to x_shape)
    take_out: Any  # GATHER: the column matrix as ``take`` writes it
    window: Any  # WIDE, padded STRIDED: the tap view of the padded plane
    cols_taps: Any  # WIDE, STRIDED: the column matrix as (N, C, kH, kW, ...)
    cols: Any  # the matmul's right operand (WIDE, STRIDED, GATHER)
    wide: Any  # WIDE: the matmul's output
    crop: Any  # WIDE: the valid columns of ``wide`` as (N, M, oH, oW)
    nbytes: int


def work(p: ConvPlan, dtype: np.dtype) -> Work:
    """This thread's buffers and views for ``p`` (the padded plane zeroed once)."""
    n, c, h, w = p.x_shape
    kh, kw, dh, dw = p.taps
    m, group = p.m, p.group
    single = n == 1 and group == 1
    w_shape = (m, p.k) if single else (group, m // group, p.k)
    y_shape = (m, p.cols) if single else (n, group, m // group, p.cols)
    interior = source = take_out = view = cols_taps = cols = wide = crop = pad = None
    x_shape: tuple[int, ...] = (c, p.cols) if single else (n, group, c // group, p.cols)
    nbytes = 0
    if p.method is Method.POINTWISE:
        return Work(p, w_shape, y_shape, x_shape, *(None,) * 8, 0)
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
        view = np.ndarray(
            (n, c, kh, kw, p.cols), dtype, buffer=source,
            strides=(source.strides[0], plane, dh * wp * item, dw * item, item),
        )  # fmt: skip
        cols_taps = buf.reshape(n, c, kh, kw, p.cols)
        out = np.empty((n, group, m // group, p.cols), dtype)
        nbytes += out.nbytes
        wide = out[0, 0] if single else out
        crop = out.reshape(n, m, p.oh, wp)[:, :, :, : p.ow]
    elif p.method is Method.STRIDED:
        cols_taps = buf.reshape(n, c, kh, kw, p.oh, p.ow)
        view = window(p, pad) if pad is not None else None
        source = None
    else:
        x_shape = (c * h * w,) if n == 1 else (n, c * h * w)
        if source is not None and n == 1:
            source = source[0]
        take_out = buf.reshape(-1, p.cols) if n == 1 else buf.reshape(n, -1, p.cols)
    return Work(
        p, w_shape, y_shape, x_shape, interior, source, take_out, view, cols_taps, cols, wide,
        crop, nbytes,
    )  # fmt: skip
