"""Conformance of SCATTER_ND through the KMD, on every available backend, against a direct loop
applying the updates one after the other (ONNX's reference semantics): every reduction,
repeated places, negative indices, partial and empty index tuples, several element types; and
the kernel's refusal of indices out of range and of shapes that disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.index import ScatterReduction
from tests.stack.kmd.scatter_reference import COMBINE

RNG = np.random.default_rng(17)


def reference(data, indices, updates, reduction):  # type: ignore[no-untyped-def]
    """out[indices[j]] = combine(out[indices[j]], updates[j]) for j in order."""
    out = data.copy()
    k = indices.shape[-1]
    n = int(np.prod(indices.shape[:-1]))
    rows = updates.reshape((n, *data.shape[k:]))
    for j, place in enumerate(indices.reshape(n, k)):
        at = tuple(int(v) for v in place)
        out[at] = COMBINE[reduction](out[at], rows[j])
    return out


CASES = [
    # (data shape, indices shape: last axis k, the index range per axis is data's)
    ((4, 3), (6, 2)),  # elements, repeated places likely
    ((5, 2, 3), (7, 1)),  # rows
    ((3, 4, 2), (2, 3, 2)),  # batched index tensor, slices of the last axis
    ((2, 3), (2, 0)),  # empty index tuples: every update is all of data
    ((6,), (9, 1)),  # a vector
]


def _indices(shape: tuple[int, ...], ishape: tuple[int, ...]) -> np.ndarray:
    k = ishape[-1]
    cols = [RNG.integers(-shape[a], shape[a], ishape[:-1]) for a in range(k)]
    return np.stack(cols, axis=-1).astype(np.int64) if k else np.zeros(ishape, np.int64)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"d{c[0]}i{c[1]}")
@pytest.mark.parametrize("reduction", list(ScatterReduction), ids=lambda r: r.name.lower())
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_scatter_nd_matches_the_loop(backend_rig, case, reduction, dtype) -> None:  # type: ignore[no-untyped-def]
    shape, ishape = case
    data = (RNG.standard_normal(shape) * 4).astype(dtype)
    indices = _indices(shape, ishape)
    updates = (RNG.standard_normal((*ishape[:-1], *shape[ishape[-1] :])) * 4).astype(dtype)
    ref = reference(data, indices, updates, reduction)
    ins = [data, indices, updates]
    out = backend_rig.run(KernelId.SCATTER_ND, ins, shape, dtype, ints=(int(reduction),))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref)


def test_repeated_places_combine_in_order(backend_rig) -> None:  # type: ignore[no-untyped-def]
    data = np.array([10, 20, 30], np.int32)
    indices = np.array([[1], [0], [1], [-2]], np.int64)  # place 1 three times
    updates = np.array([1, 2, 3, 4], np.int32)
    expect = {
        ScatterReduction.NONE: [2, 4, 30],
        ScatterReduction.ADD: [12, 28, 30],
        ScatterReduction.MUL: [20, 240, 30],
        ScatterReduction.MAX: [10, 20, 30],
        ScatterReduction.MIN: [2, 1, 30],
    }
    for reduction, want in expect.items():
        ins = [data, indices, updates]
        out = backend_rig.run(KernelId.SCATTER_ND, ins, (3,), np.int32, ints=(int(reduction),))
        np.testing.assert_array_equal(out, want)


def test_bool_data_with_int32_indices(backend_rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((2, 3), np.bool_)
    indices = np.array([[0, 2], [1, -3]], np.int32)
    updates = np.array([True, True])
    out = backend_rig.run(KernelId.SCATTER_ND, [data, indices, updates], (2, 3), np.bool_)
    np.testing.assert_array_equal(out, [[False, False, True], [True, False, False]])


def test_an_index_out_of_range_is_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((3, 2), np.float32)
    updates = np.ones((1, 2), np.float32)
    for bad in (3, -4):
        indices = np.array([[bad]], np.int64)
        with pytest.raises(FenceFailedError, match="ScatterND index out of range"):
            rig.run(KernelId.SCATTER_ND, [data, indices, updates], (3, 2))


def test_updates_that_disagree_with_the_indices_are_refused(rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((3, 2), np.float32)
    indices = np.array([[0], [1]], np.int64)
    with pytest.raises(FenceFailedError, match="ScatterND shapes"):
        rig.run(KernelId.SCATTER_ND, [data, indices, np.ones((2, 3), np.float32)], (3, 2))


def test_an_unknown_reduction_is_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((3,), np.float32)
    ins = [data, np.array([[0]], np.int64), np.ones(1, np.float32)]
    with pytest.raises(FenceFailedError):
        rig.run(KernelId.SCATTER_ND, ins, (3,), ints=(5,))
