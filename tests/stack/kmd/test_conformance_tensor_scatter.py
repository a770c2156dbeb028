"""Conformance of TENSOR_SCATTER through the KMD, on every available backend, against ONNX's
pseudocode as a plain loop over every prefix of the sequence axis and every update step: the
sequence axis 1 to rank-1, both modes, write indices given (int64 and int32) or absent, an
update as long as the cache, every element type; and the kernel's refusal of a linear write
outside the cache."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(47)
LINEAR, CIRCULAR = 0, 1


def reference(
    past: np.ndarray, upd: np.ndarray, start: np.ndarray | None, axis: int, mode: int
) -> np.ndarray:
    """present[(*prefix, (start[prefix[0]] + s) [mod L])] = update[(*prefix, s)]."""
    y = past.copy()
    start = np.zeros(past.shape[0], np.int64) if start is None else start
    for prefix in np.ndindex(*past.shape[:axis]):
        for s in range(upd.shape[axis]):
            at = int(start[prefix[0]]) + s
            at = at % past.shape[axis] if mode == CIRCULAR else at
            y[(*prefix, at)] = upd[(*prefix, s)]
    return y


DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.bool_]


def _case(shape: tuple[int, ...], axis: int, steps: int, mode: int, dtype) -> tuple:  # type: ignore[no-untyped-def]
    past = (RNG.standard_normal(shape) * 50).astype(dtype)
    ushape = tuple(steps if d == axis else n for d, n in enumerate(shape))
    upd = (RNG.standard_normal(ushape) * 50).astype(dtype)
    cache = shape[axis]
    hi = cache + 3 if mode == CIRCULAR else cache - steps + 1
    start = RNG.integers(0, hi, shape[0]).astype(np.int64)
    start[0] = hi - 1  # the last place the mode allows
    return past, upd, start


@pytest.mark.parametrize(
    ("shape", "axis", "steps"),
    [((2, 5, 3), 1, 2), ((3, 2, 6, 4), 2, 3), ((2, 3, 4, 2), 3, 1), ((2, 7), 1, 7), ((1, 4), 1, 0)],
    ids=str,
)
@pytest.mark.parametrize("mode", [LINEAR, CIRCULAR], ids=["linear", "circular"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_tensor_scatter_matches_the_loop(backend_rig, shape, axis, steps, mode, dtype) -> None:  # type: ignore[no-untyped-def]
    past, upd, start = _case(shape, axis, steps, mode, dtype)
    out = backend_rig.run(
        KernelId.TENSOR_SCATTER, [past, upd, start], shape, dtype, ints=(axis, mode)
    )
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, reference(past, upd, start, axis, mode))


@pytest.mark.parametrize("mode", [LINEAR, CIRCULAR], ids=["linear", "circular"])
def test_without_write_indices_the_writes_start_at_0(backend_rig, mode: int) -> None:  # type: ignore[no-untyped-def]
    past = RNG.standard_normal((3, 2, 5, 4)).astype(np.float32)
    upd = RNG.standard_normal((3, 2, 2, 4)).astype(np.float32)
    out = backend_rig.run(KernelId.TENSOR_SCATTER, [past, upd], past.shape, ints=(2, mode))
    np.testing.assert_array_equal(out, reference(past, upd, None, 2, mode))


def test_int32_write_indices_wrap_in_circular_mode(backend_rig) -> None:  # type: ignore[no-untyped-def]
    past = np.zeros((2, 4, 1), np.float32)
    upd = np.array([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]], np.float32)
    start = np.array([3, 1], np.int32)
    out = backend_rig.run(
        KernelId.TENSOR_SCATTER, [past, upd, start], (2, 4, 1), ints=(1, CIRCULAR)
    )
    np.testing.assert_array_equal(out[..., 0], [[2, 3, 0, 1], [0, 4, 5, 6]])


@pytest.mark.parametrize("start", [3, -1])
def test_a_linear_write_outside_the_cache_is_a_fault(rig, start: int) -> None:  # type: ignore[no-untyped-def]
    past, upd = np.ones((2, 4, 2), np.float32), np.ones((2, 2, 2), np.float32)
    with pytest.raises(FenceFailedError, match=r"TensorScatter linear writes must lie in \[0, 4\)"):
        rig.run(KernelId.TENSOR_SCATTER, [past, upd, np.array([0, start], np.int64)], (2, 4, 2),
                ints=(1, LINEAR))  # fmt: skip
