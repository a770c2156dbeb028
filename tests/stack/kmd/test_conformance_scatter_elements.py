"""Conformance of SCATTER_ELEMENTS through the KMD, on every available backend, against a
direct loop applying the updates one after the other in indices' row-major order (ONNX's
reference semantics): every reduction, every axis, repeated places, negative indices, indices
shorter than data; and the kernel's refusal of indices out of range and of shapes that
disagree."""

from __future__ import annotations

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.index import ScatterReduction
from tests.stack.kmd.scatter_reference import COMBINE

RNG = np.random.default_rng(23)


def reference(data, indices, updates, axis, reduction):  # type: ignore[no-untyped-def]
    """out[..., indices[j], ...] = combine(out[...], updates[j]) for j in row-major order."""
    out = data.copy()
    for where in np.ndindex(*indices.shape):
        place = list(where)
        place[axis] = int(indices[where])
        out[tuple(place)] = COMBINE[reduction](out[tuple(place)], updates[where])
    return out


CASES = [  # (data shape, indices shape, axis)
    ((4, 3), (6, 3), 0),  # more updates than rows: repeated places
    ((4, 3), (2, 5), 1),
    ((3, 4, 2), (2, 3, 2), 1),  # indices shorter than data on the other axes
    ((6,), (9,), 0),  # a vector
    ((2, 3), (2, 0), 1),  # no update
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"d{c[0]}i{c[1]}a{c[2]}")
@pytest.mark.parametrize("reduction", list(ScatterReduction), ids=lambda r: r.name.lower())
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_scatter_elements_matches_the_loop(backend_rig, case, reduction, dtype) -> None:  # type: ignore[no-untyped-def]
    shape, ishape, axis = case
    data = (RNG.standard_normal(shape) * 4).astype(dtype)
    indices = RNG.integers(-shape[axis], shape[axis], ishape).astype(np.int64)
    updates = (RNG.standard_normal(ishape) * 4).astype(dtype)
    ref = reference(data, indices, updates, axis, reduction)
    ins = [data, indices, updates]
    out = backend_rig.run(KernelId.SCATTER_ELEMENTS, ins, shape, dtype, ints=(axis, int(reduction)))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref)


def test_repeated_places_combine_in_order(backend_rig) -> None:  # type: ignore[no-untyped-def]
    data = np.array([[10, 20, 30]], np.int32)
    indices = np.array([[1, 0, 1, -2]], np.int64)  # place 1 three times
    updates = np.array([[1, 2, 3, 4]], np.int32)
    expect = {
        ScatterReduction.NONE: [[2, 4, 30]],
        ScatterReduction.ADD: [[12, 28, 30]],
        ScatterReduction.MUL: [[20, 240, 30]],
        ScatterReduction.MAX: [[10, 20, 30]],
        ScatterReduction.MIN: [[2, 1, 30]],
    }
    for reduction, want in expect.items():
        ins = [data, indices, updates]
        out = backend_rig.run(
            KernelId.SCATTER_ELEMENTS, ins, (1, 3), np.int32, ints=(1, int(reduction))
        )
        np.testing.assert_array_equal(out, want)


def test_an_index_out_of_range_is_a_fault(rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((3, 2), np.float32)
    updates = np.ones((1, 2), np.float32)
    for bad in (3, -4):
        indices = np.array([[bad, 0]], np.int64)
        with pytest.raises(FenceFailedError, match="ScatterElements index out of range"):
            rig.run(KernelId.SCATTER_ELEMENTS, [data, indices, updates], (3, 2), ints=(0, 0))


def test_updates_that_disagree_with_the_indices_are_refused(rig) -> None:  # type: ignore[no-untyped-def]
    data = np.zeros((3, 2), np.float32)
    indices = np.array([[0, 1]], np.int64)
    with pytest.raises(FenceFailedError, match="ScatterElements shapes"):
        rig.run(
            KernelId.SCATTER_ELEMENTS,
            [data, indices, np.ones((2, 2), np.float32)],
            (3, 2),
            ints=(0, 0),
        )
