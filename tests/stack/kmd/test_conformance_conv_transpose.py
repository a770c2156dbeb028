"""Conformance of CONV_TRANSPOSE through the KMD, on every available backend, against a direct
loop over input pixels and kernel taps (strides, pads including negative ones, dilations,
groups, bias); and the kernel's refusal of shapes that disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(11)


def reference(x, w, b, strides, pads, dilations, group):  # type: ignore[no-untyped-def]
    """Scatter every X[n, c, i, j] * W[c, m] into the full output, then crop by the pads."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    fh, fw = sh * (h - 1) + dh * (kh - 1) + 1, sw * (wd - 1) + dw * (kw - 1) + 1
    full = np.zeros((n, mg * group, fh, fw), np.float64)
    cg = c // group
    for ci in range(c):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for bb in range(kw):
                        full[:, g * mg : (g + 1) * mg, i * sh + a * dh, j * sw + bb * dw] += (
                            x[:, ci, i, j][:, None] * w[ci, :, a, bb][None, :]
                        )
    pt, pl, pb, pr = pads
    big = np.zeros((n, mg * group, fh + 2 * abs(pt) + abs(pb), fw + 2 * abs(pl) + abs(pr)))
    oy, ox = abs(pt), abs(pl)
    big[:, :, oy : oy + fh, ox : ox + fw] = full
    oh, ow = fh - pt - pb, fw - pl - pr
    y = big[:, :, oy + pt : oy + pt + oh, ox + pl : ox + pl + ow]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


CASES = [
    # (X shape, W shape, strides, pads, dilations, group, bias)
    ((1, 2, 3, 3), (2, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    ((2, 3, 4, 5), (3, 2, 3, 2), (2, 3), (1, 0, 1, 2), (1, 1), 1, False),
    ((1, 4, 3, 4), (4, 3, 2, 3), (2, 2), (0, 1, -1, -2), (2, 1), 2, True),
    ((2, 6, 2, 3), (6, 1, 3, 3), (3, 2), (1, 1, 0, 0), (1, 2), 3, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"x{c[0]}w{c[1]}s{c[2]}p{c[3]}g{c[5]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_transpose_matches_the_direct_loop(backend_rig, case, dtype) -> None:  # type: ignore[no-untyped-def]
    xs, ws, strides, pads, dil, group, bias = case
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[1] * group).astype(dtype) if bias else None
    ref = reference(x, w, b, strides, pads, dil, group)
    ins = [x, w] if b is None else [x, w, b]
    ints = (*strides, *pads, *dil, group)
    out = backend_rig.run(KernelId.CONV_TRANSPOSE, ins, ref.shape, dtype, ints=ints)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_conv_transpose_refuses_an_output_that_disagrees(rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 2, 3, 3), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    with pytest.raises(FenceFailedError, match="conv-transpose shapes"):
        rig.run(KernelId.CONV_TRANSPOSE, [x, w], (1, 1, 4, 4), ints=(1, 1, 0, 0, 0, 0, 1, 1, 1))
