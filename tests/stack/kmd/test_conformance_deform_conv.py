"""Conformance of DEFORM_CONV through the KMD, on every available backend, against a plain loop
over each output pixel, input channel and kernel tap (ONNX's semantics: the tap's place moved
by its offset, read in (dh, dw) pairs per offset group, sampled bilinearly with corners outside
X weighing 0, times its mask, times the weight): float16/32/64, strides, pads, dilations,
groups, offset groups, bias and mask, offsets reaching outside X; a zero offset is the plain
convolution; the kernel's refusal of shapes that disagree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(50)


def bilinear(img: np.ndarray, h: float, w: float) -> float:
    """img[h, w] interpolated from its four neighbours, each outside the image weighing 0."""
    h0, w0 = math.floor(h), math.floor(w)
    total = 0.0
    for r, wy in ((h0, 1 - (h - h0)), (h0 + 1, h - h0)):
        for q, wx in ((w0, 1 - (w - w0)), (w0 + 1, w - w0)):
            if 0 <= r < img.shape[0] and 0 <= q < img.shape[1]:
                total += wy * wx * float(img[r, q])
    return total


def reference(x, w, off, b, mask, strides, pads, dil, group, og):  # type: ignore[no-untyped-def]
    """Y[n, m, i, j], pixel by pixel, channel by channel, tap by tap (in float64)."""
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    y = np.zeros((n, m, oh, ow))
    mg, cog = m // group, c // og
    for bi in range(n):
        for i in range(oh):
            for j in range(ow):
                for ci in range(c):
                    g, gi = ci // cg, ci // cog
                    for a in range(kh):
                        for bb in range(kw):
                            t = (gi * kh + a) * kw + bb
                            h = i * strides[0] - pads[0] + a * dil[0] + off[bi, 2 * t, i, j]
                            v = j * strides[1] - pads[1] + bb * dil[1] + off[bi, 2 * t + 1, i, j]
                            s = bilinear(x[bi, ci], h, v)
                            if mask is not None:
                                s *= mask[bi, t, i, j]
                            outs = slice(g * mg, (g + 1) * mg)
                            y[bi, outs, i, j] += s * w[outs, ci % cg, a, bb]
    return y if b is None else y + b.reshape(1, m, 1, 1)


def out_hw(xs, ws, strides, pads, dil):  # type: ignore[no-untyped-def]
    return tuple(
        (xs[2 + a] + pads[a] + pads[2 + a] - dil[a] * (ws[2 + a] - 1) - 1) // strides[a] + 1
        for a in range(2)
    )


CASES = [
    # (X shape, W shape, strides, pads, dilations, group, offset_group, bias, mask)
    ((1, 1, 3, 3), (1, 1, 2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 1, 1, False, False),
    ((2, 3, 5, 6), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, 1, True, True),
    ((1, 4, 6, 5), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2, 2, True, False),
    ((2, 4, 7, 7), (2, 4, 2, 3), (2, 3), (0, 1, 1, 0), (2, 1), 1, 4, False, True),
    ((1, 6, 4, 5), (3, 2, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 3, 1, True, True),
]
TOL = {np.float16: 2e-2, np.float32: 1e-4, np.float64: 1e-10}


def _inputs(case, dtype, spread=2.0):  # type: ignore[no-untyped-def]
    xs, ws, strides, pads, dil, _, og, bias, with_mask = case
    oh, ow = out_hw(xs, ws, strides, pads, dil)
    k = ws[2] * ws[3]
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    off = (spread * RNG.standard_normal((xs[0], og * k * 2, oh, ow))).astype(dtype)
    b = RNG.standard_normal(ws[0]).astype(dtype) if bias else None
    mask = RNG.random((xs[0], og * k, oh, ow)).astype(dtype) if with_mask else None
    return x, w, off, b, mask


def _ints(case):  # type: ignore[no-untyped-def]
    _, _, strides, pads, dil, group, og, _, _ = case
    return (*strides, *pads, *dil, group, og)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"x{c[0]}w{c[1]}s{c[2]}g{c[5]}og{c[6]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_deform_conv_matches_the_loop(backend_rig, case, dtype) -> None:  # type: ignore[no-untyped-def]
    x, w, off, b, mask = _inputs(case, dtype)
    _, _, strides, pads, dil, group, og, _, _ = case
    wide = [a.astype(np.float64) if a is not None else None for a in (x, w, off, b, mask)]
    ref = reference(*wide, strides, pads, dil, group, og)
    if mask is not None and b is None:  # a mask needs a bias before it: a zero one
        b = np.zeros(w.shape[0], dtype)
    ins = [a for a in (x, w, off, b, mask) if a is not None]
    out = backend_rig.run(KernelId.DEFORM_CONV, ins, ref.shape, dtype, ints=_ints(case))
    assert out.dtype == dtype and out.shape == ref.shape
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=TOL[dtype],
                               atol=TOL[dtype] * scale)  # fmt: skip


@pytest.mark.parametrize("case", CASES[1:3], ids=["pads", "groups"])
def test_a_zero_offset_is_the_plain_convolution(backend_rig, case) -> None:  # type: ignore[no-untyped-def]
    x, w, off, b, _ = _inputs(case, np.float64)
    off[...] = 0
    ins = [x, w, off] if b is None else [x, w, off, b]
    ints = _ints(case)
    got = backend_rig.run(KernelId.DEFORM_CONV, ins, (x.shape[0], w.shape[0], *off.shape[2:]),
                          np.float64, ints=ints)  # fmt: skip
    conv = [x, w] if b is None else [x, w, b]
    want = backend_rig.run(KernelId.CONV2D, conv, got.shape, np.float64, ints=ints[:9])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_samples_outside_x_weigh_nothing(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """A 1x1 kernel moved half a pixel past the border reads half the edge pixel; moved a
    whole pixel or more, nothing."""
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 1, 1), np.float32)
    off = np.zeros((1, 2, 3, 3), np.float32)
    off[0, 0, 0, 0] = -0.5  # row -0.5 of column 0: half of X[0, 0]
    off[0, 1, 2, 2] = 1.0  # column 3 of row 2: outside
    off[0, 0, 1, 1] = -7.25  # far above
    out = backend_rig.run(KernelId.DEFORM_CONV, [x, w, off], (1, 1, 3, 3),
                          ints=(1, 1, 0, 0, 0, 0, 1, 1, 1, 1))  # fmt: skip
    np.testing.assert_allclose(out[0, 0], [[0.5, 2, 3], [4, 0, 6], [7, 8, 0]], atol=1e-6)


_GOOD = ((1, 2, 4, 4), (2, 2, 3, 3), (1, 18, 2, 2), (1, 2, 2, 2))
_INTS = (1, 1, 0, 0, 0, 0, 1, 1, 1, 1)


@pytest.mark.parametrize(
    ("shapes", "y_shape", "ints"),
    [
        (((1, 2, 4, 4), (2, 2, 3, 3), (1, 16, 2, 2)), (1, 2, 2, 2), _INTS),  # offset channels
        (((1, 2, 4, 4), (2, 2, 3, 3), (1, 18, 3, 2)), (1, 2, 2, 2), _INTS),  # offset places
        (_GOOD[:3], (1, 2, 3, 3), _INTS),  # Y not the convolution's size
        (((1, 3, 4, 4), (2, 2, 3, 3), (1, 18, 2, 2)), (1, 2, 2, 2), _INTS),  # channels
        (_GOOD[:3], (1, 2, 2, 2), (1, 1, 0, 0, 0, 0, 1, 1, 1, 2)),  # 2 offset groups: 36
        (_GOOD[:3], (1, 2, 2, 2), (0, 1, 0, 0, 0, 0, 1, 1, 1, 1)),  # stride 0
        ((*_GOOD[:3], (3,)), (1, 2, 2, 2), _INTS),  # bias of 3 for 2 output channels
        ((*_GOOD[:3], (2,), (1, 8, 2, 2)), (1, 2, 2, 2), _INTS),  # mask channels
    ],
    ids=["offset channels", "offset places", "output", "channels", "offset groups", "stride",
         "bias", "mask"],
)  # fmt: skip
def test_shapes_that_disagree_are_a_fault(rig, shapes, y_shape, ints) -> None:  # type: ignore[no-untyped-def]
    ins = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(FenceFailedError, match="DeformConv shapes"):
        rig.run(KernelId.DEFORM_CONV, ins, y_shape, ints=ints)
