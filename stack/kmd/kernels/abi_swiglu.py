"""SWIGLU's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported
(abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (A, the gate, then B, the linear value, of one shape:
no broadcasting) and its one output Y of that shape; ONNX's float attribute alpha as the one
float immediate (default 1.0); no grid axis (the activation runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.SWIGLU, ("A", "B"), ("Y",),
        floats=(Imm("alpha", 1.0, "the gate's Swish slope: sigmoid(alpha * A)"),),
        doc="ONNX SwiGLU: Y = A * sigmoid(alpha * A) * B, A, B and Y of one float dtype and "
        "one shape (no broadcasting); float64, rounded once to Y's dtype.",
    )
)  # fmt: skip
