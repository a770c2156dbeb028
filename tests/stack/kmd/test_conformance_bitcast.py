"""Conformance of BITCAST through the KMD, on every available backend, against the bytes
themselves (ONNX's semantics: Y holds X's little-endian bytes read as Y's dtype): every pair of
device element types of one width on random bytes, ranks 0 to 4 and an empty tensor; NaN
payloads, signed zeros, infinities and subnormals kept bit for bit; bool bytes other than 0
and 1 kept as they are; and the kernel's refusal of a shape or width that differs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(55)
PAIRS = [
    (np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64),
    (np.int64, np.float64), (np.int8, np.uint8), (np.uint8, np.int8), (np.bool_, np.uint8),
    (np.uint8, np.bool_), (np.bool_, np.int8), (np.int8, np.bool_),
]  # fmt: skip
SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (), (0, 3)]


def random_bits(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return RNG.integers(0, 256, n, dtype=np.uint8).view(dtype).reshape(shape)


def name(pair: tuple[Any, Any]) -> str:
    return f"{np.dtype(pair[0]).name}->{np.dtype(pair[1]).name}"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("pair", PAIRS, ids=name)
def test_bitcast_keeps_every_byte(backend_rig, pair, shape) -> None:  # type: ignore[no-untyped-def]
    src, to = pair
    x = random_bits(shape, src)
    out = backend_rig.run(KernelId.BITCAST, [x], shape, to)
    assert out.dtype == to and out.shape == shape
    assert out.tobytes() == x.tobytes()


def test_special_floats_keep_their_bits(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Quiet and signalling NaNs with payloads, both zeros and infinities, subnormals."""
    patterns = np.array(
        [0x7FC00001, 0x7F800001, 0xFFC12345, 0x80000000, 0, 0x7F800000, 0xFF800000, 1, 0x807FFFFF],
        np.uint32,
    ).view(np.int32)
    as_float = backend_rig.run(KernelId.BITCAST, [patterns], patterns.shape, np.float32)
    np.testing.assert_array_equal(as_float.view(np.int32), patterns)
    back = backend_rig.run(KernelId.BITCAST, [as_float], patterns.shape, np.int32)
    np.testing.assert_array_equal(back, patterns)
    wide = np.array([0x7FF0000000000001, 0xFFF8000000000ABC, 1 << 63, 1], np.uint64).view(np.int64)
    as_double = backend_rig.run(KernelId.BITCAST, [wide], wide.shape, np.float64)
    np.testing.assert_array_equal(as_double.view(np.int64), wide)


def test_known_values(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([1.0, -2.0, 0.5], np.float32)
    got = backend_rig.run(KernelId.BITCAST, [x], (3,), np.int32)
    np.testing.assert_array_equal(got, [0x3F800000, -0x40000000, 0x3F000000])
    u = np.array([0, 1, 127, 128, 255], np.uint8)
    np.testing.assert_array_equal(backend_rig.run(KernelId.BITCAST, [u], (5,), np.int8),
                                  [0, 1, 127, -128, -1])  # fmt: skip


def test_bool_bytes_other_than_0_and_1_are_kept(backend_rig) -> None:  # type: ignore[no-untyped-def]
    u = np.array([0, 1, 2, 255], np.uint8)
    as_bool = backend_rig.run(KernelId.BITCAST, [u], (4,), np.bool_)
    assert as_bool.view(np.uint8).tolist() == [0, 1, 2, 255]


@pytest.mark.parametrize(
    ("x", "shape", "dtype"),
    [
        (np.ones((2, 3), np.float32), (2, 3), np.int64),
        (np.ones((2, 3), np.float32), (2, 3), np.uint8),
        (np.ones((2, 3), np.float32), (3, 2), np.int32),
        (np.ones((2, 3), np.float32), (6,), np.int32),
    ],
    ids=["wider", "narrower", "shape", "rank"],
)
def test_a_shape_or_width_that_differs_is_a_fault(rig, x, shape, dtype) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="BitCast X"):
        rig.run(KernelId.BITCAST, [x], shape, dtype)
