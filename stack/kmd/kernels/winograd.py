"""Conv2D by Winograd F(2x2, 3x3) (the CONV2D ABI's ``algorithm`` 1), for any ``xp``.

The compiler transforms the weights once (``U = G g G^T`` per output and input channel, stored
as ``W[4, 4, M, C]``); a call transforms the input and output only:

* the zero-bordered padded plane of X is cut into 4x4 tiles at stride 2 (a strided view, one
  copy into ``D[16, C, P]``, P = N * tiles), and ``V = (B^T (x) B^T) D`` is one GEMM with a
  16x16 matrix (the 4x4 transform ``B^T d B`` of every tile at once);
* ``M[k] = U[k] @ V[k]`` for the 16 points k: one batched matmul, 16 GEMMs of M x C by C x P
  (16 multiplications per 2x2 outputs against the direct method's 36);
* ``Y' = (A^T (x) A^T) M`` is one GEMM with a 4x16 matrix, scattered into the 2x2 outputs of
  each tile in a scratch plane, cropped into Y with the bias in the same pass, then the
  residual and ReLU.

Every buffer and view is made once per shape and thread (:class:`Work`). The input transform
splits by input channel and the rest by output channel over the launch's workers
(:mod:`stack.kmd.kernels.parallel`: the grid axis is the output channels, as for CONV2D).
The transform only holds for 3x3 kernels, stride 1, dilation 1, group 1, no fused pool; the
float32 rounding of the transforms stays within 1e-6 of the direct product's scale (the
tests compare against the direct kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from stack.kmd.kernels import parallel, scratch
from stack.kmd.kernels.elementwise import relu_

#: ``algorithm`` immediate values of the CONV2D ABI.
DIRECT, WINOGRAD_2X2_3X3 = 0, 1
_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)
#: vec(B^T d B) = kron(B^T, B^T) vec(d) for a row-major 4x4 tile d; likewise the output.
INPUT_T = np.kron(_BT, _BT)
OUTPUT_T = np.kron(_AT, _AT)


def check(x_shape: tuple, u_shape: tuple, y_shape: tuple, ints: tuple[int, ...]) -> None:
    """ValueError unless the call is one the transform holds for (see the module docstring)."""
    sh, sw, pt, pl, pb, pr, dh, dw, group = ints[:9]
    n, c, h, w = x_shape
    if (sh, sw, dh, dw, group) != (1, 1, 1, 1, 1) or (len(ints) > 10 and ints[10] > 0):
        raise ValueError("Winograd F(2x2,3x3) needs stride 1, dilation 1, group 1, no pool")
    if len(u_shape) != 4 or tuple(u_shape[:2]) != (4, 4) or u_shape[3] != c:
        raise ValueError(f"Winograd weights must be [4, 4, M, {c}], got {tuple(u_shape)}")
    out = (n, u_shape[2], h + pt + pb - 2, w + pl + pr - 2)
    if tuple(y_shape) != out or min(out[2:]) < 1:
        raise ValueError(f"Winograd output must be {out}, got {tuple(y_shape)}")


def _view(xp: Any, a: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


@dataclass(frozen=True, slots=True, eq=False)
class Work:
    """One thread's buffers and views for one shape (the plane's border zeroed once)."""

    m: int
    oh: int
    ow: int
    interior: Any  # where X goes in the padded plane
    tiles: Any  # (4, 4, C, N, tH, tW) view of the plane
    d: Any  # (16, C, P) tiles, as the copy writes them: (4, 4, C, N, tH, tW)
    d_flat: Any  # (16, C, P)
    v: Any  # (16, C, P) transformed tiles
    prod: Any  # (16, M, P)
    out: Any  # (4, M, P) transformed outputs
    scatter: Any  # (2, 2, M, N, tH, tW) view of ``full``
    full: Any  # (N, M, 2 tH, 2 tW): the outputs of every tile, cropped into Y
    in_t: Any  # 16x16 input transform in X's dtype
    out_t: Any  # 4x16 output transform
    nbytes: int


def work(xp: Any, x_shape: tuple, m: int, pads: tuple, dtype: Any) -> Work:
    """Buffers for a call on X of ``x_shape`` with M = ``m`` output channels."""
    n, c, h, w = x_shape
    pt, pl, pb, pr = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    p = n * th * tw
    plane = xp.zeros((n, c, 2 * th + 2, 2 * tw + 2), dtype)
    interior = plane[:, :, pt : pt + h, pl : pl + w]
    s = plane.strides
    tiles = _view(xp, plane, (4, 4, c, n, th, tw), (s[2], s[3], s[1], s[0], 2 * s[2], 2 * s[3]))
    d_flat = xp.empty((16, c, p), dtype)
    v = xp.empty((16, c, p), dtype)
    prod = xp.empty((16, m, p), dtype)
    out = xp.empty((4, m, p), dtype)
    full = xp.empty((n, m, 2 * th, 2 * tw), dtype)
    t = full.strides
    scatter = _view(xp, full, (2, 2, m, n, th, tw), (t[2], t[3], t[1], t[0], 2 * t[2], 2 * t[3]))
    nbytes = sum(int(a.nbytes) for a in (plane, d_flat, v, prod, out, full))
    return Work(
        m, oh, ow, interior, tiles, d_flat.reshape(4, 4, c, n, th, tw), d_flat, v, prod, out,
        scatter, full, xp.asarray(INPUT_T, dtype=dtype), xp.asarray(OUTPUT_T, dtype=dtype),
        nbytes,
    )  # fmt: skip


def _rows(a: Any, lo: int, hi: int) -> Any:
    """``a[:, lo:hi]`` of a (K, R, P) C-order buffer as a (K, (hi - lo) * P) matrix (a view:
    each row is contiguous)."""
    k, _, p = a.shape
    return a[:, lo:hi].reshape(k, (hi - lo) * p)


def run(xp: Any, wk: Work, x: Any, u: Any, bias: Any, residual: Any, y: Any, relu: int) -> None:
    """Y = act(conv3x3(X) + B + R) from the transformed weights ``u`` [4, 4, M, C]."""
    u16 = u.reshape(16, wk.m, -1)

    def transform_in(lo: int, hi: int) -> None:
        xp.copyto(wk.interior[:, lo:hi], x[:, lo:hi])
        xp.copyto(wk.d[:, :, lo:hi], wk.tiles[:, :, lo:hi])
        xp.matmul(wk.in_t, _rows(wk.d_flat, lo, hi), out=_rows(wk.v, lo, hi))

    def product(lo: int, hi: int) -> None:
        xp.matmul(u16[:, lo:hi], wk.v, out=wk.prod[:, lo:hi])
        xp.matmul(wk.out_t, _rows(wk.prod, lo, hi), out=_rows(wk.out, lo, hi))
        shape = wk.scatter.shape
        xp.copyto(wk.scatter[:, :, lo:hi], wk.out[:, lo:hi].reshape(2, 2, hi - lo, *shape[3:]))
        ys = y[:, lo:hi]
        full = wk.full[:, lo:hi, : wk.oh, : wk.ow]
        if bias is not None:
            xp.add(full, bias[lo:hi].reshape(1, -1, 1, 1), out=ys)
        else:
            xp.copyto(ys, full)
        if residual is not None:
            xp.add(ys, residual[:, lo:hi], out=ys)
        if relu:
            relu_(xp, ys, ys)

    parallel.split(x.shape[1], transform_in)
    parallel.grid(wk.m, product)


def conv2d(xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> None:
    """The Winograd CONV2D on any ``xp`` (buffers made per call; NumPy: :func:`conv2d_np`)."""
    x, u, y = ins[0], ins[1], outs[0]
    check(x.shape, u.shape, y.shape, ints)
    wk = work(xp, x.shape, u.shape[2], ints[2:6], x.dtype)
    bias = ins[2] if len(ins) > 2 else None
    run(xp, wk, x, u, bias, ins[3] if len(ins) > 3 else None, y, ints[9])


def conv2d_np(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> None:
    """The Winograd CONV2D on NumPy with this thread's scratch for the shape (contiguous
    float operands of one dtype)."""
    x, u, y = ins[0], ins[1], outs[0]
    key = ("winograd", x.shape, u.shape, y.shape, ints[:11], x.dtype.char)
    wk = scratch.get(key)
    if wk is None:
        check(x.shape, u.shape, y.shape, ints)
        wk = work(np, x.shape, u.shape[2], ints[2:6], x.dtype)
        scratch.put(key, wk, wk.nbytes)
    bias = ins[2] if len(ins) > 2 else None
    run(np, wk, x, u, bias, ins[3] if len(ins) > 3 else None, y, ints[9])
