"""The NumPy Conv2D plans: every method against a literal reference, scratch reuse across calls,
several threads on one plan, the fallback dtypes, and the scratch budget."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from stack.kmd.kernels import conv_np, scratch

RNG = np.random.default_rng(7)
FAST = settings(max_examples=30, derandomize=True, deadline=None)


def reference(x, w, b, stride, pads, dil, group, relu):  # type: ignore[no-untyped-def]
    """float64 windows of the padded input, one einsum per group."""
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    span = (dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1)
    win = sliding_window_view(xp, span, axis=(2, 3))[
        :, :, :: stride[0], :: stride[1], :: dil[0], :: dil[1]
    ]
    mg = m // group
    parts = [
        np.einsum("ncyxij,mcij->nmyx", win[:, g * cg : (g + 1) * cg], w[g * mg : (g + 1) * mg])
        for g in range(group)
    ]
    y = np.concatenate(parts, axis=1)
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return np.maximum(y, 0) if relu else y


def _case(n, cg, group, mg, k, stride, pads, dil, hw, bias, dtype=np.float32):  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((n, cg * group, *hw)).astype(dtype)
    w = RNG.standard_normal((mg * group, cg, *k)).astype(dtype)
    b = RNG.standard_normal(mg * group).astype(dtype) if bias else None
    oh = (hw[0] + pads[0] + pads[2] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (hw[1] + pads[1] + pads[3] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
    ints = (*stride, *pads, *dil, group)
    return x, w, b, (n, mg * group, oh, ow), ints


@settings(FAST, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    n=st.integers(1, 2), cg=st.integers(1, 4), group=st.sampled_from([1, 2]),
    mg=st.integers(1, 4), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    pads=st.tuples(*[st.integers(0, 2)] * 4), dil=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    hw=st.tuples(st.integers(3, 9), st.integers(3, 9)), bias=st.booleans(), relu=st.booleans(),
    method=st.sampled_from(list(conv_np.Method)),
)  # fmt: skip
def test_every_method_matches_the_reference(
    n, cg, group, mg, k, stride, pads, dil, hw, bias, relu, method
) -> None:  # type: ignore[no-untyped-def]
    x, w, b, y_shape, ints = _case(n, cg, group, mg, k, stride, pads, dil, hw, bias)
    if min(y_shape[2:]) < 1:
        return
    try:
        plan = conv_np.build_plan(x.shape, w.shape, y_shape, ints, method)
    except ValueError:  # the method does not apply (pointwise needs 1x1/s1/no pads, wide s1)
        assert method not in (conv_np.Method.GATHER, conv_np.Method.STRIDED)
        return
    assert plan.method is method
    for _ in range(2):  # the second call reuses the scratch (zero borders must have stayed)
        x = RNG.standard_normal(x.shape).astype(np.float32)
        y = np.full(y_shape, np.nan, np.float32)
        conv_np.run(plan, x, w, b, y, relu)
        np.testing.assert_allclose(
            y, reference(x, w, b, stride, pads, dil, group, relu), rtol=1e-4, atol=1e-4
        )


@pytest.mark.parametrize(
    ("shape", "method"),
    [
        (dict(cg=16, k=(3, 3), stride=(1, 1), pads=(1,) * 4, hw=(16, 16)), conv_np.Method.WIDE),
        (dict(cg=64, k=(3, 3), stride=(1, 1), pads=(1,) * 4, hw=(4, 4)), conv_np.Method.GATHER),
        (dict(cg=16, k=(3, 3), stride=(2, 2), pads=(1,) * 4, hw=(16, 16)), conv_np.Method.STRIDED),
        (dict(cg=16, k=(1, 1), stride=(2, 2), pads=(0,) * 4, hw=(15, 15)), conv_np.Method.STRIDED),
        (dict(cg=8, k=(1, 1), stride=(1, 1), pads=(0,) * 4, hw=(8, 8)), conv_np.Method.POINTWISE),
    ],
)
def test_method_chosen_by_shape(shape, method) -> None:  # type: ignore[no-untyped-def]
    x, w, b, y_shape, ints = _case(1, group=1, mg=8, dil=(1, 1), bias=True, **shape)
    assert conv_np.build_plan(x.shape, w.shape, y_shape, ints).method is method
    y = np.empty(y_shape, np.float32)
    conv_np.conv2d([x, w, b], [y], (*ints, 1), ())
    ref = reference(x, w, b, shape["stride"], shape["pads"], (1, 1), 1, True)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes(dtype) -> None:  # type: ignore[no-untyped-def]
    """float64 takes the planned path, float16 the generic kernel; both are right."""
    x, w, b, y_shape, ints = _case(
        2, 3, 1, 4, (3, 3), (1, 1), (1,) * 4, (1, 1), (6, 5), True, dtype
    )
    y = np.zeros(y_shape, dtype)
    conv_np.conv2d([x, w, b], [y], (*ints, 0), ())
    tol = 2e-2 if dtype == np.float16 else 1e-10
    ref = reference(x, w, b, (1, 1), (1,) * 4, (1, 1), 1, False)
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=tol, atol=tol)


def test_threads_share_plans_but_not_scratch() -> None:
    """Four threads convolve different inputs of one shape at once; each gets its own answer."""
    _, w, b, y_shape, ints = _case(1, 8, 1, 8, (3, 3), (1, 1), (1,) * 4, (1, 1), (12, 12), True)
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                x = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
                y = np.empty(y_shape, np.float32)
                conv_np.conv2d([x, w, b], [y], (*ints, 1), ())
                ref = reference(x, w, b, (1, 1), (1,) * 4, (1, 1), 1, True)
                np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]


def test_shape_mismatch_is_refused() -> None:
    with pytest.raises(ValueError, match="disagree"):
        conv_np.build_plan((1, 4, 8, 8), (6, 3, 3, 3), (1, 6, 6, 6), (1, 1, 0, 0, 0, 0, 1, 1, 1))
    with pytest.raises(ValueError, match="needs more input"):
        conv_np.build_plan((1, 4, 8, 8), (6, 4, 3, 3), (1, 6, 7, 7), (1, 1, 0, 0, 0, 0, 1, 1, 1))


def test_scratch_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Buffers are kept per key within the budget; past it the thread's cache starts over, and
    one buffer larger than the budget is never kept."""
    monkeypatch.setattr(scratch, "BUDGET", 4096)
    a = scratch.buffer(("t", 1), (512,), np.float32, 0)  # 2 KiB
    assert scratch.buffer(("t", 1), (512,), np.float32, 0) is a and not a.any()
    b = scratch.buffer(("t", 2), (256,), np.float32)  # 1 KiB: both fit
    assert scratch.buffer(("t", 1), (512,), np.float32, 0) is a
    assert scratch.buffer(("t", 2), (256,), np.float32) is b
    c = scratch.buffer(("t", 4), (512,), np.float32)  # 2 KiB more: over budget, a and b dropped
    assert scratch.buffer(("t", 4), (512,), np.float32) is c
    assert scratch.buffer(("t", 1), (512,), np.float32, 0) is not a
    big = scratch.buffer(("t", 3), (2048,), np.float32)
    assert scratch.buffer(("t", 3), (2048,), np.float32) is not big
    other: list[np.ndarray] = []
    mine = scratch.buffer(("t", 2), (256,), np.float32)
    t = threading.Thread(target=lambda: other.append(scratch.buffer(("t", 2), (256,), np.float32)))
    t.start()
    t.join()
    assert other[0] is not mine  # another thread never sees this thread's buffer
