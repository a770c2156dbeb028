"""The scaffolding the RNN, GRU and LSTM conformance tests share: the dtypes, each activation of
one float (:data:`ACTS`, for the loops the kernels are checked against), the operands X, W and R
drawn for a number of gates (:func:`draw_operands`), the comparison with the loop
(:func:`assert_close`) and the checks every recurrent kernel passes: its defaults
(:func:`assert_defaults_are_the_immediates_left_out`), a length of zero
(:func:`assert_length_zero_leaves_zeros`), NaN (:func:`assert_nan_reaches_its_entry_only`) and
an empty batch (:func:`assert_nothing_written`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd import KernelId
from stack.kmd.kernels.rnn import RnnActivation

DTYPES = [np.float32, np.float16, np.float64]
A = RnnActivation


def _sigmoid(t: float) -> float:
    e = math.exp(-abs(t))
    return 1 / (1 + e) if t >= 0 else e / (1 + e)


#: Each activation of one float, with its alpha and beta.
ACTS: dict[RnnActivation, Callable[[float, float, float], float]] = {
    A.TANH: lambda t, a, b: math.tanh(t),
    A.RELU: lambda t, a, b: max(t, 0.0),
    A.SIGMOID: lambda t, a, b: _sigmoid(t),
    A.AFFINE: lambda t, a, b: a * t + b,
    A.LEAKY_RELU: lambda t, a, b: t if t >= 0 else a * t,
    A.THRESHOLDED_RELU: lambda t, a, b: t if t > a else 0.0,
    A.SCALED_TANH: lambda t, a, b: a * math.tanh(b * t),
    A.HARD_SIGMOID: lambda t, a, b: min(max(a * t + b, 0.0), 1.0),
    A.ELU: lambda t, a, b: t if t >= 0 else a * math.expm1(t),
    A.SOFTSIGN: lambda t, a, b: t / (1 + abs(t)),
    A.SOFTPLUS: lambda t, a, b: max(t, 0.0) + math.log1p(math.exp(-abs(t))),
}


def draw_operands(
    rng: np.random.Generator,
    gates: int,
    dtype: Any,
    steps: int = 4,
    n: int = 3,
    i: int = 5,
    h: int = 4,
    d: int = 1,
    layout: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X, W [d, gates*h, i] and R [d, gates*h, h], drawn from ``rng`` in that order."""
    x = rng.standard_normal((steps, n, i) if layout == 0 else (n, steps, i)).astype(dtype)
    w = (rng.standard_normal((d, gates * h, i)) * 0.5).astype(dtype)
    r = (rng.standard_normal((d, gates * h, h)) * 0.5).astype(dtype)
    return x, w, r


def assert_close(got: Any, want: Any) -> None:
    for g, v in zip(got, want, strict=True):
        assert g.dtype == v.dtype and g.shape == v.shape
        tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}[g.dtype.type]
        np.testing.assert_allclose(g, v, rtol=tol, atol=tol)


def assert_defaults_are_the_immediates_left_out(
    rig: Any, kernel: KernelId, operands: Callable[..., Any], run: Callable[..., Any], n_out: int
) -> None:
    """The kernel run with no immediates writes, byte for byte, what ``run`` does with its
    defaults: Y [4, 1, 3, 4], then ``n_out - 1`` states [1, 3, 4]."""
    x, w, r = operands(np.float32)
    outs = [((4, 1, 3, 4), np.float32), *[((1, 3, 4), np.float32)] * (n_out - 1)]
    got = rig.run_outputs(kernel, [x, w, r], outs)
    want = run(rig, x, w, r)
    assert all(g.tobytes() == v.tobytes() for g, v in zip(got, want, strict=True))


def assert_length_zero_leaves_zeros(y: np.ndarray, *states: np.ndarray) -> None:
    """Lengths [0, 4, 2]: zeros for entry 0 everywhere and for entry 2 past its two steps."""
    assert not y[:, :, 0].any() and all(not s[:, 0].any() for s in states)
    assert not y[2:, :, 2].any() and y[:2, :, 2].all()


def assert_nan_reaches_its_entry_only(y: np.ndarray, y_h: np.ndarray) -> None:
    """A NaN at X[1, 0, 0] reaches entry 0's states from step 1 on, and nothing else."""
    assert not np.isnan(y[0]).any() and np.isnan(y[1:, 0, 0]).all() and np.isnan(y_h[0, 0]).all()
    assert not np.isnan(y[:, :, 1:]).any()


def assert_nothing_written(got: Any) -> None:
    assert [v.size for v in got] == [0] * len(got)
