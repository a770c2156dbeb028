"""Conformance of REVERSE_SEQUENCE through the KMD, on every available backend, against a plain
loop over each batch and time step (ONNX's semantics: the first sequence_lens[b] steps of batch
b reversed, the others copied): both axis orders, ranks 2 to 4, every element type, lengths 0
to T in int64 and int32; and the kernel's refusal of a length outside [0, T]."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(44)


def reference(x: np.ndarray, lens: np.ndarray, time_axis: int, batch_axis: int) -> np.ndarray:
    """Y[.., b, .., t, ..] = X[.., b, .., len_b - 1 - t, ..] for t < len_b, else X itself."""
    y = x.copy()
    for b, n in enumerate(lens.tolist()):
        for t in range(int(n)):
            dst = [slice(None)] * x.ndim
            src = [slice(None)] * x.ndim
            dst[batch_axis] = src[batch_axis] = b
            dst[time_axis], src[time_axis] = t, int(n) - 1 - t
            y[tuple(dst)] = x[tuple(src)]
    return y


DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.bool_]


@pytest.mark.parametrize("shape", [(5, 4), (6, 3, 2), (4, 5, 2, 3)], ids=str)
@pytest.mark.parametrize("axes", [(0, 1), (1, 0)], ids=lambda a: f"time{a[0]}batch{a[1]}")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reverse_sequence_matches_the_loop(backend_rig, shape, axes, dtype) -> None:  # type: ignore[no-untyped-def]
    time_axis, batch_axis = axes
    steps, batch = shape[time_axis], shape[batch_axis]
    x = (RNG.standard_normal(shape) * 50).astype(dtype)
    lens = RNG.integers(0, steps + 1, batch).astype(np.int64)
    lens[0], lens[-1] = steps, 0  # the whole sequence, and none of it
    out = backend_rig.run(KernelId.REVERSE_SEQUENCE, [x, lens], shape, dtype, ints=axes)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, reference(x, lens, time_axis, batch_axis))


def test_int32_lengths_and_the_default_axes(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(16, dtype=np.float32).reshape(4, 4).T.copy()  # ONNX example 1
    lens = np.array([4, 3, 2, 1], np.int32)
    out = backend_rig.run(KernelId.REVERSE_SEQUENCE, [x, lens], (4, 4))
    expected = [[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14], [0, 7, 11, 15]]
    np.testing.assert_array_equal(out, np.array(expected, np.float32))


def test_an_empty_batch_copies_nothing(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((3, 0, 2), np.float32)
    out = backend_rig.run(KernelId.REVERSE_SEQUENCE, [x, np.zeros(0, np.int64)], (3, 0, 2))
    assert out.shape == (3, 0, 2)


@pytest.mark.parametrize("length", [5, -1])
def test_a_length_outside_the_time_axis_is_a_fault(rig, length: int) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((4, 2), np.float32)
    lens = np.array([1, length], np.int64)
    with pytest.raises(FenceFailedError, match=r"ReverseSequence lengths must lie in \[0, 4\]"):
        rig.run(KernelId.REVERSE_SEQUENCE, [x, lens], (4, 2), ints=(0, 1))
