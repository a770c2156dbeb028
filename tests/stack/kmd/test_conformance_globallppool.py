"""Conformance of GLOBALLPPOOL through the KMD, on every available backend, against a plain loop
summing |x|^p over each (n, c) plane and taking the p-th root (ONNX's reference semantics):
1-D to 3-D spatial axes, p = 1, 2, 3 and the default (2), float16/32/64, an empty plane; and the
kernel's refusal of p < 1."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(29)


def reference(x: np.ndarray, p: int) -> np.ndarray:
    """Y[n, c] = (sum over the plane of |x|^p)^(1/p), in float64."""
    n, c = x.shape[:2]
    y = np.zeros((n, c), np.float64)
    for i in range(n):
        for j in range(c):
            plane = np.abs(x[i, j].astype(np.float64)).reshape(-1)
            y[i, j] = sum(v**p for v in plane) ** (1.0 / p)
    return y.reshape(n, c, *(1 for _ in x.shape[2:]))


SHAPES = [(2, 3, 7), (1, 4, 5, 6), (2, 2, 3, 2, 4)]
TOLERANCE = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"x{s}")
@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_globallppool_matches_the_loop(backend_rig, shape, p, dtype) -> None:  # type: ignore[no-untyped-def]
    x = (RNG.standard_normal(shape) * 2).astype(dtype)
    out_shape = (*shape[:2], *(1 for _ in shape[2:]))
    out = backend_rig.run(KernelId.GLOBALLPPOOL, [x], out_shape, dtype, ints=(p,))
    assert out.dtype == dtype
    np.testing.assert_allclose(out, reference(x, p), rtol=TOLERANCE[dtype], atol=0)


def test_p_defaults_to_two(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[[3.0, -4.0]], [[0.0, 5.0]]], np.float32).reshape(2, 1, 2)
    out = backend_rig.run(KernelId.GLOBALLPPOOL, [x], (2, 1, 1))
    np.testing.assert_array_equal(out, [[[5.0]], [[5.0]]])


def test_an_empty_plane_pools_to_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((1, 2, 0, 3), np.float32)
    out = backend_rig.run(KernelId.GLOBALLPPOOL, [x], (1, 2, 1, 1), ints=(3,))
    np.testing.assert_array_equal(out, np.zeros((1, 2, 1, 1), np.float32))


@pytest.mark.parametrize("p", [0, -2])
def test_p_below_one_is_a_fault(rig, p: int) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 1, 2, 2), np.float32)
    with pytest.raises(FenceFailedError, match=f"GlobalLpPool p must be >= 1, got {p}"):
        rig.run(KernelId.GLOBALLPPOOL, [x], (1, 1, 1, 1), ints=(p,))
