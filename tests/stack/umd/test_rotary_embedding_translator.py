# ruff: noqa: E501 - the case tables read best one case per line
"""The ROTARY_EMBEDDING translator: requests of another dtype, rank or cache shape, bad
attributes, or the wrong operand counts are typed errors naming the field; a good one is one
ROTARY_EMBEDDING blob on X, the caches, the optional position_ids and Y with interleaved,
num_heads and rotary_embedding_dim, a 4-D NHWC X or Y going through its logical order."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, I64, F, T, refused

ROPE = OpKind.ROTARY_EMBEDDING
K = KernelId.ROTARY_EMBEDDING
F16, F64 = DType.F16, DType.F64


def X4(dtype: DType = F) -> list:
    """X [1, 2, 3, 4] with caches [1, 3, 2] and Y."""
    return [T((1, 2, 3, 4), dtype), T((1, 3, 2), dtype), T((1, 3, 2), dtype)]


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(ROPE, [T((1, 2, 3, 4), I32), T((1, 3, 2), I32), T((1, 3, 2), I32)], [T((1, 2, 3, 4), I32)]), UnsupportedDtypeError, "inputs[0].dtype", "ROTARY_EMBEDDING does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((1, 3, 2), F16), T((1, 3, 2))], [T((1, 2, 3, 4))]), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F16, expected F32"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((1, 3, 2)), T((1, 3, 2), F64)], [T((1, 2, 3, 4))]), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F64, expected F32"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((5, 2)), T((5, 2)), T((1, 3), I32)], [T((1, 2, 3, 4))]), UnsupportedDtypeError, "inputs[3].dtype", "position_ids must be I64, got I32"),
        (OpRequest.make(ROPE, X4(F16), [T((1, 2, 3, 4))]), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is F32, expected F16"),
        (OpRequest.make(ROPE, [T((2, 8)), T((2, 4)), T((2, 4))], [T((2, 8))], num_heads=1), ShapeError, "inputs[0].shape", "takes X [B, H, S, D] or [B, S, H * D], got (2, 8)"),
        (OpRequest.make(ROPE, [T((1, 3, 10)), T((1, 3, 2)), T((1, 3, 2))], [T((1, 3, 10))], num_heads=4), ShapeError, "inputs[0].shape", "num_heads 4 does not divide X's hidden size 10"),
        (OpRequest.make(ROPE, [T((1, 3, 8)), T((1, 3, 2)), T((1, 3, 2))], [T((1, 3, 8))]), InvalidRequestError, "attrs.num_heads", "is needed by a 3-D X (1, 3, 8)"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], num_heads=-1), InvalidRequestError, "attrs.num_heads", "must be >= 0, got -1"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], interleaved=2), InvalidRequestError, "attrs.interleaved", "must be 0 or 1, got 2"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], interleaved=0.5), InvalidRequestError, "attrs.interleaved", "must be an int"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], rotary_embedding_dim=-2), InvalidRequestError, "attrs.rotary_embedding_dim", "must be >= 0, got -2"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], rotary_embedding_dim=3), InvalidRequestError, "attrs.rotary_embedding_dim", "3 must be even and at most the head size 4"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4))], rotary_embedding_dim=6), InvalidRequestError, "attrs.rotary_embedding_dim", "6 must be even"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((1, 3, 1)), T((1, 3, 2))], [T((1, 2, 3, 4))]), ShapeError, "inputs[1].shape", "inputs[1] must be (1, 3, 2) for X (1, 2, 3, 4), got (1, 3, 1)"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((1, 3, 2)), T((3, 2))], [T((1, 2, 3, 4))]), ShapeError, "inputs[2].shape", "inputs[2] must be (1, 3, 2)"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((5, 2)), T((5, 1)), T((1, 3), I64)], [T((1, 2, 3, 4))]), ShapeError, "inputs[2].shape", "inputs[2] must be [P, 2]"),
        (OpRequest.make(ROPE, [T((1, 2, 3, 4)), T((5, 2)), T((5, 2)), T((3, 1), I64)], [T((1, 2, 3, 4))]), ShapeError, "inputs[3].shape", "position_ids must be (1, 3) for X (1, 2, 3, 4), got (3, 1)"),
        (OpRequest.make(ROPE, X4(), [T((1, 3, 2, 4))]), ShapeError, "outputs[0].shape", "ROTARY_EMBEDDING output shape is (1, 2, 3, 4), request says (1, 3, 2, 4)"),
        (OpRequest.make(ROPE, X4()[:2], [T((1, 2, 3, 4))]), InvalidRequestError, "inputs", "ROTARY_EMBEDDING takes 3..4 inputs, got 2"),
        (OpRequest.make(ROPE, X4(), [T((1, 2, 3, 4)), T((1, 2, 3, 4))]), InvalidRequestError, "outputs", "ROTARY_EMBEDDING takes 1 outputs, got 2"),
    ],
    ids=["int32 X", "cos dtype", "sin dtype", "ids dtype", "output dtype", "rank 2", "heads do not divide",
         "3-D without heads", "negative heads", "interleaved 2", "interleaved float", "negative dim",
         "odd dim", "dim past head", "cos width", "sin rank", "ids cache width", "ids shape",
         "output shape", "two inputs", "two outputs"],
)  # fmt: skip
def test_bad_rotary_embedding_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("ins", "attrs", "ints"),
    [
        ([(2, 3, 5, 8), (2, 5, 4), (2, 5, 4)], {}, (0, 0, 0)),
        ([(2, 3, 5, 8), (2, 5, 2), (2, 5, 2)], {"interleaved": 1, "rotary_embedding_dim": 4}, (1, 0, 4)),
        ([(1, 4, 16), (9, 2), (9, 2), (1, 4)], {"num_heads": 4}, (0, 4, 0)),
        ([(1, 4, 16), (9, 1), (9, 1), (1, 4)], {"num_heads": 2, "rotary_embedding_dim": 2, "interleaved": 1}, (1, 2, 2)),
        ([(0, 4, 16), (0, 4, 8), (0, 4, 8)], {"num_heads": 1}, (0, 1, 0)),
    ],
    ids=["4-D", "4-D partial interleaved", "3-D ids", "3-D partial ids", "empty batch"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_rotary_blob(
    dtype: DType, ins: list, attrs: dict, ints: tuple
) -> None:
    descs = [T(s, I64 if j == 3 else dtype) for j, s in enumerate(ins)]
    y = T(ins[0], dtype)
    prog = Pipeline().compile(OpRequest.make(ROPE, descs, [y], **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch(tuple(d.addr for d in (*descs, y)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    assert [(p.dtype, p.shape) for p in blob.params] == [(d.dtype, d.shape) for d in (*descs, y)]


def test_a_4d_nhwc_x_and_y_go_through_their_logical_order() -> None:
    """A stored NHWC X [B, S, D, H] becomes [B, H, S, D] scratch, which the kernel rotates into
    scratch, transposed back into the NHWC Y."""
    x, cos, sin = T((2, 5, 8, 3), layout=Layout.NHWC), T((2, 5, 4)), T((2, 5, 4))
    y = T((2, 5, 8, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(ROPE, [x, cos, sin], [y]))
    assert prog.scratch == (2 * 3 * 5 * 8 * 4,) * 2 and prog.primary == 1
    s0, s1 = 0xA0000, 0xB0000
    pre, main, post = [decode(b) for b in prog.patch((x.addr, cos.addr, sin.addr, y.addr, s0, s1))]
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 3, 1, 2)
    assert main.kernel_id is K and [p.addr for p in main.params] == [s0, cos.addr, sin.addr, s1]
    assert [p.shape for p in main.params] == [(2, 3, 5, 8), (2, 5, 4), (2, 5, 4), (2, 3, 5, 8)]
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
    assert [p.addr for p in post.params] == [s1, y.addr]


def test_a_4d_nchw_x_is_taken_as_stored() -> None:
    x, cos, sin = T((2, 3, 5, 8), layout=Layout.NCHW), T((2, 5, 4)), T((2, 5, 4))
    y = T((2, 3, 5, 8), layout=Layout.NCHW)
    prog = Pipeline().compile(OpRequest.make(ROPE, [x, cos, sin], [y]))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, cos.addr, sin.addr, y.addr))]
    assert blob.kernel_id is K and blob.params[0].shape == (2, 3, 5, 8)
