# ruff: noqa: E501 - the case tables read best one case per line
"""The LSTM translator: requests of another dtype or shape, unknown or malformed attributes, or
the wrong operand counts are typed errors naming the field; a good one is one LSTM blob on X, W,
R, the optional B, sequence_lens, initial_h, initial_c and P, Y, Y_h and Y_c, with the
direction, layout, input_forget and activations as its int immediates and clip, alpha and beta
as its floats; an NHWC Y is written in its logical order and transposed after the kernel."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.rnn import RnnActivation, RnnDirection
from stack.umd import DType, Layout, OpKind, OpRequest
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I32, I64, F, T, refused

LSTM = OpKind.LSTM
K = KernelId.LSTM
F16, F64 = DType.F16, DType.F64


def _ins(dtype: DType = F, d: int = 1, n_in: int = 3) -> list:
    return [T((4, 2, 3), dtype), T((d, 20, 3), dtype), T((d, 20, 5), dtype), T((d, 40), dtype),
            T((2,), I32), T((d, 2, 5), dtype), T((d, 2, 5), dtype), T((d, 15), dtype)][:n_in]  # fmt: skip


def _outs(dtype: DType = F, d: int = 1) -> list:
    return [T((4, d, 2, 5), dtype), T((d, 2, 5), dtype), T((d, 2, 5), dtype)]


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
    ins, outs = _ins(dtype, d, n_in), _outs(dtype, d)
    prog = Pipeline().compile(OpRequest.make(LSTM, ins, outs, direction=direction.name.lower()))
    assert prog.scratch == ()
    (blob,) = [decode(x) for x in prog.patch(tuple(t.addr for t in (*ins, *outs)))]
    assert blob.kernel_id is K and blob.ints == (int(direction), 0, 0, 2, 0, 0, 2, 0, 0)
    assert blob.floats == (0.0,) * 13
    assert [(p.addr, p.dtype, p.shape) for p in blob.params] == [
        (t.addr, t.dtype, t.shape) for t in (*ins, *outs)
    ]


def test_activations_cross_with_their_alpha_and_beta_and_input_forget() -> None:
    ins, outs = _ins(d=2), _outs(d=2)
    req = OpRequest.make(LSTM, ins, outs, direction="bidirectional", input_forget=1,
                         activations="HardSigmoid,ScaledTanh,Affine,Sigmoid,Elu,Tanh", clip=2.5,
                         activation_alpha=(0.2, 0.3, 0.4, 0.0, 0.5, 0.0),
                         activation_beta=(0.6, 0.7, 0.8, 0.0, 0.0, 0.0))  # fmt: skip
    (blob,) = [
        decode(x) for x in Pipeline().compile(req).patch(tuple(t.addr for t in (*ins, *outs)))
    ]
    a = RnnActivation
    codes = (a.HARD_SIGMOID, a.SCALED_TANH, a.AFFINE, a.SIGMOID, a.ELU, a.TANH)
    assert blob.ints == (2, 0, 1, *map(int, codes))
    assert blob.floats == (2.5, 0.2, 0.6, 0.3, 0.7, 0.4, 0.8, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0)


def test_layout_1_shapes_and_an_nhwc_y_written_in_logical_order() -> None:
    ins = [T((2, 4, 3)), T((1, 20, 3)), T((1, 20, 5)), T((1, 40)), T((2,), I32), T((2, 1, 5))]
    outs = [T((2, 1, 5, 4), layout=Layout.NHWC), T((2, 1, 5)), T((2, 1, 5))]
    prog = Pipeline().compile(OpRequest.make(LSTM, ins, outs, layout=1))
    assert prog.scratch == (2 * 4 * 1 * 5 * 4,)
    s0 = 0xA0000
    main, post = (decode(b) for b in prog.patch((*(t.addr for t in (*ins, *outs)), s0)))
    assert (
        main.kernel_id is K
        and main.ints == (0, 1, 0, 2, 0, 0, 2, 0, 0)
        and main.params[6].addr == s0
    )
    assert main.params[6].shape == (2, 4, 1, 5)
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 2, 3, 1)
