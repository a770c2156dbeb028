# ruff: noqa: E501 - the case tables read best one case per line
"""The STFT translator (in the dft family): requests of another dtype or shape, attributes out
of range, or the wrong operand counts are typed errors naming the field; a good one is one STFT
blob on signal, the optional window and output with frame_step, frame_length and onesided as its
immediates, an NHWC output written in its logical order."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, F, T, refused

S = OpKind.STFT
K = KernelId.STFT
F16, F64 = DType.F16, DType.F64


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(S, [T((2, 16, 1), I32)], [T((2, 4, 5, 2), I32)], frame_step=4, frame_length=8), UnsupportedDtypeError, "inputs[0].dtype", "STFT does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(S, [T((2, 16, 1)), T((8,), F16)], [T((2, 4, 5, 2))], frame_step=4, frame_length=8), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F16, expected F32"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2), F16)], frame_step=4, frame_length=8), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F16, expected F32"),
        (OpRequest.make(S, [T((16, 1))], [T((2, 4, 5, 2))], frame_step=4, frame_length=8), ShapeError, "inputs[0].shape", "STFT takes signal [B, N, 1 or 2], got (16, 1)"),
        (OpRequest.make(S, [T((2, 16, 3))], [T((2, 4, 5, 2))], frame_step=4, frame_length=8), ShapeError, "inputs[0].shape", "got (2, 16, 3)"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_length=8), InvalidRequestError, "attrs.frame_step", "frame_step must be given, at least 1, got 0"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_step=-1, frame_length=8), InvalidRequestError, "attrs.frame_step", "got -1"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_step=4), InvalidRequestError, "attrs.frame_length", "frame_length must be given, 1 to 16, got 0"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_step=4, frame_length=17), InvalidRequestError, "attrs.frame_length", "got 17"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_step=4, frame_length=8, onesided=2), InvalidRequestError, "attrs.onesided", "onesided must be 0 or 1, got 2"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 5, 2))], frame_step="4", frame_length=8), InvalidRequestError, "attrs.frame_step", "attribute frame_step must be an int"),
        (OpRequest.make(S, [T((2, 16, 1)), T((6,))], [T((2, 4, 5, 2))], frame_step=4, frame_length=8), ShapeError, "inputs[1].shape", "STFT window must be (8,), got (6,)"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 4, 8, 2))], frame_step=4, frame_length=8), ShapeError, "outputs[0].shape", "STFT output shape is (2, 3, 5, 2), request says (2, 4, 8, 2)"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 3, 5, 2))], frame_step=4, frame_length=8, onesided=0), ShapeError, "outputs[0].shape", "STFT output shape is (2, 3, 8, 2)"),
        (OpRequest.make(S, [T((2, 16, 1)), T((8,)), T((1,), DType.I64)], [T((2, 3, 5, 2))], frame_step=4, frame_length=8), InvalidRequestError, "inputs", "STFT takes 1..2 inputs, got 3"),
        (OpRequest.make(S, [T((2, 16, 1))], [T((2, 3, 5, 2)), T((2, 3, 5, 2))], frame_step=4, frame_length=8), InvalidRequestError, "outputs", "STFT takes 1 outputs, got 2"),
    ],
    ids=["int32 signal", "window dtype", "output dtype", "rank 2", "pair of 3", "no frame_step",
         "negative frame_step", "no frame_length", "frame_length past the signal", "onesided 2",
         "string frame_step", "window shape", "output shape", "full output shape", "three inputs",
         "two outputs"],
)  # fmt: skip
def test_bad_stft_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("x", "w", "y", "attrs", "ints"),
    [
        ((2, 16, 1), None, (2, 3, 5, 2), {"frame_step": 4, "frame_length": 8}, (4, 8, 1)),
        ((2, 16, 2), (8,), (2, 3, 8, 2), {"frame_step": 4, "frame_length": 8, "onesided": 0}, (4, 8, 0)),
        ((1, 9, 1), (9,), (1, 1, 5, 2), {"frame_step": 20, "frame_length": 9, "onesided": 1}, (20, 9, 1)),
    ],
    ids=["default onesided", "complex windowed full", "one frame"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_stft_blob(
    dtype: DType, x: tuple, w: tuple | None, y: tuple, attrs: dict, ints: tuple
) -> None:
    ins = [T(x, dtype)] + ([] if w is None else [T(w, dtype)])
    outs = [T(y, dtype)]
    prog = Pipeline().compile(OpRequest.make(S, ins, outs, **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (d.addr, dtype, d.shape) for d in (*ins, *outs)
    ]


def test_an_nhwc_output_is_written_in_its_logical_order() -> None:
    """The output [B, frames, points, 2] is written by the kernel in ONNX's order, then
    transposed into an NHWC output."""
    x, y = T((1, 16, 1)), T((1, 5, 2, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(S, [x], [y], frame_step=4, frame_length=8))
    assert prog.scratch == (1 * 3 * 5 * 2 * 4,) and prog.primary == 0
    blobs = [decode(b) for b in prog.patch((x.addr, y.addr, 0x9000_0000))]
    assert [b.kernel_id for b in blobs] == [K, KernelId.TRANSPOSE]
    assert [p.shape for p in blobs[0].params] == [(1, 16, 1), (1, 3, 5, 2)]
    assert blobs[0].ints == (4, 8, 1)
