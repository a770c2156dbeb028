"""Conformance: GEMM, MatMul, Conv2D, int8 GEMM and QLinearMatMul through the KMD, on every
available backend, against straightforward NumPy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stack.kmd import KernelId

RNG = np.random.default_rng(0)
FAST = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _rand(shape, dtype=np.float32):  # type: ignore[no-untyped-def]
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias", ["none", "row", "full"])
@pytest.mark.parametrize("relu", [0, 1])
def test_gemm(backend_rig, trans_a: int, trans_b: int, bias: str, relu: int) -> None:  # type: ignore[no-untyped-def]
    m, k, n = 7, 13, 5
    a = _rand((k, m) if trans_a else (m, k))
    b = _rand((n, k) if trans_b else (k, n))
    ins = [a, b]
    alpha, beta = 0.5, 2.0
    ref = alpha * np.einsum("ik,kj->ij", a.T if trans_a else a, b.T if trans_b else b)
    if bias != "none":
        c = _rand((n,) if bias == "row" else (m, n))
        ins.append(c)
        ref = ref + beta * c
    if relu:
        ref = np.maximum(ref, 0)
    out = backend_rig.run(
        KernelId.GEMM, ins, (m, n), ints=(trans_a, trans_b, relu), floats=(alpha, beta)
    )
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("relu", [0, 1])
def test_gemm_epilogue_propagates_nan(backend_rig, relu: int) -> None:  # type: ignore[no-untyped-def]
    """A NaN in A or in the bias reaches Y through alpha, beta and the fused ReLU alike."""
    a = np.ones((2, 3), np.float32)
    a[1, 0] = np.nan
    b = np.full((3, 2), -1.0, np.float32)
    c = np.array([np.nan, 10.0], np.float32)
    out = backend_rig.run(KernelId.GEMM, [a, b, c], (2, 2), ints=(0, 0, relu), floats=(2.0, 1.0))
    expected = np.array([[np.nan, 4.0], [np.nan, np.nan]], np.float32)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("sa", "sb"), [((3, 4), (4, 5)), ((2, 3, 4), (4, 6)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3))]
)
def test_matmul(backend_rig, dtype, sa, sb) -> None:  # type: ignore[no-untyped-def]
    a, b = _rand(sa, dtype), _rand(sb, dtype)
    ref = np.einsum("...ij,...jk->...ik", a.reshape((1,) * (a.ndim == 1) + a.shape), b)
    ref = ref.reshape(np.matmul(a, b).shape)
    out = backend_rig.run(KernelId.MATMUL, [a, b], ref.shape, dtype)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def conv_ref(x, w, b, stride, pads, dil, group):  # type: ignore[no-untyped-def]
    """Literal definition: one dot product per output pixel and group."""
    n, _c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        wg = w[g * mg : (g + 1) * mg].astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * stride[0], j * stride[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    r0 : r0 + dil[0] * (kh - 1) + 1 : dil[0],
                    c0 : c0 + dil[1] * (kw - 1) + 1 : dil[1],
                ]
                y[:, g * mg : (g + 1) * mg, i, j] = np.tensordot(
                    patch, wg, axes=([1, 2, 3], [1, 2, 3])
                )
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


@FAST
@given(
    n=st.integers(1, 2), cg=st.integers(1, 3), group=st.sampled_from([1, 2, 3]),
    mg=st.integers(1, 3), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    pads=st.tuples(*[st.integers(0, 2)] * 4), dil=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    hw=st.tuples(st.integers(4, 9), st.integers(4, 9)), bias=st.booleans(), relu=st.booleans(),
)  # fmt: skip
def test_conv2d(backend_rig, n, cg, group, mg, k, stride, pads, dil, hw, bias, relu) -> None:  # type: ignore[no-untyped-def]
    x = _rand((n, cg * group, *hw))
    w = _rand((mg * group, cg, *k))
    b = _rand((mg * group,)) if bias else None
    ref = conv_ref(x, w, b, stride, pads, dil, group)
    if relu:
        ref = np.maximum(ref, 0)
    ins = [x, w] + ([b] if bias else [])
    ints = (*stride, pads[0], pads[1], pads[2], pads[3], *dil, group, int(relu))
    out = backend_rig.run(KernelId.CONV2D, ins, ref.shape, ints=ints)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("c", "mult"), [(4, 1), (3, 2)])
def test_conv2d_depthwise(backend_rig, c: int, mult: int) -> None:  # type: ignore[no-untyped-def]
    x, w = _rand((2, c, 10, 10)), _rand((c * mult, 1, 3, 3))
    ref = conv_ref(x, w, None, (2, 2), (1, 1, 1, 1), (1, 1), c)
    out = backend_rig.run(KernelId.CONV2D, [x, w], ref.shape, ints=(2, 2, 1, 1, 1, 1, 1, 1, c, 0))
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("zps", ["none", "tensor", "vector"])
def test_gemm_i8(backend_rig, a_dtype, zps: str) -> None:  # type: ignore[no-untyped-def]
    info = np.iinfo(a_dtype)
    a = RNG.integers(info.min, info.max + 1, (6, 40)).astype(a_dtype)
    b = RNG.integers(-128, 128, (40, 9)).astype(np.int8)
    ins = [a, b]
    ref = a.astype(np.int64) @ b.astype(np.int64)
    if zps != "none":
        shape_a, shape_b = ((1,), (1,)) if zps == "tensor" else ((6,), (9,))
        azp = RNG.integers(info.min, info.max + 1, shape_a).astype(a_dtype)
        bzp = RNG.integers(-128, 128, shape_b).astype(np.int8)
        ins += [azp, bzp]
        ref = (a.astype(np.int64) - azp.astype(np.int64).reshape(-1, 1)) @ (
            b.astype(np.int64) - bzp.astype(np.int64).reshape(1, -1)
        )
    out = backend_rig.run(KernelId.GEMM_I8, ins, (6, 9), np.int32)
    np.testing.assert_array_equal(out, ref)


def test_gemm_i8_with_b_zero_point_only(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = RNG.integers(0, 256, (3, 5)).astype(np.uint8)
    b = RNG.integers(-128, 128, (5, 4)).astype(np.int8)
    bzp = np.array([3], np.int8)
    ref = a.astype(np.int64) @ (b.astype(np.int64) - 3)
    out = backend_rig.run(KernelId.GEMM_I8, [a, b, bzp], (3, 4), np.int32, ints=(0, 1))
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("y_dtype", [np.int8, np.uint8])
def test_qlinearmatmul(backend_rig, y_dtype) -> None:  # type: ignore[no-untyped-def]
    a = RNG.integers(0, 256, (4, 16)).astype(np.uint8)
    b = RNG.integers(-128, 128, (16, 6)).astype(np.int8)
    a_s, a_zp = np.array([0.02], np.float32), np.array([128], np.uint8)
    b_s, b_zp = np.array([0.05], np.float32), np.array([2], np.int8)
    y_s = np.array([0.1], np.float32)
    y_zp = np.array([10 if y_dtype == np.uint8 else -3], y_dtype)
    acc = (a.astype(np.int64) - 128) @ (b.astype(np.int64) - 2)
    real = acc * (0.02 * 0.05)
    info = np.iinfo(y_dtype)
    ref = np.clip(np.round(real / 0.1) + y_zp[0], info.min, info.max)
    out = backend_rig.run(
        KernelId.QLINEARMATMUL, [a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp], (4, 6), y_dtype
    )
    assert np.abs(out.astype(np.int64) - ref).max() <= 1


def test_gemm_i8_batched(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = RNG.integers(-128, 128, (2, 3, 8)).astype(np.int8)
    b = RNG.integers(0, 256, (8, 4)).astype(np.uint8)
    bzp = np.array([128], np.uint8)
    ref = a.astype(np.int64) @ (b.astype(np.int64) - 128)
    out = backend_rig.run(KernelId.GEMM_I8, [a, b, bzp], (2, 3, 4), np.int32, ints=(0, 1))
    np.testing.assert_array_equal(out, ref)
