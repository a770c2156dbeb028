"""DET's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported
(abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

One float input, the batch of trailing square matrices, and one output of its batch shape and
dtype, which the kernel reads its shape from: no immediates, no grid axis (the batched
factorisation runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.DET, ("X",), ("Y",),
        doc="ONNX Det: Y[*] = det(X[*, M, M]) per trailing square matrix, of X's float dtype "
        "(computed in float64, rounded once); 1 for an empty matrix, NaN for one holding a NaN.",
    )
)  # fmt: skip
