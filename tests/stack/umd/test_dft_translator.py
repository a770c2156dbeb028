# ruff: noqa: E501 - the case tables read best one case per line
"""The DFT translator: requests of another dtype or shape, attributes out of range, or the wrong
operand counts are typed errors naming the field; a good one is one DFT blob on input and
output with axis (made non-negative), inverse, onesided and dft_length as its immediates, a 4-D
operand read and written in its logical NCHW order."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, F, T, refused

D = OpKind.DFT
K = KernelId.DFT
F16, F64 = DType.F16, DType.F64


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(D, [T((2, 6, 1), I32)], [T((2, 6, 2), I32)], dft_length=6), UnsupportedDtypeError, "inputs[0].dtype", "DFT does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2), F16)], dft_length=6), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F16, expected F32"),
        (OpRequest.make(D, [T((6,))], [T((6, 2))], axis=0, dft_length=6), ShapeError, "inputs[0].shape", "DFT takes input [..., 1 or 2], got (6,)"),
        (OpRequest.make(D, [T((2, 6, 3))], [T((2, 6, 2))], dft_length=6), ShapeError, "inputs[0].shape", "got (2, 6, 3)"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=2, dft_length=6), InvalidRequestError, "attrs.axis", "axis 2 is not a signal axis of input (2, 6, 1)"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=-1, dft_length=6), InvalidRequestError, "attrs.axis", "axis -1"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=-4, dft_length=6), InvalidRequestError, "attrs.axis", "axis -4"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=1), InvalidRequestError, "attrs.dft_length", "dft_length must be given, at least 1, got 0"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=1, dft_length=-3), InvalidRequestError, "attrs.dft_length", "got -3"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=1, dft_length=6, inverse=2), InvalidRequestError, "attrs.inverse", "inverse must be 0 or 1, got 2"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=1, dft_length=6, onesided=-1), InvalidRequestError, "attrs.onesided", "onesided must be 0 or 1, got -1"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis="1", dft_length=6), InvalidRequestError, "attrs.axis", "attribute axis must be an int"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 7, 2))], axis=1, dft_length=6), ShapeError, "outputs[0].shape", "DFT output shape is (2, 6, 2), request says (2, 7, 2)"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2))], axis=1, dft_length=6, onesided=1), ShapeError, "outputs[0].shape", "DFT output shape is (2, 4, 2)"),
        (OpRequest.make(D, [T((2, 4, 2))], [T((2, 6, 2))], axis=1, dft_length=6, inverse=1, onesided=1), ShapeError, "outputs[0].shape", "DFT output shape is (2, 6, 1)"),
        (OpRequest.make(D, [T((2, 6, 2))], [T((2, 4, 2))], axis=1, dft_length=6, onesided=1), ShapeError, "inputs[0].shape", "DFT RFFT takes a real input [..., 1], got (2, 6, 2)"),
        (OpRequest.make(D, [T((2, 4, 1))], [T((2, 6, 1))], axis=1, dft_length=6, inverse=1, onesided=1), ShapeError, "inputs[0].shape", "DFT IRFFT takes a complex input [..., 2], got (2, 4, 1)"),
        (OpRequest.make(D, [T((2, 6, 1)), T((1,), DType.I64)], [T((2, 6, 2))], dft_length=6), InvalidRequestError, "inputs", "DFT takes 1 inputs, got 2"),
        (OpRequest.make(D, [T((2, 6, 1))], [T((2, 6, 2)), T((2, 6, 2))], dft_length=6), InvalidRequestError, "outputs", "DFT takes 1 outputs, got 2"),
    ],
    ids=["int32 input", "output dtype", "rank 1", "pair of 3", "axis of the pair", "axis -1",
         "axis -4", "no dft_length", "negative dft_length", "inverse 2", "onesided -1",
         "string axis", "output shape", "rfft shape", "irfft shape", "complex rfft", "real irfft",
         "two inputs", "two outputs"],
)  # fmt: skip
def test_bad_dft_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("x", "y", "attrs", "ints"),
    [
        ((2, 6, 1), (2, 6, 2), {"dft_length": 6}, (1, 0, 0, 6)),
        ((2, 6, 2), (2, 6, 2), {"axis": -2, "inverse": 1, "dft_length": 6}, (1, 1, 0, 6)),
        ((2, 6, 1), (2, 5, 2), {"axis": 1, "onesided": 1, "dft_length": 9}, (1, 0, 1, 9)),
        ((2, 4, 2), (2, 6, 1), {"axis": 1, "inverse": 1, "onesided": 1, "dft_length": 6}, (1, 1, 1, 6)),
        ((5, 3, 2), (2, 3, 2), {"axis": 0, "dft_length": 2}, (0, 0, 0, 2)),
        ((5, 3, 2), (5, 8, 2), {"axis": -2, "dft_length": 8}, (1, 0, 0, 8)),
    ],
    ids=["default axis", "inverse at -2", "rfft", "irfft", "axis 0 shorter", "longer"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_dft_blob(
    dtype: DType, x: tuple, y: tuple, attrs: dict, ints: tuple
) -> None:
    ins, outs = [T(x, dtype)], [T(y, dtype)]
    prog = Pipeline().compile(OpRequest.make(D, ins, outs, **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (d.addr, dtype, d.shape) for d in (*ins, *outs)
    ]


def test_a_4d_nhwc_operand_is_transposed_to_its_logical_order() -> None:
    """axis counts in ONNX's (NCHW) order: NHWC operands are transposed around the kernel."""
    x, y = T((1, 4, 2, 3), layout=Layout.NHWC), T((1, 6, 2, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(D, [x], [y], axis=2, dft_length=6))
    assert prog.scratch == (1 * 3 * 4 * 2 * 4, 1 * 3 * 6 * 2 * 4) and prog.primary == 1
    blobs = [decode(b) for b in prog.patch((x.addr, y.addr, 0x9000_0000, 0x9100_0000))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, K, KernelId.TRANSPOSE]
    assert [p.shape for p in blobs[1].params] == [(1, 3, 4, 2), (1, 3, 6, 2)]
    assert blobs[1].ints == (2, 0, 0, 6)
