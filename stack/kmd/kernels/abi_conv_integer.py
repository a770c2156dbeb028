"""CONV_INTEGER's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

Its immediates are CONV_TRANSPOSE's (strides, pads, dilations, group). The zero points are
trailing optional inputs, in ONNX's order: a w_zero_point without an x_zero_point takes a zero
x_zero_point before it (the importer gives one)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.CONV_INTEGER, ("x", "w"), ("y",), optional=("x_zero_point", "w_zero_point"),
        ints=(
            Imm("stride_h", 1), Imm("stride_w", 1), Imm("pad_top", 0), Imm("pad_left", 0),
            Imm("pad_bottom", 0), Imm("pad_right", 0), Imm("dilation_h", 1),
            Imm("dilation_w", 1), Imm("group", 1),
        ),
        doc="ONNX ConvInteger, NCHW. x[N,C,H,W] and w[M,C/group,kH,kW] (I8/U8 each), "
        "x_zero_point (one element, x's dtype), w_zero_point (one element or M, w's dtype) -> "
        "y[N,M,oH,oW] I32 = conv(x - x_zero_point, w - w_zero_point), exact (int32 "
        "accumulation); the padding is zeros of x - x_zero_point; oH, oW from y (as CONV2D's).",
    )
)  # fmt: skip
