"""The ``layout`` immediate: NHWC launches equal NCHW ones (kernel, and every preparer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from stack.kmd.kernels import dnnl, numpy_backend, registry
from stack.kmd.kernels.abi import abi_of
from stack.kmd.kernels.ids import KernelId as K
from stack.kmd.kernels.layout import layout_index

rng = np.random.default_rng(3)


def _t(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def _ints(kid: K, given: tuple[int, ...], layout: int) -> tuple[int, ...]:
    ints = abi_of(kid).int_values(given)
    at = layout_index(kid)
    return (*ints[:at], layout, *ints[at + 1 :])


def _launch(kid: K, prepared: bool) -> Callable[..., None]:
    registry.known_backends()
    fn = registry.kernel(numpy_backend.NAME, kid)
    prep = registry.preparer(fn)

    def run(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> None:
        go = prep(ins, outs, ints, ()) if prepared and prep is not None else None
        go() if go is not None else fn(ins, outs, ints, ())

    return run


CONVS = [  # W shape, strides, pads, residual, fused pool (window, stride)
    ((8, 4, 3, 3), 1, 1, True, None),
    ((8, 4, 3, 3), 2, 1, False, None),
    ((8, 4, 1, 1), 1, 0, True, None),
    ((8, 4, 1, 1), 2, 0, False, None),
    ((64, 4, 1, 1), 1, 0, False, None),
    ((8, 4, 3, 3), 1, 1, False, (2, 2)),
]


@pytest.mark.parametrize("prepared", [False, True], ids=["kernel", "prepared"])
@pytest.mark.parametrize("case", CONVS)
def test_nhwc_conv2d_equals_nchw(case: tuple, prepared: bool) -> None:
    wshape, s, p, with_r, pool = case
    x = rng.standard_normal((1, 4, 10, 10)).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    b = rng.standard_normal(wshape[0]).astype(np.float32)
    o = (10 + 2 * p - wshape[2]) // s + 1
    given = (s, s, p, p, p, p, 1, 1, 1, 1)
    if pool is not None:
        given += (pool[0], pool[0], pool[1], pool[1], 0, 0, 0, 0)
        o //= pool[1]
    ins = [x, w, b] + (
        [rng.standard_normal((1, wshape[0], o, o)).astype(np.float32)] if with_r else []
    )
    run = _launch(K.CONV2D, prepared)
    y = np.empty((1, wshape[0], o, o), np.float32)
    run(ins, [y], _ints(K.CONV2D, given, 0))
    y2 = np.empty((1, o, o, wshape[0]), np.float32)
    nhwc_ins = [_t(ins[0]), w, b] + ([_t(ins[3])] if with_r else [])
    run(nhwc_ins, [y2], _ints(K.CONV2D, given, 1))
    np.testing.assert_allclose(y2, _t(y), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("prepared", [False, True], ids=["kernel", "prepared"])
@pytest.mark.parametrize(
    ("kid", "given", "out"),
    [
        (K.MAXPOOL, (3, 3, 2, 2, 1, 1, 1, 1), 5),
        (K.AVGPOOL, (3, 3, 2, 2, 1, 1, 1, 1, 1), 5),
        (K.GLOBALAVGPOOL, (), 1),
    ],
)
def test_nhwc_pools_equal_nchw(kid: K, given: tuple, out: int, prepared: bool) -> None:
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    run = _launch(kid, prepared)
    y = np.empty((2, 3, out, out), np.float32)
    run([x], [y], _ints(kid, given, 0))
    y2 = np.empty((2, out, out, 3), np.float32)
    run([_t(x)], [y2], _ints(kid, given, 1))
    np.testing.assert_allclose(y2, _t(y), rtol=1e-6, atol=1e-6)


def test_onednn_is_what_runs_a_covered_nhwc_launch() -> None:
    if dnnl.library() is None:
        pytest.skip("oneDNN is not loaded here")
    from stack.kmd.kernels import conv_nhwc

    x = _t(rng.standard_normal((1, 4, 10, 10)).astype(np.float32))
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    y = np.empty((1, 10, 10, 8), np.float32)
    ints = _ints(K.CONV2D, (1, 1, 1, 1, 1, 1, 1, 1, 1, 0), 1)
    run = conv_nhwc.conv2d([x, w], [y], ints, ())
    assert run is not None and hasattr(run, "owners")  # the oneDNN closure, not the GEMM one
