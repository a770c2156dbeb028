# ruff: noqa: E501 - the case tables read best one case per line
"""The ATTENTION translator: requests of another dtype or shape, attributes out of range, or the
wrong operand counts are typed errors naming the field; a good one is one ATTENTION blob on Q,
K, V, the optional attn_mask, past_key, past_value and nonpad_kv_seqlen and the four outputs,
with the seven int and two float immediates; 4-D operands stored NHWC are converted around the
kernel, 3-D ones taken as stored."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, I64, B, F, T, refused

AT = OpKind.ATTENTION
K = KernelId.ATTENTION
F16, F64 = DType.F16, DType.F64
QKV = [T((2, 3, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8))]


def _outs(dtype: DType = F, total: int = 6, y: tuple = (2, 3, 4, 8)) -> list:
    return [
        T(y, dtype),
        T((2, 3, total, 8), dtype),
        T((2, 3, total, 8), dtype),
        T((2, 3, 4, total), dtype),
    ]


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(AT, [T((2, 3, 4, 8), I32)] * 3, _outs(I32)), UnsupportedDtypeError, "inputs[0].dtype", "ATTENTION does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(AT, [QKV[0], T((2, 3, 6, 8), F16), QKV[2]], _outs()), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F16, expected F32"),
        (OpRequest.make(AT, [*QKV, T((4, 6), I32)], _outs()), UnsupportedDtypeError, "inputs[3].dtype", "ATTENTION inputs[3] must be BOOL or F32, got I32"),
        (OpRequest.make(AT, [*QKV, T((4, 6)), T((2, 3, 0, 8)), T((2, 3, 0, 8)), T((2,), I32)], _outs()), UnsupportedDtypeError, "inputs[6].dtype", "ATTENTION inputs[6] must be I64, got I32"),
        (OpRequest.make(AT, QKV, [*_outs()[:3], T((2, 3, 4, 6), F64)]), UnsupportedDtypeError, "outputs[3].dtype", "outputs[3] is F64, expected F32"),
        (OpRequest.make(AT, [T((2, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8))], _outs(), q_num_heads=1, kv_num_heads=1), ShapeError, "inputs[0].shape", "3-D or 4-D like K and V"),
        (OpRequest.make(AT, [T((2, 4, 24)), T((2, 6, 24)), T((2, 6, 24))], _outs(y=(2, 4, 24)), q_num_heads=5, kv_num_heads=3), ShapeError, "inputs[0].shape", "split by 5 and 3 heads"),
        (OpRequest.make(AT, [QKV[0], T((2, 2, 6, 8)), T((2, 2, 6, 8))], _outs()), ShapeError, "inputs[1].shape", "heads dividing 3"),
        (OpRequest.make(AT, [QKV[0], T((2, 3, 6, 4)), QKV[2]], _outs()), ShapeError, "inputs[1].shape", "head size 8"),
        (OpRequest.make(AT, [*QKV, T((4, 7))], _outs()), ShapeError, "inputs[3].shape", "broadcast to (2, 3, 4, 6), padded"),
        (OpRequest.make(AT, [*QKV, T(())], _outs()), ShapeError, "inputs[3].shape", "got ()"),
        (OpRequest.make(AT, [*QKV, T((3, 6))], _outs()), ShapeError, "inputs[3].shape", "shapes (3, 6) and (2, 3, 4, 6) do not broadcast"),
        (OpRequest.make(AT, [*QKV, T((4, 9)), T((2, 3, 3, 8)), T((2, 3, 2, 8))], _outs(total=9)), ShapeError, "inputs[5].shape", "must be (2, 3, 3, 8), got (2, 3, 2, 8)"),
        (OpRequest.make(AT, [*QKV, T((4, 6)), T((2, 3, 0, 8)), T((2, 3, 0, 8)), T((3,), I64)], _outs()), ShapeError, "inputs[6].shape", "(2,) with an empty past"),
        (OpRequest.make(AT, QKV, _outs(y=(2, 3, 4, 9))), ShapeError, "outputs[0].shape", "request says (2, 3, 4, 9)"),
        (OpRequest.make(AT, QKV, _outs(total=7)), ShapeError, "outputs[1].shape", "request says (2, 3, 7, 8)"),
        (OpRequest.make(AT, QKV, _outs(), is_causal=2), InvalidRequestError, "attrs.is_causal", "ATTENTION is_causal 2 is out of range"),
        (OpRequest.make(AT, QKV, _outs(), qk_matmul_output_mode=4), InvalidRequestError, "attrs.qk_matmul_output_mode", "4 is out of range"),
        (OpRequest.make(AT, QKV, _outs(), softmax_precision=16), InvalidRequestError, "attrs.softmax_precision", "16 is out of range"),
        (OpRequest.make(AT, QKV, _outs(), left_window_size=-2), InvalidRequestError, "attrs.left_window_size", "-2 is out of range"),
        (OpRequest.make(AT, QKV, _outs(), q_num_heads=-1), InvalidRequestError, "attrs.q_num_heads", "-1 is out of range"),
        (OpRequest.make(AT, [T((2, 4, 24)), T((2, 6, 24)), T((2, 6, 24))], _outs(y=(2, 4, 24)), q_num_heads=3), InvalidRequestError, "attrs.q_num_heads", "needed by 3-D operands"),
        (OpRequest.make(AT, QKV, _outs(), scale=-0.5), InvalidRequestError, "attrs.scale", "-0.5 is negative"),
        (OpRequest.make(AT, QKV, _outs(), softcap="big"), InvalidRequestError, "attrs.softcap", "must be a number"),
        (OpRequest.make(AT, QKV[:2], _outs()), InvalidRequestError, "inputs", "ATTENTION takes 3..7 inputs, got 2"),
        (OpRequest.make(AT, QKV, _outs()[:3]), InvalidRequestError, "outputs", "ATTENTION takes 4 outputs, got 3"),
    ],
    ids=["int32 Q", "K dtype", "mask dtype", "nonpad dtype", "qk dtype", "mixed ranks", "3-D heads",
         "heads not dividing", "head size", "mask too long", "0-d mask", "mask not broadcasting", "past_value shape",
         "nonpad shape", "Y shape", "present_key shape", "is_causal 2", "mode 4", "bfloat16 precision",
         "window -2", "negative heads", "3-D without heads", "negative scale", "softcap string",
         "two inputs", "three outputs"],
)  # fmt: skip
def test_bad_attention_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize(
    ("n_in", "mask"),
    [(3, None), (4, F), (4, B), (6, F), (7, F)],
    ids=["plain", "float_mask", "bool_mask", "past", "nonpad"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_attention_blob(
    dtype: DType, n_in: int, mask: DType | None
) -> None:
    past = 0 if n_in == 7 else 3
    total = 6 + (past if n_in >= 6 else 0)
    ins = [T((2, 6, 4, 8), dtype), T((2, 3, 6, 8), dtype), T((2, 3, 6, 8), dtype),
           T((2, 1, 4, total), dtype if mask is F else B), T((2, 3, past, 8), dtype),
           T((2, 3, past, 8), dtype), T((2,), I64)][:n_in]  # fmt: skip
    outs = [T((2, 6, 4, 8), dtype), T((2, 3, total, 8), dtype), T((2, 3, total, 8), dtype),
            T((2, 6, 4, total), dtype)]  # fmt: skip
    req = OpRequest.make(AT, ins, outs, is_causal=1, qk_matmul_output_mode=2, scale=0.25)
    prog = Pipeline().compile(req)
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == (1, 0, 0, 2, 0, -1, -1)
    assert blob.floats == (0.25, 0.0)
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (d.addr, d.dtype, d.shape) for d in (*ins, *outs)
    ]


def test_nhwc_operands_are_read_and_written_in_logical_order() -> None:
    """4-D Q and Y stored NHWC are transposed to their logical order around the kernel; the
    3-D-free others are taken as stored."""
    q, y = T((2, 4, 8, 3), layout=Layout.NHWC), T((2, 4, 8, 3), layout=Layout.NHWC)
    ins, outs = [q, QKV[1], QKV[2]], [y, *_outs()[1:]]
    prog = Pipeline().compile(OpRequest.make(AT, ins, outs))
    assert prog.scratch == (2 * 3 * 4 * 8 * 4, 2 * 3 * 4 * 8 * 4) and prog.primary == 1
    s0, s1 = 0xA0000, 0xB0000
    blobs = [decode(b) for b in prog.patch((*(d.addr for d in (*ins, *outs)), s0, s1))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, K, KernelId.TRANSPOSE]
    assert blobs[0].ints == (0, 3, 1, 2) and blobs[2].ints == (0, 2, 3, 1)
    assert blobs[1].params[0].shape == (2, 3, 4, 8) and blobs[1].params[3].addr == s1


def test_three_d_operands_are_taken_as_stored() -> None:
    ins = [T((2, 4, 72)), T((2, 6, 24)), T((2, 6, 24))]
    outs = [T((2, 4, 72)), T((2, 3, 6, 8)), T((2, 3, 6, 8)), T((2, 9, 4, 6))]
    prog = Pipeline().compile(OpRequest.make(AT, ins, outs, q_num_heads=9, kv_num_heads=3))
    (blob,) = [decode(x) for x in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.ints == (0, 9, 3, 0, 0, -1, -1)
    assert [p.shape for p in blob.params] == [d.shape for d in (*ins, *outs)]
