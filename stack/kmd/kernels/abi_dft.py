"""DFT's and STFT's ABIs, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's input and output in ONNX's names (input [..., 1 or 2], output [..., 1 or 2]); ONNX's int
attributes inverse and onesided, and its axis and dft_length inputs — constants the compiler
has resolved (axis non-negative, dft_length its default where the model gives none) — as the
four int immediates, dft_length required; no grid axis (the transform runs whole). STFT takes
ONNX's signal and optional window, and its frame_step and frame_length inputs — constants the
compiler has resolved (frame_length its default where the model gives none) — and its onesided
attribute as three int immediates, all required."""

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
register(
    KernelAbi(
        KernelId.STFT, ("signal",), ("output",),
        optional=("window",),
        ints=(
            Imm("frame_step", None, "samples between successive frames, >= 1"),
            Imm("frame_length", None, "L: points per frame and per DFT, 1..N"),
            Imm("onesided", None, "1: the first L // 2 + 1 points of each frame's DFT"),
        ),
        doc="ONNX STFT: signal [B, N, 1 (real) or 2 (complex)], window [L] (ones when absent) "
        "-> output [B, (N - L) // frame_step + 1, L // 2 + 1 or L, 2] of its dtype: the "
        "forward DFT of each windowed frame, in DFT's precision, rounded once.",
    )
)  # fmt: skip
