# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of GRU through the KMD, on every available backend, against a loop over the
steps and the batch entries (each state computed in Python's float64 arithmetic on the values
the kernel reads, from the previous unrounded state, rounded once at the end): forward, reverse
and bidirectional, layouts 0 and 1, linear_before_reset 0 and 1, with and without B,
sequence_lens and initial_h, activations with their alpha and beta, clip, float32, float16 and
float64; lengths of 0 (zeros past a length, a zero Y_h for 0); NaN; empty batches; and the
kernel's refusal of operands of another dtype or shape, lengths out of range and unknown
codes."""

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

K = KernelId.GRU
RNG = np.random.default_rng(67)
DEFAULT = (A.SIGMOID, A.TANH, A.SIGMOID, A.TANH)


def loop(x, w, r, bias, lens, h0, direction, layout, linear=0, acts=DEFAULT, clip=0.0, params=(0.0,) * 8):  # type: ignore[no-untyped-def]  # fmt: skip
    """Y and Y_h entry by entry, step by step, in float64, rounded once."""
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = w.shape[0], w.shape[1] // 3
    lens = [steps] * n if lens is None else [int(v) for v in lens]
    y, y_h = np.zeros((steps, d, n, h)), np.zeros((d, n, h))

    def act(j, v):  # type: ignore[no-untyped-def]
        v = min(max(v, -clip), clip) if clip else v
        return ACTS[acts[j]](v, params[2 * j], params[2 * j + 1])

    for k in range(d):
        wk, rk = w[k].astype(np.float64), r[k].astype(np.float64)
        bk = np.zeros(6 * h) if bias is None else bias[k].astype(np.float64)
        back = k == 1 or direction == RnnDirection.REVERSE
        for b in range(n):
            state = np.zeros(h) if h0 is None else h0[k, b].astype(np.float64)
            order = range(lens[b] - 1, -1, -1) if back else range(lens[b])
            for t in order:
                xt = x[t, b].astype(np.float64)
                z = [
                    act(2 * k, float(wk[j] @ xt + rk[j] @ state + bk[j] + bk[3 * h + j]))
                    for j in range(h)
                ]
                rr = [
                    act(
                        2 * k, float(wk[h + j] @ xt + rk[h + j] @ state + bk[h + j] + bk[4 * h + j])
                    )
                    for j in range(h)
                ]
                new = np.zeros(h)
                for j in range(h):
                    if linear:
                        inner = rr[j] * float(rk[2 * h + j] @ state + bk[5 * h + j])
                    else:
                        inner = float(rk[2 * h + j] @ (np.array(rr) * state)) + bk[5 * h + j]
                    cand = act(2 * k + 1, float(wk[2 * h + j] @ xt) + inner + bk[2 * h + j])
                    new[j] = (1 - z[j]) * cand + z[j] * state[j]
                state = new
                y[t, k, b] = state
            y_h[k, b] = state if lens[b] else 0.0
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    return y.astype(x.dtype), y_h.astype(x.dtype)


def run(rig, x, w, r, bias=None, lens=None, h0=None, direction=0, layout=0, linear=0, acts=DEFAULT, clip=0.0, params=(0.0,) * 8):  # type: ignore[no-untyped-def]  # fmt: skip
    """The kernel's Y and Y_h (operands left out before a given one filled as the UMD does)."""
    d, h = w.shape[0], w.shape[1] // 3
    steps, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    given = [bias, lens, h0]
    last = max([i for i, t in enumerate(given) if t is not None], default=-1)
    fill = [np.zeros((d, 6 * h), x.dtype), np.full(n, steps, np.int32),
            np.zeros((d, n, h) if layout == 0 else (n, d, h), x.dtype)]  # fmt: skip
    opt = [given[i] if given[i] is not None else fill[i] for i in range(last + 1)]
    y = ((steps, d, n, h) if layout == 0 else (n, steps, d, h), x.dtype)
    y_h = ((d, n, h) if layout == 0 else (n, d, h), x.dtype)
    ints, floats = (direction, layout, linear, *acts), (clip, *params)
    return rig.run_outputs(K, [x, w, r, *opt], [y, y_h], ints, floats)


operands = partial(draw_operands, RNG, 3)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("linear", [0, 1])
@pytest.mark.parametrize("given", ["none", "bias", "lens", "all"])
def test_gru_matches_the_loop(backend_rig, given, linear, layout, direction, dtype) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    x, w, r = operands(dtype, d=d, layout=layout)
    bias = RNG.standard_normal((d, 24)).astype(dtype) if given in ("bias", "all") else None
    lens = np.array([4, 1, 2], np.int32) if given in ("lens", "all") else None
    shape = (d, 3, 4) if layout == 0 else (3, d, 4)
    h0 = RNG.standard_normal(shape).astype(dtype) if given == "all" else None
    got = run(backend_rig, x, w, r, bias, lens, h0, direction, layout, linear)
    assert_close(got, loop(x, w, r, bias, lens, h0, direction, layout, linear))


@pytest.mark.parametrize(
    ("f", "g", "params"),
    [(A.HARD_SIGMOID, A.SCALED_TANH, (0.3, 0.4, 0.7, 1.3)), (A.RELU, A.SOFTSIGN, (0.0,) * 4),
     (A.AFFINE, A.ELU, (0.5, 0.1, 0.8, 0.0)), (A.SIGMOID, A.LEAKY_RELU, (0.0, 0.0, 0.1, 0.0)),
     (A.THRESHOLDED_RELU, A.SOFTPLUS, (0.2, 0.0, 0.0, 0.0))],
    ids=lambda v: v.name.lower() if isinstance(v, A) else "p",
)  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_activations_with_their_alpha_and_beta(backend_rig, dtype, f, g, params) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(dtype, d=2)
    acts, both = (f, g, A.SIGMOID, A.TANH), (*params, 0.0, 0.0, 0.0, 0.0)
    got = run(backend_rig, x, w, r, direction=2, acts=acts, params=both)
    assert_close(got, loop(x, w, r, None, None, None, 2, 0, 0, acts, 0.0, both))


@pytest.mark.parametrize("linear", [0, 1])
def test_clip_bounds_every_pre_activation(backend_rig, linear) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32)
    acts = (A.SIGMOID, A.RELU, A.SIGMOID, A.RELU)
    got = run(backend_rig, x * 4, w, r, linear=linear, acts=acts, clip=0.5)
    assert_close(got, loop(x * 4, w, r, None, None, None, 0, 0, linear, acts, 0.5))
    assert got[0].max() <= 0.5


def test_a_length_of_zero_leaves_zeros_even_with_an_initial_state(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32, d=2)
    h0 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    got = run(backend_rig, x, w, r, None, np.array([0, 4, 2], np.int32), h0, direction=2)
    assert_length_zero_leaves_zeros(*got)


def test_defaults_are_forward_layout_0_sigmoid_tanh_no_clip(backend_rig) -> None:  # type: ignore[no-untyped-def]
    assert_defaults_are_the_immediates_left_out(backend_rig, K, operands, run, 2)


def test_nan_reaches_its_entry_only(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32)
    x[1, 0, 0] = np.nan
    assert_nan_reaches_its_entry_only(*run(backend_rig, x, w, r))


@pytest.mark.parametrize("layout", [0, 1])
def test_an_empty_batch_writes_nothing(backend_rig, layout) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32, n=0, layout=layout)
    assert_nothing_written(run(backend_rig, x, w, r, layout=layout))


F = np.float32
X, W, R = np.ones((2, 1, 3), F), np.ones((1, 12, 3), F), np.ones((1, 12, 4), F)
OUTS = [((2, 1, 1, 4), F), ((1, 1, 4), F)]
B = np.ones((1, 24), F)


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        ([X.astype(np.int32), W, R], OUTS, (), r"X int32\(2, 1, 3\) and W \(1, 12, 3\) are not float"),
        ([X[0], W, R], OUTS, (), r"X float32\(1, 3\)"),
        ([X, W[:, :11], R], OUTS, (), r"W \(1, 11, 3\) are not float, rank 3, 3H"),
        ([X, W, R], OUTS, (2,), r"W \(1, 12, 3\) has not 2 directions"),
        ([X, W, R], OUTS, (3,), "direction 3 or layout 0 is unknown"),
        ([X, W, R], OUTS, (0, 2), "direction 0 or layout 2 is unknown"),
        ([X, W[:, :, :2], R], OUTS, (), r"W float32\(1, 12, 2\) is not float32\(1, 12, 3\)"),
        ([X, W, R[:, :3]], OUTS, (), r"R float32\(1, 3, 4\) is not float32\(1, 12, 4\)"),
        ([X, W, R.astype(np.float64)], OUTS, (), r"R float64\(1, 12, 4\) is not float32"),
        ([X, W, R, np.ones((1, 8), F)], OUTS, (), r"B float32\(1, 8\) is not float32\(1, 24\)"),
        ([X, W, R, B, np.ones(1, np.int64)], OUTS, (), r"sequence_lens int64\(1,\) is not int32\(1,\)"),
        ([X, W, R, B, np.ones(1, np.int32), np.ones((1, 1, 3), F)], OUTS, (), r"initial_h float32\(1, 1, 3\)"),
        ([X, W, R], [((2, 1, 4), F), ((1, 1, 4), F)], (), r"Y float32\(2, 1, 4\)"),
        ([X, W, R], [OUTS[0], ((1, 4), F)], (), r"Y_h float32\(1, 4\)"),
        ([X, W, R, B, np.full(1, 3, np.int32)], OUTS, (), r"sequence_lens must lie in \[0, 2\]"),
        ([X, W, R, B, np.full(1, -1, np.int32)], OUTS, (), r"sequence_lens must lie in \[0, 2\]"),
        ([X, W, R], OUTS, (0, 0, 2), r"linear_before_reset 2 or activations \[2, 0, 2, 0\] are unknown"),
        ([X, W, R], OUTS, (0, 0, 0, 11), r"activations \[11, 0, 2, 0\] are unknown"),
    ],
    ids=["int X", "rank 2", "not 3H", "directions", "direction 3", "layout 2", "W shape", "R shape", "R dtype",
         "B shape", "lens dtype", "initial_h shape", "Y shape", "Y_h shape", "length too long", "negative length",
         "linear 2", "activation 11"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints)
