# ruff: noqa: E501 - the case tables read best one case per line
"""The SOFTMAX_CROSS_ENTROPY_LOSS translator: requests of another dtype, labels or weights
shape, output or log_prob shape or dtype, an unknown reduction, a non-int ignore_index or the
wrong operand counts are typed errors naming the field; a good one is one blob on scores,
labels, the optional weights, output and log_prob with the immediates reduction,
has_ignore_index, ignore_index; a 4-D NHWC scores is transposed into NCHW first and a 4-D NHWC
log_prob back from NCHW after (the class axis is axis 1)."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, B, F, T, refused

SCE = OpKind.SOFTMAX_CROSS_ENTROPY_LOSS
K = KernelId.SOFTMAX_CROSS_ENTROPY_LOSS
F16, F64 = DType.F16, DType.F64
LP = T((3, 5))


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(SCE, [T((3, 5), I32), T((3,), I64)], [T((), I32), T((3, 5), I32)]), UnsupportedDtypeError, "inputs[0].dtype", "SOFTMAX_CROSS_ENTROPY_LOSS does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(SCE, [T((3, 5), B), T((3,), I64)], [T((), B), T((3, 5), B)]), UnsupportedDtypeError, "inputs[0].dtype", "does not take BOOL"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,))], [T(()), LP]), UnsupportedDtypeError, "inputs[1].dtype", "labels must be I32 or I64, got F32"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I8)], [T(()), LP]), UnsupportedDtypeError, "inputs[1].dtype", "got I8"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64), T((5,), F64)], [T(()), LP]), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F64, expected F32"),
        (OpRequest.make(SCE, [T((3, 5), F16), T((3,), I64)], [T(()), T((3, 5), F16)]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F32, expected F16"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(()), T((3, 5), F64)]), UnsupportedDtypeError, "outputs[1].dtype", "outputs[1] is F64, expected F32"),
        (OpRequest.make(SCE, [T((5,)), T((), I64)], [T(()), T((5,))]), ShapeError, "inputs[0].shape", "takes scores [N, C, d1..dk], got (5,)"),
        (OpRequest.make(SCE, [T((3, 5, 2)), T((3,), I64)], [T(()), T((3, 5, 2))]), ShapeError, "inputs[1].shape", "labels must be (3, 2) for scores (3, 5, 2), got (3,)"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64), T((4,))], [T(()), LP]), ShapeError, "inputs[2].shape", "weights must be (5,), got (4,)"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T((3,)), LP]), ShapeError, "outputs[0].shape", "output shape is (), request says (3,)"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(()), LP], reduction="none"), ShapeError, "outputs[0].shape", "output shape is (3,), request says ()"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(()), T((3, 4))]), ShapeError, "outputs[1].shape", "output shape is (3, 5), request says (3, 4)"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(()), LP], reduction="max"), InvalidRequestError, "attrs.reduction", "unknown reduction 'max'; known: none, sum, mean"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(()), LP], ignore_index=1.5), InvalidRequestError, "attrs.ignore_index", "ignore_index must be an int"),
        (OpRequest.make(SCE, [T((3, 5))], [T(()), LP]), InvalidRequestError, "inputs", "takes 2..3 inputs, got 1"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64), T((5,)), T((5,))], [T(()), LP]), InvalidRequestError, "inputs", "takes 2..3 inputs, got 4"),
        (OpRequest.make(SCE, [T((3, 5)), T((3,), I64)], [T(())]), InvalidRequestError, "outputs", "takes 2 outputs, got 1"),
    ],
    ids=["int32 scores", "bool scores", "float labels", "int8 labels", "weights dtype",
         "output dtype", "log_prob dtype", "rank 1", "labels rank", "weights shape",
         "mean of shape", "none scalar", "log_prob shape", "unknown reduction",
         "float ignore_index", "one input", "four inputs", "one output"],
)  # fmt: skip
def test_bad_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("weighted", [False, True], ids=["no_weights", "weights"])
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
    labels = (x[0], *x[2:])
    ins = [T(x, dtype), T(labels, I64), *([T((x[1],), dtype)] if weighted else [])]
    outs = [T(loss, dtype), T(x, dtype)]
    prog = Pipeline().compile(OpRequest.make(SCE, ins, outs, **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    w = [(dtype, (x[1],))] if weighted else []
    want = [(dtype, x), (I64, labels), *w, (dtype, loss), (dtype, x)]
    assert [(p.dtype, p.shape) for p in blob.params] == want


def test_int32_labels_are_taken_as_they_are() -> None:
    ins, outs = [T((4, 3), F64), T((4,), I32)], [T((), F64), T((4, 3), F64)]
    (blob,) = [decode(b) for b in Pipeline().compile(OpRequest.make(SCE, ins, outs)).patch(
        tuple(d.addr for d in (*ins, *outs)))]  # fmt: skip
    assert [p.dtype for p in blob.params] == [F64, I32, F64, F64]


def test_nhwc_scores_and_log_prob_go_through_nchw() -> None:
    """The stored NHWC scores [N, H, W, C] becomes NCHW scratch, which the loss kernel reads;
    it writes log_prob NCHW into scratch, transposed back into the NHWC log_prob."""
    x, t = T((2, 3, 4, 5), layout=Layout.NHWC), T((2, 3, 4), I64)
    y, lp = T((2, 3, 4)), T((2, 3, 4, 5), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(SCE, [x, t], [y, lp], reduction="none"))
    assert prog.scratch == (2 * 5 * 3 * 4 * 4,) * 2 and prog.primary == 1
    s0, s1 = 0xA0000, 0xB0000
    pre, main, post = [decode(b) for b in prog.patch((x.addr, t.addr, y.addr, lp.addr, s0, s1))]
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 3, 1, 2)
    assert [p.addr for p in pre.params] == [x.addr, s0]
    assert main.kernel_id is K and [p.addr for p in main.params] == [s0, t.addr, y.addr, s1]
    assert [p.shape for p in main.params] == [(2, 5, 3, 4), (2, 3, 4), (2, 3, 4), (2, 5, 3, 4)]
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
    assert [p.addr for p in post.params] == [s1, lp.addr]


def test_nchw_scores_are_taken_as_stored() -> None:
    x, t = T((2, 5, 3, 4), layout=Layout.NCHW), T((2, 3, 4), I64)
    y, lp = T(()), T((2, 5, 3, 4), layout=Layout.NCHW)
    prog = Pipeline().compile(OpRequest.make(SCE, [x, t], [y, lp]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, t.addr, y.addr, lp.addr))]
    assert blob.kernel_id is K
