from __future__ import annotations

import pytest

from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.errors import AddressError, InvalidRequestError, UnknownOpError
from stack.umd.validate import check_addresses, check_structure

F = DType.F32


def _req(*inputs: TensorDesc, out: TensorDesc | None = None, op: object = OpKind.RELU) -> OpRequest:
    o = out or TensorDesc(0, (2, 2), F)
    return OpRequest(op, tuple(inputs), (o,))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("desc", "field"),
    [
        (TensorDesc(0, (2, -1), F), "inputs[0].shape"),
        (TensorDesc(0, (2, 2.0), F), "inputs[0].shape"),  # type: ignore[arg-type]
        (TensorDesc(0, (1,) * 9, F), "inputs[0].shape"),
        (TensorDesc(0, (2, 2), 1), "inputs[0].dtype"),  # type: ignore[arg-type]
        (TensorDesc(0, (2, 2), F, 7), "inputs[0].layout"),  # type: ignore[arg-type]
        (TensorDesc(-1, (2, 2), F), "inputs[0].addr"),
        (TensorDesc(0, (2, 2), F, Layout.NHWC), "inputs[0].layout"),  # NHWC needs 4-D
        (TensorDesc(0, (1 << 40, 1 << 40), F), "inputs[0].shape"),
    ],
)
def test_illegal_descriptors_name_their_field(desc: TensorDesc, field: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        check_structure(_req(desc))
    assert info.value.field == field


def test_unknown_op_lists_the_known_ones() -> None:
    with pytest.raises(UnknownOpError) as info:
        check_structure(_req(TensorDesc(0, (2, 2), F), op=99))
    assert info.value.field == "op" and "GEMM" in str(info.value)


def test_no_output_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as info:
        check_structure(OpRequest(OpKind.RELU, (TensorDesc(0, (2,), F),), ()))
    assert info.value.field == "outputs"


def test_addresses_must_lie_inside_one_allocation() -> None:
    allocs = {4096: 64}

    def contains(addr: int, n: int) -> bool:
        return any(b <= addr and addr + n <= b + s for b, s in allocs.items())

    ok = _req(TensorDesc(4096, (4, 4), F), out=TensorDesc(4096, (16,), F))
    check_addresses(ok, contains)
    over = _req(TensorDesc(4096 + 4, (4, 4), F))  # 64 bytes from +4: one past the end
    with pytest.raises(AddressError) as info:
        check_addresses(over, contains)
    assert info.value.field == "inputs[0].addr"
    outside = _req(TensorDesc(4096, (2,), F), out=TensorDesc(0, (2,), F))
    with pytest.raises(AddressError) as info:
        check_addresses(outside, contains)
    assert info.value.field == "outputs[0].addr"
