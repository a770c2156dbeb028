# ruff: noqa: E501 - the case tables read best one case per line
"""The EINSUM translator: a bad equation, operands of another dtype, a term that does not fit
its input's rank, sizes that clash, or the wrong operand counts are typed errors naming the
field; a good request is one EINSUM blob on every input and Y with the equation encoded as the
int list of labels (letters 0..51, the broadcast batch 52+), implicit outputs made explicit, 4-D
NHWC operands going through their logical order."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, F, T, refused

E = OpKind.EINSUM
K = KernelId.EINSUM
F16, F64 = DType.F16, DType.F64


def MM(dtype: DType = F) -> list:
    return [T((2, 3), dtype), T((3, 4), dtype)]


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(E, [T((2, 3), I8), T((3, 4), I8)], [T((2, 4), I8)], equation="ij,jk"), UnsupportedDtypeError, "inputs[0].dtype", "EINSUM does not take I8; supported: F16, F32, F64, I32, I64"),
        (OpRequest.make(E, [T((2, 3)), T((3, 4), F64)], [T((2, 4))], equation="ij,jk"), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F64, expected F32"),
        (OpRequest.make(E, MM(I32), [T((2, 4), I64)], equation="ij,jk"), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is I64, expected I32"),
        (OpRequest.make(E, MM(), [T((2, 4))]), InvalidRequestError, "attrs.equation", "EINSUM equation is required"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation=3), InvalidRequestError, "attrs.equation", "must be a string, got 3"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij->ik"), InvalidRequestError, "attrs.equation", "has 1 input terms for 2 inputs"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij,j1->i"), InvalidRequestError, "attrs.equation", "term 'j1' is not letters"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="i..j,jk"), InvalidRequestError, "attrs.equation", "term 'i..j' is not letters"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="...i...,jk"), InvalidRequestError, "attrs.equation", "at most one '...'"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij,jk->ii"), InvalidRequestError, "attrs.equation", "the output 'ii' repeats a letter"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij,jk->iz"), InvalidRequestError, "attrs.equation", "names one no input has"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij,jk->ik->i"), InvalidRequestError, "attrs.equation", "is not letters"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ijk,jk->ik"), ShapeError, "inputs[0].shape", "term 'ijk' does not fit inputs[0] of rank 2"),
        (OpRequest.make(E, MM(), [T((2, 4))], equation="ij,...jkl->ik"), ShapeError, "inputs[1].shape", "term '...jkl' does not fit inputs[1] of rank 2"),
        (OpRequest.make(E, [T((2, 3)), T((4, 5))], [T((2, 5))], equation="ij,jk->ik"), ShapeError, "inputs[1].shape", "EINSUM j of inputs[1] (4, 5) has size 4, not 3"),
        (OpRequest.make(E, [T((2, 3)), T((1, 5))], [T((2, 5))], equation="ij,jk->ik"), ShapeError, "inputs[1].shape", "has size 1, not 3"),
        (OpRequest.make(E, [T((2, 3))], [T((2,))], equation="ii->i"), ShapeError, "inputs[0].shape", "EINSUM i of inputs[0] (2, 3) has size 3, not 2"),
        (OpRequest.make(E, [T((2, 3, 4)), T((3, 4, 5))], [T((2, 3, 5))], equation="...ij,...jk"), ShapeError, "inputs[1].shape", "... axis 0 of inputs[1] (3, 4, 5) has size 3, not 2"),
        (OpRequest.make(E, MM(), [T((4, 2))], equation="ij,jk"), ShapeError, "outputs[0].shape", "EINSUM output shape is (2, 4), request says (4, 2)"),
        (OpRequest.make(E, [], [T(())], equation=""), InvalidRequestError, "inputs", "EINSUM takes 1..4096 inputs, got 0"),
        (OpRequest.make(E, MM(), [T((2, 4)), T((2, 4))], equation="ij,jk"), InvalidRequestError, "outputs", "EINSUM takes 1 outputs, got 2"),
    ],
    ids=["int8", "input dtype", "output dtype", "no equation", "not a string", "term count", "digit",
         "two dots", "two ellipses", "repeated output", "unknown output", "two arrows", "rank",
         "ellipsis rank", "sizes clash", "no stretching a letter", "diagonal sizes",
         "batch sizes clash", "output shape", "no inputs", "two outputs"],
)  # fmt: skip
def test_bad_einsum_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("ins", "equation", "out", "ints"),
    [
        ([(2, 3), (3, 4)], "ij,jk->ik", (2, 4), (8, 9, 9, 10, 8, 10)),
        ([(2, 3), (3, 4)], " i j , j k ", (2, 4), (8, 9, 9, 10, 8, 10)),
        ([(5, 2, 3), (5, 3, 4)], "bij,bjk->bik", (5, 2, 4), (1, 8, 9, 1, 9, 10, 1, 8, 10)),
        ([(2, 3)], "ij->ji", (3, 2), (8, 9, 9, 8)),
        ([(2, 3)], "ji", (3, 2), (9, 8, 8, 9)),
        ([(4, 4)], "ii->i", (4,), (8, 8, 8)),
        ([(4, 4)], "ii", (), (8, 8)),
        ([(3, 5)], "ij->i", (3,), (8, 9, 8)),
        ([(3,), (4,)], "i,j", (3, 4), (8, 9, 8, 9)),
        ([(2, 3), (3, 4), (4, 5)], "ij,jk,kl->il", (2, 5), (8, 9, 9, 10, 10, 11, 8, 11)),
        ([(2, 3)], "aB", (3, 2), (0, 27, 27, 0)),
        ([(2, 1, 3, 4), (5, 4, 2)], "...ij,...jk->...ik", (2, 5, 3, 2), (52, 53, 8, 9, 53, 9, 10, 52, 53, 8, 10)),
        ([(7, 2, 3), (3, 4)], "...ij,jk", (7, 2, 4), (52, 8, 9, 9, 10, 52, 8, 10)),
        ([(2, 3, 3)], "...ii->...i", (2, 3), (52, 8, 8, 52, 8)),
        ([(2, 3, 4)], "...ij->ji", (4, 3), (52, 8, 9, 9, 8)),
        ([(3, 4)], "...ij->...ji", (4, 3), (8, 9, 9, 8)),
        ([(0, 3)], "ij->j", (3,), (8, 9, 9)),
    ],
    ids=["matmul", "spaces", "batched", "transpose", "implicit transpose", "diagonal", "trace",
         "row sums", "outer", "three operands", "upper case first", "ellipsis broadcast",
         "implicit ellipsis", "batched diagonal", "ellipsis summed", "empty ellipsis", "empty"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64, I32, I64], ids=lambda d: d.name)
def test_every_request_is_one_einsum_blob(
    dtype: DType, ins: list, equation: str, out: tuple, ints: tuple
) -> None:
    descs = [T(s, dtype) for s in ins]
    y = T(out, dtype)
    prog = Pipeline().compile(OpRequest.make(E, descs, [y], equation=equation))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch(tuple(d.addr for d in (*descs, y)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    assert [(p.dtype, p.shape) for p in blob.params] == [(d.dtype, d.shape) for d in (*descs, y)]


def test_4d_nhwc_operands_go_through_their_logical_order() -> None:
    """An NHWC A [N, H, W, C] becomes NCHW scratch the equation's letters name; the NCHW Y the
    kernel writes is transposed back into the NHWC Y asked; a 2-D operand is taken as stored."""
    a, w = T((2, 4, 5, 3), layout=Layout.NHWC), T((3, 6))
    y = T((2, 4, 5, 6), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(E, [a, w], [y], equation="nchw,cd->ndhw"))
    assert prog.scratch == (2 * 3 * 4 * 5 * 4, 2 * 6 * 4 * 5 * 4) and prog.primary == 1
    s0, s1 = 0xA0000, 0xB0000
    pre, main, post = [decode(b) for b in prog.patch((a.addr, w.addr, y.addr, s0, s1))]
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 3, 1, 2)
    assert main.kernel_id is K and [p.addr for p in main.params] == [s0, w.addr, s1]
    assert [p.shape for p in main.params] == [(2, 3, 4, 5), (3, 6), (2, 6, 4, 5)]
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
    assert [p.addr for p in post.params] == [s1, y.addr]


def test_infer_shapes_reads_the_equation() -> None:
    req = OpRequest.make(E, [T((6, 2, 3)), T((6, 3, 5))], [T((1,))], equation="bij,bjk->bki")
    assert Pipeline().infer_shapes(req) == ((6, 5, 2),)
