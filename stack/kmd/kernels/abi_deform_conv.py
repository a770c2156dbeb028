"""DEFORM_CONV's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

Its immediates are CONV_TRANSPOSE's (strides, pads, dilations, group) and offset_group. B and
mask are trailing optional inputs, in ONNX's order: a mask without a bias takes a zero bias."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.DEFORM_CONV, ("X", "W", "offset"), ("Y",), optional=("B", "mask"),
        ints=(
            Imm("stride_h", 1), Imm("stride_w", 1), Imm("pad_top", 0), Imm("pad_left", 0),
            Imm("pad_bottom", 0), Imm("pad_right", 0), Imm("dilation_h", 1),
            Imm("dilation_w", 1), Imm("group", 1),
            Imm("offset_group", 1, "C and offset's channels are split into this many groups"),
        ),
        doc="ONNX DeformConv, NCHW. X[N,C,H,W], W[oC,C/group,kH,kW], offset[N,og*kH*kW*2,oH,oW] "
        "(dh, dw per tap), B[oC], mask[N,og*kH*kW,oH,oW] -> Y[N,oC,oH,oW] = conv of X sampled "
        "bilinearly at each tap moved by its offset, times its mask (default 1), + B; a sample "
        "outside X is 0; oH, oW from Y (as CONV2D's).",
    )
)  # fmt: skip
