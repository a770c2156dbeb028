# ruff: noqa: E501 - the case tables read best one case per line
"""The RNN translator: requests of another dtype or shape, unknown or malformed attributes, or
the wrong operand counts are typed errors naming the field; a good one is one RNN blob on X, W,
R, the optional B, sequence_lens and initial_h, Y and Y_h, with the direction, layout and
activations as its int immediates and clip, alpha and beta as its floats; an NHWC Y is written
in its logical order and transposed after the kernel."""

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

RNN = OpKind.RNN
K = KernelId.RNN
F16, F64 = DType.F16, DType.F64


_ins = partial(recurrent_ins, 1)
_outs = partial(recurrent_outs, 2)


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(RNN, _ins(I32), _outs(I32)), UnsupportedDtypeError, "inputs[0].dtype", "RNN does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(RNN, [*_ins()[:2], T((1, 5, 5), F16)], _outs()), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F16, expected F32"),
        (OpRequest.make(RNN, [*_ins(n_in=4), T((2,), I64)], _outs()), UnsupportedDtypeError, "inputs[4].dtype", "RNN sequence_lens must be I32, got I64"),
        (OpRequest.make(RNN, [*_ins(n_in=5), T((1, 2, 5), F64)], _outs()), UnsupportedDtypeError, "inputs[5].dtype", "inputs[5] is F64, expected F32"),
        (OpRequest.make(RNN, _ins(), [_outs()[0], T((1, 2, 5), F16)]), UnsupportedDtypeError, "outputs[1].dtype", "outputs[1] is F16, expected F32"),
        (OpRequest.make(RNN, [T((4, 6)), *_ins()[1:]], _outs()), ShapeError, "inputs[0].shape", "RNN takes X [S, N, I] or [N, S, I], got (4, 6)"),
        (OpRequest.make(RNN, [_ins()[0], T((2, 5, 3)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "RNN takes W [1, H, 3] for X (4, 2, 3), got (2, 5, 3)"),
        (OpRequest.make(RNN, [_ins()[0], T((1, 5, 4)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "got (1, 5, 4)"),
        (OpRequest.make(RNN, [*_ins()[:2], T((1, 5, 4))], _outs()), ShapeError, "inputs[2].shape", "RNN R must be (1, 5, 5) for X (4, 2, 3) and W (1, 5, 3), got (1, 5, 4)"),
        (OpRequest.make(RNN, [*_ins(), T((1, 5))], _outs()), ShapeError, "inputs[3].shape", "RNN B must be (1, 10)"),
        (OpRequest.make(RNN, [*_ins(n_in=4), T((3,), I32)], _outs()), ShapeError, "inputs[4].shape", "RNN sequence_lens must be (2,)"),
        (OpRequest.make(RNN, [*_ins(n_in=5), T((2, 1, 5))], _outs()), ShapeError, "inputs[5].shape", "RNN initial_h must be (1, 2, 5)"),
        (OpRequest.make(RNN, _ins(), [T((4, 2, 1, 5)), _outs()[1]]), ShapeError, "outputs[0].shape", "RNN output shape is (4, 1, 2, 5), request says (4, 2, 1, 5)"),
        (OpRequest.make(RNN, _ins(), [_outs()[0], T((2, 1, 5))]), ShapeError, "outputs[1].shape", "request says (2, 1, 5)"),
        (OpRequest.make(RNN, _ins(), _outs(), direction="up"), InvalidRequestError, "attrs.direction", "RNN direction must be one of forward, reverse, bidirectional, got 'up'"),
        (OpRequest.make(RNN, _ins(), _outs(), layout=2), InvalidRequestError, "attrs.layout", "RNN layout must be 0 or 1, got 2"),
        (OpRequest.make(RNN, _ins(), _outs(), activations="Gelu"), InvalidRequestError, "attrs.activations", "RNN activations must be 1 of Tanh, Relu"),
        (OpRequest.make(RNN, _ins(), _outs(), activations="Tanh,Tanh"), InvalidRequestError, "attrs.activations", "got 'Tanh,Tanh'"),
        (OpRequest.make(RNN, _ins(d=2), _outs(d=2), direction="bidirectional", activations="Tanh"), InvalidRequestError, "attrs.activations", "RNN activations must be 2 of"),
        (OpRequest.make(RNN, _ins(), _outs(), activation_alpha=(0.1, 0.2)), InvalidRequestError, "attrs.activation_alpha", "RNN activation_alpha must be 1 numbers, one per direction, got (0.1, 0.2)"),
        (OpRequest.make(RNN, _ins(), _outs(), activation_beta="x"), InvalidRequestError, "attrs.activation_beta", "got 'x'"),
        (OpRequest.make(RNN, _ins(), _outs(), clip=0.0), InvalidRequestError, "attrs.clip", "RNN clip must be > 0, got 0.0"),
        (OpRequest.make(RNN, _ins(), _outs(), clip="big"), InvalidRequestError, "attrs.clip", "attribute clip must be a number"),
        (OpRequest.make(RNN, _ins()[:2], _outs()), InvalidRequestError, "inputs", "RNN takes 3..6 inputs, got 2"),
        (OpRequest.make(RNN, [*_ins(n_in=6), T((1,))], _outs()), InvalidRequestError, "inputs", "got 7"),
        (OpRequest.make(RNN, _ins(), _outs()[:1]), InvalidRequestError, "outputs", "RNN takes 2 outputs, got 1"),
    ],
    ids=["int32 X", "R dtype", "int64 lengths", "initial_h dtype", "Y_h dtype", "rank 2 X",
         "W directions", "W input size", "R shape", "B shape", "lengths shape", "initial_h shape",
         "Y shape", "Y_h shape", "unknown direction", "layout 2", "unknown activation",
         "two activations", "one of two activations", "two alphas", "beta not numbers", "clip 0",
         "clip not a number", "two inputs", "seven inputs", "one output"],
)  # fmt: skip
def test_bad_rnn_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("n_in", [3, 4, 5, 6], ids=["plain", "bias", "lengths", "initial_h"])
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_rnn_blob(
    dtype: DType, direction: RnnDirection, n_in: int
) -> None:
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    assert_one_blob_on_the_operands(
        RNN,
        K,
        _ins(dtype, d, n_in),
        _outs(dtype, d),
        direction,
        (int(direction), 0, 0, 0),
        (0.0,) * 5,
    )


@pytest.mark.parametrize("name", ["Relu", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                  "HardSigmoid", "Elu", "Softsign", "Softplus"])  # fmt: skip
def test_each_activation_crosses_with_its_alpha_and_beta(name: str) -> None:
    ins, outs = _ins(d=2), _outs(d=2)
    req = OpRequest.make(RNN, ins, outs, direction="bidirectional", activations=f"Tanh,{name}",
                         activation_alpha=(0.0, 0.25), activation_beta=(0.0, 0.75), clip=2.5)  # fmt: skip
    blob = one_blob(req)
    code = RnnActivation[{"LeakyRelu": "LEAKY_RELU", "ThresholdedRelu": "THRESHOLDED_RELU",
                          "ScaledTanh": "SCALED_TANH", "HardSigmoid": "HARD_SIGMOID"}.get(name, name.upper())]  # fmt: skip
    assert blob.ints == (2, 0, 0, int(code)) and blob.floats == (2.5, 0.0, 0.0, 0.25, 0.75)


def test_layout_1_shapes_and_an_nhwc_y_written_in_logical_order() -> None:
    main = layout_1_main_blob(RNN, 1, 2)
    assert main.kernel_id is K and main.ints == (0, 1, 0, 0)
