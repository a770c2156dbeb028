# ruff: noqa: E501 - the case tables read best one case per line
"""The GRU translator: requests of another dtype or shape, unknown or malformed attributes, or
the wrong operand counts are typed errors naming the field; a good one is one GRU blob on X, W,
R, the optional B, sequence_lens and initial_h, Y and Y_h, with the direction, layout,
linear_before_reset and activations as its int immediates and clip, alpha and beta as its
floats; an NHWC Y is written in its logical order and transposed after the kernel."""

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

GRU = OpKind.GRU
K = KernelId.GRU
F16, F64 = DType.F16, DType.F64


_ins = partial(recurrent_ins, 3)
_outs = partial(recurrent_outs, 2)


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(GRU, _ins(I32), _outs(I32)), UnsupportedDtypeError, "inputs[0].dtype", "GRU does not take I32; supported: F16, F32, F64"),
        (OpRequest.make(GRU, [*_ins()[:2], T((1, 15, 5), F16)], _outs()), UnsupportedDtypeError, "inputs[2].dtype", "inputs[2] is F16, expected F32"),
        (OpRequest.make(GRU, [*_ins(n_in=4), T((2,), I64)], _outs()), UnsupportedDtypeError, "inputs[4].dtype", "GRU sequence_lens must be I32, got I64"),
        (OpRequest.make(GRU, _ins(), [_outs()[0], T((1, 2, 5), F16)]), UnsupportedDtypeError, "outputs[1].dtype", "outputs[1] is F16, expected F32"),
        (OpRequest.make(GRU, [T((4, 6)), *_ins()[1:]], _outs()), ShapeError, "inputs[0].shape", "GRU takes X [S, N, I] or [N, S, I], got (4, 6)"),
        (OpRequest.make(GRU, [_ins()[0], T((2, 15, 3)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "GRU takes W [1, 3H, 3] for X (4, 2, 3), got (2, 15, 3)"),
        (OpRequest.make(GRU, [_ins()[0], T((1, 14, 3)), _ins()[2]], _outs()), ShapeError, "inputs[1].shape", "got (1, 14, 3)"),
        (OpRequest.make(GRU, [*_ins()[:2], T((1, 15, 4))], _outs()), ShapeError, "inputs[2].shape", "GRU R must be (1, 15, 5) for X (4, 2, 3) and W (1, 15, 3), got (1, 15, 4)"),
        (OpRequest.make(GRU, [*_ins(), T((1, 10))], _outs()), ShapeError, "inputs[3].shape", "GRU B must be (1, 30)"),
        (OpRequest.make(GRU, [*_ins(n_in=4), T((3,), I32)], _outs()), ShapeError, "inputs[4].shape", "GRU sequence_lens must be (2,)"),
        (OpRequest.make(GRU, [*_ins(n_in=5), T((2, 1, 5))], _outs()), ShapeError, "inputs[5].shape", "GRU initial_h must be (1, 2, 5)"),
        (OpRequest.make(GRU, _ins(), [T((4, 2, 1, 5)), _outs()[1]]), ShapeError, "outputs[0].shape", "GRU output shape is (4, 1, 2, 5), request says (4, 2, 1, 5)"),
        (OpRequest.make(GRU, _ins(), _outs(), direction="up"), InvalidRequestError, "attrs.direction", "GRU direction must be one of forward, reverse, bidirectional, got 'up'"),
        (OpRequest.make(GRU, _ins(), _outs(), layout=2), InvalidRequestError, "attrs.layout", "GRU layout must be 0 or 1, got 2"),
        (OpRequest.make(GRU, _ins(), _outs(), linear_before_reset=2), InvalidRequestError, "attrs.linear_before_reset", "GRU linear_before_reset must be 0 or 1, got 2"),
        (OpRequest.make(GRU, _ins(), _outs(), activations="Sigmoid,Gelu"), InvalidRequestError, "attrs.activations", "GRU activations must be 2 of Tanh, Relu"),
        (OpRequest.make(GRU, _ins(), _outs(), activations="Tanh"), InvalidRequestError, "attrs.activations", "got 'Tanh'"),
        (OpRequest.make(GRU, _ins(), _outs(), activation_alpha=(0.1,)), InvalidRequestError, "attrs.activation_alpha", "GRU activation_alpha must be 2 numbers, one per activation, got (0.1,)"),
        (OpRequest.make(GRU, _ins(), _outs(), clip=0.0), InvalidRequestError, "attrs.clip", "GRU clip must be > 0, got 0.0"),
        (OpRequest.make(GRU, _ins()[:2], _outs()), InvalidRequestError, "inputs", "GRU takes 3..6 inputs, got 2"),
        (OpRequest.make(GRU, _ins(), _outs()[:1]), InvalidRequestError, "outputs", "GRU takes 2 outputs, got 1"),
    ],
    ids=["int32 X", "R dtype", "int64 lengths", "Y_h dtype", "rank 2 X", "W directions", "W not 3H",
         "R shape", "B shape", "lengths shape", "initial_h shape", "Y shape", "unknown direction",
         "layout 2", "linear_before_reset 2", "unknown activation", "one activation", "one alpha",
         "clip 0", "two inputs", "one output"],
)  # fmt: skip
def test_bad_gru_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    assert message in refused(req, err, field)


@pytest.mark.parametrize("n_in", [3, 4, 5, 6], ids=["plain", "bias", "lengths", "initial_h"])
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("dtype", [F, F16, F64], ids=lambda d: d.name)
def test_every_float_request_is_one_gru_blob(
    dtype: DType, direction: RnnDirection, n_in: int
) -> None:
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    assert_one_blob_on_the_operands(
        GRU,
        K,
        _ins(dtype, d, n_in),
        _outs(dtype, d),
        direction,
        (int(direction), 0, 0, 2, 0, 2, 0),
        (0.0,) * 9,
    )


def test_activations_cross_with_their_alpha_and_beta_and_linear_before_reset() -> None:
    ins, outs = _ins(d=2), _outs(d=2)
    req = OpRequest.make(GRU, ins, outs, direction="bidirectional", linear_before_reset=1,
                         activations="HardSigmoid,ScaledTanh,Affine,Elu", clip=2.5,
                         activation_alpha=(0.2, 0.3, 0.4, 0.5),
                         activation_beta=(0.6, 0.7, 0.8, 0.0))  # fmt: skip
    blob = one_blob(req)
    a = RnnActivation
    codes = (a.HARD_SIGMOID, a.SCALED_TANH, a.AFFINE, a.ELU)
    assert blob.ints == (2, 0, 1, *map(int, codes))
    assert blob.floats == (2.5, 0.2, 0.6, 0.3, 0.7, 0.4, 0.8, 0.5, 0.0)


def test_layout_1_shapes_and_an_nhwc_y_written_in_logical_order() -> None:
    main = layout_1_main_blob(GRU, 3, 2)
    assert main.kernel_id is K and main.ints == (0, 1, 0, 2, 0, 2, 0)
