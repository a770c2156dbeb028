"""The integer convolutions' ABIs, CONV_INTEGER's and QLINEARCONV's, registered into
:data:`stack.kmd.kernels.abi.ABIS` when that module is imported (abi.py is at its 300 lines);
the conventions are :mod:`stack.kmd.kernels.abi`'s.

Their immediates are CONV_TRANSPOSE's (strides, pads, dilations, group). CONV_INTEGER's zero
points are trailing optional inputs, in ONNX's order: a w_zero_point without an x_zero_point
takes a zero x_zero_point before it (the importer gives one). QLINEARCONV's inputs are ONNX's,
in its order, as QLINEARMATMUL's: eight required, then the optional bias."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

#: The convolution's window, as CONV_TRANSPOSE's ints.
_WINDOW = (
    Imm("stride_h", 1), Imm("stride_w", 1), Imm("pad_top", 0), Imm("pad_left", 0),
    Imm("pad_bottom", 0), Imm("pad_right", 0), Imm("dilation_h", 1), Imm("dilation_w", 1),
    Imm("group", 1),
)  # fmt: skip

register(
    KernelAbi(
        KernelId.CONV_INTEGER, ("x", "w"), ("y",), optional=("x_zero_point", "w_zero_point"),
        ints=_WINDOW,
        doc="ONNX ConvInteger, NCHW. x[N,C,H,W] and w[M,C/group,kH,kW] (I8/U8 each), "
        "x_zero_point (one element, x's dtype), w_zero_point (one element or M, w's dtype) -> "
        "y[N,M,oH,oW] I32 = conv(x - x_zero_point, w - w_zero_point), exact (int32 "
        "accumulation); the padding is zeros of x - x_zero_point; oH, oW from y (as CONV2D's).",
    )
)  # fmt: skip

register(
    KernelAbi(
        KernelId.QLINEARCONV,
        ("x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
         "y_zero_point"),
        ("y",), optional=("B",), ints=_WINDOW,
        doc="ONNX QLinearConv, NCHW, inputs in ONNX order. x[N,C,H,W] and w[M,C/group,kH,kW] "
        "(I8/U8 each), the scales F32 (x's and y's one element, w's one or M), the zero points "
        "of x's, w's and y's dtypes (w's one element or M, the others one), B[M] I32 -> "
        "y[N,M,oH,oW] I8/U8 = saturate(round_half_even((conv(x - x_zero_point, w - "
        "w_zero_point) + B) * x_scale * w_scale / y_scale) + y_zero_point): int32 "
        "accumulation, requantised in float32 as QLINEARMATMUL; oH, oW from y (as CONV2D's).",
    )
)  # fmt: skip
