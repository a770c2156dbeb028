from __future__ import annotations

import pytest

from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc


def test_byte_size_is_shape_times_itemsize() -> None:
    assert TensorDesc(0, (2, 3), DType.F32).byte_size == 24
    assert TensorDesc(0, (5,), DType.I8).byte_size == 5
    assert TensorDesc(0, (), DType.F64).byte_size == 8
    assert TensorDesc(0, (4, 0), DType.F16).byte_size == 0


def test_make_sorts_and_normalises_attrs() -> None:
    x = TensorDesc(0, (1, 3, 4, 4), DType.F32, Layout.NCHW)
    r = OpRequest.make(OpKind.MAXPOOL, [x], [x], strides=[1, 1], kernel_shape=(1, 1), ceil=True)
    assert r.attrs == (("ceil", 1), ("kernel_shape", (1, 1)), ("strides", (1, 1)))
    assert r == OpRequest.make(
        OpKind.MAXPOOL, (x,), (x,), ceil=1, kernel_shape=[1, 1], strides=(1, 1)
    )
    assert hash(r) == hash(
        OpRequest.make(OpKind.MAXPOOL, [x], [x], ceil=1, kernel_shape=(1, 1), strides=(1, 1))
    )


def test_make_rejects_unrepresentable_attrs() -> None:
    with pytest.raises(TypeError):
        OpRequest.make(OpKind.RELU, [], [], bad={"a": 1})


def test_opkind_values_match_kernel_ids_where_one_to_one() -> None:
    from stack.kmd.kernels.ids import KernelId

    for op in OpKind:
        if op is not OpKind.MATMUL_INTEGER:
            assert KernelId[op.name] == op.value
    assert OpKind.MATMUL_INTEGER.value == KernelId.GEMM_I8
