"""EINSUM's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported
(abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

One or more inputs (variadic, as CONCAT's) of one dtype and one output of that dtype; the
equation, resolved by the UMD against the static shapes, is the free-length int list
``subscripts``: one label per axis of input 0, input 1, ..., then of Y (each count the operand's
rank). No grid axis (the contraction runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.EINSUM, ("X",), ("Y",), variadic=True, int_list="subscripts",
        doc="ONNX Einsum: Y = the Einstein sum of the inputs, subscripts one label (int >= 0) "
        "per axis of each input then of Y; a label on the inputs alone is summed over, a "
        "size-1 axis broadcast to its label's size; float64 (int64 for integers), written once "
        "to Y's dtype.",
    )
)  # fmt: skip
