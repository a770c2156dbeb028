"""int8/uint8 QuantizeLinear and DequantizeLinear (per tensor or per axis), any ``xp``."""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId


def _along(x: Any, v: Any, axis: int) -> Any:
    if v.size == 1:
        return v.reshape(())
    shape = [1] * x.ndim
    shape[axis % x.ndim] = -1
    return v.reshape(shape)


def quantize(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = saturate(round_half_even(X / scale) + zero_point)."""
    x, y = ins[0], outs[0]
    q = xp.rint(x.astype(xp.float32) / _along(x, ins[1].astype(xp.float32), ints[0]))
    if len(ins) > 2:
        q += _along(x, ins[2].astype(xp.float32), ints[0])
    info = xp.iinfo(y.dtype)
    xp.clip(q, info.min, info.max, out=q)
    xp.copyto(y, q, casting="unsafe")


def dequantize(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = (X - zero_point) * scale."""
    x, y = ins[0], outs[0]
    v = x.astype(xp.float32)
    if len(ins) > 2:
        v -= _along(x, ins[2].astype(xp.float32), ints[0])
    xp.multiply(v, _along(x, ins[1].astype(xp.float32), ints[0]), out=y, casting="unsafe")


TABLE = {KernelId.QUANTIZE: quantize, KernelId.DEQUANTIZE: dequantize}
