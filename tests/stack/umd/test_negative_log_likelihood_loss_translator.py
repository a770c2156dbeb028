# ruff: noqa: E501 - the case tables read best one case per line
"""The NEGATIVE_LOG_LIKELIHOOD_LOSS translator: requests of another dtype, target or weight
shape, loss shape or dtype, an unknown reduction, a non-int ignore_index or the wrong operand
counts are typed errors naming the field; a good one is one blob on input, target, the optional
weight and loss with the immediates reduction, has_ignore_index, ignore_index; a 4-D NHWC
input is transposed into NCHW first (the class axis is axis 1)."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, B, F, T, refused

NLL = OpKind.NEGATIVE_LOG_LIKELIHOOD_LOSS
K = KernelId.NEGATIVE_LOG_LIKELIHOOD_LOSS
F16, F64 = DType.F16, DType.F64


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(NLL, [T((3, 5), I32), T((3,), I64)], [T((), I32)]), UnsupportedDtypeError, "inputs[0].dtype", "NEGATIVE_LOG_LIKELIHOOD_LOSS does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(NLL, [T((3, 5), B), T((3,), I64)], [T((), B)]), UnsupportedDtypeError, "inputs[0].dtype", "does not take BOOL"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,))], [T(())]), UnsupportedDtypeError, "inputs[1].dtype", "target must be I32 or I64, got F32"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I8)], [T(())]), UnsupportedDtypeError, "inputs[1].dtype", "got I8"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64), T((5,), F64)], [T(())]), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F64, expected F32"),
        (OpRequest.make(NLL, [T((3, 5), F16), T((3,), I64)], [T(())]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F32, expected F16"),
        (OpRequest.make(NLL, [T((5,)), T((), I64)], [T(())]), ShapeError, "inputs[0].shape", "takes input [N, C, d1..dk], got (5,)"),
        (OpRequest.make(NLL, [T((3, 5, 2)), T((3,), I64)], [T(())]), ShapeError, "inputs[1].shape", "target must be (3, 2) for input (3, 5, 2), got (3,)"),
        (OpRequest.make(NLL, [T((3, 5)), T((2,), I64)], [T(())]), ShapeError, "inputs[1].shape", "target must be (3,)"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64), T((4,))], [T(())]), ShapeError, "inputs[2].shape", "weight must be (5,), got (4,)"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T((3,))]), ShapeError, "outputs[0].shape", "output shape is (), request says (3,)"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T(())], reduction="none"), ShapeError, "outputs[0].shape", "output shape is (3,), request says ()"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T(())], reduction="max"), InvalidRequestError, "attrs.reduction", "unknown reduction 'max'; known: none, sum, mean"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T(())], reduction=1), InvalidRequestError, "attrs.reduction", "unknown reduction 1"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T(())], ignore_index=1.5), InvalidRequestError, "attrs.ignore_index", "ignore_index must be an int"),
        (OpRequest.make(NLL, [T((3, 5))], [T(())]), InvalidRequestError, "inputs", "takes 2..3 inputs, got 1"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64), T((5,)), T((5,))], [T(())]), InvalidRequestError, "inputs", "takes 2..3 inputs, got 4"),
        (OpRequest.make(NLL, [T((3, 5)), T((3,), I64)], [T(()), T(())]), InvalidRequestError, "outputs", "takes 1 outputs, got 2"),
    ],
    ids=["int32 input", "bool input", "float target", "int8 target", "weight dtype", "loss dtype",
         "rank 1", "target rank", "target batch", "weight shape", "mean of shape", "none scalar",
         "unknown reduction", "int reduction", "float ignore_index", "one input", "four inputs",
         "two outputs"],
)  # fmt: skip
def test_bad_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("weighted", [False, True], ids=["no_weight", "weight"])
@pytest.mark.parametrize(
    ("x", "attrs", "loss", "ints"),
    [
        ((3, 5), {}, (), (2, 0, 0)),
        ((3, 5), {"reduction": "none"}, (3,), (0, 0, 0)),
        ((3, 5, 2), {"reduction": "sum", "ignore_index": 1}, (), (1, 1, 1)),
        ((2, 4, 3, 3), {"reduction": "mean", "ignore_index": -5}, (), (2, 1, -5)),
        ((2, 4, 3, 2, 2), {"reduction": "none", "ignore_index": 10}, (2, 3, 2, 2), (0, 1, 10)),
        ((0, 4, 2), {"reduction": "none"}, (0, 2), (0, 0, 0)),
    ],
    ids=["k0 mean", "k0 none", "k1 sum ii", "k2 mean negative ii", "k3 none high ii", "empty"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_blob(
    dtype: DType,
    x: tuple[int, ...],
    attrs: dict,
    loss: tuple[int, ...],
    ints: tuple,
    weighted: bool,
) -> None:
    target = (x[0], *x[2:])
    ins = [T(x, dtype), T(target, I64), *([T((x[1],), dtype)] if weighted else [])]
    out = T(loss, dtype)
    prog = Pipeline().compile(OpRequest.make(NLL, ins, [out], **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((*(d.addr for d in ins), out.addr))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    want = [(dtype, x), (I64, target), *([(dtype, (x[1],))] if weighted else []), (dtype, loss)]
    assert [(p.dtype, p.shape) for p in blob.params] == want


def test_an_int32_target_is_taken_as_it_is() -> None:
    ins, out = [T((4, 3), F64), T((4,), I32)], T((), F64)
    (blob,) = [decode(b) for b in Pipeline().compile(OpRequest.make(NLL, ins, [out])).patch(
        (*(d.addr for d in ins), out.addr))]  # fmt: skip
    assert [p.dtype for p in blob.params] == [F64, I32, F64]


def test_an_nhwc_input_is_transposed_into_nchw_first() -> None:
    """The stored NHWC input [N, H, W, C] becomes NCHW scratch, which the loss kernel reads."""
    x, t, y = T((2, 3, 4, 5), layout=Layout.NHWC), T((2, 3, 4), I64), T((2, 3, 4))
    prog = Pipeline().compile(OpRequest.make(NLL, [x, t], [y], reduction="none"))
    assert prog.scratch == (2 * 5 * 3 * 4 * 4,) and prog.primary == 1
    s0 = 0xA0000
    pre, main = [decode(b) for b in prog.patch((x.addr, t.addr, y.addr, s0))]
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 3, 1, 2)
    assert [p.addr for p in pre.params] == [x.addr, s0]
    assert main.kernel_id is K and [p.addr for p in main.params] == [s0, t.addr, y.addr]
    assert [p.shape for p in main.params] == [(2, 5, 3, 4), (2, 3, 4), (2, 3, 4)]


def test_an_nchw_input_is_taken_as_stored() -> None:
    x, t, y = T((2, 5, 3, 4), layout=Layout.NCHW), T((2, 3, 4), I64), T(())
    prog = Pipeline().compile(OpRequest.make(NLL, [x, t], [y]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, t.addr, y.addr))]
    assert blob.kernel_id is K
