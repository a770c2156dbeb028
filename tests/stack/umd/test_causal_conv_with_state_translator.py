# ruff: noqa: E501 - the case tables read best one case per line
"""The CAUSAL_CONV_WITH_STATE translator: requests of another dtype or shape, an unknown
activation, or the wrong operand counts are typed errors naming the field; a good one is one
CAUSAL_CONV_WITH_STATE blob on input, weight, the optional bias and past_state, output and
present_state, with the activation by name as its int immediate, every operand taken as
stored."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.causal_conv_with_state import CausalConvActivation
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, F, T, refused

CC = OpKind.CAUSAL_CONV_WITH_STATE
K = KernelId.CAUSAL_CONV_WITH_STATE
F16, F64 = DType.F16, DType.F64


def _outs(dtype: DType = F, length: int = 5, k: int = 3) -> list:
    return [T((2, 4, length), dtype), T((2, 4, k - 1), dtype)]


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(CC, [T((2, 4, 5), I32), T((4, 1, 3), I32)], _outs(I32)), UnsupportedDtypeError, "inputs[0].dtype", "CAUSAL_CONV_WITH_STATE does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3), F16)], _outs()), UnsupportedDtypeError, "inputs[1].dtype", "inputs[1] is F16, expected F32"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3)), T((4,)), T((2, 4, 2), F64)], _outs()), UnsupportedDtypeError, "inputs[3].dtype", "inputs[3] is F64, expected F32"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], [T((2, 4, 5)), T((2, 4, 2), F16)]), UnsupportedDtypeError, "outputs[1].dtype", "outputs[1] is F16, expected F32"),
        (OpRequest.make(CC, [T((4, 5)), T((4, 1, 3))], _outs()), ShapeError, "inputs[0].shape", "CAUSAL_CONV_WITH_STATE takes input [B, C, L], got (4, 5)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 2, 3))], _outs()), ShapeError, "inputs[1].shape", "inputs[1] must be [4, 1, K >= 1] for input (2, 4, 5), got (4, 2, 3)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 0))], _outs(k=1)), ShapeError, "inputs[1].shape", "got (4, 1, 0)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3)), T((2,))], _outs()), ShapeError, "inputs[2].shape", "inputs[2] must be (4,), got (2,)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3)), T((4,)), T((2, 4, 3))], _outs()), ShapeError, "inputs[3].shape", "inputs[3] must be (2, 4, 2), got (2, 4, 3)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], _outs(length=6)), ShapeError, "outputs[0].shape", "CAUSAL_CONV_WITH_STATE output shape is (2, 4, 5), request says (2, 4, 6)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], [T((2, 4, 5)), T((2, 4, 3))]), ShapeError, "outputs[1].shape", "request says (2, 4, 3)"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], _outs(), activation="relu"), InvalidRequestError, "attrs.activation", "unknown activation 'relu'; known: none, silu, swish"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], _outs(), activation=1), InvalidRequestError, "attrs.activation", "unknown activation 1"),
        (OpRequest.make(CC, [T((2, 4, 5))], _outs()), InvalidRequestError, "inputs", "CAUSAL_CONV_WITH_STATE takes 2..4 inputs, got 1"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3)), T((4,)), T((2, 4, 2)), T((4,))], _outs()), InvalidRequestError, "inputs", "got 5"),
        (OpRequest.make(CC, [T((2, 4, 5)), T((4, 1, 3))], [T((2, 4, 5))]), InvalidRequestError, "outputs", "CAUSAL_CONV_WITH_STATE takes 2 outputs, got 1"),
    ],
    ids=["int32 input", "weight dtype", "past_state dtype", "present_state dtype", "rank 2 input",
         "weight not depthwise", "empty kernel", "bias shape", "past_state shape", "output shape",
         "present_state shape", "unknown activation", "int activation", "one input", "five inputs",
         "one output"],
)  # fmt: skip
def test_bad_causal_conv_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("n_in", [2, 3, 4], ids=["plain", "bias", "bias_past"])
@pytest.mark.parametrize(
    ("attrs", "ints"),
    [({}, (0,)), ({"activation": "none"}, (0,)), ({"activation": "silu"}, (1,)), ({"activation": "swish"}, (1,))],
    ids=["default", "none", "silu", "swish"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_causal_conv_blob(
    dtype: DType, attrs: dict, ints: tuple, n_in: int
) -> None:
    ins = [T((2, 4, 5), dtype), T((4, 1, 3), dtype), T((4,), dtype), T((2, 4, 2), dtype)][:n_in]
    outs = [T((2, 4, 5), dtype), T((2, 4, 2), dtype)]
    prog = Pipeline().compile(OpRequest.make(CC, ins, outs, **attrs))
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == ints and blob.floats == ()
    assert ints[0] in tuple(CausalConvActivation)
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (d.addr, dtype, d.shape) for d in (*ins, *outs)
    ]


def test_a_kernel_of_one_tap_has_an_empty_state() -> None:
    ins, outs = [T((1, 3, 4)), T((3, 1, 1))], [T((1, 3, 4)), T((1, 3, 0))]
    prog = Pipeline().compile(OpRequest.make(CC, ins, outs))
    (blob,) = [decode(x) for x in prog.patch(tuple(d.addr for d in (*ins, *outs)))]
    assert blob.kernel_id is K and [p.shape for p in blob.params][-1] == (1, 3, 0)
