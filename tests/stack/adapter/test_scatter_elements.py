"""ScatterElements through the whole stack against onnxruntime, and its bad input as typed
errors naming the node.

The cases cover what ONNX's ScatterElements defines: every axis (negative ones too), negative
indices, indices shorter than data on the other axes, every reduction with repeated places
(none; add and mul from opset 16; max and min from opset 18) and several element types.
Repeated places without a reduction are undefined in ONNX; the stack lets the last update win,
so those cases use distinct places."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from onnx import TensorProto

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import ShapeInferenceError
from tests.stack.adapter.both import both, scatter_model

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(31)


_model = functools.partial(scatter_model, "ScatterElements")
_both = both


def _distinct(shape: tuple[int, ...], ishape: tuple[int, ...], axis: int) -> np.ndarray:
    """Indices naming each place at most once (a permutation along ``axis``), some negative."""
    n = shape[axis]
    perm = np.stack([RNG.permutation(n)[: ishape[axis]] for _ in range(int(np.prod(ishape)))])
    picked = perm[:, 0].reshape(ishape) if ishape[axis] == 1 else None
    if picked is None:
        moved = np.moveaxis(np.zeros(ishape, np.int64), axis, -1)
        rows = moved.reshape(-1, ishape[axis])
        for r in range(rows.shape[0]):
            rows[r] = RNG.permutation(n)[: ishape[axis]]
        picked = np.moveaxis(rows.reshape(moved.shape), -1, axis)
    return np.where(RNG.random(ishape) < 0.5, picked - n, picked).astype(np.int64)


CASES = {  # name → (data shape, indices shape, axis)
    "rows": ((4, 3), (2, 3), 0),
    "columns": ((4, 3), (4, 2), 1),
    "negative axis": ((2, 3, 4), (2, 2, 3), -1),
    "short indices": ((5, 4), (3, 2), 0),
    "vector": ((6,), (4,), 0),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64])
def test_scatter_elements_matches_onnxruntime(case: str, dtype: type) -> None:
    shape, ishape, axis = CASES[case]
    data = (RNG.standard_normal(shape) * 4).astype(dtype)
    indices = _distinct(shape, ishape, axis % len(shape))
    updates = (RNG.standard_normal(ishape) * 4).astype(dtype)
    model = _model(data, indices, updates, axis=axis)
    ref, got = _both(model, {"x": data, "i": indices, "u": updates})
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_every_reduction_combines_repeated_places_as_onnxruntime(reduction: str) -> None:
    data = RNG.integers(-5, 5, (3, 4)).astype(np.int64)
    indices = RNG.integers(-3, 3, (6, 4)).astype(np.int64)  # rows repeat
    updates = RNG.integers(-5, 5, (6, 4)).astype(np.int64)
    model = _model(data, indices, updates, axis=0, reduction=reduction)
    ref, got = _both(model, {"x": data, "i": indices, "u": updates})
    np.testing.assert_array_equal(got, ref)


def test_constant_indices_and_updates_fold_as_onnxruntime() -> None:
    data = RNG.standard_normal((3, 4)).astype(np.float32)
    indices = np.array([[2, 0, 1, -1]], np.int64)
    updates = RNG.standard_normal((1, 4)).astype(np.float32)
    model = _model(data, indices, updates, consts=("i", "u"), axis=0, reduction="add")
    ref, got = _both(model, {"x": data})
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_older_opsets_import_scatter_elements_without_a_reduction() -> None:
    data = np.zeros((2, 3), np.float32)
    indices = np.array([[1, 0, 1]], np.int64)
    updates = np.ones((1, 3), np.float32)
    model = _model(data, indices, updates, opset=11, axis=0)
    ref, got = _both(model, {"x": data, "i": indices, "u": updates})
    np.testing.assert_array_equal(got, ref)
    with pytest.raises(ModelFormatError, match="opset 13"):
        import_model(_model(data, indices, updates, opset=13, reduction="add"))


D = np.zeros((3, 4), np.float32)
IDX = np.array([[0, 1, 2, 0]], np.int64)
U = np.ones((1, 4), np.float32)
BAD = {
    "unknown reduction": (_model(D, IDX, U, reduction="sum"), ModelFormatError),
    "axis out of range": (_model(D, IDX, U, axis=2), ShapeInferenceError),
    "updates of another shape": (_model(D, IDX, np.ones((1, 3), np.float32)), ShapeInferenceError),
    "updates of another dtype": (_model(D, IDX, U.astype(np.int32)), ShapeInferenceError),
    "indices of another rank": (_model(D, IDX[0], U[0]), ShapeInferenceError),
    "float indices": (_model(D, IDX.astype(np.float32), U), ShapeInferenceError),
    "constant indices out of range": (
        _model(D, np.array([[0, 3, 0, 0]], np.int64), U, consts=("i",)),
        ModelFormatError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_scatter_elements_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value
    assert err.value.op == "ScatterElements", err.value
