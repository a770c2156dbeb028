"""DYNAMIC_QUANTIZE_LINEAR's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that
module is imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

The one kernel with three outputs, of two dtypes: the quantised tensor, then the scale and the
zero point it computed, each a one-element tensor (a scalar, shape ``()``, from the UMD)."""

from __future__ import annotations

from stack.kmd.kernels.abi import KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.DYNAMIC_QUANTIZE_LINEAR, ("x",), ("y", "y_scale", "y_zero_point"),
        doc="ONNX DynamicQuantizeLinear: x F32 -> y U8 of x's shape, y_scale F32 and "
        "y_zero_point U8 (one element each): y_scale = (max(0, max x) - min(0, min x)) / 255 "
        "(1/255 for an empty range), y_zero_point = saturate(round_half_even(-min(0, min x) / "
        "y_scale)), y = QUANTIZE(x, y_scale, y_zero_point).",
    )
)  # fmt: skip
