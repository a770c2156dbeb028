"""Conformance of DET through the KMD, on every available backend, against the Leibniz formula
(the signed sum over every permutation, in float64, on the very values the kernel reads): batches
of every rank, M from 1 to 5 and float16, float32 and float64 (the kernel computes in float64 and
rounds once, so float32 and float16 land within a rounding of the formula); triangular,
permutation and singular matrices of known determinant; an empty matrix (1) and an empty batch;
a NaN anywhere in a matrix gives NaN, even where LAPACK's pivot search steps over it; and the
kernel's refusal of an X or Y that does not fit."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(56)
FAST = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
#: Relative tolerance per dtype: float64's own error, one rounding of float32 and float16.
RTOL = {np.float64: 1e-12, np.float32: 2e-7, np.float16: 1e-3}


def leibniz(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """det of every trailing M x M matrix of ``x``, summed over the M! permutations in float64;
    with the largest term's magnitude, the scale a rounding error is relative to."""
    m = x.shape[-1]
    a = x.astype(np.float64)
    total = np.zeros(x.shape[:-2])
    scale = np.zeros(x.shape[:-2])
    for perm in itertools.permutations(range(m)):
        inversions = sum(p > q for i, p in enumerate(perm) for q in perm[i + 1 :])
        term = np.prod([a[..., i, p] for i, p in enumerate(perm)], axis=0)
        total = total + (-1) ** inversions * term
        scale = np.maximum(scale, np.abs(term))
    return total, scale


def check(out: np.ndarray, x: np.ndarray) -> None:
    want, scale = leibniz(x)
    assert out.dtype == x.dtype and out.shape == x.shape[:-2]
    tol = RTOL[x.dtype.type]
    np.testing.assert_allclose(
        out.astype(np.float64), want, rtol=tol, atol=tol * scale.max(initial=0)
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    "shape",
    [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (7, 3, 3), (2, 3, 4, 4), (2, 1, 2, 2, 2)],
    ids=str,
)
def test_det_matches_the_leibniz_formula(backend_rig, shape: tuple[int, ...], dtype: Any) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal(shape).astype(dtype)
    check(backend_rig.run(KernelId.DET, [x], shape[:-2], dtype), x)


@FAST
@given(
    batch=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    m=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_random_batches(backend_rig, batch: list[int], m: int, dtype: Any) -> None:  # type: ignore[no-untyped-def]
    x = (RNG.standard_normal((*batch, m, m)) * 2).astype(dtype)
    check(backend_rig.run(KernelId.DET, [x], tuple(batch), dtype), x)


def test_known_determinants(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Triangular (the diagonal's product), a swap and a cycle (their signs), a scaled identity,
    singular matrices (a repeated row, a zero column) and a 1 x 1."""
    x = np.array([
        [[2, 5, 7], [0, 3, -1], [0, 0, 4]],
        [[0, 1, 0], [1, 0, 0], [0, 0, 1]],
        [[0, 0, 1], [1, 0, 0], [0, 1, 0]],
        [[3, 0, 0], [0, 3, 0], [0, 0, 3]],
        [[1, 2, 3], [4, 5, 6], [1, 2, 3]],
        [[1, 0, 3], [4, 0, 6], [7, 0, 9]],
    ], np.float64)  # fmt: skip
    out = backend_rig.run(KernelId.DET, [x], (6,), np.float64)
    np.testing.assert_allclose(out, [24, -1, 1, 27, 0, 0], rtol=1e-14, atol=1e-14)
    one = backend_rig.run(KernelId.DET, [np.array([[-2.5]], np.float32)], (), np.float32)
    assert one.shape == () and one == np.float32(-2.5)


def test_an_empty_matrix_is_one_and_an_empty_batch_writes_nothing(backend_rig) -> None:  # type: ignore[no-untyped-def]
    out = backend_rig.run(KernelId.DET, [np.zeros((3, 0, 0), np.float32)], (3,), np.float32)
    np.testing.assert_array_equal(out, [1, 1, 1])
    alone = backend_rig.run(KernelId.DET, [np.zeros((0, 0), np.float16)], (), np.float16)
    assert alone.dtype == np.float16 and alone == 1
    none = backend_rig.run(KernelId.DET, [np.zeros((2, 0, 4, 4))], (2, 0), np.float64)
    assert none.shape == (2, 0)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
def test_a_nan_anywhere_in_a_matrix_gives_nan(backend_rig, dtype: Any) -> None:  # type: ignore[no-untyped-def]
    """[[nan, 1], [1, 1]] is the case LAPACK's pivot search steps over (it returns 0); the
    other matrices keep their determinants, an infinity on the diagonal gives one."""
    x = np.array([
        [[np.nan, 1], [1, 1]], [[1, np.nan], [1, 1]], [[1, 1], [1, np.nan]], [[1, 2], [3, 4]],
        [[np.inf, 1], [1, 1]], [[np.nan, np.inf], [1, 1]],
    ], dtype)  # fmt: skip
    out = backend_rig.run(KernelId.DET, [x], (6,), dtype)
    assert np.isnan(out[[0, 1, 2, 5]]).all()
    np.testing.assert_allclose(out[3], -2, rtol=RTOL[dtype])
    assert out[4] == np.inf


def test_large_values_keep_their_magnitude(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """det(10 I) for M = 30 is 1e30: within float32, computed without overflow or underflow."""
    x = np.tile(np.eye(30, dtype=np.float32) * 10, (2, 1, 1))
    out = backend_rig.run(KernelId.DET, [x], (2,), np.float32)
    np.testing.assert_allclose(out, [1e30, 1e30], rtol=1e-6)
    assert math.isfinite(float(out[0]))


@pytest.mark.parametrize(
    ("x", "shape", "dtype", "message"),
    [
        (np.ones((2, 3, 4), np.float32), (2,), np.float32, "Det X"),
        (np.ones((3,), np.float32), (), np.float32, "Det X"),
        (np.ones((2, 2), np.int32), (), np.int32, "Det X"),
        (np.ones((2, 3, 3), np.float32), (3,), np.float32, "Det Y"),
        (np.ones((2, 3, 3), np.float32), (2, 1), np.float32, "Det Y"),
        (np.ones((2, 3, 3), np.float32), (2,), np.float64, "Det Y"),
    ],
    ids=["not square", "rank 1", "int32", "batch", "rank of Y", "dtype of Y"],
)
def test_an_x_or_y_that_does_not_fit_is_a_fault(rig, x, shape, dtype, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run(KernelId.DET, [x], shape, dtype)
