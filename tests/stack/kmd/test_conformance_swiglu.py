# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of SWIGLU through the KMD, on every available backend, against a loop over the
elements (A * sigmoid(alpha * A) * B in Python's float64 arithmetic on the values the kernel
reads, rounded once to the dtype: the kernel must agree to one unit in the last place of
float32 and float16, and to a few of float64, whose exponential NumPy, CuPy and the C library
may round differently): 1-D to 4-D and 0-D, float32, float16 and float64, alpha 1 (its
default), fractional, zero and negative; saturated gates, NaN and infinity, empty tensors; and
the kernel's refusal of operands of another dtype or shape."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

K = KernelId.SWIGLU
RNG = np.random.default_rng(61)
DTYPES = [np.float32, np.float16, np.float64]
#: Units in the last place allowed per dtype: one rounding, or float64's own exp and products.
MAXULP = {np.dtype(np.float32): 1, np.dtype(np.float16): 1, np.dtype(np.float64): 4}


def sigmoid(t: float) -> float:
    """1 / (1 + exp(-t)), the exponential never of a positive argument."""
    if math.isnan(t):
        return t
    e = math.exp(-abs(t))
    return 1 / (1 + e) if t >= 0 else e / (1 + e)


def loop(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """Y element by element, in float64, rounded once to A's dtype."""
    y = np.empty(a.shape, np.float64)
    for i in np.ndindex(a.shape):
        x = float(a[i])
        y[i] = x * sigmoid(alpha * x) * float(b[i])
    with np.errstate(all="ignore"):
        return y.astype(a.dtype)


def run(rig, a, b, alpha=None):  # type: ignore[no-untyped-def]
    floats = () if alpha is None else (alpha,)
    return rig.run(K, [a, b], a.shape, a.dtype, floats=floats)


def assert_matches(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_max_ulp(got, want, maxulp=MAXULP[got.dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("alpha", [1.0, 1.702, 0.5, 0.0, -1.25], ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 8), (2, 3, 4, 5), ()], ids=str)
def test_swiglu_matches_the_loop(backend_rig, shape, alpha, dtype) -> None:  # type: ignore[no-untyped-def]
    a = (RNG.standard_normal(shape) * 4).astype(dtype)
    b = RNG.standard_normal(shape).astype(dtype)
    assert_matches(run(backend_rig, a, b, alpha), loop(a, b, alpha))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_alpha_defaults_to_one(backend_rig, dtype) -> None:  # type: ignore[no-untyped-def]
    a, b = RNG.standard_normal((4, 6)).astype(dtype), RNG.standard_normal((4, 6)).astype(dtype)
    np.testing.assert_array_equal(run(backend_rig, a, b), run(backend_rig, a, b, 1.0))


def test_saturated_gates_give_the_value_times_the_gate_or_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = np.array([80.0, 1e4, -80.0, -1e4, 0.0, -0.0], np.float32)
    b = np.full(6, 3.0, np.float32)
    y = run(backend_rig, a, b)
    np.testing.assert_array_equal(y[:2], 3 * a[:2])
    assert (np.abs(y[2:]) < 1e-30).all()


def test_nan_and_infinity_follow_ieee_as_the_onnx_reference(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = np.array([np.nan, 1.0, np.inf, -np.inf, 2.0, np.inf], np.float32)
    b = np.array([1.0, np.nan, 2.0, 1.0, np.inf, 0.0], np.float32)
    y = run(backend_rig, a, b)
    assert np.isnan(y[[0, 1, 3, 5]]).all()  # NaN in; -inf * 0; inf * 0
    assert y[2] == np.inf and y[4] == np.inf


@pytest.mark.parametrize("shape", [(0,), (2, 0, 3)], ids=str)
def test_empty_tensors_write_nothing(backend_rig, shape) -> None:  # type: ignore[no-untyped-def]
    a = np.zeros(shape, np.float32)
    assert run(backend_rig, a, a.copy(), 1.0).shape == shape


F = np.float32


@pytest.mark.parametrize(
    ("ins", "out", "message"),
    [
        ([np.ones((2, 3), np.int32), np.ones((2, 3), np.int32)], ((2, 3), np.int32), "A int32"),
        ([np.ones((2, 3), F), np.ones((2, 3), np.float64)], ((2, 3), F), r"B float64\(2, 3\) is not A's float32\(2, 3\)"),
        ([np.ones((2, 3), F), np.ones((1, 3), F)], ((2, 3), F), r"B float32\(1, 3\)"),
        ([np.ones((2, 3), F), np.ones((2, 3), F)], ((3, 2), F), r"Y float32\(3, 2\)"),
        ([np.ones((2, 3), F), np.ones((2, 3), F)], ((2, 3), np.float16), r"Y float16\(2, 3\)"),
    ],
    ids=["int A", "B dtype", "B broadcast", "Y shape", "Y dtype"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, out, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run(K, ins, out[0], out[1], floats=(1.0,))
