# ruff: noqa: E501 - the case tables read best one case per line
"""The BITCAST translator: requests whose dtypes differ in width, whose shapes differ or whose
operand counts are wrong are typed errors naming the field, and an X stored in another layout
than Y's is transposed into Y's before the byte copy."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, U8, B, F, T, refused

BC = OpKind.BITCAST


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(BC, [T((3, 4))], [T((3, 4), I64)]), UnsupportedDtypeError, "outputs[0].dtype", "BITCAST reads F32 (32 bits) as I64 (64 bits): the widths must match"),
        (OpRequest.make(BC, [T((3, 4), DType.F16)], [T((3, 4), U8)]), UnsupportedDtypeError, "outputs[0].dtype", "reads F16 (16 bits) as U8 (8 bits)"),
        (OpRequest.make(BC, [T((3, 4), B)], [T((3, 4), I32)]), UnsupportedDtypeError, "outputs[0].dtype", "reads BOOL (8 bits) as I32 (32 bits)"),
        (OpRequest.make(BC, [T((3, 4))], [T((4, 3), I32)]), ShapeError, "outputs[0].shape", "BITCAST output shape is (3, 4), request says (4, 3)"),
        (OpRequest.make(BC, [T((3, 4)), T((3, 4))], [T((3, 4), I32)]), InvalidRequestError, "inputs", "BITCAST takes 1 inputs, got 2"),
        (OpRequest.make(BC, [], [T((3, 4), I32)]), InvalidRequestError, "inputs", "BITCAST takes 1 inputs, got 0"),
        (OpRequest.make(BC, [T((3, 4))], [T((3, 4), I32), T((3, 4), I32)]), InvalidRequestError, "outputs", "BITCAST takes 1 outputs, got 2"),
    ],
    ids=["wider", "narrower", "bool to int32", "output shape", "two inputs", "no input", "two outputs"],
)  # fmt: skip
def test_bad_bitcast_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    text = refused(req, err, field)
    assert message in text, text


@pytest.mark.parametrize(
    ("src", "to"),
    [(F, I32), (I32, F), (DType.F64, I64), (I64, DType.F64), (I8, U8), (U8, I8), (B, U8), (U8, B), (B, I8), (I8, B)],
    ids=lambda d: d.name,
)  # fmt: skip
def test_every_pair_of_one_width_is_one_bitcast_blob(src: DType, to: DType) -> None:
    x, y = T((2, 3), src), T((2, 3), to)
    prog = Pipeline().compile(OpRequest.make(BC, [x], [y]))
    (blob,) = [decode(b) for b in prog.patch((x.addr, y.addr))]
    assert blob.kernel_id is KernelId.BITCAST and blob.ints == () and blob.floats == ()
    assert [(p.dtype, p.shape) for p in blob.params] == [(src, (2, 3)), (to, (2, 3))]


def test_one_layout_is_copied_as_stored() -> None:
    x, y = T((1, 4, 5, 3), layout=Layout.NHWC), T((1, 4, 5, 3), I32, Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(BC, [x], [y]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, y.addr))]
    assert blob.kernel_id is KernelId.BITCAST


def test_an_nchw_x_is_transposed_into_an_nhwc_y_first() -> None:
    x, y = T((1, 3, 4, 5), layout=Layout.NCHW), T((1, 4, 5, 3), I32, Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(BC, [x], [y]))
    blobs = [decode(b) for b in prog.patch((x.addr, y.addr, *(0x9000_0000,) * len(prog.scratch)))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, KernelId.BITCAST]
    assert blobs[0].ints == (0, 2, 3, 1)
    assert [(p.dtype, p.shape) for p in blobs[1].params] == [(F, (1, 4, 5, 3)), (I32, (1, 4, 5, 3))]
