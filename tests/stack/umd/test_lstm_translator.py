# ruff: noqa: E501 - the case tables read best one case per line
"""The LSTM translator: requests of another dtype or shape, unknown or malformed attributes, or
the wrong operand counts are typed errors naming the field; a good one is one LSTM blob on X, W,
R, the optional B, sequence_lens, initial_h, initial_c and P, Y, Y_h and Y_c, with the
direction, layout, input_forget and activations as its int immediates and clip, alpha and beta
as its floats; an NHWC Y is written in its logical order and transposed after the kernel."""

from __future__ import annotations

from functools import partial

import pytest

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnActivation, RnnDirection
from stack.umd import DType, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from tests.stack.umd.descs import I32, I64, F, T, refused
from tests.stack.umd.recurrent import (
    assert_one_blob_on_the_operands,
    layout_1_main_blob,
    one_blob,
    recurrent_ins,
    recurrent_outs,
)

LSTM = OpKind.LSTM
K = KernelId.LSTM
F16, F64 = DType.F16, DType.F64


_ins = partial(recurrent_ins, 4)
_outs = partial(recurrent_outs, 3)


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(LSTM, _ins(I32), _outs(I32)), UnsupportedDtypeError, "inputs[0].dtype", "LSTM does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(LSTM, [*_ins()[:2], T((1, 20, 5), F16)], _outs()), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F16, expected F32"),
        (OpRequest.make(LSTM, [*_ins(n_in=4), T((2,), I64)], _outs()), UnsupportedDtypeError, "inputs[4].dtype", "LSTM sequence_lens must be I32, got I64"),
        (OpRequest.make(LSTM, _ins(), [*_outs()[:2], T((1, 2, 5), F16)]), UnsupportedDtypeError, "outputs[2].dtype", "outputs[2] is F16, expected F32"),
        (OpRequest.make(LSTM, [T((4, 6)), *_ins()[1:]], _outs()), ShapeError, "inputs[0].shape", "LSTM takes X [S, N, I] or [N, S, I], got (4, 6)"),
        (OpRequest.make(LSTM, [_ins()[0], T((2, 20, 3)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "LSTM takes W [1, 4H, 3] for X (4, 2, 3), got (2, 20, 3)"),
        (OpRequest.make(LSTM, [_ins()[0], T((1, 18, 3)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "got (1, 18, 3)"),
        (OpRequest.make(LSTM, [*_ins()[:2], T((1, 20, 4))], _outs()), ShapeError, "inputs[2].shape", "LSTM R must be (1, 20, 5) for X (4, 2, 3) and W (1, 20, 3), got (1, 20, 4)"),
        (OpRequest.make(LSTM, [*_ins(), T((1, 10))], _outs()), ShapeError, "inputs[3].shape", "LSTM B must be (1, 40)"),
        (OpRequest.make(LSTM, [*_ins(n_in=6), T((2, 1, 5))], _outs()), ShapeError, "inputs[6].shape", "LSTM initial_c must be (1, 2, 5)"),
        (OpRequest.make(LSTM, [*_ins(n_in=7), T((1, 10))], _outs()), ShapeError, "inputs[7].shape", "LSTM P must be (1, 15)"),
        (OpRequest.make(LSTM, _ins(), [*_outs()[:2], T((2, 1, 5))]), ShapeError, "outputs[2].shape", "LSTM output shape is (1, 2, 5), request says (2, 1, 5)"),
        (OpRequest.make(LSTM, _ins(), _outs(), direction="up"), InvalidRequestError, "attrs.direction", "LSTM direction must be one of forward, reverse, bidirectional, got 'up'"),
        (OpRequest.make(LSTM, _ins(), _outs(), layout=2), InvalidRequestError, "attrs.layout", "LSTM layout must be 0 or 1, got 2"),
        (OpRequest.make(LSTM, _ins(), _outs(), input_forget=2), InvalidRequestError, "attrs.input_forget", "LSTM input_forget must be 0 or 1, got 2"),
        (OpRequest.make(LSTM, _ins(), _outs(), activations="Sigmoid,Tanh,Gelu"), InvalidRequestError, "attrs.activations", "LSTM activations must be 3 of Tanh, Relu"),
        (OpRequest.make(LSTM, _ins(), _outs(), activation_alpha=(0.1,)), InvalidRequestError, "attrs.activation_alpha", "LSTM activation_alpha must be 3 numbers, one per activation, got (0.1,)"),
        (OpRequest.make(LSTM, _ins(), _outs(), clip=0.0), InvalidRequestError, "attrs.clip", "LSTM clip must be > 0, got 0.0"),
        (OpRequest.make(LSTM, _ins()[:2], _outs()), InvalidRequestError, "inputs", "LSTM takes 3..8 inputs, got 2"),
        (OpRequest.make(LSTM, _ins(), _outs()[:2]), InvalidRequestError, "outputs", "LSTM takes 3 outputs, got 2"),
    ],
    ids=["int32 X", "R dtype", "int64 lengths", "Y_c dtype", "rank 2 X", "W directions", "W not 4H",
         "R shape", "B shape", "initial_c shape", "P shape", "Y_c shape", "unknown direction",
         "layout 2", "input_forget 2", "unknown activation", "one alpha", "clip 0", "two inputs",
         "two outputs"],
)  # fmt: skip
def test_bad_lstm_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("n_in", [3, 4, 6, 8], ids=["plain", "bias", "initial_h", "peepholes"])
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_lstm_blob(
    dtype: DType, direction: RnnDirection, n_in: int
) -> None:
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    assert_one_blob_on_the_operands(
        LSTM,
        K,
        _ins(dtype, d, n_in),
        _outs(dtype, d),
        direction,
        (int(direction), 0, 0, 2, 0, 0, 2, 0, 0),
        (0.0,) * 13,
    )


def test_activations_cross_with_their_alpha_and_beta_and_input_forget() -> None:
    ins, outs = _ins(d=2), _outs(d=2)
    req = OpRequest.make(LSTM, ins, outs, direction="bidirectional", input_forget=1,
                         activations="HardSigmoid,ScaledTanh,Affine,Sigmoid,Elu,Tanh", clip=2.5,
                         activation_alpha=(0.2, 0.3, 0.4, 0.0, 0.5, 0.0),
                         activation_beta=(0.6, 0.7, 0.8, 0.0, 0.0, 0.0))  # fmt: skip
    blob = one_blob(req)
    a = RnnActivation
    codes = (a.HARD_SIGMOID, a.SCALED_TANH, a.AFFINE, a.SIGMOID, a.ELU, a.TANH)
    assert blob.ints == (2, 0, 1, *map(int, codes))
    assert blob.floats == (2.5, 0.2, 0.6, 0.3, 0.7, 0.4, 0.8, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0)


def test_layout_1_shapes_and_an_nhwc_y_written_in_logical_order() -> None:
    main = layout_1_main_blob(LSTM, 4, 3)
    assert main.kernel_id is K and main.ints == (0, 1, 0, 2, 0, 0, 2, 0, 0)
