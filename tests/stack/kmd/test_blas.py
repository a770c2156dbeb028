"""BLAS threading control of the NumPy backend."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

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


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 core names")
@pytest.mark.parametrize("coretype", ["Haswell", "Sandybridge"])
def test_core_names_the_kernels_the_environment_forces(coretype: str) -> None:
    """OpenBLAS reads $OPENBLAS_CORETYPE when it loads: a fresh process reports that core."""
    if blas.core() is None:
        pytest.skip("NumPy is not built on OpenBLAS here")
    code = "from stack.kmd.kernels import blas; print(blas.core())"
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == coretype
