"""Conformance of MAXUNPOOL through the KMD, on every available backend, against a plain loop
writing X[j] at Y.flat[I[j]] in order (ONNX's reference semantics): 1-D to 3-D, batch and
channels > 1, outputs larger than the places named, places named twice, float16/32/64 with
int64 and int32 indices; and the kernel's refusal of indices out of range and of shapes that
disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(23)


def reference(x: np.ndarray, indices: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Y = 0; Y.flat[I[j]] = X[j] for j in order."""
    y = np.zeros(int(np.prod(out_shape)), x.dtype)
    for j in range(x.size):
        y[int(indices.reshape(-1)[j])] = x.reshape(-1)[j]
    return y.reshape(out_shape)


CASES = [
    # (X shape, Y shape, distinct: indices without repeats)
    ((2, 3, 4), (2, 3, 8), True),  # 1-D
    ((1, 2, 3, 3), (1, 2, 7, 7), True),  # 2-D, a larger output
    ((2, 3, 2, 4), (2, 3, 4, 8), False),  # 2-D, places named twice
    ((2, 2, 2, 2, 3), (2, 2, 4, 4, 6), True),  # 3-D
    ((1, 1, 5), (1, 1, 3), False),  # more values than places: every place named
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"x{c[0]}y{c[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("itype", [np.int64, np.int32])
def test_maxunpool_matches_the_loop(backend_rig, case, dtype, itype) -> None:  # type: ignore[no-untyped-def]
    x_shape, y_shape, distinct = case
    x = (RNG.standard_normal(x_shape) * 4).astype(dtype)
    size, n = int(np.prod(y_shape)), int(np.prod(x_shape))
    flat = RNG.permutation(size)[:n] if distinct else RNG.integers(0, size, n)
    indices = flat.reshape(x_shape).astype(itype)
    out = backend_rig.run(KernelId.MAXUNPOOL, [x, indices], y_shape, dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, reference(x, indices, y_shape))


def test_a_place_named_twice_takes_the_last_value(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[[1, 2, 3, 4, 5]]], np.float32)
    indices = np.array([[[3, 0, 3, 1, 0]]], np.int64)
    out = backend_rig.run(KernelId.MAXUNPOOL, [x, indices], (1, 1, 6))
    np.testing.assert_array_equal(out, [[[5, 4, 0, 3, 0, 0]]])


def test_an_index_out_of_range_is_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 1, 2), np.float32)
    for bad in (4, -1):
        indices = np.array([[[0, bad]]], np.int64)
        with pytest.raises(FenceFailedError, match="MaxUnpool index out of range"):
            rig.run(KernelId.MAXUNPOOL, [x, indices], (1, 1, 4))


@pytest.mark.parametrize(
    ("i_shape", "y_shape"),
    [((1, 1, 3), (1, 1, 4)), ((1, 1, 2), (1, 2, 4)), ((1, 1, 2), (1, 4))],
    ids=["indices", "channels", "rank"],
)
def test_shapes_that_disagree_are_refused(rig, i_shape, y_shape) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((1, 1, 2), np.float32)
    indices = np.zeros(i_shape, np.int64)
    with pytest.raises(FenceFailedError, match="MaxUnpool shapes"):
        rig.run(KernelId.MAXUNPOOL, [x, indices], y_shape)
