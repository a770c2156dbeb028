"""Conformance of ROIALIGN through the KMD, on every available backend, against a plain loop
over each output place, its samples and their four corners (ONNX's reference semantics: roi
corners scaled, less half a pixel in half_pixel mode, bins of roi / output size, sampling_ratio
samples per bin axis or ceil(bin size), a sample beyond a pixel outside X weighing 0; the
average, or the max of each sample's weighted corners): float16/32/64, both modes, both
coordinate transformations, a spatial scale, rois reaching outside X and inverted; a roi with
no samples; the kernel's refusal of a batch index outside X."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(44)


def _corners(v: float, limit: int) -> list[tuple[int, float]] | None:
    """The (pixel, weight) pairs of a sample at ``v`` along one axis; None outside."""
    if v < -1.0 or v > limit:
        return None
    v = max(v, 0.0)
    lo = int(v)
    if lo >= limit - 1:
        return [(limit - 1, 1.0), (limit - 1, 0.0)]
    return [(lo, 1.0 - (v - lo)), (lo + 1, v - lo)]


def reference(x, rois, batch, out_hw, ratio, scale, mode, half):  # type: ignore[no-untyped-def]
    """Y[r, c, i, j], sample by sample, corner by corner (in float64)."""
    _, c, h, w = x.shape
    oh, ow = out_hw
    y = np.zeros((len(rois), c, oh, ow), np.float64)
    for r, (box, b) in enumerate(zip(rois.astype(np.float64), batch, strict=True)):
        x1, y1, x2, y2 = (v * scale - (0.5 if half else 0.0) for v in box)
        rh, rw = y2 - y1, x2 - x1
        if not half:
            rh, rw = max(rh, 1.0), max(rw, 1.0)
        gh = ratio or math.ceil(rh / oh)
        gw = ratio or math.ceil(rw / ow)
        for i in range(oh):
            for j in range(ow):
                for k in range(c):
                    vals = []
                    for iy in range(max(gh, 0)):
                        for ix in range(max(gw, 0)):
                            ys = _corners(y1 + i * rh / oh + (iy + 0.5) * rh / oh / gh, h)
                            xs = _corners(x1 + j * rw / ow + (ix + 0.5) * rw / ow / gw, w)
                            if ys is None or xs is None:
                                vals.append([0.0])
                                continue
                            vals.append([wy * wx * float(x[int(b), k, py, px])
                                         for py, wy in ys for px, wx in xs])  # fmt: skip
                    if not vals:
                        continue
                    if mode == 0:
                        y[r, k, i, j] = sum(sum(v) for v in vals) / max(gh * gw, 1)
                    else:
                        y[r, k, i, j] = max(max(v) for v in vals)
    return y


ROIS = np.array(
    [[0, 0, 7, 5], [2, 1, 5, 6], [3.3, 2.2, 4.1, 3.9], [-2, -1, 9, 12], [6, 4, 2, 1]], np.float64
)
BATCH = np.array([0, 1, 0, 1, 0], np.int64)
TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


@pytest.mark.parametrize("out_hw", [(1, 1), (2, 3), (4, 4)], ids=lambda s: f"out{s}")
@pytest.mark.parametrize("ratio", [0, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("mode", [0, 1], ids=["avg", "max"])
@pytest.mark.parametrize("half", [1, 0], ids=["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_roialign_matches_the_loop(backend_rig, out_hw, ratio, scale, mode, half, dtype) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 3, 6, 8)).astype(dtype)
    rois = ROIS.astype(dtype)
    out = backend_rig.run(
        KernelId.ROIALIGN, [x, rois, BATCH], (len(rois), 3, *out_hw), dtype,
        ints=(*out_hw, ratio, mode, half), floats=(scale,),
    )  # fmt: skip
    assert out.dtype == dtype
    want = reference(x, rois, BATCH, out_hw, ratio, scale, mode, half)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_an_inverted_half_pixel_roi_has_no_samples(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 2, 4, 4), np.float32)
    rois = np.array([[3, 3, 1, 1]], np.float32)
    batch = np.zeros(1, np.int64)
    out = backend_rig.run(
        KernelId.ROIALIGN, [x, rois, batch], (1, 2, 2, 2), ints=(2, 2, 0, 0, 1), floats=(1.0,)
    )
    np.testing.assert_array_equal(out, np.zeros((1, 2, 2, 2), np.float32))


@pytest.mark.parametrize("batch", [2, -1])
def test_a_batch_outside_x_is_a_fault(rig, batch: int) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 1, 4, 4), np.float32)
    rois = np.array([[0, 0, 1, 1]], np.float32)
    with pytest.raises(FenceFailedError, match=f"RoiAlign roi 0 names batch {batch} of 2"):
        rig.run(KernelId.ROIALIGN, [x, rois, np.array([batch], np.int64)], (1, 1, 1, 1),
                ints=(1, 1, 0, 0, 1), floats=(1.0,))  # fmt: skip
