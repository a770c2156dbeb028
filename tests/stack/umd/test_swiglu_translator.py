# ruff: noqa: E501 - the case tables read best one case per line
"""The SWIGLU translator: requests of another dtype or shape (B broadcasting against A), a bad
alpha, or the wrong operand counts are typed errors naming the field; a good one is one SWIGLU
blob on A, B and Y with alpha as its float immediate, a 4-D operand stored in another layout
than Y's going through Y's."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, F, T, refused

SW = OpKind.SWIGLU
K = KernelId.SWIGLU
F16, F64 = DType.F16, DType.F64


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(SW, [T((2, 3), I32), T((2, 3), I32)], [T((2, 3), I32)]), UnsupportedDtypeError, "inputs[0].dtype", "SWIGLU does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(SW, [T((2, 3)), T((2, 3), F16)], [T((2, 3))]), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F16, expected F32"),
        (OpRequest.make(SW, [T((2, 3), F64), T((2, 3), F64)], [T((2, 3))]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F32, expected F64"),
        (OpRequest.make(SW, [T((2, 3)), T((3,))], [T((2, 3))]), ShapeError, "inputs[1].shape", "SWIGLU takes B of A's shape (2, 3) (no broadcasting), got (3,)"),
        (OpRequest.make(SW, [T((2, 3)), T((1, 3))], [T((2, 3))]), ShapeError, "inputs[1].shape", "got (1, 3)"),
        (OpRequest.make(SW, [T((2, 3)), T((2, 3))], [T((3, 2))]), ShapeError, "outputs[0].shape", "SWIGLU output shape is (2, 3), request says (3, 2)"),
        (OpRequest.make(SW, [T((2, 3)), T((2, 3))], [T((2, 3))], alpha="one"), InvalidRequestError, "attrs.alpha", "attribute alpha must be a number"),
        (OpRequest.make(SW, [T((2, 3))], [T((2, 3))]), InvalidRequestError, "inputs", "SWIGLU takes 2 inputs, got 1"),
        (OpRequest.make(SW, [T((2, 3)), T((2, 3)), T((2, 3))], [T((2, 3))]), InvalidRequestError, "inputs", "SWIGLU takes 2 inputs, got 3"),
        (OpRequest.make(SW, [T((2, 3)), T((2, 3))], [T((2, 3)), T((2, 3))]), InvalidRequestError, "outputs", "SWIGLU takes 1 outputs, got 2"),
    ],
    ids=["int32 A", "B dtype", "output dtype", "B broadcast rank", "B broadcast size", "output shape",
         "alpha string", "one input", "three inputs", "two outputs"],
)  # fmt: skip
def test_bad_swiglu_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("shape", "attrs", "floats"),
    [((7,), {}, (1.0,)), ((2, 3, 8), {"alpha": 1.702}, (1.702,)), ((2, 3, 4, 5), {"alpha": -0.5}, (-0.5,)),
     ((), {"alpha": 0}, (0.0,)), ((0, 4), {}, (1.0,))],
    ids=["1-D", "3-D alpha", "4-D negative alpha", "scalar int alpha", "empty"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_swiglu_blob(
    dtype: DType, shape: tuple, attrs: dict, floats: tuple
) -> None:
    a, b, y = T(shape, dtype), T(shape, dtype), T(shape, dtype)
    prog = Pipeline().compile(OpRequest.make(SW, [a, b], [y], **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch((a.addr, b.addr, y.addr))]
    assert blob.kernel_id is K and blob.ints == () and blob.floats == floats
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (d.addr, dtype, shape) for d in (a, b, y)
    ]


def test_a_4d_operand_in_another_layout_than_y_is_read_in_y_s() -> None:
    """A stored NCHW and B stored NHWC, Y asked NHWC: A is transposed into NHWC scratch first,
    B and Y are taken as stored."""
    a = T((2, 3, 4, 5), layout=Layout.NCHW)
    b, y = T((2, 4, 5, 3), layout=Layout.NHWC), T((2, 4, 5, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(SW, [a, b], [y], alpha=2.0))
    assert prog.scratch == (2 * 3 * 4 * 5 * 4,) and prog.primary == 1
    s0 = 0xA0000
    pre, main = [decode(x) for x in prog.patch((a.addr, b.addr, y.addr, s0))]
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 2, 3, 1)
    assert main.kernel_id is K and [p.addr for p in main.params] == [s0, b.addr, y.addr]
    assert [p.shape for p in main.params] == [(2, 4, 5, 3)] * 3 and main.floats == (2.0,)


def test_operands_of_one_layout_are_taken_as_stored() -> None:
    a, b = T((2, 4, 5, 3), layout=Layout.NHWC), T((2, 4, 5, 3), layout=Layout.NHWC)
    y = T((2, 4, 5, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(SW, [a, b], [y]))
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch((a.addr, b.addr, y.addr))]
    assert blob.kernel_id is K and [p.addr for p in blob.params] == [a.addr, b.addr, y.addr]
