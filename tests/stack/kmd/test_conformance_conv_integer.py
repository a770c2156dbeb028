"""Conformance of CONV_INTEGER through the KMD, on every available backend, against a plain
loop over each output pixel and group in int64 (ONNX's ConvInteger: x and w less their zero
points, the padding zeros of x - x_zero_point): every int8/uint8 pairing of x and w, no zero
point, x's alone, both per tensor and w's per output channel, strides, pads, dilations,
groups, the ONNX node tests' data, the extreme values, an empty batch; and the kernel's
refusal of dtypes, zero points and shapes that disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(53)
I8, U8 = np.int8, np.uint8


def reference(x, w, x_zp, w_zp, strides, pads, dil, group):  # type: ignore[no-untyped-def]
    """y[n, m, i, j], pixel by pixel and group by group, in int64."""
    xs = x.astype(np.int64) - (0 if x_zp is None else np.int64(x_zp.reshape(())))
    ws = w.astype(np.int64)
    if w_zp is not None:
        ws = ws - w_zp.astype(np.int64).reshape(-1 if w_zp.size > 1 else 1, 1, 1, 1)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0] : pads[0] + h, pads[1] : pads[1] + wd] = xs
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for i in range(oh):
        for j in range(ow):
            r, q = i * strides[0], j * strides[1]
            rows = slice(r, r + dil[0] * (kh - 1) + 1, dil[0])
            cols = slice(q, q + dil[1] * (kw - 1) + 1, dil[1])
            win = xp[:, :, rows, cols]
            for g in range(group):
                part = win[:, g * cg : (g + 1) * cg]  # [N, cg, kh, kw]
                taps = ws[g * mg : (g + 1) * mg]  # [mg, cg, kh, kw]
                y[:, g * mg : (g + 1) * mg, i, j] = np.einsum("nckl,mckl->nm", part, taps)
    return y


def _ints(strides, pads, dil, group):  # type: ignore[no-untyped-def]
    return (*strides, *pads, *dil, group)


def _random(shape: tuple[int, ...], dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


CASES = [
    # (x shape, w shape, strides, pads, dilations, group)
    ((1, 1, 3, 3), (1, 1, 2, 2), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((1, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2),
    ((2, 6, 8, 8), (6, 1, 3, 3), (2, 3), (0, 1, 1, 0), (2, 1), 6),
    ((1, 8, 5, 5), (4, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"x{c[0]}w{c[1]}s{c[2]}g{c[5]}")
@pytest.mark.parametrize("dtypes", [(U8, I8), (U8, U8), (I8, I8), (I8, U8)],
                         ids=["u8-i8", "u8-u8", "i8-i8", "i8-u8"])  # fmt: skip
@pytest.mark.parametrize("zps", ["none", "x", "tensor", "channel"])
def test_conv_integer_matches_the_loop(backend_rig, case, dtypes, zps) -> None:  # type: ignore[no-untyped-def]
    xs, ws, strides, pads, dil, group = case
    x, w = _random(xs, dtypes[0]), _random(ws, dtypes[1])
    x_zp = None if zps == "none" else _random((), dtypes[0])
    w_zp = {"none": None, "x": None, "tensor": _random((), dtypes[1]),
            "channel": _random((ws[0],), dtypes[1])}[zps]  # fmt: skip
    ref = reference(x, w, x_zp, w_zp, strides, pads, dil, group)
    ins = [a for a in (x, w, x_zp, w_zp) if a is not None]
    out = backend_rig.run(KernelId.CONV_INTEGER, ins, ref.shape, np.int32,
                          ints=_ints(strides, pads, dil, group))  # fmt: skip
    assert out.dtype == np.int32 and out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


def test_the_onnx_node_tests_data(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """test_convinteger_without_padding and _with_padding: the padding is x's zero point, so
    the padded border adds nothing; w's per-channel zero point 1 zeroes the second channel."""
    x = np.arange(2, 11, dtype=U8).reshape(1, 1, 3, 3)
    out = backend_rig.run(KernelId.CONV_INTEGER, [x, np.ones((1, 1, 2, 2), U8), np.array(1, U8)],
                          (1, 1, 2, 2), np.int32)  # fmt: skip
    assert out.tolist() == [[[[12, 16], [24, 28]]]]
    ins = [x, np.ones((2, 1, 2, 2), U8), np.array(1, U8), np.array([0, 1], U8)]
    out = backend_rig.run(KernelId.CONV_INTEGER, ins, (1, 2, 4, 4), np.int32,
                          ints=(1, 1, 1, 1, 1, 1, 1, 1, 1))  # fmt: skip
    assert out[0, 0].tolist() == [[1, 3, 5, 3], [5, 12, 16, 9], [11, 24, 28, 15], [7, 15, 17, 9]]
    assert not out[0, 1].any()


def test_the_extreme_values_are_exact(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """(0 - 255) * (-128 - 127) summed over 2048 taps: 133 171 200, beyond float32's 2^24."""
    x = np.zeros((1, 128, 4, 4), U8)
    w = np.full((2, 128, 4, 4), -128, I8)
    out = backend_rig.run(KernelId.CONV_INTEGER, [x, w, np.array(255, U8), np.array([127, 0], I8)],
                          (1, 2, 1, 1), np.int32)  # fmt: skip
    assert out.ravel().tolist() == [255 * 255 * 2048, 255 * 128 * 2048]


def test_an_empty_batch_is_an_empty_output(backend_rig) -> None:  # type: ignore[no-untyped-def]
    ins = [np.zeros((0, 2, 5, 5), U8), np.ones((3, 2, 3, 3), I8)]
    out = backend_rig.run(KernelId.CONV_INTEGER, ins, (0, 3, 3, 3), np.int32)
    assert (out.shape, out.dtype) == ((0, 3, 3, 3), np.int32)


_X, _W = np.ones((1, 2, 4, 4), U8), np.ones((3, 2, 3, 3), I8)


@pytest.mark.parametrize(
    ("ins", "y", "ints"),
    [
        ([_X.astype(np.int32), _W], ((1, 3, 2, 2), np.int32), ()),  # x int32
        ([_X, _W.astype(np.float32)], ((1, 3, 2, 2), np.int32), ()),  # w float32
        ([_X, _W], ((1, 3, 2, 2), np.int64), ()),  # y int64
        ([_X, _W, np.array(1, I8)], ((1, 3, 2, 2), np.int32), ()),  # x_zero_point int8
        ([_X, _W, np.array(1, U8), np.array(1, U8)], ((1, 3, 2, 2), np.int32), ()),  # w's uint8
        ([_X, _W, np.array([1, 2], U8)], ((1, 3, 2, 2), np.int32), ()),  # two x zero points
        ([_X, _W, np.array(1, U8), np.array([1, 2], I8)], ((1, 3, 2, 2), np.int32), ()),
        ([_X, _W], ((1, 3, 3, 3), np.int32), ()),  # y not the convolution's size
        ([np.ones((1, 3, 4, 4), U8), _W], ((1, 3, 2, 2), np.int32), ()),  # channels
        ([_X, _W], ((1, 3, 2, 2), np.int32), (0, 1)),  # stride 0
        ([_X, _W], ((1, 3, 2, 2), np.int32), (1, 1, 0, 0, 0, 0, 1, 1, 2)),  # 3 outputs, group 2
        ([_X, np.ones((3, 2, 5, 5), I8)], ((1, 3, 1, 1), np.int32), ()),  # kernel too large
        ([_X[0], _W], ((1, 3, 2, 2), np.int32), ()),  # 3-D x
    ],
    ids=["x int32", "w float32", "y int64", "x zero point int8", "w zero point uint8",
         "two x zero points", "two w zero points", "output", "channels", "stride", "group",
         "kernel", "3-D x"],
)  # fmt: skip
def test_what_disagrees_is_a_fault(rig, ins, y, ints) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="ConvInteger operands"):
        rig.run(KernelId.CONV_INTEGER, ins, y[0], y[1], ints=ints)
