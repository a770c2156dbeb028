# ruff: noqa: E501 - the case tables read best one case per line
"""The integer convolutions' translators (CONV_INTEGER, QLINEARCONV): typed refusals naming the
field, and NHWC activations converted around the NCHW kernel. Their blob cases are in
``test_translators.CASES`` with every other op's."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, U8, F, T, refused

CI = OpKind.CONV_INTEGER
CI_X, CI_W, CI_Y = T((1, 2, 5, 5), U8), T((3, 2, 3, 3), I8), T((1, 3, 3, 3), I32)


@pytest.mark.parametrize(
    ("req", "err", "field", "words"),
    [
        (OpRequest.make(CI, [T((1, 2, 5, 5), I32), CI_W], [CI_Y]), UnsupportedDtypeError, "inputs[0].dtype", ("CONV_INTEGER does not take I32", "supported: I8, U8")),
        (OpRequest.make(CI, [CI_X, T((3, 2, 3, 3))], [CI_Y]), UnsupportedDtypeError, "inputs[1].dtype", ("does not take F32",)),
        (OpRequest.make(CI, [CI_X, CI_W, T((), I8)], [CI_Y]), UnsupportedDtypeError, "inputs[2].dtype", ("inputs[2] (a zero point) is I8, expected inputs[0]'s U8",)),
        (OpRequest.make(CI, [CI_X, CI_W, T((), U8), T((3,), U8)], [CI_Y]), UnsupportedDtypeError, "inputs[3].dtype", ("inputs[3] (a zero point) is U8, expected inputs[1]'s I8",)),
        (OpRequest.make(CI, [CI_X, CI_W], [T((1, 3, 3, 3))]), UnsupportedDtypeError, "outputs[0].dtype", ("CONV_INTEGER writes I32, not F32",)),
        (OpRequest.make(CI, [CI_X, CI_W, T((2,), U8)], [CI_Y]), ShapeError, "inputs[2].shape", ("x_zero_point must have 1 element(s), got shape (2,)",)),
        (OpRequest.make(CI, [CI_X, CI_W, T((), U8), T((2,), I8)], [CI_Y]), ShapeError, "inputs[3].shape", ("w_zero_point must have 1 or 3 element(s)",)),
        (OpRequest.make(CI, [CI_X, T((3, 1, 3, 3), I8)], [CI_Y]), ShapeError, "inputs[1].shape", ("do not fit input channels 2 with group 1",)),
        (OpRequest.make(CI, [CI_X, T((3, 1, 3, 3), I8)], [CI_Y], group=2), ShapeError, "inputs[1].shape", ("with group 2",)),
        (OpRequest.make(CI, [CI_X, T((3, 2, 6, 3), I8)], [CI_Y]), ShapeError, "inputs[1].shape", ("kernel 6x3 larger than the padded input",)),
        (OpRequest.make(CI, [T((2, 5, 5), U8), T((3, 2, 3), I8)], [T((1, 3, 3), I32)]), ShapeError, "inputs[0].shape", ("x must be 4-D NCHW",)),
        (OpRequest.make(CI, [CI_X, T((3, 2, 9), I8)], [CI_Y]), ShapeError, "inputs[1].shape", ("w must be 4-D",)),
        (OpRequest.make(CI, [CI_X, CI_W], [T((1, 3, 5, 5), I32)]), ShapeError, "outputs[0].shape", ("CONV_INTEGER output shape is (1, 3, 3, 3), request says (1, 3, 5, 5)",)),
        (OpRequest.make(CI, [CI_X, CI_W], [CI_Y], strides=(0, 1)), InvalidRequestError, "attrs.strides", ("strides must be >= 1",)),
        (OpRequest.make(CI, [CI_X, CI_W], [CI_Y], pads=(0, -1, 0, 0)), InvalidRequestError, "attrs.pads", ("pads must be >= 0",)),
        (OpRequest.make(CI, [CI_X, CI_W], [CI_Y], dilations=(1, 1, 1)), InvalidRequestError, "attrs.dilations", ("needs 2 values, got 3",)),
        (OpRequest.make(CI, [CI_X, CI_W], [CI_Y], group=0), InvalidRequestError, "attrs.group", ("group must be >= 1",)),
        (OpRequest.make(CI, [CI_X], [CI_Y]), InvalidRequestError, "inputs", ("CONV_INTEGER takes 2..4 inputs, got 1",)),
        (OpRequest.make(CI, [CI_X, CI_W, T((), U8), T((), I8), T((), I8)], [CI_Y]), InvalidRequestError, "inputs", ("takes 2..4 inputs, got 5",)),
    ],
    ids=["x I32", "w F32", "x_zero_point I8", "w_zero_point U8", "y F32", "two x zero points",
         "two w zero points", "channels", "group channels", "kernel", "3-D x", "3-D w",
         "y shape", "stride 0", "pad < 0", "three dilations", "group 0", "one input",
         "five inputs"],
)  # fmt: skip
def test_a_bad_conv_integer_names_the_field_and_the_fault(
    req: OpRequest, err: type, field: str, words: tuple[str, ...]
) -> None:
    """x and w I8/U8, each zero point of its tensor's dtype and size, y I32 of the
    convolution's shape, attributes in range: each refusal is typed and names its field."""
    text = refused(req, err, field)
    assert all(w in text for w in words), text


def test_an_nhwc_conv_integer_converts_x_and_y_around_the_kernel() -> None:
    """x and y have channels on axis 1: NHWC ones are transposed to NCHW before the kernel and
    back after it; w and the zero points are taken as they are."""
    x, w = T((1, 5, 5, 2), U8, Layout.NHWC), T((3, 2, 3, 3), I8)
    xz, wz, y = T((), U8), T((3,), I8), T((1, 3, 3, 3), I32, Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(CI, [x, w, xz, wz], [y]))
    assert prog.scratch == (50, 27 * 4) and prog.primary == 1
    s = (0xA0000, 0xB0000)
    blobs = [decode(b) for b in prog.patch((x.addr, w.addr, xz.addr, wz.addr, y.addr, *s))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, KernelId.CONV_INTEGER,
                                            KernelId.TRANSPOSE]  # fmt: skip
    main = blobs[1]
    assert [p.addr for p in main.params] == [s[0], w.addr, xz.addr, wz.addr, s[1]]
    assert [p.shape for p in main.params] == [(1, 2, 5, 5), (3, 2, 3, 3), (), (3,), (1, 3, 3, 3)]
    assert [p.dtype for p in main.params] == [U8, I8, U8, I8, I32]
    assert blobs[0].ints == (0, 3, 1, 2) and blobs[2].ints == (0, 2, 3, 1)


QC = OpKind.QLINEARCONV
QC_X, QC_W, QC_Y = T((1, 2, 5, 5), U8), T((3, 2, 3, 3), I8), T((1, 3, 3, 3), U8)
#: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
QC_INS = [QC_X, T(()), T((), U8), QC_W, T((3,)), T((3,), I8), T(()), T((), U8), T((3,), I32)]


def _qc(
    change: dict[int, TensorDesc], outputs: list[TensorDesc] | None = None, n: int = 9, **attrs
) -> OpRequest:  # type: ignore[no-untyped-def]
    """QLINEARCONV of QC_INS, its first ``n`` inputs, ``change``d by position."""
    ins = [change.get(i, t) for i, t in enumerate(QC_INS)][:n]
    return OpRequest.make(QC, ins, outputs or [QC_Y], **attrs)


@pytest.mark.parametrize(
    ("req", "err", "field", "words"),
    [
        (_qc({0: T((1, 2, 5, 5), I32)}), UnsupportedDtypeError, "inputs[0].dtype", ("QLINEARCONV does not take I32", "supported: I8, U8")),
        (_qc({3: T((3, 2, 3, 3))}), UnsupportedDtypeError, "inputs[3].dtype", ("does not take F32",)),
        (_qc({7: T((), I32)}, [T((1, 3, 3, 3), I32)]), UnsupportedDtypeError, "inputs[7].dtype", ("does not take I32",)),
        (_qc({1: T((), DType.F16)}), UnsupportedDtypeError, "inputs[1].dtype", ("inputs[1] (a scale) is F16, expected F32",)),
        (_qc({4: T((3,), DType.F64)}), UnsupportedDtypeError, "inputs[4].dtype", ("inputs[4] (a scale) is F64",)),
        (_qc({6: T((), U8)}), UnsupportedDtypeError, "inputs[6].dtype", ("inputs[6] (a scale) is U8",)),
        (_qc({2: T((), I8)}), UnsupportedDtypeError, "inputs[2].dtype", ("inputs[2] (a zero point) is I8, expected inputs[0]'s U8",)),
        (_qc({5: T((3,), U8)}), UnsupportedDtypeError, "inputs[5].dtype", ("inputs[5] (a zero point) is U8, expected inputs[3]'s I8",)),
        (_qc({8: T((3,), I64)}), UnsupportedDtypeError, "inputs[8].dtype", ("inputs[8] (the bias) is I64, expected I32",)),
        (_qc({}, [T((1, 3, 3, 3), I8)]), UnsupportedDtypeError, "outputs[0].dtype", ("QLINEARCONV writes y_zero_point's U8, not I8",)),
        (_qc({1: T((2,))}), ShapeError, "inputs[1].shape", ("x_scale must have 1 element(s), got shape (2,)",)),
        (_qc({2: T((2,), U8)}), ShapeError, "inputs[2].shape", ("x_zero_point must have 1 element(s)",)),
        (_qc({4: T((2,))}), ShapeError, "inputs[4].shape", ("w_scale must have 1 or 3 element(s), got shape (2,)",)),
        (_qc({5: T((4,), I8)}), ShapeError, "inputs[5].shape", ("w_zero_point must have 1 or 3 element(s)",)),
        (_qc({6: T((3,))}), ShapeError, "inputs[6].shape", ("y_scale must have 1 element(s)",)),
        (_qc({7: T((1, 2), U8)}), ShapeError, "inputs[7].shape", ("y_zero_point must have 1 element(s)",)),
        (_qc({8: T((1, 3), I32)}), ShapeError, "inputs[8].shape", ("B must be [3], one per output channel, got shape (1, 3)",)),
        (_qc({3: T((3, 1, 3, 3), I8)}), ShapeError, "inputs[3].shape", ("do not fit input channels 2 with group 1",)),
        (_qc({3: T((3, 1, 3, 3), I8)}, group=2), ShapeError, "inputs[3].shape", ("with group 2",)),
        (_qc({3: T((3, 2, 6, 3), I8)}), ShapeError, "inputs[3].shape", ("kernel 6x3 larger than the padded input",)),
        (_qc({0: T((2, 5, 5), U8)}, [T((1, 3, 3), U8)]), ShapeError, "inputs[0].shape", ("x must be 4-D NCHW",)),
        (_qc({3: T((3, 2, 9), I8)}), ShapeError, "inputs[3].shape", ("w must be 4-D",)),
        (_qc({}, [T((1, 3, 5, 5), U8)]), ShapeError, "outputs[0].shape", ("QLINEARCONV output shape is (1, 3, 3, 3), request says (1, 3, 5, 5)",)),
        (_qc({}, strides=(0, 1)), InvalidRequestError, "attrs.strides", ("strides must be >= 1",)),
        (_qc({}, pads=(0, -1, 0, 0)), InvalidRequestError, "attrs.pads", ("pads must be >= 0",)),
        (_qc({}, dilations=(1, 1, 1)), InvalidRequestError, "attrs.dilations", ("needs 2 values, got 3",)),
        (_qc({}, group=0), InvalidRequestError, "attrs.group", ("group must be >= 1",)),
        (_qc({}, n=7), InvalidRequestError, "inputs", ("QLINEARCONV takes 8..9 inputs, got 7",)),
        (OpRequest.make(QC, [*QC_INS, T((3,), I32)], [QC_Y]), InvalidRequestError, "inputs", ("takes 8..9 inputs, got 10",)),
        (_qc({}, [QC_Y, QC_Y]), InvalidRequestError, "outputs", ("QLINEARCONV takes 1 outputs, got 2",)),
    ],
    ids=["x I32", "w F32", "y_zero_point I32", "x_scale F16", "w_scale F64", "y_scale U8",
         "x_zero_point I8", "w_zero_point U8", "B I64", "y I8", "two x scales",
         "two x zero points", "two w scales", "four w zero points", "three y scales",
         "two y zero points", "2-D B", "channels", "group channels", "kernel", "3-D x",
         "3-D w", "y shape", "stride 0", "pad < 0", "three dilations", "group 0",
         "seven inputs", "ten inputs", "two outputs"],
)  # fmt: skip
def test_a_bad_qlinear_conv_names_the_field_and_the_fault(
    req: OpRequest, err: type, field: str, words: tuple[str, ...]
) -> None:
    """x, w and y_zero_point I8/U8, the scales F32, x's and w's zero points of their tensor's
    dtype, B I32 [M], each scale and zero point of its size, y of y_zero_point's dtype and the
    convolution's shape, attributes in range: each refusal is typed and names its field."""
    text = refused(req, err, field)
    assert all(w in text for w in words), text


def test_an_nhwc_qlinear_conv_converts_x_and_y_around_the_kernel() -> None:
    """x and y have channels on axis 1: NHWC ones are transposed to NCHW before the kernel and
    back after it; w, the scales, the zero points and B are taken as they are."""
    x, y = T((1, 5, 5, 2), U8, Layout.NHWC), T((1, 3, 3, 3), U8, Layout.NHWC)
    ins = [x, *QC_INS[1:]]
    prog = Pipeline().compile(OpRequest.make(QC, ins, [y]))
    assert prog.scratch == (50, 27) and prog.primary == 1
    s = (0xA0000, 0xB0000)
    blobs = [decode(b) for b in prog.patch((*(t.addr for t in ins), y.addr, *s))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, KernelId.QLINEARCONV,
                                            KernelId.TRANSPOSE]  # fmt: skip
    main = blobs[1]
    assert [p.addr for p in main.params] == [s[0], *(t.addr for t in ins[1:]), s[1]]
    assert [p.shape for p in main.params] == [(1, 2, 5, 5), (), (), (3, 2, 3, 3), (3,), (3,),
                                              (), (), (3,), (1, 3, 3, 3)]  # fmt: skip
    assert [p.dtype for p in main.params] == [U8, F, U8, I8, F, I8, F, U8, I32, U8]
    assert blobs[0].ints == (0, 3, 1, 2) and blobs[2].ints == (0, 2, 3, 1)
