"""The one table of kernel ids and of the UMD op kinds that name them.

Each row is a kernel id (blob ABI), its KMD name and the name of the UMD request op that
reaches it (the same except MATMUL_INTEGER, whose kernel is GEMM_I8). ``scripts/gen_op_codes.py``
writes from it, between ``BEGIN GENERATED`` / ``END GENERATED`` markers: ``KernelId``
(:mod:`stack.kmd.kernels.ids`), the UMD's ``OpKind`` (:mod:`stack.umd.ops`), the C header's
``REFSTACK_KERNEL_*`` and ``contracts/umd.proto``'s ``OpType``; a test keeps them generated.
Rows are only ever appended: a value is never reused.
"""

from __future__ import annotations

from typing import NamedTuple


class KernelRow(NamedTuple):
    """One kernel: its id, its KMD name, the UMD op kind naming it."""

    value: int
    kernel: str
    op: str


ROWS: tuple[KernelRow, ...] = (
    KernelRow(1, "GEMM", "GEMM"),
    KernelRow(2, "MATMUL", "MATMUL"),
    KernelRow(3, "CONV2D", "CONV2D"),
    KernelRow(4, "BATCHNORM", "BATCHNORM"),
    KernelRow(5, "ADD", "ADD"),
    KernelRow(6, "MUL", "MUL"),
    KernelRow(7, "RELU", "RELU"),
    KernelRow(8, "SOFTMAX", "SOFTMAX"),
    KernelRow(9, "LAYERNORM", "LAYERNORM"),
    KernelRow(10, "MAXPOOL", "MAXPOOL"),
    KernelRow(11, "AVGPOOL", "AVGPOOL"),
    KernelRow(12, "GLOBALAVGPOOL", "GLOBALAVGPOOL"),
    KernelRow(13, "QUANTIZE", "QUANTIZE"),
    KernelRow(14, "DEQUANTIZE", "DEQUANTIZE"),
    KernelRow(15, "GEMM_I8", "MATMUL_INTEGER"),
    KernelRow(16, "QLINEARMATMUL", "QLINEARMATMUL"),
    KernelRow(17, "TRANSPOSE", "TRANSPOSE"),
    KernelRow(18, "CONCAT", "CONCAT"),
    KernelRow(19, "COPY", "COPY"),
    KernelRow(20, "SUB", "SUB"),
    KernelRow(21, "DIV", "DIV"),
    KernelRow(22, "FILL", "FILL"),
    KernelRow(23, "UNARY", "UNARY"),
    KernelRow(24, "BINARY", "BINARY"),
    KernelRow(25, "WHERE", "WHERE"),
    KernelRow(26, "CAST", "CAST"),
    KernelRow(27, "REDUCE", "REDUCE"),
    KernelRow(28, "ARG_REDUCE", "ARG_REDUCE"),
    KernelRow(29, "CUMSUM", "CUMSUM"),
    KernelRow(30, "TOPK", "TOPK"),
    KernelRow(31, "GATHER", "GATHER"),
    KernelRow(32, "GATHER_ELEMENTS", "GATHER_ELEMENTS"),
    KernelRow(33, "SLICE", "SLICE"),
    KernelRow(34, "PAD", "PAD"),
    KernelRow(35, "EXPAND", "EXPAND"),
    KernelRow(36, "TILE", "TILE"),
    KernelRow(37, "GATHER_ND", "GATHER_ND"),
    KernelRow(38, "CONV_TRANSPOSE", "CONV_TRANSPOSE"),
    KernelRow(39, "SCATTER_ND", "SCATTER_ND"),
    KernelRow(40, "SCATTER_ELEMENTS", "SCATTER_ELEMENTS"),
    KernelRow(41, "MAXUNPOOL", "MAXUNPOOL"),
    KernelRow(42, "GLOBALLPPOOL", "GLOBALLPPOOL"),
    KernelRow(43, "MAXROIPOOL", "MAXROIPOOL"),
    KernelRow(44, "REVERSE_SEQUENCE", "REVERSE_SEQUENCE"),
    KernelRow(45, "ROIALIGN", "ROIALIGN"),
    KernelRow(46, "GRID_SAMPLE", "GRID_SAMPLE"),
    KernelRow(47, "TENSOR_SCATTER", "TENSOR_SCATTER"),
    KernelRow(48, "COL2IM", "COL2IM"),
    KernelRow(49, "AFFINE_GRID", "AFFINE_GRID"),
    KernelRow(50, "DEFORM_CONV", "DEFORM_CONV"),
    KernelRow(51, "CENTER_CROP_PAD", "CENTER_CROP_PAD"),
    KernelRow(52, "DYNAMIC_QUANTIZE_LINEAR", "DYNAMIC_QUANTIZE_LINEAR"),
    KernelRow(53, "CONV_INTEGER", "CONV_INTEGER"),
    KernelRow(54, "QLINEARCONV", "QLINEARCONV"),
    KernelRow(55, "BITCAST", "BITCAST"),
    KernelRow(56, "DET", "DET"),
    KernelRow(57, "NEGATIVE_LOG_LIKELIHOOD_LOSS", "NEGATIVE_LOG_LIKELIHOOD_LOSS"),
    KernelRow(58, "SOFTMAX_CROSS_ENTROPY_LOSS", "SOFTMAX_CROSS_ENTROPY_LOSS"),
    KernelRow(59, "ROTARY_EMBEDDING", "ROTARY_EMBEDDING"),
    KernelRow(60, "EINSUM", "EINSUM"),
    KernelRow(61, "SWIGLU", "SWIGLU"),
    KernelRow(62, "CAUSAL_CONV_WITH_STATE", "CAUSAL_CONV_WITH_STATE"),
    KernelRow(63, "DFT", "DFT"),
    KernelRow(64, "STFT", "STFT"),
    KernelRow(65, "ATTENTION", "ATTENTION"),
    KernelRow(66, "RNN", "RNN"),
    KernelRow(67, "GRU", "GRU"),
    KernelRow(68, "LINEAR_ATTENTION", "LINEAR_ATTENTION"),
    KernelRow(69, "LSTM", "LSTM"),
)
