# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of RNN through the KMD, on every available backend, against a loop over the
steps and the batch entries (each state computed in Python's float64 arithmetic on the values
the kernel reads, from the previous unrounded state, rounded once at the end: the kernel must
agree to a few units in the last place of float32 and float16, and closely in float64, whose
matrix products and tanh NumPy, CuPy and the C library may round differently): forward,
reverse and bidirectional, layouts 0 and 1, with and without B, sequence_lens and initial_h,
every activation with its alpha and beta, clip, float32, float16 and float64; lengths of 0 and
short ones (zeros past them, a zero Y_h for 0); NaN; empty batches; and the kernel's refusal of
operands of another dtype or shape, lengths out of range and unknown codes."""

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

K = KernelId.RNN
RNG = np.random.default_rng(66)


def loop(x, w, r, bias, lens, h0, direction, layout, acts, clip, params):  # type: ignore[no-untyped-def]
    """Y and Y_h entry by entry, step by step, in float64, rounded once."""
    if layout == 1:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
    steps, n, _ = x.shape
    d, h = w.shape[:2]
    lens = [steps] * n if lens is None else [int(v) for v in lens]
    y, y_h = np.zeros((steps, d, n, h)), np.zeros((d, n, h))
    for k in range(d):
        wk, rk = w[k].astype(np.float64), r[k].astype(np.float64)
        bk = np.zeros(h) if bias is None else bias[k, :h].astype(np.float64) + bias[k, h:]
        back = k == 1 or direction == RnnDirection.REVERSE
        for b in range(n):
            state = np.zeros(h) if h0 is None else h0[k, b].astype(np.float64)
            order = range(lens[b] - 1, -1, -1) if back else range(lens[b])
            for t in order:
                pre = [
                    float(wk[j] @ x[t, b].astype(np.float64) + rk[j] @ state + bk[j])
                    for j in range(h)
                ]
                if clip:
                    pre = [min(max(v, -clip), clip) for v in pre]
                state = np.array([ACTS[acts[k]](v, *params[2 * k : 2 * k + 2]) for v in pre])
                y[t, k, b] = state
            y_h[k, b] = state if lens[b] else 0.0
    if layout == 1:
        y, y_h = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2)
    return y.astype(x.dtype), y_h.astype(x.dtype)


def run(rig, x, w, r, bias=None, lens=None, h0=None, direction=0, layout=0, acts=(0, 0), clip=0.0, params=(0.0,) * 4):  # type: ignore[no-untyped-def]  # fmt: skip
    """The kernel's Y and Y_h (operands left out before a given one filled as the UMD does)."""
    d, h = w.shape[:2]
    steps, n = (x.shape[0], x.shape[1]) if layout == 0 else (x.shape[1], x.shape[0])
    given = [bias, lens, h0]
    last = max([i for i, t in enumerate(given) if t is not None], default=-1)
    fill = [np.zeros((d, 2 * h), x.dtype), np.full(n, steps, np.int32),
            np.zeros((d, n, h) if layout == 0 else (n, d, h), x.dtype)]  # fmt: skip
    opt = [given[i] if given[i] is not None else fill[i] for i in range(last + 1)]
    y = ((steps, d, n, h) if layout == 0 else (n, steps, d, h), x.dtype)
    y_h = ((d, n, h) if layout == 0 else (n, d, h), x.dtype)
    ints, floats = (direction, layout, *acts), (clip, *params)
    return rig.run_outputs(K, [x, w, r, *opt], [y, y_h], ints, floats)


operands = partial(draw_operands, RNG, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("given", ["none", "bias", "lens", "h0", "all"])
def test_rnn_matches_the_loop(backend_rig, given, layout, direction, dtype) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    x, w, r = operands(dtype, d=d, layout=layout)
    bias = RNG.standard_normal((d, 8)).astype(dtype) if given in ("bias", "all") else None
    lens = np.array([4, 1, 2], np.int32) if given in ("lens", "all") else None
    h0 = (
        RNG.standard_normal((d, 3, 4) if layout == 0 else (3, d, 4)).astype(dtype)
        if given in ("h0", "all")
        else None
    )
    got = run(backend_rig, x, w, r, bias, lens, h0, direction, layout)
    assert_close(got, loop(x, w, r, bias, lens, h0, direction, layout, (0, 0), 0.0, (0.0,) * 4))


@pytest.mark.parametrize(
    ("act", "alpha", "beta"),
    [(A.TANH, 0.0, 0.0), (A.RELU, 0.0, 0.0), (A.SIGMOID, 0.0, 0.0), (A.AFFINE, 0.5, 0.1),
     (A.LEAKY_RELU, 0.1, 0.0), (A.THRESHOLDED_RELU, 0.3, 0.0), (A.SCALED_TANH, 0.7, 1.3),
     (A.HARD_SIGMOID, 0.3, 0.4), (A.ELU, 0.8, 0.0), (A.SOFTSIGN, 0.0, 0.0), (A.SOFTPLUS, 0.0, 0.0)],
    ids=lambda v: v.name.lower() if isinstance(v, A) else str(v),
)  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_every_activation_with_its_alpha_and_beta(backend_rig, dtype, act, alpha, beta) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(dtype, d=2)
    params = (alpha, beta, 0.5, 0.2)
    got = run(backend_rig, x, w, r, direction=2, acts=(act, A.AFFINE), params=params)
    assert_close(got, loop(x, w, r, None, None, None, 2, 0, (act, A.AFFINE), 0.0, params))


@pytest.mark.parametrize("direction", list(RnnDirection), ids=lambda d: d.name.lower())
def test_clip_bounds_the_pre_activation(backend_rig, direction) -> None:  # type: ignore[no-untyped-def]
    d = 2 if direction == RnnDirection.BIDIRECTIONAL else 1
    x, w, r = operands(np.float32, d=d)
    got = run(backend_rig, x * 4, w, r, direction=direction, acts=(A.RELU, A.RELU), clip=0.5)
    assert_close(
        got, loop(x * 4, w, r, None, None, None, direction, 0, (A.RELU, A.RELU), 0.5, (0.0,) * 4)
    )
    assert got[0].max() <= 0.5


def test_a_length_of_zero_leaves_zeros_even_with_an_initial_state(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w, r = operands(np.float32, d=2)
    h0 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    got = run(backend_rig, x, w, r, None, np.array([0, 4, 2], np.int32), h0, direction=2)
    assert_length_zero_leaves_zeros(*got)


def test_defaults_are_forward_layout_0_tanh_no_clip(backend_rig) -> None:  # type: ignore[no-untyped-def]
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
X, W, R = np.ones((2, 1, 3), F), np.ones((1, 4, 3), F), np.ones((1, 4, 4), F)
OUTS = [((2, 1, 1, 4), F), ((1, 1, 4), F)]


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        ([X.astype(np.int32), W, R], OUTS, (), r"X int32\(2, 1, 3\) and W \(1, 4, 3\) are not float"),
        ([X[0], W, R], OUTS, (), r"X float32\(1, 3\)"),
        ([X, W, R], OUTS, (2,), r"W \(1, 4, 3\) has not 2 directions"),
        ([X, W, R], OUTS, (3,), "direction 3 or layout 0 is unknown"),
        ([X, W, R], OUTS, (0, 2), "direction 0 or layout 2 is unknown"),
        ([X, W[:, :, :2], R], OUTS, (), r"W float32\(1, 4, 2\) is not float32\(1, 4, 3\)"),
        ([X, W, R[:, :3]], OUTS, (), r"R float32\(1, 3, 4\) is not float32\(1, 4, 4\)"),
        ([X, W, R.astype(np.float64)], OUTS, (), r"R float64\(1, 4, 4\) is not float32"),
        ([X, W, R, np.ones((1, 4), F)], OUTS, (), r"B float32\(1, 4\) is not float32\(1, 8\)"),
        ([X, W, R, np.ones((1, 8), F), np.ones(1, np.int64)], OUTS, (), r"sequence_lens int64\(1,\) is not int32\(1,\)"),
        ([X, W, R, np.ones((1, 8), F), np.ones(1, np.int32), np.ones((1, 1, 3), F)], OUTS, (), r"initial_h float32\(1, 1, 3\)"),
        ([X, W, R], [((2, 1, 4), F), ((1, 1, 4), F)], (), r"Y float32\(2, 1, 4\)"),
        ([X, W, R], [OUTS[0], ((1, 4), F)], (), r"Y_h float32\(1, 4\)"),
        ([X, W, R, np.ones((1, 8), F), np.full(1, 3, np.int32)], OUTS, (), r"sequence_lens must lie in \[0, 2\]"),
        ([X, W, R, np.ones((1, 8), F), np.full(1, -1, np.int32)], OUTS, (), r"sequence_lens must lie in \[0, 2\]"),
        ([X, W, R], OUTS, (0, 0, 11), r"activations \[11, 0\] are not RnnActivations"),
    ],
    ids=["int X", "rank 2", "directions", "direction 3", "layout 2", "W shape", "R shape", "R dtype", "B shape",
         "lens dtype", "initial_h shape", "Y shape", "Y_h shape", "length too long", "negative length", "activation 11"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints)
