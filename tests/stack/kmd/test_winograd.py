"""The Winograd F(2x2, 3x3) Conv2D (CONV2D ``algorithm`` 1): the NumPy and generic kernels
against a float64 direct convolution on odd sizes, asymmetric padding and odd channel counts,
with bias, residual and ReLU; tiles over worker threads; the calls it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stack.compiler.passes.winograd import winograd_weights
from stack.kmd.kernels import conv, conv_np, parallel, winograd
from tests.stack.kmd.test_conv_np import reference

FAST = settings(max_examples=40, derandomize=True, deadline=None)
#: CONV2D ints for stride 1, dilation 1, group 1: pads go in 2..5, relu in 9, algorithm in 18.
POOL_OFF = (0,) * 8


def _ints(pads: tuple[int, int, int, int], relu: bool, algorithm: int = 1) -> tuple[int, ...]:
    return (1, 1, *pads, 1, 1, 1, int(relu), *POOL_OFF, algorithm)


def _case(seed, n, c, m, hw, pads, bias, residual):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *hw)).astype(np.float32)
    w = (rng.standard_normal((m, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    out = (n, m, hw[0] + pads[0] + pads[2] - 2, hw[1] + pads[1] + pads[3] - 2)
    b = rng.standard_normal(m).astype(np.float32) if bias else None
    r = rng.standard_normal(out).astype(np.float32) if residual and min(out) > 0 else None
    return x, w, b, r, out


def _expected(x, w, b, r, pads, relu):  # type: ignore[no-untyped-def]
    y = reference(x, w, b, (1, 1), pads, (1, 1), 1, False)
    if r is not None:
        y = y + r
    return np.maximum(y, 0) if relu else y


@FAST
@given(
    seed=st.integers(0, 1000), n=st.integers(1, 2), c=st.integers(1, 7), m=st.integers(1, 9),
    hw=st.tuples(st.integers(1, 11), st.integers(1, 11)), pads=st.tuples(*[st.integers(0, 2)] * 4),
    bias=st.booleans(), residual=st.booleans(), relu=st.booleans(),
)  # fmt: skip
def test_winograd_matches_the_direct_convolution(
    seed, n, c, m, hw, pads, bias, residual, relu
) -> None:  # type: ignore[no-untyped-def]
    x, w, b, r, out = _case(seed, n, c, m, hw, pads, bias, residual)
    if min(out[2:]) < 1:
        return
    ins = [x, winograd_weights(w)]
    if bias or residual:
        ins.append(b if b is not None else np.zeros(m, np.float32))
    if residual:
        ins.append(r)
    expected = _expected(x, w, b, r, pads, relu)
    for kernel in ("numpy", "generic"):
        for _ in range(2):  # the NumPy kernel's second call reuses its scratch
            y = np.full(out, np.nan, np.float32)
            if kernel == "numpy":
                conv_np.conv2d(ins, [y], _ints(pads, relu), ())
            else:
                conv.conv2d(np, ins, [y], _ints(pads, relu), ())
            np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4, err_msg=kernel)


@pytest.mark.parametrize(("c", "m", "hw"), [(128, 128, (28, 28)), (33, 65, (13, 9))])
def test_winograd_within_float32_tolerance_of_the_direct_kernel(c, m, hw) -> None:  # type: ignore[no-untyped-def]
    """The widths ResNet-50 runs it at: within 1e-5 relative of the direct float32 kernel."""
    x, w, b, r, out = _case(3, 1, c, m, hw, (1, 1, 1, 1), True, True)
    direct, fast = np.empty(out, np.float32), np.empty(out, np.float32)
    conv_np.conv2d([x, w, b, r], [direct], _ints((1, 1, 1, 1), True, 0), ())
    conv_np.conv2d([x, winograd_weights(w), b, r], [fast], _ints((1, 1, 1, 1), True), ())
    scale = float(np.abs(direct).max())
    assert float(np.abs(fast - direct).max()) <= 1e-5 * scale


def test_winograd_tiles_over_two_threads_give_the_same_output() -> None:
    """The launch's tiles (output channels) over two workers, the input transform split by
    channel: the same result as one whole launch, and both workers were used."""
    x, w, b, r, out = _case(5, 1, 20, 24, (9, 10), (1, 0, 2, 1), True, True)
    ins = [x, winograd_weights(w), b, r]
    whole = np.empty(out, np.float32)
    conv_np.conv2d(ins, [whole], _ints((1, 0, 2, 1), True), ())
    pool = parallel.WorkerPool(2)
    previous = parallel.bind(pool)
    try:
        parallel.bind_tiles(4)
        tiled = np.empty(out, np.float32)
        conv_np.conv2d(ins, [tiled], _ints((1, 0, 2, 1), True), ())
    finally:
        parallel.bind_tiles(1)
        parallel.bind(previous)
        pool.close()
    assert pool.tiles == 4 and pool.splits >= 2
    np.testing.assert_allclose(tiled, whole, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("ints", "u_shape", "match"),
    [
        ((2, 2, 1, 1, 1, 1, 1, 1, 1, 0), (4, 4, 4, 3), "stride 1"),
        ((1, 1, 1, 1, 1, 1, 2, 2, 1, 0), (4, 4, 4, 3), "dilation 1"),
        ((1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 2), (4, 4, 4, 3), "no pool"),
        ((1, 1, 1, 1, 1, 1, 1, 1, 1, 0), (4, 3, 3, 3), r"\[4, 4, M, 3\]"),
    ],
)
def test_winograd_refuses_what_the_transform_does_not_hold_for(ints, u_shape, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        winograd.check((1, 3, 6, 6), u_shape, (1, 4, 6, 6), ints)


def test_winograd_weights_reproduce_the_3x3_kernel() -> None:
    """U = G g G^T: the four corners and the centre of the transform are those of g (the
    rows and columns 0 and 3 of G pick the kernel's first and last taps)."""
    g = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    u = winograd_weights(g)
    assert u.shape == (4, 4, 1, 1) and u.dtype == np.float32
    assert (u[0, 0, 0, 0], u[0, 3, 0, 0], u[3, 0, 0, 0], u[3, 3, 0, 0]) == (0, 2, 6, 8)
    assert u[1, 1, 0, 0] == pytest.approx(g.sum() / 4)
    with pytest.raises(ValueError, match="3, 3"):
        winograd_weights(np.zeros((2, 2, 5, 5), np.float32))
