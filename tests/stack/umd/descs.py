"""Tensor descriptors for the translator tests: each at an address of its own."""

from __future__ import annotations

from stack.umd import DType, Layout, TensorDesc

F, I8, U8, I32 = DType.F32, DType.I8, DType.U8, DType.I32
I64, B = DType.I64, DType.BOOL
_addr = iter(range(0x1_0000_0000, 1 << 60, 0x10000))


def T(shape: tuple[int, ...], dtype: DType = F, layout: Layout = Layout.ANY) -> TensorDesc:
    return TensorDesc(next(_addr), shape, dtype, layout)
