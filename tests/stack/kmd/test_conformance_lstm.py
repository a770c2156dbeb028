# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of LSTM through the KMD, on every available backend, against a loop over the
steps and the batch entries (each state computed in Python's float64 arithmetic on the values
the kernel reads, from the previous unrounded states, rounded once at the end): forward, reverse
and bidirectional, layouts 0 and 1, input_forget 0 and 1, with and without B, sequence_lens,
initial_h, initial_c and P, activations with their alpha and beta, clip, float32, float16 and
float64; lengths of 0; NaN; empty batches; and the kernel's refusal of operands of another dtype
or shape, lengths out of range and unknown codes."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.rnn import RnnDirection
from tests.stack.kmd.recurrent import (
    ACTS,
    DTYPES,
    A,
    assert_close,
    assert_defaults_are_the_immediates_left_out,
    assert_length_zero_leaves_zeros,
    assert_nan_reaches_its_entry_only,
    assert_nothing_written,
    draw_operands,
)

K = KernelId.LSTM
RNG = np.random.default_rng(69)
DEFAULT = (A.SIGMOID, A.TANH, A.TANH) * 2


def loop(x, w, r, opt, direction, layout, coupled=0, acts=DEFAULT, clip=0.0, params=(0.0,) * 12):  # type: ignore[no-untyped-def]  # fmt: skip
    """Y, Y_h and Y_c entry by entry, step by step, in float64, rounded once; ``opt`` the
    optional operands B, sequence_lens, initial_h, initial_c and P (None when left out)."""
    bias, lens, h0, c0, peep = (*opt, None, None, None, None, None)[:5]
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = w.shape[0], w.shape[1] // 4
    lens = [steps] * n if lens is None else [int(v) for v in lens]
    y, y_h, y_c = np.zeros((steps, d, n, h)), np.zeros((d, n, h)), np.zeros((d, n, h))

    def act(j, v, bound=True):  # type: ignore[no-untyped-def]
        v = min(max(v, -clip), clip) if clip and bound else v
        return ACTS[acts[j]](v, params[2 * j], params[2 * j + 1])

    for k in range(d):
        wk, rk = w[k].astype(np.float64), r[k].astype(np.float64)
        bk = np.zeros(8 * h) if bias is None else bias[k].astype(np.float64)
        pk = np.zeros(3 * h) if peep is None else peep[k].astype(np.float64)
        back = k == 1 or direction == RnnDirection.REVERSE
        for b in range(n):
            hs = np.zeros(h) if h0 is None else h0[k, b].astype(np.float64)
            cs = np.zeros(h) if c0 is None else c0[k, b].astype(np.float64)
            order = range(lens[b] - 1, -1, -1) if back else range(lens[b])
            for t in order:
                xt = x[t, b].astype(np.float64)
                pre = [float(wk[j] @ xt + rk[j] @ hs + bk[j] + bk[4 * h + j]) for j in range(4 * h)]
                hn, cn = np.zeros(h), np.zeros(h)
                for j in range(h):
                    i = act(3 * k, pre[j] + pk[j] * cs[j])
                    f = 1 - i if coupled else act(3 * k, pre[2 * h + j] + pk[2 * h + j] * cs[j])
                    cn[j] = f * cs[j] + i * act(3 * k + 1, pre[3 * h + j])
                    o = act(3 * k, pre[h + j] + pk[h + j] * cn[j])
                    hn[j] = o * act(3 * k + 2, cn[j], bound=False)
                hs, cs = hn, cn
                y[t, k, b] = hs
            y_h[k, b], y_c[k, b] = (hs, cs) if lens[b] else (0.0, 0.0)
    if layout == 1:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    return y.astype(x.dtype), y_h.astype(x.dtype), y_c.astype(x.dtype)


def run(rig, x, w, r, opt=(), direction=0, layout=0, coupled=0, acts=DEFAULT, clip=0.0, params=(0.0,) * 12):  # type: ignore[no-untyped-def]  # fmt: skip
    """The kernel's Y, Y_h and Y_c (operands left out before a given one filled as the UMD
    does)."""
    d, h = w.shape[0], w.shape[1] // 4
    steps, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    given = [*opt, None, None, None, None, None][:5]
    last = max([i for i, t in enumerate(given) if t is not None], default=-1)
    state = (d, n, h) if layout == 0 else (n, d, h)
    fill = [np.zeros((d, 8 * h), x.dtype), np.full(n, steps, np.int32), np.zeros(state, x.dtype),
            np.zeros(state, x.dtype), np.zeros((d, 3 * h), x.dtype)]  # fmt: skip
    ops = [given[i] if given[i] is not None else fill[i] for i in range(last + 1)]
    y = ((steps, d, n, h) if layout == 0 else (n, steps, d, h), x.dtype)
    ints, floats = (direction, layout, coupled, *acts), (clip, *params)
    return rig.run_outputs(
        K, [x, w, r, *ops], [y, (state, x.dtype), (state, x.dtype)], ints, floats
    )


operands = partial(draw_operands, RNG, 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("coupled", [0, 1])
@pytest.mark.parametrize("given", ["none", "bias", "lens", "all"])
def test_lstm_matches_the_loop(backend_rig, given, coupled, layout, direction, dtype) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    x, w, r = operands(dtype, d=d, layout=layout)
    shape = (d, 3, 4) if layout == 0 else (3, d, 4)
    opt = [RNG.standard_normal((d, 32)).astype(dtype) if given in ("bias", "all") else None,
           np.array([4, 1, 2], np.int32) if given in ("lens", "all") else None]  # fmt: skip
    if given == "all":
        opt += [RNG.standard_normal(shape).astype(dtype), RNG.standard_normal(shape).astype(dtype),
                RNG.standard_normal((d, 12)).astype(dtype)]  # fmt: skip
    got = run(backend_rig, x, w, r, opt, direction, layout, coupled)
    assert_close(got, loop(x, w, r, opt, direction, layout, coupled))


@pytest.mark.parametrize(
    ("acts", "params"),
    [((A.HARD_SIGMOID, A.SCALED_TANH, A.SOFTSIGN), (0.3, 0.4, 0.7, 1.3, 0.0, 0.0)),
     ((A.AFFINE, A.ELU, A.LEAKY_RELU), (0.5, 0.1, 0.8, 0.0, 0.1, 0.0)),
     ((A.SIGMOID, A.THRESHOLDED_RELU, A.SOFTPLUS), (0.0, 0.0, 0.2, 0.0, 0.0, 0.0))],
    ids=["hard_sigmoid", "affine", "thresholded"],
)  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_activations_with_their_alpha_and_beta(backend_rig, dtype, acts, params) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(dtype, d=2)
    acts, both = (*acts, *DEFAULT[:3]), (*params, *(0.0,) * 6)
    got = run(backend_rig, x, w, r, direction=2, acts=acts, params=both)
    assert_close(got, loop(x, w, r, (), 2, 0, 0, acts, 0.0, both))


def test_clip_bounds_every_gate_pre_activation(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32)
    acts = (A.SIGMOID, A.RELU, A.RELU)
    got = run(backend_rig, x * 4, w, r, acts=acts, clip=0.5)
    assert_close(got, loop(x * 4, w, r, (), 0, 0, 0, acts, 0.5))
    assert not np.allclose(got[2], run(backend_rig, x * 4, w, r, acts=acts)[2])


def test_a_length_of_zero_leaves_zeros_even_with_initial_states(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32, d=2)
    h0, c0 = (RNG.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(2))
    got = run(backend_rig, x, w, r, [None, np.array([0, 4, 2], np.int32), h0, c0], direction=2)
    assert_length_zero_leaves_zeros(*got)


def test_defaults_are_forward_layout_0_sigmoid_tanh_tanh_no_clip(backend_rig) -> None:  # type: ignore[no-untyped-def]
    assert_defaults_are_the_immediates_left_out(backend_rig, K, operands, run, 3)


def test_nan_reaches_its_entry_only(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32)
    x[1, 0, 0] = np.nan
    y, y_h, y_c = run(backend_rig, x, w, r)
    assert_nan_reaches_its_entry_only(y, y_h)
    assert np.isnan(y_c[0, 0]).all() and not np.isnan(y_c[0, 1:]).any()


@pytest.mark.parametrize("layout", [0, 1])
def test_an_empty_batch_writes_nothing(backend_rig, layout) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32, n=0, layout=layout)
    assert_nothing_written(run(backend_rig, x, w, r, layout=layout))


F = np.float32
X, W, R = np.ones((2, 1, 3), F), np.ones((1, 16, 3), F), np.ones((1, 16, 4), F)
OUTS = [((2, 1, 1, 4), F), ((1, 1, 4), F), ((1, 1, 4), F)]
B, L, S = np.ones((1, 32), F), np.ones(1, np.int32), np.ones((1, 1, 4), F)


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        ([X.astype(np.int32), W, R], OUTS, (), r"X int32\(2, 1, 3\) and W \(1, 16, 3\) are not float"),
        ([X, W[:, :15], R], OUTS, (), r"W \(1, 15, 3\) are not float, rank 3, 4H"),
        ([X, W, R], OUTS, (2,), r"W \(1, 16, 3\) has not 2 directions"),
        ([X, W, R], OUTS, (3,), "direction 3 or layout 0 is unknown"),
        ([X, W, R[:, :3]], OUTS, (), r"R float32\(1, 3, 4\) is not float32\(1, 16, 4\)"),
        ([X, W, R, np.ones((1, 8), F)], OUTS, (), r"B float32\(1, 8\) is not float32\(1, 32\)"),
        ([X, W, R, B, L, S, np.ones((1, 1, 3), F)], OUTS, (), r"initial_c float32\(1, 1, 3\)"),
        ([X, W, R, B, L, S, S, np.ones((1, 4), F)], OUTS, (), r"P float32\(1, 4\) is not float32\(1, 12\)"),
        ([X, W, R], [*OUTS[:2], ((1, 4), F)], (), r"Y_c float32\(1, 4\)"),
        ([X, W, R, B, np.full(1, 3, np.int32)], OUTS, (), r"sequence_lens must lie in \[0, 2\]"),
        ([X, W, R], OUTS, (0, 0, 2), r"input_forget 2 or activations \[2, 0, 0, 2, 0, 0\] are unknown"),
        ([X, W, R], OUTS, (0, 0, 0, 11), r"activations \[11, 0, 0, 2, 0, 0\] are unknown"),
    ],
    ids=["int X", "not 4H", "directions", "direction 3", "R shape", "B shape", "initial_c shape",
         "P shape", "Y_c shape", "length too long", "input_forget 2", "activation 11"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints)
