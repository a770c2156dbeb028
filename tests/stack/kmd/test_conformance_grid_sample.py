"""Conformance of GRID_SAMPLE through the KMD, on every available backend, against a plain loop
over each output place and its taps (ONNX's reference semantics: grid places denormalised with
or without align_corners, rounded half to even for nearest, clamped (not for cubic, as
onnxruntime) or reflected from outside the borders, then one, two or four taps per axis whose
pixels outside X weigh 0, are clamped or reflected): float16/32/64, the three modes, the three
paddings, both align_corners, 1-D to 3-D images, places reaching far outside X; the kernel's
refusal of shapes that disagree."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(46)
MODES = {0: "linear", 1: "nearest", 2: "cubic"}
PADS = {0: "zeros", 1: "border", 2: "reflection"}


def _reflect(v: float, lo: float, hi: float) -> float:
    span = hi - lo
    if span <= 0:
        return lo
    if v < lo:
        k, r = divmod(lo - v, span)
        return lo + r if int(k) % 2 == 0 else hi - r
    if v > hi:
        k, r = divmod(v - hi, span)
        return hi - r if int(k) % 2 == 0 else lo + r
    return v


def _cubic(t: float) -> list[float]:
    a = -0.75

    def near(d: float) -> float:
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: float) -> float:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(g: float, size: int, mode: str, pad: str, align: int) -> list[tuple[int, float]]:
    """The (pixel, weight) taps along one axis, a pixel None-free (zeros: weight 0 outside)."""
    pos = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if mode == "nearest":
        pos = float(np.rint(pos))
    if pos < lo or pos > hi:
        if pad == "border" and mode != "cubic":  # cubic: the taps alone (onnxruntime)
            pos = min(max(pos, 0.0), size - 1.0)
        elif pad == "reflection":
            pos = _reflect(pos, lo, hi)
    if mode == "nearest":
        raw = [(int(pos), 1.0)]
    else:
        base = math.floor(pos)
        t = pos - base
        if mode == "linear":
            raw = [(base, 1 - t), (base + 1, t)]
        else:
            raw = [(base - 1 + k, w) for k, w in enumerate(_cubic(t))]
    out = []
    for i, w in raw:
        if pad == "zeros":
            out.append((i, w) if 0 <= i < size else (0, 0.0))
        elif pad == "border":
            out.append((min(max(i, 0), size - 1), w))
        else:
            out.append((min(max(int(_reflect(i, lo, hi)), 0), size - 1), w))
    return out


def reference(x, grid, mode, pad, align):  # type: ignore[no-untyped-def]
    """Y[n, c, *o], place by place, tap by tap (in float64)."""
    n, c, *spatial = x.shape
    r = len(spatial)
    out = grid.shape[1:-1]
    y = np.zeros((n, c, *out), np.float64)
    for b in range(n):
        for o in itertools.product(*(range(d) for d in out)):
            g = grid[(b, *o)].astype(np.float64)
            axes = [_taps(g[r - 1 - a], spatial[a], MODES[mode], PADS[pad], align)
                    for a in range(r)]  # fmt: skip
            for combo in itertools.product(*axes):
                w = math.prod(t[1] for t in combo)
                y[(b, slice(None), *o)] += w * x[(b, slice(None), *(t[0] for t in combo))]
    return y


TOL = {np.float16: 5e-3, np.float32: 2e-5, np.float64: 1e-12}
SHAPES = [((2, 3, 5, 7), (2, 4, 3, 2)), ((1, 2, 6), (1, 5, 1)), ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3))]


@pytest.mark.parametrize("shapes", SHAPES, ids=["2d", "1d", "3d"])
@pytest.mark.parametrize("align", [0, 1], ids=["edges", "align_corners"])
@pytest.mark.parametrize("pad", list(PADS), ids=list(PADS.values()))
@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES.values()))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_grid_sample_matches_the_loop(backend_rig, shapes, mode, pad, align, dtype) -> None:  # type: ignore[no-untyped-def]
    xs, gs = shapes
    x = RNG.standard_normal(xs).astype(dtype)
    grid = RNG.uniform(-2.5, 2.5, gs).astype(dtype)  # many places outside X
    grid.flat[:3] = (-1.0, 1.0, 0.0)  # the corners and the centre exactly
    out = backend_rig.run(
        KernelId.GRID_SAMPLE, [x, grid], (xs[0], xs[1], *gs[1:-1]), dtype, ints=(mode, pad, align)
    )
    assert out.dtype == dtype
    want = reference(x, grid, mode, pad, align)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_a_float64_grid_samples_a_float32_image(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    grid = RNG.uniform(-1, 1, (1, 3, 3, 2))
    out = backend_rig.run(KernelId.GRID_SAMPLE, [x, grid], (1, 2, 3, 3), ints=(0, 0, 0))
    np.testing.assert_allclose(out, reference(x, grid, 0, 0, 0), rtol=1e-5, atol=1e-5)


def test_a_one_pixel_axis_reflects_onto_its_pixel(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
    grid = np.array([[[[0.0, 3.0], [1.0, -2.0]]]], np.float32)
    out = backend_rig.run(KernelId.GRID_SAMPLE, [x, grid], (1, 1, 1, 2), ints=(0, 2, 1))
    np.testing.assert_allclose(out, reference(x, grid, 0, 2, 1), rtol=1e-6)


def test_shapes_that_disagree_are_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 1, 4, 4), np.float32)
    grid = np.zeros((1, 2, 2, 3), np.float32)
    with pytest.raises(FenceFailedError, match="GridSample shapes"):
        rig.run(KernelId.GRID_SAMPLE, [x, grid], (1, 1, 2, 2), ints=(0, 0, 0))
