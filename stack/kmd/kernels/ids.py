"""Kernel identifiers: one per kernel of the library. Values are ABI (blob header ``kernel_id``).

The same values appear in the C header as ``REFSTACK_KERNEL_*``. What each kernel expects
(tensor parameters in order, meaning of every int and float immediate) is its
:class:`stack.kmd.kernels.abi.KernelAbi`, kept in :mod:`stack.kmd.kernels.abi`.
"""

from __future__ import annotations

import enum


class KernelId(enum.IntEnum):
    """One id per kernel. Never renumber: blobs and the C header carry these values."""

    GEMM = 1
    MATMUL = 2
    CONV2D = 3
    BATCHNORM = 4
    ADD = 5
    MUL = 6
    RELU = 7
    SOFTMAX = 8
    LAYERNORM = 9
    MAXPOOL = 10
    AVGPOOL = 11
    GLOBALAVGPOOL = 12
    QUANTIZE = 13
    DEQUANTIZE = 14
    GEMM_I8 = 15
    QLINEARMATMUL = 16
    TRANSPOSE = 17
    CONCAT = 18
    COPY = 19
    SUB = 20
    DIV = 21
    FILL = 22
    UNARY = 23
    BINARY = 24
    WHERE = 25
    CAST = 26
    REDUCE = 27
    ARG_REDUCE = 28
    CUMSUM = 29
    TOPK = 30
    GATHER = 31
    GATHER_ELEMENTS = 32
    SLICE = 33
    PAD = 34
    EXPAND = 35
    TILE = 36
