"""Conformance of QLINEARCONV through the KMD, on every available backend, against ConvInteger's
plain loop over each output pixel and group in int64 plus the bias, requantised as onnxruntime
does (float32: the accumulator times x_scale · w_scale / y_scale, rounded half to even, then the
zero point added and saturated): x, w and y each int8 or uint8, the scales and w's zero point per
tensor and per output channel, with and without a bias, strides, pads, dilations, groups; the
ONNX node test's data, ties to even before the zero point, saturation at both ends, a sum
beyond float32's 2^24, an empty batch; and the kernel's refusal of dtypes, sizes and shapes
that disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError, KernelArgumentError
from tests.stack.kmd.test_conformance_conv_integer import CASES, reference

RNG = np.random.default_rng(54)
I8, U8, F32, I32 = np.int8, np.uint8, np.float32, np.int32


def requantise(acc, x_s, w_s, y_s, y_zp, y_dtype):  # type: ignore[no-untyped-def]
    """onnxruntime's requantisation of the int64 ``acc`` [N, M, oH, oW], in float32."""
    mult = (np.float32(x_s) * np.asarray(w_s, F32)) / np.float32(y_s)
    mult = mult.reshape(-1, 1, 1) if mult.size > 1 else mult.reshape(())
    q = np.rint(acc.astype(F32) * mult) + np.float32(y_zp)
    info = np.iinfo(y_dtype)
    return np.clip(q, info.min, info.max).astype(y_dtype)


def _ints(strides, pads, dil, group):  # type: ignore[no-untyped-def]
    return (*strides, *pads, *dil, group)


def _random(shape: tuple[int, ...], dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def _run(rig, ins, y_shape, y_dtype, ints=()):  # type: ignore[no-untyped-def]
    return rig.run(KernelId.QLINEARCONV, ins, y_shape, y_dtype, ints=ints)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"x{c[0]}w{c[1]}s{c[2]}g{c[5]}")
@pytest.mark.parametrize(
    "dtypes",
    [(U8, I8, U8), (U8, U8, U8), (I8, I8, I8), (I8, U8, U8), (U8, I8, I8)],
    ids=["u8-i8-u8", "u8-u8-u8", "i8-i8-i8", "i8-u8-u8", "u8-i8-i8"],
)
@pytest.mark.parametrize("per", ["tensor", "channel"])
@pytest.mark.parametrize("bias", [False, True], ids=["no bias", "bias"])
def test_qlinear_conv_matches_the_loop(backend_rig, case, dtypes, per, bias) -> None:  # type: ignore[no-untyped-def]
    xs, ws, strides, pads, dil, group = case
    m = ws[0]
    x, w = _random(xs, dtypes[0]), _random(ws, dtypes[1])
    x_zp, y_zp = _random((), dtypes[0]), _random((), dtypes[2])
    w_zp = _random((m,) if per == "channel" else (), dtypes[1])
    w_s = RNG.uniform(0.001, 0.02, (m,) if per == "channel" else ()).astype(F32)
    b = RNG.integers(-20_000, 20_000, (m,)).astype(I32)
    acc = reference(x, w, x_zp, w_zp, strides, pads, dil, group)
    acc = acc + b.reshape(-1, 1, 1) if bias else acc
    x_s = np.array(0.02, F32)  # y_scale: the largest |y - y_zero_point| about 100
    y_s = np.array(x_s * w_s.max() * max(int(np.abs(acc).max()), 1) / 100, F32)
    want = requantise(acc, x_s, w_s, y_s, y_zp, dtypes[2])
    ins = [x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, *([b] if bias else [])]
    out = _run(backend_rig, ins, want.shape, dtypes[2], _ints(strides, pads, dil, group))
    assert out.dtype == want.dtype and out.shape == want.shape
    np.testing.assert_array_equal(out, want)


def test_the_onnx_node_tests_data(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """test_qlinearconv: a 1x1 kernel of one zero weight less its zero point 255, scales and zero
    points as one-element vectors."""
    x = np.array([[255, 174, 162, 25, 203, 168, 58], [15, 59, 237, 95, 129, 0, 64],
                  [56, 242, 153, 221, 168, 12, 166], [232, 178, 186, 195, 237, 162, 237],
                  [188, 39, 124, 77, 80, 102, 43], [127, 230, 21, 83, 41, 40, 134],
                  [255, 154, 92, 141, 42, 148, 247]], U8).reshape(1, 1, 7, 7)  # fmt: skip
    ins = [x, np.array(0.00369204697, F32), np.array(132, U8), np.zeros((1, 1, 1, 1), U8),
           np.array([0.00172794575], F32), np.array([255], U8), np.array(0.00162681262, F32),
           np.array(123, U8)]  # fmt: skip
    out = _run(backend_rig, ins, (1, 1, 7, 7), U8)
    assert out[0, 0].tolist() == [
        [0, 81, 93, 230, 52, 87, 197], [240, 196, 18, 160, 126, 255, 191],
        [199, 13, 102, 34, 87, 243, 89], [23, 77, 69, 60, 18, 93, 18],
        [67, 216, 131, 178, 175, 153, 212], [128, 25, 234, 172, 214, 215, 121],
        [0, 101, 163, 114, 213, 107, 8],
    ]  # fmt: skip


def _one_tap(values: list[int], y_zp: int, y_scale: float, y_dtype=U8, b: int | None = None):  # type: ignore[no-untyped-def]
    """y of a 1x1 convolution of x = ``values`` (int8, zero point 0) by one weight 1: each
    output is (value + b) / y_scale, requantised."""
    x = np.array(values, I8).reshape(1, 1, 1, -1)
    one = np.array(1.0, F32)
    ins = [x, one, np.array(0, I8), np.ones((1, 1, 1, 1), I8), one, np.array(0, I8),
           np.array(y_scale, F32), np.array(y_zp, y_dtype), *([] if b is None else
                                                             [np.array([b], I32)])]  # fmt: skip
    return ins, (1, 1, 1, len(values)), y_dtype


def test_ties_round_to_even_before_the_zero_point_is_added(backend_rig) -> None:
    """onnxruntime's order: round_half_even(acc · scale) + y_zero_point. ONNX's reference adds
    the zero point first, so with an odd zero point its ties land one off (3 + 0.5 -> 4)."""
    ins, shape, dtype = _one_tap([-5, -3, -1, 1, 3, 5, 7], 3, 2.0)
    assert _run(backend_rig, ins, shape, dtype).ravel().tolist() == [1, 1, 3, 3, 5, 5, 7]
    ins, shape, dtype = _one_tap([-5, -3, -1, 1, 3, 5, 7], 4, 2.0, b=2)
    assert _run(backend_rig, ins, shape, dtype).ravel().tolist() == [2, 4, 4, 6, 6, 8, 8]


def test_the_output_saturates_at_both_ends(backend_rig) -> None:
    ins, shape, dtype = _one_tap([-128, -100, 0, 100, 127], 128, 0.25)
    assert _run(backend_rig, ins, shape, dtype).ravel().tolist() == [0, 0, 128, 255, 255]
    ins, shape, dtype = _one_tap([-128, -100, 0, 100, 127], -1, 0.5, I8)
    assert _run(backend_rig, ins, shape, dtype).ravel().tolist() == [-128, -128, -1, 127, 127]


def test_a_sum_beyond_float32s_2_24_is_requantised_from_its_float32_value(backend_rig) -> None:
    """(0 - 255) · (-128 - 127) over 2048 taps plus B 260 099 = 133 431 299, exact in int32 but
    beyond float32's 2^24: like onnxruntime, the accumulator is converted to float32 (133 431 296)
    before it is scaled by 2^-19, so the product is the tie 254.5, rounded to 254 (the exact
    product 254.500 005 7 would round to 255)."""
    x = np.zeros((1, 128, 4, 4), U8)
    w = np.full((1, 128, 4, 4), -128, I8)
    one = np.array(1.0, F32)
    ins = [x, one, np.array(255, U8), w, one, np.array(127, I8), np.array(2.0**19, F32),
           np.array(0, U8), np.array([260_099], I32)]  # fmt: skip
    assert 255 * 255 * 2048 + 260_099 == 133_431_299 and int(np.float32(133_431_299)) == 133_431_296
    assert _run(backend_rig, ins, (1, 1, 1, 1), U8).ravel().tolist() == [254]


def test_an_empty_batch_is_an_empty_output(backend_rig) -> None:  # type: ignore[no-untyped-def]
    s, z = np.array(1.0, F32), np.array(0, U8)
    ins = [np.zeros((0, 2, 5, 5), U8), s, z, np.ones((3, 2, 3, 3), U8), s, z, s, z]
    out = _run(backend_rig, ins, (0, 3, 3, 3), U8)
    assert (out.shape, out.dtype) == ((0, 3, 3, 3), np.dtype(U8))


_S, _Z, _ZI = np.array(0.5, F32), np.array(1, U8), np.array(1, I8)
_X, _W = np.ones((1, 2, 4, 4), U8), np.ones((3, 2, 3, 3), I8)
_GOOD = [_X, _S, _Z, _W, _S, _ZI, _S, _Z]


def _with(**at: np.ndarray) -> list[np.ndarray]:
    """_GOOD with the inputs at the positions ``at`` (i0 .. i8) replaced or added."""
    ins = list(_GOOD)
    for key, value in sorted(at.items()):
        i = int(key[1:])
        ins[i : i + 1] = [value]
    return ins


@pytest.mark.parametrize(
    ("ins", "y", "ints"),
    [
        (_with(i0=_X.astype(I32)), ((1, 3, 2, 2), U8), ()),  # x int32
        (_with(i3=_W.astype(F32)), ((1, 3, 2, 2), U8), ()),  # w float32
        (_GOOD, ((1, 3, 2, 2), I32), ()),  # y int32
        (_with(i7=np.array(1, I8)), ((1, 3, 2, 2), U8), ()),  # y_zero_point not y's dtype
        (_with(i2=np.array(1, I8)), ((1, 3, 2, 2), U8), ()),  # x_zero_point int8
        (_with(i5=np.array(1, U8)), ((1, 3, 2, 2), U8), ()),  # w_zero_point uint8
        (_with(i1=np.array(0.5, np.float64)), ((1, 3, 2, 2), U8), ()),  # x_scale float64
        (_with(i1=np.ones(2, F32)), ((1, 3, 2, 2), U8), ()),  # two x scales
        (_with(i4=np.ones(2, F32)), ((1, 3, 2, 2), U8), ()),  # two w scales
        (_with(i5=np.ones(2, I8)), ((1, 3, 2, 2), U8), ()),  # two w zero points
        (_with(i6=np.ones(3, F32)), ((1, 3, 2, 2), U8), ()),  # three y scales
        (_with(i8=np.zeros(3, np.int64)), ((1, 3, 2, 2), U8), ()),  # B int64
        (_with(i8=np.zeros(2, I32)), ((1, 3, 2, 2), U8), ()),  # two biases
        (_GOOD, ((1, 3, 3, 3), U8), ()),  # y not the convolution's size
        (_with(i0=np.ones((1, 3, 4, 4), U8)), ((1, 3, 2, 2), U8), ()),  # channels
        (_GOOD, ((1, 3, 2, 2), U8), (0, 1)),  # stride 0
        (_with(i3=np.ones((3, 2, 5, 5), I8)), ((1, 3, 1, 1), U8), ()),  # kernel too large
        (_with(i0=_X[0]), ((1, 3, 2, 2), U8), ()),  # 3-D x
    ],
    ids=["x int32", "w float32", "y int32", "y zero point int8", "x zero point int8",
         "w zero point uint8", "x scale float64", "two x scales", "two w scales",
         "two w zero points", "three y scales", "B int64", "two biases",
         "output", "channels", "stride", "kernel", "3-D x"],
)  # fmt: skip
def test_what_disagrees_is_a_fault(rig, ins, y, ints) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="QLinearConv operands"):
        _run(rig, ins, y[0], y[1], ints)


@pytest.mark.parametrize("n", [7, 10])
def test_a_missing_or_extra_input_is_refused_at_submit(rig, n: int) -> None:  # type: ignore[no-untyped-def]
    """The ABI's eight inputs and the optional B: other counts never reach the kernel."""
    ins = [*_GOOD, np.zeros(3, I32), np.zeros(3, I32)][:n]
    with pytest.raises(KernelArgumentError, match=r"QLINEARCONV takes 8\.\.9 inputs") as err:
        _run(rig, ins, (1, 3, 2, 2), U8)
    assert err.value.kernel == "QLINEARCONV"
