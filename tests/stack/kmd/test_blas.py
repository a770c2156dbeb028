"""BLAS threading control of the NumPy backend."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KmdDevice
from stack.kmd.kernels import blas


def test_numpy_device_runs_blas_single_threaded_by_default() -> None:
    if blas.threads() is None:
        pytest.skip("NumPy is not built on OpenBLAS here")
    KmdDevice("numpy").close()
    assert blas.threads() == blas.configure() == blas.DEFAULT


def test_set_threads_round_trip() -> None:
    before = blas.threads()
    if before is None:
        assert blas.set_threads(2) is False
        return
    try:
        assert blas.set_threads(2) and blas.threads() == 2
        a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
        np.testing.assert_allclose(a @ a, np.einsum("ij,jk->ik", a, a), rtol=1e-5)
    finally:
        blas.set_threads(before)
    assert blas.threads() == before
