"""Tensor descriptors for the translator tests, each at an address of its own, and the check
that a request is refused."""

from __future__ import annotations

import pytest

from stack.umd import DType, Layout, OpRequest, TensorDesc
from stack.umd.pipeline import Pipeline

F, I8, U8, I32 = DType.F32, DType.I8, DType.U8, DType.I32
I64, B = DType.I64, DType.BOOL
_addr = iter(range(0x1_0000_0000, 1 << 60, 0x10000))


def T(shape: tuple[int, ...], dtype: DType = F, layout: Layout = Layout.ANY) -> TensorDesc:
    return TensorDesc(next(_addr), shape, dtype, layout)


def refused(req: OpRequest, err: type[Exception], field: str) -> str:
    """The message of the error compiling ``req`` raises, which must be of type ``err`` exactly
    and name the request field ``field``."""
    with pytest.raises(err) as info:
        Pipeline().compile(req)
    assert type(info.value) is err
    assert getattr(info.value, "field", None) == field, info.value
    return str(info.value)
