"""Conformance of COL2IM through the KMD, on every available backend, against a plain loop over
each block place and each element of its block (ONNX's semantics: column l of X is the block at
place l, row-major over the places, its elements row-major after the channel, added into the
padded image at place · stride + element · dilation, then cropped by the pads): float16/32/64,
1-D to 3-D images, strides, dilations, pads and overlapping blocks; the kernel's refusal of
shapes or a spec that disagree."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(48)


def places_of(image, block, dil, pads, strides):  # type: ignore[no-untyped-def]
    r = len(image)
    return [
        (image[a] + pads[a] + pads[r + a] - dil[a] * (block[a] - 1) - 1) // strides[a] + 1
        for a in range(r)
    ]


def reference(x, image, block, dil, pads, strides):  # type: ignore[no-untyped-def]
    """Y[n, c, *image], block place by block place, element by element (in float64)."""
    r = len(image)
    places = places_of(image, block, dil, pads, strides)
    n, ck, _ = x.shape
    c, k = ck // math.prod(block), math.prod(block)
    padded = np.zeros((n, c, *(image[a] + pads[a] + pads[r + a] for a in range(r))))
    for col, at in enumerate(itertools.product(*(range(p) for p in places))):
        for e, off in enumerate(itertools.product(*(range(b) for b in block))):
            where = tuple(at[a] * strides[a] + off[a] * dil[a] for a in range(r))
            for ci in range(c):
                padded[(slice(None), ci, *where)] += x[:, ci * k + e, col]
    crop = tuple(slice(pads[a], pads[a] + image[a]) for a in range(r))
    return padded[(slice(None), slice(None), *crop)]


CASES = [
    # (N, C, image_shape, block_shape, dilations, pads, strides)
    (1, 1, (5, 5), (1, 5), (1, 1), (0, 0, 0, 0), (1, 1)),  # ONNX's test_col2im
    (2, 3, (6, 7), (2, 3), (1, 1), (0, 0, 0, 0), (1, 1)),  # overlapping blocks
    (1, 2, (5, 8), (2, 2), (1, 2), (1, 0, 0, 1), (2, 3)),
    (2, 2, (7, 6), (3, 2), (2, 1), (2, 1, 1, 2), (1, 2)),
    (1, 3, (9,), (3,), (2,), (1, 2), (2,)),
    (2, 1, (3, 4, 5), (2, 2, 3), (1, 1, 2), (0, 1, 1, 1, 0, 1), (1, 2, 1)),
]
TOL = {np.float16: 5e-3, np.float32: 1e-5, np.float64: 1e-12}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"i{c[2]}b{c[3]}d{c[4]}p{c[5]}s{c[6]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_col2im_matches_the_loop(backend_rig, case, dtype) -> None:  # type: ignore[no-untyped-def]
    n, c, image, block, dil, pads, strides = case
    length = math.prod(places_of(image, block, dil, pads, strides))
    x = RNG.standard_normal((n, c * math.prod(block), length)).astype(dtype)
    spec = (*block, *dil, *pads, *strides)
    out = backend_rig.run(KernelId.COL2IM, [x], (n, c, *image), dtype, ints=spec)
    assert out.dtype == dtype and out.shape == (n, c, *image)
    want = reference(x.astype(np.float64), image, block, dil, pads, strides)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])


def test_an_image_no_block_reaches_stays_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Stride 3 with a 1-wide block over 7 pixels leaves the pixels between the places 0."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3)
    out = backend_rig.run(KernelId.COL2IM, [x], (1, 2, 7), ints=(1, 1, 0, 0, 3))
    np.testing.assert_array_equal(out, [[[1, 0, 0, 2, 0, 0, 3], [4, 0, 0, 5, 0, 0, 6]]])


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "spec"),
    [
        ((1, 4, 5), (1, 1, 2, 5), (2, 2, 1, 1, 0, 0, 0, 0, 1, 1)),  # L is 4, not 5
        ((1, 3, 4), (1, 1, 2, 5), (2, 2, 1, 1, 0, 0, 0, 0, 1, 1)),  # 3 is not C * 4
        ((1, 4, 4), (1, 1, 2, 5), (2, 2, 1, 1, 0, 0, 1, 1)),  # a spec of 8 for 2 axes
        ((1, 4, 4), (1, 1, 2, 5), (2, 2, 1, 1, 0, 0, 0, 0, 0, 1)),  # stride 0
    ],
    ids=["places", "channels", "spec", "stride"],
)
def test_shapes_or_a_spec_that_disagree_are_a_fault(rig, x_shape, y_shape, spec) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="Col2Im"):
        rig.run(KernelId.COL2IM, [np.ones(x_shape, np.float32)], y_shape, ints=spec)
