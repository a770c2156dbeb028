"""Conformance of MAXROIPOOL through the KMD, on every available backend, against a plain loop
over each output place and the input pixels its bin covers (ONNX's reference semantics: roi
corners scaled and rounded half away from zero, bins of size roi / pooled, clipped to X, an
empty bin 0): float16/32/64, a spatial scale, rois reaching outside X; and the kernel's
refusal of a batch index outside X."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(43)


def reference(x: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float) -> np.ndarray:
    """Y[r, c, i, j] = max of X[batch, c] over the pixels of bin (i, j), pixel by pixel."""
    _, c, h, w = x.shape
    ph, pw = pooled
    y = np.zeros((len(rois), c, ph, pw), x.dtype)
    for r, (b, x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sw, sh, ew, eh = (
            int(math.copysign(math.floor(abs(v * scale) + 0.5), v)) for v in (x1, y1, x2, y2)
        )
        bh = np.float32(max(eh - sh + 1, 1)) / np.float32(ph)
        bw = np.float32(max(ew - sw + 1, 1)) / np.float32(pw)
        for i in range(ph):
            for j in range(pw):
                hs = min(max(math.floor(np.float32(i) * bh) + sh, 0), h)
                he = min(max(math.ceil(np.float32(i + 1) * bh) + sh, 0), h)
                ws = min(max(math.floor(np.float32(j) * bw) + sw, 0), w)
                we = min(max(math.ceil(np.float32(j + 1) * bw) + sw, 0), w)
                for k in range(c):
                    pixels = [x[int(b), k, p, q] for p in range(hs, he) for q in range(ws, we)]
                    y[r, k, i, j] = max(pixels) if pixels else 0
    return y


ROIS = np.array(
    [[0, 0, 0, 7, 5], [1, 2, 1, 5, 6], [0, 3, 3, 3, 3], [1, -2, -1, 9, 12], [0, 6, 4, 2, 1]],
    np.float64,
)


@pytest.mark.parametrize("pooled", [(1, 1), (2, 3), (4, 4)], ids=lambda s: f"pooled{s}")
@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_maxroipool_matches_the_loop(backend_rig, pooled, scale, dtype) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 3, 6, 8)).astype(dtype)
    rois = ROIS.astype(dtype)
    out = backend_rig.run(
        KernelId.MAXROIPOOL, [x, rois], (len(rois), 3, *pooled), dtype, ints=pooled, floats=(scale,)
    )
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, reference(x, rois, pooled, scale))


def test_a_bin_outside_x_pools_to_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 2, 3, 3), np.float32)
    rois = np.array([[0, 10, 10, 12, 12]], np.float32)
    out = backend_rig.run(KernelId.MAXROIPOOL, [x, rois], (1, 2, 2, 2), ints=(2, 2), floats=(1.0,))
    np.testing.assert_array_equal(out, np.zeros((1, 2, 2, 2), np.float32))


@pytest.mark.parametrize("batch", [2, -1])
def test_a_batch_outside_x_is_a_fault(rig, batch: int) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 1, 4, 4), np.float32)
    rois = np.array([[batch, 0, 0, 1, 1]], np.float32)
    with pytest.raises(FenceFailedError, match=f"MaxRoiPool roi 0 names batch {batch} of 2"):
        rig.run(KernelId.MAXROIPOOL, [x, rois], (1, 1, 1, 1), ints=(1, 1), floats=(1.0,))
