"""Prepared Conv2D launches: bit for bit what the NumPy kernel computes, for every method, the
epilogue combinations and the fused max pool, replayed and on new inputs; paths the preparer
does not cover are left to the kernel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from stack.kmd.kernels import conv_np, parallel, prepared_conv
from stack.kmd.kernels.conv_plan import Method, build_plan

RNG = np.random.default_rng(11)

#: (C, H, W, M, kernel, stride, pads, dilation, pool immediates or None, the plan's method)
GEOMETRIES = [
    (16, 16, 16, 16, 3, 1, 1, 1, None, Method.WIDE),
    (3, 32, 32, 16, 3, 1, 1, 1, (2, 2, 2, 2, 0, 0, 0, 0), Method.WIDE),  # the CNN stem
    (3, 9, 9, 4, 3, 1, 1, 1, (3, 3, 2, 2, 1, 1, 1, 1), Method.WIDE),  # padded pool: the kernel
    (4, 9, 8, 5, 3, 1, 1, 1, (1, 2, 1, 2, 0, 0, 0, 0), Method.WIDE),
    (64, 4, 4, 64, 3, 1, 1, 1, None, Method.GATHER),
    (16, 7, 7, 64, 3, 1, 1, 1, None, Method.GATHER),  # Wp/oW 1.29 but M=64 wastes 18 MACs
    (6, 5, 5, 4, 3, 1, 0, 1, None, Method.GATHER),  # unpadded: taken from X itself
    (16, 16, 16, 32, 3, 2, 1, 1, None, Method.STRIDED),
    (16, 16, 16, 32, 1, 2, 0, 1, None, Method.STRIDED),  # unpadded: X's own window
    (8, 7, 7, 12, 1, 1, 0, 1, None, Method.POINTWISE),
    (5, 6, 6, 3, 3, 1, 2, 2, None, Method.GATHER),  # dilated
    (4, 1, 1, 3, 1, 1, 0, 1, None, Method.POINTWISE),  # one pixel: a matrix-vector product
]
#: (bias, residual, relu)
EPILOGUES = [(True, True, True), (True, False, True), (False, True, False), (False, False, True)]
EPILOGUES += [(False, False, False), (True, False, False)]
#: Every geometry with every epilogue (a fused pool takes no residual).
CASES = [(g, e) for g in GEOMETRIES for e in EPILOGUES if g[8] is None or not e[1]]


@pytest.fixture(autouse=True)
def _untiled() -> Iterator[None]:
    """The kernel called here runs whole, as a prepared launch does (another test may have left
    this thread bound to a tile count)."""
    before = getattr(parallel._local, "tiles", 1)
    parallel.bind_tiles(1)
    yield
    parallel.bind_tiles(before)


def _f(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _launch(geometry: tuple, epilogue: tuple, dtype: Any = np.float32) -> tuple:
    c, h, w, m, k, s, pad, dil, pooled, _ = geometry
    bias, residual, relu = epilogue
    ints = (s, s, pad, pad, pad, pad, dil, dil, 1, int(relu))
    oh = (h + 2 * pad - dil * (k - 1) - 1) // s + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // s + 1
    y_hw = (oh, ow)
    if pooled is not None:
        ints += pooled
        pk, pw, ps, pt = pooled[0], pooled[1], pooled[2], pooled[4]
        y_hw = ((oh + 2 * pt - pk) // ps + 1, (ow + 2 * pt - pw) // pooled[3] + 1)
    ins = [_f(1, c, h, w, dtype=dtype), _f(m, c, k, k, dtype=dtype)]
    if bias or residual:
        ins.append(_f(m, dtype=dtype))
    if residual:
        assert pooled is None
        ins.append(_f(1, m, oh, ow, dtype=dtype))
    return ins, (1, m, *y_hw), ints


@pytest.mark.parametrize(("geometry", "epilogue"), CASES)
def test_a_prepared_convolution_computes_exactly_what_the_kernel_computes(
    geometry: tuple, epilogue: tuple
) -> None:
    for dtype in (np.float32, np.float64):
        ins, shape, ints = _launch(geometry, epilogue, dtype)
        assert (
            build_plan(ins[0].shape, ins[1].shape, _conv_shape(ins, ints), ints).method
            is (geometry[9])
        )
        want = np.empty(shape, dtype)
        conv_np.conv2d([a.copy() for a in ins], [want], ints, ())
        got = np.full(shape, np.nan, dtype)
        run = prepared_conv.conv2d(ins, [got], ints, ())
        assert run is not None
        for _ in range(2):  # replayed: the same result each time
            run()
            np.testing.assert_array_equal(got, want)
        ins[0][...] = _f(*ins[0].shape, dtype=dtype)  # new input in the same memory
        ins[1] *= -1.0  # and new weights
        conv_np.conv2d(ins, [want], ints, ())
        run()
        np.testing.assert_array_equal(got, want)


def _conv_shape(ins: list[np.ndarray], ints: tuple[int, ...]) -> tuple[int, ...]:
    from stack.kmd.kernels import conv

    return (1, ins[1].shape[0], *conv.conv_hw(ins[0].shape, ins[1].shape, ints))


def test_paths_the_conv_preparer_does_not_cover_are_left_to_the_kernel() -> None:
    ins, shape, ints = _launch(GEOMETRIES[0], (True, False, True))
    y = np.empty(shape, np.float32)
    batch = [np.empty((2, *shape[1:]), np.float32)]
    assert prepared_conv.conv2d([_f(2, 16, 16, 16), *ins[1:]], batch, ints, ()) is None
    assert (
        prepared_conv.conv2d(ins, [y], (*ints, 0, 0, 0, 0, 0, 0, 0, 0, 1), ()) is None
    )  # Winograd
    grouped = (*ints[:8], 2, 1)
    assert prepared_conv.conv2d([ins[0], _f(16, 8, 3, 3), ins[2]], [y], grouped, ()) is None
    assert prepared_conv.conv2d([ins[0].astype(np.float64), *ins[1:]], [y], ints, ()) is None
    assert prepared_conv.conv2d([ins[0].astype(np.float16), *ins[1:]], [y], ints, ()) is None
    strided = _f(1, 16, 16, 32)[..., ::2]
    assert prepared_conv.conv2d([strided, *ins[1:]], [y], ints, ()) is None
    assert prepared_conv.conv2d(ins, [np.empty((1, 16, 17, 17), np.float32)], ints, ()) is None
