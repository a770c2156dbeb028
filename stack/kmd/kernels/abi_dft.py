"""DFT's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported
(abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's input and output in ONNX's names (input [..., 1 or 2], output [..., 1 or 2]); ONNX's int
attributes inverse and onesided, and its axis and dft_length inputs — constants the compiler
has resolved (axis non-negative, dft_length its default where the model gives none) — as the
four int immediates, dft_length required; no grid axis (the transform runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.DFT, ("input",), ("output",),
        ints=(
            Imm("axis", 1, "the signal axis, 0..rank-2 (never the pair's)"),
            Imm("inverse", 0, "1: the inverse transform, scaled by 1 / dft_length"),
            Imm("onesided", 0, "1: RFFT (forward) or IRFFT (inverse)"),
            Imm("dft_length", None, "points transformed: the signal cropped or zero-padded"),
        ),
        doc="ONNX DFT: input [..., n, ..., 1 (real) or 2 (complex)] -> output [..., M, ..., 2] "
        "of its dtype, M = dft_length, or dft_length // 2 + 1 for RFFT; IRFFT's output "
        "[..., dft_length, ..., 1] (real); complex128, rounded once.",
    )
)  # fmt: skip
