"""Conformance: pooling, normalisation, element-wise, quantisation and data kernels through the
KMD, on every available backend, against straightforward NumPy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from stack.kmd import KernelId
from stack.kmd.kernels import registry

RNG = np.random.default_rng(1)
FAST = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _rand(shape, dtype=np.float32):  # type: ignore[no-untyped-def]
    return RNG.standard_normal(shape).astype(dtype)


def pool_ref(x, k, s, pads, out_hw, op, include_pad=False, dil=(1, 1)):  # type: ignore[no-untyped-def]
    """One window at a time, clipped to the input (max) or to the counted area (avg)."""
    n, c, h, w = x.shape
    y = np.zeros((n, c, *out_hw))
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            rows = [i * s[0] - pads[0] + a * dil[0] for a in range(k[0])]
            cols = [j * s[1] - pads[1] + b * dil[1] for b in range(k[1])]
            rin = [r for r in rows if 0 <= r < h]
            cin = [q for q in cols if 0 <= q < w]
            win = x[:, :, rin][:, :, :, cin]
            if op == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                if include_pad:
                    cnt = sum(-pads[0] <= r < h + pads[2] for r in rows) * sum(
                        -pads[1] <= q < w + pads[3] for q in cols
                    )
                else:
                    cnt = len(rin) * len(cin)
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt if cnt else 0.0
    return y


def _out(size: int, k: int, s: int, p0: int, p1: int, d: int, ceil: bool) -> int:
    span = size + p0 + p1 - d * (k - 1) - 1
    return (-(-span // s) if ceil else span // s) + 1


@FAST
@given(
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    pads=st.tuples(*[st.integers(0, 1)] * 4), ceil=st.booleans(),
    op=st.sampled_from(["max", "avg"]),
    include_pad=st.booleans(), dil=st.tuples(st.integers(1, 2), st.integers(1, 2)),
)  # fmt: skip
def test_pool(backend_rig, k, s, pads, ceil, op, include_pad, dil) -> None:  # type: ignore[no-untyped-def]
    """Max and average pooling, dilated or not, through the device on every backend."""
    assume(all(p < k[a % 2] for a, p in enumerate(pads)))  # ONNX: padding smaller than the window
    x = _rand((2, 3, 7, 6))
    out_hw = tuple(
        _out(x.shape[2 + a], k[a], s[a], pads[a], pads[a + 2], dil[a], ceil) for a in (0, 1)
    )
    if ceil and any((o - 1) * s[a] >= x.shape[2 + a] + pads[a] for a, o in enumerate(out_hw)):
        out_hw = tuple(
            _out(x.shape[2 + a], k[a], s[a], pads[a], pads[a + 2], dil[a], False) for a in (0, 1)
        )
    ref = pool_ref(x, k, s, pads, out_hw, op, include_pad, dil)
    ints = (*k, *s, *pads) + ((*dil,) if op == "max" else (int(include_pad), *dil))
    kid = KernelId.MAXPOOL if op == "max" else KernelId.AVGPOOL
    out = backend_rig.run(kid, [x], ref.shape, ints=ints)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32])
@pytest.mark.parametrize(
    ("k", "s", "pads"), [((2, 2), (2, 2), (0, 0, 0, 0)), ((3, 2), (1, 2), (1, 0, 1, 1))]
)
def test_maxpool_integers(backend_rig, dtype, k, s, pads) -> None:  # type: ignore[no-untyped-def]
    """Integer max pooling (ONNX MaxPool takes int8/uint8): exact, padding never wins even
    against the dtype's minimum."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, min(info.max, 1000), size=(2, 3, 7, 6), endpoint=True).astype(dtype)
    x[0, 0] = info.min  # a plane at the minimum: padded windows must still give the minimum
    out_hw = tuple(_out(x.shape[2 + a], k[a], s[a], pads[a], pads[a + 2], 1, False) for a in (0, 1))
    ref = pool_ref(x.astype(np.float64), k, s, pads, out_hw, "max").astype(dtype)
    out = backend_rig.run(KernelId.MAXPOOL, [x], ref.shape, dtype, ints=(*k, *s, *pads))
    np.testing.assert_array_equal(out, ref)


def test_maxpool_uint8_onnx_case(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """ONNX test_maxpool_2d_uint8: 5x5, kernel 5, pads 2: every output is its window's max."""
    x = np.arange(1, 26, dtype=np.uint8).reshape(1, 1, 5, 5)
    out = backend_rig.run(
        KernelId.MAXPOOL, [x], (1, 1, 5, 5), np.uint8, ints=(5, 5, 1, 1, 2, 2, 2, 2)
    )
    ref = pool_ref(x.astype(np.float64), (5, 5), (1, 1), (2, 2, 2, 2), (5, 5), "max")
    np.testing.assert_array_equal(out, ref.astype(np.uint8))
    assert out[0, 0, 0, 0] == 13 and out[0, 0, 4, 4] == 25


def _numpy_kernel(kid: KernelId):  # type: ignore[no-untyped-def]
    registry.known_backends()  # registers the built-in backends and their kernels
    return registry.kernel("numpy", kid)


@pytest.mark.parametrize(
    ("k", "s", "pads", "dil", "include_pad", "hw", "ceil"),
    [
        (
            (2, 2),
            (1, 1),
            (0, 0, 0, 0),
            (2, 2),
            0,
            (4, 4),
            True,
        ),  # ONNX test_averagepool_2d_dilations
        ((3, 2), (2, 1), (1, 0, 1, 1), (2, 3), 0, (9, 8), False),
        ((3, 3), (1, 2), (1, 1, 1, 1), (2, 2), 1, (7, 9), True),
        ((2, 3), (1, 1), (0, 1, 0, 1), (1, 1), 1, (5, 5), False),
    ],
)
def test_avgpool_dilations(k, s, pads, dil, include_pad, hw, ceil) -> None:  # type: ignore[no-untyped-def]
    """Dilated average pooling, kernel called directly: dilations are ints 9-10 and default
    to (1, 1) when a blob leaves them out."""
    x = _rand((2, 3, *hw))
    out_hw = tuple(_out(hw[a], k[a], s[a], pads[a], pads[a + 2], dil[a], ceil) for a in (0, 1))
    if ceil and any((o - 1) * s[a] >= hw[a] + pads[a] for a, o in enumerate(out_hw)):
        out_hw = tuple(_out(hw[a], k[a], s[a], pads[a], pads[a + 2], dil[a], False) for a in (0, 1))
    ref = pool_ref(x, k, s, pads, out_hw, "avg", bool(include_pad), dil)
    out = np.full(ref.shape, np.nan, np.float32)
    avg = _numpy_kernel(KernelId.AVGPOOL)
    avg([x], [out], (*k, *s, *pads, include_pad, *dil), ())
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    if dil == (1, 1):  # and without the extra immediates: the device path agrees
        undilated = np.full(ref.shape, np.nan, np.float32)
        avg([x], [undilated], (*k, *s, *pads, include_pad), ())
        np.testing.assert_array_equal(undilated, out)


def test_avgpool_dilations_onnx_values() -> None:
    """The ONNX case's numbers: 4x4 of 1..16, 2x2 kernel dilated by 2, ceil mode -> 2x2."""
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    out = np.zeros((1, 1, 2, 2), np.float32)
    _numpy_kernel(KernelId.AVGPOOL)([x], [out], (2, 2, 1, 1, 0, 0, 0, 0, 0, 2, 2), ())
    np.testing.assert_array_equal(out[0, 0], [[6.0, 7.0], [10.0, 11.0]])


@pytest.mark.parametrize("include_pad", [0, 1])
def test_avgpool_window_entirely_in_padding_gives_zero(backend_rig, include_pad: int) -> None:  # type: ignore[no-untyped-def]
    """Pads as large as the window: the corner windows hold no input tap. Without
    count_include_pad their divisor would be 0; they average to 0 instead of NaN."""
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    ints = (2, 2, 2, 2, 2, 2, 2, 2, include_pad)  # kernel 2, stride 2, pads 2 -> 3x3 output
    ref = pool_ref(x, (2, 2), (2, 2), (2, 2, 2, 2), (3, 3), "avg", bool(include_pad))
    with np.errstate(all="raise"):  # the NumPy backend must not divide by zero
        out = backend_rig.run(KernelId.AVGPOOL, [x], (1, 1, 3, 3), ints=ints)
    np.testing.assert_array_equal(out, ref.astype(np.float32))
    assert out[0, 0, 0, 0] == 0.0 and out[0, 0, 1, 1] == 2.5


NAN = np.float32("nan")


def test_nan_propagates_through_relu_add_relu_and_max_pool(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """NaN in, NaN out, on every backend (numpy.maximum semantics): ReLU, fused Add+ReLU and
    max pooling keep a NaN wherever it reaches a result."""
    x = np.array([[NAN, -1.0, 2.0, -NAN]], np.float32)
    relu = backend_rig.run(KernelId.RELU, [x], x.shape)
    np.testing.assert_array_equal(relu, [[NAN, 0.0, 2.0, NAN]])
    add = backend_rig.run(KernelId.ADD, [x, np.ones_like(x)], x.shape, ints=(1,))
    np.testing.assert_array_equal(add, [[NAN, 0.0, 3.0, NAN]])
    img = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    img[0, 0, 0, 1] = NAN  # top-left window only
    pooled = backend_rig.run(KernelId.MAXPOOL, [img], (1, 1, 2, 2), ints=(2, 2, 2, 2))
    np.testing.assert_array_equal(pooled[0, 0], [[NAN, 7.0], [13.0, 15.0]])


def test_global_avg_pool(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = _rand((2, 5, 4, 3))
    out = backend_rig.run(KernelId.GLOBALAVGPOOL, [x], (2, 5, 1, 1))
    np.testing.assert_allclose(
        out, x.astype(np.float64).mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("relu", [0, 1])
def test_batchnorm(backend_rig, relu: int) -> None:  # type: ignore[no-untyped-def]
    x = _rand((2, 4, 3, 3))
    scale, bias, mean = _rand(4), _rand(4), _rand(4)
    var = np.abs(_rand(4)) + 0.1
    eps = 1e-3
    shape = (1, 4, 1, 1)
    ref = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(
        shape
    ) + bias.reshape(shape)
    if relu:
        ref = np.maximum(ref, 0)
    out = backend_rig.run(
        KernelId.BATCHNORM, [x, scale, bias, mean, var], x.shape, ints=(relu,), floats=(eps,)
    )
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("shape", "axis"), [((3, 10), -1), ((2, 3, 300), 2), ((4, 5, 6), 1), ((6,), 0)]
)
def test_softmax(backend_rig, shape, axis) -> None:  # type: ignore[no-untyped-def]
    x = _rand(shape) * 5
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    out = backend_rig.run(KernelId.SOFTMAX, [x], shape, ints=(axis,))
    np.testing.assert_allclose(out, e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("shape", "axis", "bias"), [((4, 16), -1, True), ((2, 3, 8), 1, False), ((2, 5, 700), -1, True)]
)
def test_layernorm(backend_rig, shape, axis, bias) -> None:  # type: ignore[no-untyped-def]
    x = _rand(shape)
    tail = shape[axis % len(shape) :]
    scale, b = _rand(tail), _rand(tail)
    axes = tuple(range(axis % len(shape), len(shape)))
    xd = x.astype(np.float64)
    mu = xd.mean(axis=axes, keepdims=True)
    ref = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=axes, keepdims=True) + 1e-5) * scale
    ins = [x, scale]
    if bias:
        ref, ins = ref + b, [x, scale, b]
    out = backend_rig.run(KernelId.LAYERNORM, ins, shape, ints=(axis,), floats=(1e-5,))
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


BINARY = {KernelId.ADD: np.add, KernelId.MUL: np.multiply, KernelId.SUB: np.subtract}


@FAST
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5),
    kid=st.sampled_from([KernelId.ADD, KernelId.MUL, KernelId.SUB, KernelId.DIV]),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.float16]),
)
def test_binary_broadcast(backend_rig, shapes, kid, dtype) -> None:  # type: ignore[no-untyped-def]
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    a = (_rand(sa) * 10).astype(dtype)
    b = (_rand(sb) * 10).astype(dtype)
    if kid is KernelId.DIV:
        b = np.where(b == 0, 3, b).astype(dtype)
        q = a.astype(np.float64) / b
        ref = q if np.dtype(dtype).kind == "f" else np.trunc(q)
    else:
        ref = BINARY[kid](a.astype(np.float64), b)
    out = backend_rig.run(kid, [a, b], out_shape, dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(
        out.astype(np.float64), ref.astype(dtype).astype(np.float64), rtol=tol, atol=tol
    )


def test_add_relu_and_relu(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a, b = _rand((3, 4)), _rand((4,))
    out = backend_rig.run(KernelId.ADD, [a, b], (3, 4), ints=(1,))
    np.testing.assert_allclose(out, np.maximum(a + b, 0), rtol=1e-6)
    for dtype, shape in (
        (np.float32, (5, 7)),
        (np.float16, (5, 7)),
        (np.int32, (5, 7)),
        (np.float32, (4, 64, 32)),
        (np.int64, (8, 1024)),
    ):
        x = (_rand(shape) * 4).astype(dtype)
        np.testing.assert_array_equal(
            backend_rig.run(KernelId.RELU, [x], x.shape, dtype), np.where(x > 0, x, 0)
        )


@pytest.mark.parametrize("y_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize(backend_rig, y_dtype, per_axis: bool) -> None:  # type: ignore[no-untyped-def]
    x = _rand((2, 3, 4)) * 3
    x[0, 0, :4] = [0.25, 0.75, -0.25, 100.0]  # ties to even and saturation
    scale = np.array([0.5, 0.1, 0.02], np.float32) if per_axis else np.array([0.5], np.float32)
    zp_val = [3, 0, 1] if per_axis else [3]
    zp = np.array(zp_val, y_dtype)
    shape = (1, 3, 1) if per_axis else (1,)
    info = np.iinfo(y_dtype)
    q = np.clip(np.round(x / scale.reshape(shape)) + zp.reshape(shape), info.min, info.max)
    out = backend_rig.run(KernelId.QUANTIZE, [x, scale, zp], x.shape, y_dtype, ints=(1,))
    np.testing.assert_array_equal(out, q.astype(y_dtype))
    deq = backend_rig.run(KernelId.DEQUANTIZE, [out, scale, zp], x.shape, ints=(1,))
    ref = (out.astype(np.float64) - zp.reshape(shape)) * scale.reshape(shape)
    np.testing.assert_allclose(deq, ref, rtol=1e-6)


def test_quantize_without_zero_point(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = _rand((10,))
    out = backend_rig.run(KernelId.QUANTIZE, [x, np.array([0.05], np.float32)], (10,), np.uint8)
    np.testing.assert_array_equal(
        out, np.clip(np.round(x / np.float32(0.05)), 0, 255).astype(np.uint8)
    )


def test_quantize_of_a_scalar(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, scale, zp = np.array(-1.25, np.float32), np.array(0.5, np.float32), np.array(7, np.uint8)
    out = backend_rig.run(KernelId.QUANTIZE, [x, scale, zp], (), np.uint8, ints=(0,))
    assert out.shape == () and int(out) == 5  # -2.5 rounds to even, then + 7


@pytest.mark.parametrize(
    ("shape", "perm"), [((2, 3, 4), (2, 0, 1)), ((3, 5), ()), ((2, 3, 4, 5), (0, 2, 3, 1))]
)
def test_transpose(backend_rig, shape, perm) -> None:  # type: ignore[no-untyped-def]
    x = _rand(shape)
    ref = x.transpose(perm or None)
    np.testing.assert_array_equal(
        backend_rig.run(KernelId.TRANSPOSE, [x], ref.shape, ints=perm), ref
    )


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(backend_rig, axis: int) -> None:  # type: ignore[no-untyped-def]
    parts = [_rand((2, 3, 4)), _rand((2, 3, 4)), _rand((2, 3, 4))]
    ref = np.concatenate(parts, axis=axis)
    np.testing.assert_array_equal(
        backend_rig.run(KernelId.CONCAT, parts, ref.shape, ints=(axis,)), ref
    )


def test_copy_is_a_byte_copy(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = _rand((2, 6))
    np.testing.assert_array_equal(backend_rig.run(KernelId.COPY, [x], (3, 4)), x.reshape(3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_fill(backend_rig, dtype) -> None:  # type: ignore[no-untyped-def]
    out = backend_rig.run(KernelId.FILL, [], (3, 2), dtype, floats=(7.0,))
    np.testing.assert_array_equal(out, np.full((3, 2), 7, dtype))
