"""Conformance of CENTER_CROP_PAD through the KMD, on every available backend, against a plain
loop over Y's elements (ONNX's semantics: along each axis Y[i] = X[i + (in - out) // 2] where Y
is shorter, X[i - (out - in) // 2] where it is longer, 0 outside X): crops, pads and both at
once, even and odd differences, ranks 0 to 4, every element type, an empty X padded out; stale
values in Y's padding overwritten; and the kernel's refusal of a rank or dtype that differs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(51)
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.bool_]


def reference(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Y element by element: each axis' source place, or 0 when one falls outside X."""
    y = np.zeros(shape, x.dtype)
    for out in itertools.product(*(range(m) for m in shape)):
        src = tuple(
            i + (n - m) // 2 if m <= n else i - (m - n) // 2
            for i, n, m in zip(out, x.shape, shape, strict=True)
        )
        if all(0 <= s < n for s, n in zip(src, x.shape, strict=True)):
            y[out] = x[src]
    return y


CASES = {
    "1-D crop, odd": ((9,), (4,)),
    "1-D pad, odd": ((4,), (9,)),
    "2-D crop, even": ((6, 8), (2, 4)),
    "2-D pad, even": ((2, 4), (6, 8)),
    "2-D crop and pad": ((5, 3), (2, 8)),
    "3-D one axis kept": ((3, 5, 7), (3, 2, 10)),
    "4-D mixed": ((2, 3, 7, 4), (1, 3, 4, 9)),
    "to one element": ((4, 5), (1, 1)),
    "unchanged": ((3, 4), (3, 4)),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_center_crop_pad_matches_the_loop(backend_rig, case: str, dtype) -> None:  # type: ignore[no-untyped-def]
    src, dst = CASES[case]
    x = (RNG.standard_normal(src) * 50).astype(dtype)
    out = backend_rig.run(KernelId.CENTER_CROP_PAD, [x], dst, dtype)
    assert out.dtype == dtype and out.shape == dst
    np.testing.assert_array_equal(out, reference(x, dst))


def test_an_odd_difference_leaves_the_extra_element_at_the_end(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(1, 6, dtype=np.float32)
    crop = backend_rig.run(KernelId.CENTER_CROP_PAD, [x], (2,))
    np.testing.assert_array_equal(crop, [2, 3])  # from (5 - 2) // 2 = 1
    pad = backend_rig.run(KernelId.CENTER_CROP_PAD, [x], (8,))
    np.testing.assert_array_equal(pad, [0, 1, 2, 3, 4, 5, 0, 0])  # at (8 - 5) // 2 = 1


def test_an_empty_input_pads_out_to_zeros(backend_rig) -> None:  # type: ignore[no-untyped-def]
    out = backend_rig.run(KernelId.CENTER_CROP_PAD, [np.zeros((0, 3), np.int32)], (2, 3), np.int32)
    np.testing.assert_array_equal(out, np.zeros((2, 3), np.int32))


def test_a_scalar_is_copied(backend_rig) -> None:  # type: ignore[no-untyped-def]
    out = backend_rig.run(KernelId.CENTER_CROP_PAD, [np.array(2.5, np.float64)], (), np.float64)
    assert out.shape == () and float(out) == 2.5


def test_stale_values_in_the_padding_are_overwritten(backend_rig) -> None:  # type: ignore[no-untyped-def]
    rig = backend_rig
    x = rig.put(np.ones((2, 2), np.float32))
    y = rig.put(np.full((4, 3), 7.0, np.float32))
    value = rig.submit([rig.blob(KernelId.CENTER_CROP_PAD, [x, y])])
    rig.dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=30)
    got = rig.dev.read_array(rig.ctx, y.addr, y.shape, y.dtype)
    np.testing.assert_array_equal(got, [[0, 0, 0], [1, 1, 0], [1, 1, 0], [0, 0, 0]])
    for p in (x, y):
        rig.dev.free(rig.ctx, p.addr)


@pytest.mark.parametrize(
    ("x", "shape", "dtype"),
    [
        (np.ones((2, 3), np.float32), (2, 3, 1), np.float32),
        (np.ones((2, 3), np.float32), (6,), np.float32),
        (np.ones((2, 3), np.float32), (2, 3), np.float64),
    ],
    ids=["rank up", "rank down", "dtype"],
)
def test_a_rank_or_dtype_that_differs_is_a_fault(rig, x, shape, dtype) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="CenterCropPad X"):
        rig.run(KernelId.CENTER_CROP_PAD, [x], shape, dtype)
