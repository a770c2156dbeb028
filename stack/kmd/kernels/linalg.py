"""GEMM (fused epilogue), batched MatMul, int8 GEMM and QLinearMatMul, written once for any
array module ``xp`` (NumPy or CuPy): the matrix products go to BLAS / cuBLAS via ``matmul``
writing straight into the output view.
"""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.elementwise import relu_
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.quant import store_saturated


def gemm(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = act(alpha * op(A) @ op(B) + beta * C)."""
    trans_a, trans_b, relu = ints[0], ints[1], ints[2]
    alpha, beta = fl[0], fl[1]
    a = ins[0].T if trans_a else ins[0]
    b = ins[1].T if trans_b else ins[1]
    y = outs[0]
    xp.matmul(a, b, out=y)
    if alpha != 1.0:
        xp.multiply(y, alpha, out=y, casting="unsafe")
    if len(ins) > 2 and beta != 0.0:
        c = ins[2] if beta == 1.0 else ins[2] * beta
        xp.add(y, c, out=y, casting="unsafe")
    if relu:
        relu_(xp, y, y)


def matmul(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """numpy.matmul semantics (batched, broadcast)."""
    a, b, y = ins[0], ins[1], outs[0]
    if a.ndim >= 2 and b.ndim >= 2 and y.dtype == a.dtype:
        xp.matmul(a, b, out=y)
    else:
        xp.copyto(y, xp.matmul(a, b).reshape(y.shape), casting="unsafe")


def _zero_point(xp: Any, zp: Any | None, axis_len_shape: tuple[int, ...]) -> Any:
    if zp is None:
        return 0.0
    z = zp.astype(xp.float64)
    return z.reshape(()) if z.size == 1 else z.reshape(axis_len_shape)


def gemm_i8(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """(A - a_zp) @ (B - b_zp) accumulated exactly (float64 BLAS is exact below 2**53) -> I32."""
    a, b, extra = ins[0], ins[1], list(ins[2:])
    has_a, has_b = ints[0], ints[1]
    if has_a < 0 and has_b < 0:
        has_a, has_b = int(len(extra) >= 1), int(len(extra) >= 2)
    a_zp = extra.pop(0) if has_a == 1 else None
    b_zp = extra.pop(0) if has_b == 1 else None
    af = a.astype(xp.float64) - _zero_point(xp, a_zp, (-1, 1))
    bf = b.astype(xp.float64) - _zero_point(xp, b_zp, (1, -1))
    xp.copyto(outs[0], xp.matmul(af, bf), casting="unsafe")


def _scale(xp: Any, s: Any, shape: tuple[int, ...]) -> Any:
    s = s.astype(xp.float32)
    return s.reshape(()) if s.size == 1 else s.reshape(shape)


def qlinearmatmul(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX QLinearMatMul: int32 accumulation, requantised in float32 with round-half-even."""
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = ins
    y = outs[0]
    acc = xp.matmul(
        a.astype(xp.float64) - _zero_point(xp, a_zp, (-1, 1)),
        b.astype(xp.float64) - _zero_point(xp, b_zp, (1, -1)),
    ).astype(xp.float32)
    mult = _scale(xp, a_s, (-1, 1)) * _scale(xp, b_s, (1, -1)) / _scale(xp, y_s, (1, -1))
    q = xp.rint(acc * mult) + y_zp.astype(xp.float32).reshape(() if y_zp.size == 1 else (1, -1))
    store_saturated(xp, q, y)


TABLE = {
    KernelId.GEMM: gemm,
    KernelId.MATMUL: matmul,
    KernelId.GEMM_I8: gemm_i8,
    KernelId.QLINEARMATMUL: qlinearmatmul,
}
