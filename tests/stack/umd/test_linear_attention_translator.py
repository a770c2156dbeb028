# ruff: noqa: E501 - the case tables read best one case per line
"""The LINEAR_ATTENTION translator: requests of another dtype or shape, unknown or malformed
attributes, or the wrong operand counts are typed errors naming the field; a good one is one
LINEAR_ATTENTION blob on query, key, value, the optional past_state, decay and beta, output and
present_state, with update_rule's code and the head counts as its int immediates and scale as its
float; an NHWC state is read and written in its logical order, transposed around the kernel."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.linear_attention import LinearUpdateRule
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import F, T, refused

LA = OpKind.LINEAR_ATTENTION
K = KernelId.LINEAR_ATTENTION
F16, F64 = DType.F16, DType.F64
HEADS = {"q_num_heads": 4, "kv_num_heads": 2}


def _ins(dtype: DType = F, n_in: int = 6, state: DType | None = None) -> list:
    """query [2, 3, 4 * 2], key [2, 3, 2 * 2], value [2, 3, 2 * 3], past_state, decay, beta."""
    return [T((2, 3, 8), dtype), T((2, 3, 4), dtype), T((2, 3, 6), dtype), T((2, 2, 2, 3), state or dtype),
            T((2, 3, 2), dtype), T((2, 3, 1), dtype)][:n_in]  # fmt: skip


def _outs(dtype: DType = F, state: DType | None = None) -> list:
    return [T((2, 3, 12), dtype), T((2, 2, 2, 3), state or dtype)]


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(LA, _ins(F64), _outs(F64), **HEADS), UnsupportedDtypeError, "inputs[0].dtype", "LINEAR_ATTENTION does not take F64; supported: F16, F32"),
        (OpRequest.make(LA, _ins(state=F64), _outs(state=F64), **HEADS), UnsupportedDtypeError, "inputs[3].dtype", "does not take F64"),
        (OpRequest.make(LA, [*_ins()[:2], T((2, 3, 6), F16), *_ins()[3:]], _outs(), **HEADS), UnsupportedDtypeError, "inputs[2].dtype", "LINEAR_ATTENTION inputs[2] must be F32, got F16"),
        (OpRequest.make(LA, [*_ins()[:5], T((2, 3, 1), F16)], _outs(), **HEADS), UnsupportedDtypeError, "inputs[5].dtype", "inputs[5] must be F32"),
        (OpRequest.make(LA, _ins(), [T((2, 3, 12), F16), _outs()[1]], **HEADS), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] must be F32"),
        (OpRequest.make(LA, _ins(state=F16), _outs(), **HEADS), UnsupportedDtypeError, "outputs[1].dtype", "outputs[1] must be F16, got F32"),
        (OpRequest.make(LA, _ins(), _outs(), update_rule="softmax", **HEADS), InvalidRequestError, "attrs.update_rule", "'softmax' is unknown; known: linear, gated, delta, gated_delta"),
        (OpRequest.make(LA, _ins(n_in=4), _outs(), **HEADS), InvalidRequestError, "inputs", "LINEAR_ATTENTION gated_delta takes 6..6 inputs, got 4"),
        (OpRequest.make(LA, _ins(n_in=3), _outs(), update_rule="gated", **HEADS), InvalidRequestError, "inputs", "gated takes 5..6 inputs, got 3"),
        (OpRequest.make(LA, _ins(), _outs(), q_num_heads=3, kv_num_heads=2), InvalidRequestError, "attrs.q_num_heads", "3 is not a positive multiple of kv_num_heads 2"),
        (OpRequest.make(LA, _ins(), _outs(), q_num_heads=4), InvalidRequestError, "attrs.q_num_heads", "kv_num_heads 0"),
        (OpRequest.make(LA, _ins(), _outs(), scale="x", **HEADS), InvalidRequestError, "attrs.scale", "attribute scale must be a number"),
        (OpRequest.make(LA, [T((2, 3, 9)), *_ins()[1:]], _outs(), **HEADS), ShapeError, "inputs[0].shape", "query (2, 3, 9) is not [B, T, 4 * Dk]"),
        (OpRequest.make(LA, [_ins()[0], T((2, 3, 6)), *_ins()[2:]], _outs(), **HEADS), ShapeError, "inputs[1].shape", "key (2, 3, 6) is not (2, 3, 4)"),
        (OpRequest.make(LA, [*_ins()[:3], T((2, 2, 3, 2)), *_ins()[4:]], _outs(), **HEADS), ShapeError, "inputs[3].shape", "past_state (2, 2, 3, 2) is not (2, 2, 2, 3)"),
        (OpRequest.make(LA, [*_ins()[:4], T((2, 3, 3)), _ins()[5]], _outs(), **HEADS), ShapeError, "inputs[4].shape", "decay (2, 3, 3)"),
        (OpRequest.make(LA, [*_ins()[:5], T((2, 3, 4))], _outs(), **HEADS), ShapeError, "inputs[5].shape", "beta (2, 3, 4)"),
        (OpRequest.make(LA, _ins(), [T((2, 3, 6)), _outs()[1]], **HEADS), ShapeError, "outputs[0].shape", "request says (2, 3, 6)"),
        (OpRequest.make(LA, _ins()[:2], _outs(), **HEADS), InvalidRequestError, "inputs", "LINEAR_ATTENTION takes 3..6 inputs, got 2"),
        (OpRequest.make(LA, _ins(), _outs()[:1], **HEADS), InvalidRequestError, "outputs", "LINEAR_ATTENTION takes 2 outputs, got 1"),
    ],
    ids=["f64 query", "f64 state", "value dtype", "beta dtype", "output dtype", "present_state dtype", "unknown rule",
         "gated_delta without decay", "gated without decay", "heads not dividing", "no kv heads", "scale not a number",
         "query shape", "key shape", "past_state shape", "decay shape", "beta shape", "output shape", "two inputs", "one output"],
)  # fmt: skip
def test_bad_linear_attention_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("state", [None, F, F16], ids=["query_s", "f32_state", "f16_state"])
@pytest.mark.parametrize("rule", list(LinearUpdateRule), ids=lambda r: r.name.lower())
@pytest.mark.parametrize("dtype", [F, F16], ids=lambda d: d.name)
def test_every_float_request_is_one_linear_attention_blob(
    dtype: DType, rule: LinearUpdateRule, state: DType | None
) -> None:
    n_in = 6 if rule >= LinearUpdateRule.DELTA else 5 if rule else 3 if state is None else 4
    ins, outs = _ins(dtype, n_in, state), _outs(dtype, state if n_in > 3 else None)
    req = OpRequest.make(LA, ins, outs, update_rule=rule.name.lower(), scale=0.25, **HEADS)
    prog = Pipeline().compile(req)
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch(tuple(t.addr for t in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == (int(rule), 4, 2) and blob.floats == (0.25,)
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (t.addr, t.dtype, t.shape) for t in (*ins, *outs)
    ]


def test_the_defaults_are_onnx_s_gated_delta_and_scale_0() -> None:
    ins, outs = _ins(), _outs()
    (blob,) = [
        decode(x)
        for x in Pipeline()
        .compile(OpRequest.make(LA, ins, outs, **HEADS))
        .patch(tuple(t.addr for t in (*ins, *outs)))
    ]
    assert blob.ints == (int(LinearUpdateRule.GATED_DELTA), 4, 2) and blob.floats == (0.0,)


def test_an_nhwc_state_is_read_and_written_in_logical_order() -> None:
    ins = [*_ins(n_in=3), T((2, 2, 3, 2), layout=Layout.NHWC)]  # past_state (2, 2, 2, 3) NHWC
    outs = [_outs()[0], T((2, 2, 3, 2), layout=Layout.NHWC)]
    prog = Pipeline().compile(OpRequest.make(LA, ins, outs, update_rule="linear", **HEADS))
    assert prog.scratch == (2 * 2 * 2 * 3 * 4, 2 * 2 * 2 * 3 * 4)
    s0, s1 = 0xA0000, 0xB0000
    pre, main, post = (decode(b) for b in prog.patch((*(t.addr for t in (*ins, *outs)), s0, s1)))
    assert pre.kernel_id is KernelId.TRANSPOSE and pre.ints == (0, 3, 1, 2)
    assert main.kernel_id is K and main.params[3].shape == (2, 2, 2, 3)
    assert main.params[5].shape == (2, 2, 2, 3)
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
