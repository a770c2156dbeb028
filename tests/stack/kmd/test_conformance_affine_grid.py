"""Conformance of AFFINE_GRID through the KMD, on every available backend, against a plain loop
over each batch and each pixel (ONNX's semantics: per spatial axis of S pixels the normalised
place of pixel i is (2i + 1) / S - 1, or with align_corners 2i / (S - 1) - 1 and -1 for a
one-pixel axis; grid[n, *pixel] = theta[n] · (x, y[, z], 1), x the last spatial axis):
float16/32/64, 2-D and 3-D grids, both align_corners, one-pixel axes; the kernel's refusal of
shapes or a code that disagree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(49)


def place(i: int, size: int, align: int) -> float:
    if align:
        return 2 * i / (size - 1) - 1 if size > 1 else -1.0
    return (2 * i + 1) / size - 1


def reference(theta: np.ndarray, spatial: tuple[int, ...], align: int) -> np.ndarray:
    """grid[n, *pixel], batch by batch, pixel by pixel (in float64)."""
    r = len(spatial)
    out = np.zeros((theta.shape[0], *spatial, r))
    for n in range(theta.shape[0]):
        for pixel in itertools.product(*(range(s) for s in spatial)):
            xyz = [place(pixel[a], spatial[a], align) for a in reversed(range(r))]
            out[(n, *pixel)] = theta[n].astype(np.float64) @ np.array([*xyz, 1.0])
    return out


SPATIAL = [(3, 4), (5, 1), (1, 1), (2, 3, 4), (1, 3, 2)]
TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


@pytest.mark.parametrize("spatial", SPATIAL, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("align", [0, 1], ids=["edges", "align_corners"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_affine_grid_matches_the_loop(backend_rig, spatial, align, dtype) -> None:  # type: ignore[no-untyped-def]
    r = len(spatial)
    theta = RNG.standard_normal((2, r, r + 1)).astype(dtype)
    out = backend_rig.run(KernelId.AFFINE_GRID, [theta], (2, *spatial, r), dtype, ints=(align,))
    assert out.dtype == dtype and out.shape == (2, *spatial, r)
    want = reference(theta, spatial, align)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_the_identity_gives_the_base_places_x_first(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Identity theta: grid[0, h, w] = (x_w, y_h), pixel centres or, aligned, corner centres."""
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)
    out = backend_rig.run(KernelId.AFFINE_GRID, [theta], (1, 2, 4, 2), ints=(0,))
    np.testing.assert_allclose(out[0, :, :, 0], [[-0.75, -0.25, 0.25, 0.75]] * 2, rtol=1e-6)
    np.testing.assert_allclose(out[0, :, :, 1], [[-0.5] * 4, [0.5] * 4], rtol=1e-6)
    out = backend_rig.run(KernelId.AFFINE_GRID, [theta], (1, 2, 3, 2), ints=(1,))
    np.testing.assert_allclose(out[0, :, :, 0], [[-1, 0, 1]] * 2, atol=1e-7)
    np.testing.assert_allclose(out[0, :, :, 1], [[-1] * 3, [1] * 3], atol=1e-7)


def test_the_translation_column_shifts_every_place(backend_rig) -> None:  # type: ignore[no-untyped-def]
    theta = np.zeros((1, 3, 4))
    theta[0, :, 3] = (0.5, -2.0, 3.0)
    out = backend_rig.run(KernelId.AFFINE_GRID, [theta], (1, 2, 2, 2, 3), np.float64, ints=(0,))
    np.testing.assert_array_equal(out.reshape(-1, 3), np.tile([0.5, -2.0, 3.0], (8, 1)))


@pytest.mark.parametrize(
    ("theta_shape", "grid_shape", "align"),
    [
        ((1, 2, 3), (2, 2, 2, 2), 0),  # another batch
        ((1, 3, 4), (1, 2, 2, 2), 0),  # a 3-D theta for a 2-D grid
        ((1, 2, 3), (1, 2, 2, 3), 0),  # three coordinates for two axes
        ((1, 1, 2), (1, 4, 1), 0),  # a 1-D grid
        ((1, 2, 3), (1, 2, 2, 2), 2),  # align_corners 2
    ],
    ids=["batch", "rank", "coordinates", "1-D", "align"],
)
def test_shapes_or_a_code_that_disagree_are_a_fault(rig, theta_shape, grid_shape, align) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="AffineGrid"):
        rig.run(KernelId.AFFINE_GRID, [np.ones(theta_shape, np.float32)], grid_shape, ints=(align,))
