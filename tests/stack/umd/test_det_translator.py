# ruff: noqa: E501 - the case tables read best one case per line
"""The DET translator: requests of another dtype, a rank below 2, trailing axes that differ, an
output of another shape or dtype, or the wrong operand counts are typed errors naming the field;
a good one is one DET blob without immediates on X and Y as stored, whatever X's layout."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, I64, B, F, T, refused

DET = OpKind.DET
F16, F64 = DType.F16, DType.F64


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(DET, [T((3, 3), I32)], [T((), I32)]), UnsupportedDtypeError, "inputs[0].dtype", "DET does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(DET, [T((2, 2), I64)], [T((), I64)]), UnsupportedDtypeError, "inputs[0].dtype", "DET does not take I64"),
        (OpRequest.make(DET, [T((2, 2), B)], [T((), B)]), UnsupportedDtypeError, "inputs[0].dtype", "DET does not take BOOL"),
        (OpRequest.make(DET, [T((2, 3, 3))], [T((2,), F64)]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F64, expected F32"),
        (OpRequest.make(DET, [T((2, 3, 3), F16)], [T((2,))]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F32, expected F16"),
        (OpRequest.make(DET, [T((4,))], [T(())]), ShapeError, "inputs[0].shape", "DET takes X of shape [*, M, M], got (4,)"),
        (OpRequest.make(DET, [T(())], [T(())]), ShapeError, "inputs[0].shape", "got ()"),
        (OpRequest.make(DET, [T((2, 3, 4))], [T((2,))]), ShapeError, "inputs[0].shape", "got (2, 3, 4)"),
        (OpRequest.make(DET, [T((2, 3, 3))], [T((3,))]), ShapeError, "outputs[0].shape", "DET output shape is (2,), request says (3,)"),
        (OpRequest.make(DET, [T((3, 3))], [T((1,))]), ShapeError, "outputs[0].shape", "DET output shape is (), request says (1,)"),
        (OpRequest.make(DET, [T((3, 3)), T((3, 3))], [T(())]), InvalidRequestError, "inputs", "DET takes 1 inputs, got 2"),
        (OpRequest.make(DET, [], [T(())]), InvalidRequestError, "inputs", "DET takes 1 inputs, got 0"),
        (OpRequest.make(DET, [T((3, 3))], [T(()), T(())]), InvalidRequestError, "outputs", "DET takes 1 outputs, got 2"),
    ],
    ids=["int32", "int64", "bool", "wider output", "float16 to float32", "rank 1", "rank 0",
         "not square", "batch", "scalar", "two inputs", "no input", "two outputs"],
)  # fmt: skip
def test_bad_det_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("x", "y"),
    [((3, 3), ()), ((5, 2, 2), (5,)), ((2, 3, 4, 4), (2, 3)), ((1, 1), ()), ((3, 0, 0), (3,)), ((0, 6, 6), (0,))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_batch_is_one_det_blob(
    dtype: DType, x: tuple[int, ...], y: tuple[int, ...]
) -> None:
    xd, yd = T(x, dtype), T(y, dtype)
    prog = Pipeline().compile(OpRequest.make(DET, [xd], [yd]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((xd.addr, yd.addr))]
    assert blob.kernel_id is KernelId.DET and blob.ints == () and blob.floats == ()
    assert [(p.dtype, p.shape) for p in blob.params] == [(dtype, x), (dtype, y)]


@pytest.mark.parametrize("layout", [Layout.NCHW, Layout.NHWC])
def test_a_4d_x_is_taken_as_stored_whatever_its_layout(layout: Layout) -> None:
    """Like MATMUL's operands: no conversion, the trailing two stored axes are the matrices."""
    x, y = T((1, 3, 4, 4), layout=layout), T((1, 3))
    prog = Pipeline().compile(OpRequest.make(DET, [x], [y]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, y.addr))]
    assert blob.kernel_id is KernelId.DET
    assert [p.shape for p in blob.params] == [(1, 3, 4, 4), (1, 3)]
