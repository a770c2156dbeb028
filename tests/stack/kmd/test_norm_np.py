"""The NumPy LayerNorm and Softmax: the planned paths and every fallback against a float64
reference, and Softmax rows far below the tensor's maximum (the per-row shift fallback)."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd.kernels import norm_np

RNG = np.random.default_rng(11)


def softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm_ref(
    x: np.ndarray, axis: int, scale: np.ndarray, bias: np.ndarray | None
) -> np.ndarray:
    axes = tuple(range(axis % x.ndim, x.ndim))
    xd = x.astype(np.float64)
    mu = xd.mean(axis=axes, keepdims=True)
    y = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=axes, keepdims=True) + 1e-5) * scale
    return y if bias is None else y + bias


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize(("shape", "axis"), [((1, 4, 16, 16), 3), ((3, 7), -1), ((4, 5, 6), 1)])
def test_softmax_matches_the_reference(shape, axis, dtype) -> None:  # type: ignore[no-untyped-def]
    x = (RNG.standard_normal(shape) * 5).astype(dtype)
    y = np.full(shape, np.nan, dtype)
    norm_np.softmax([x], [y], (axis, 0), ())
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(y, softmax_ref(x, axis), rtol=tol, atol=tol)


def test_softmax_rows_far_below_the_maximum_keep_their_precision() -> None:
    """Row 1 lies 200 below row 0: shifted by the tensor's maximum its exponentials would all
    underflow to 0 (a 0/0 row); the kernel shifts such a tensor row by row instead."""
    x = RNG.standard_normal((3, 16)).astype(np.float32)
    x[1] -= 200.0
    x[2] -= 60.0  # shifted by the maximum, its sum would be ~1e-26: below the floor as well
    y = np.full(x.shape, np.nan, np.float32)
    norm_np.softmax([x], [y], (1, 0), ())
    np.testing.assert_allclose(y, softmax_ref(x, 1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y.sum(axis=1), np.ones(3), rtol=1e-5)


def test_log_softmax_and_strided_views_take_the_generic_kernel() -> None:
    x = (RNG.standard_normal((4, 10)) * 3).astype(np.float32)
    y = np.empty_like(x)
    norm_np.softmax([x], [y], (1, 1), ())
    np.testing.assert_allclose(y, np.log(softmax_ref(x, 1)), rtol=1e-5, atol=1e-5)
    wide = np.empty((4, 20), np.float32)
    norm_np.softmax([x], [wide[:, ::2]], (1, 0), ())
    np.testing.assert_allclose(wide[:, ::2], softmax_ref(x, 1), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize(
    ("shape", "axis", "bias"),
    [((1, 16, 64), -1, True), ((2, 3, 8), 1, False), ((2, 5, 700), 2, True), ((6,), 0, True)],
)
def test_layernorm_matches_the_reference(shape, axis, bias, dtype) -> None:  # type: ignore[no-untyped-def]
    x = (RNG.standard_normal(shape) + 3.0).astype(dtype)  # a mean far from 0
    tail = shape[axis % len(shape) :]
    scale = RNG.standard_normal(tail).astype(dtype)
    b = RNG.standard_normal(tail).astype(dtype) if bias else None
    y = np.full(shape, np.nan, dtype)
    ins = [x, scale] if b is None else [x, scale, b]
    norm_np.layernorm(ins, [y], (axis,), (1e-5,))
    tol = 2e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(y, layernorm_ref(x, axis, scale, b), rtol=tol, atol=tol)


def test_layernorm_with_a_broadcast_scale_takes_the_generic_kernel() -> None:
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    scale, b = np.full(1, 2.0, np.float32), np.full(1, 0.5, np.float32)
    y = np.empty_like(x)
    norm_np.layernorm([x, scale, b], [y], (-1,), (1e-5,))
    np.testing.assert_allclose(y, layernorm_ref(x, -1, scale, b), rtol=1e-4, atol=1e-4)
