"""int8/uint8 QuantizeLinear and DequantizeLinear (per tensor or per axis) and uint8
DynamicQuantizeLinear (its scale and zero point computed from the input), any ``xp``."""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId

#: DynamicQuantizeLinear's uint8 range.
_QMAX = 255


def _along(x: Any, v: Any, axis: int) -> Any:
    if v.size == 1:
        return v.reshape(())
    shape = [1] * x.ndim
    shape[axis % x.ndim] = -1
    return v.reshape(shape)


def store_saturated(xp: Any, q: Any, y: Any) -> None:
    """Store the float ``q`` (already rounded) into the integer ``y``, clipped to ``y``'s
    range (``q`` is clipped in place)."""
    info = xp.iinfo(y.dtype)
    xp.clip(q, info.min, info.max, out=q)
    xp.copyto(y, q, casting="unsafe")


def quantize(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = saturate(round_half_even(X / scale) + zero_point)."""
    x, y = ins[0], outs[0]
    q = x.astype(xp.float32)  # a copy, worked in place: an array even when X is 0-d
    xp.divide(q, _along(x, ins[1].astype(xp.float32), ints[0]), out=q)
    xp.rint(q, out=q)
    if len(ins) > 2:
        q += _along(x, ins[2].astype(xp.float32), ints[0])
    store_saturated(xp, q, y)


def dequantize(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = (X - zero_point) * scale."""
    x, y = ins[0], outs[0]
    v = x.astype(xp.float32)
    if len(ins) > 2:
        v -= _along(x, ins[2].astype(xp.float32), ints[0])
    xp.multiply(v, _along(x, ins[1].astype(xp.float32), ints[0]), out=y, casting="unsafe")


def dynamic_quantize_linear(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX DynamicQuantizeLinear, in float32 as ONNX's reference: over the range
    [lo, hi] = [min(0, min X), max(0, max X)], y_scale = (hi - lo) / 255, or 1 / 255 when the
    range is empty (X all zeros, or no elements; onnxruntime gives 1), y_zero_point =
    saturate(round_half_even(-lo / y_scale)) and Y = QUANTIZE(X, y_scale, y_zero_point). The
    range is reduced on the device: no host round trip. Another dtype than float32 X and
    y_scale and uint8 Y and y_zero_point, a Y not of X's shape, or a y_scale or y_zero_point
    of more than one element, is a ValueError."""
    x, (y, scale, zp) = ins[0], outs
    if (x.dtype, y.dtype, scale.dtype, zp.dtype) != (xp.float32, xp.uint8, xp.float32, xp.uint8):
        raise ValueError(
            f"DynamicQuantizeLinear takes a float32 x and writes a uint8 y, a float32 y_scale "
            f"and a uint8 y_zero_point, got {x.dtype}, {y.dtype}, {scale.dtype}, {zp.dtype}"
        )
    if y.shape != x.shape or scale.size != 1 or zp.size != 1:
        raise ValueError(
            f"DynamicQuantizeLinear shapes x{x.shape} y{y.shape} y_scale{scale.shape} "
            f"y_zero_point{zp.shape} disagree"
        )
    zero = xp.zeros((), xp.float32)
    lo = xp.minimum(x.min(), zero) if x.size else zero
    hi = xp.maximum(x.max(), zero) if x.size else zero
    step = xp.where(hi == lo, xp.float32(1), hi - lo) / xp.float32(_QMAX)
    xp.copyto(scale, step.reshape(scale.shape))
    xp.copyto(zp, xp.rint(xp.clip(-lo / step, 0, _QMAX)).reshape(zp.shape), casting="unsafe")
    quantize(xp, [x, scale, zp], [y], (0,), fl)


TABLE = {
    KernelId.QUANTIZE: quantize,
    KernelId.DEQUANTIZE: dequantize,
    KernelId.DYNAMIC_QUANTIZE_LINEAR: dynamic_quantize_linear,
}
