"""ScatterND through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

The cases cover what ONNX's ScatterND defines: indices addressing every axis of data (single
elements), a leading part of them (slices), none (the whole tensor), negative indices, batched
index tensors, every reduction (none; add and mul from opset 16; max and min from opset 18),
repeated places with a reduction (combined in order), and several element types. Repeated
places without a reduction are undefined in ONNX; the stack lets the last update win."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import CompiledModel, ShapeInferenceError
from stack.compiler.jit import shared_runtime
from tests.stack.adapter.both import both, scatter_model

F, I64 = TensorProto.FLOAT, TensorProto.INT64


_model = functools.partial(scatter_model, "ScatterND")
_both = both


RNG = np.random.default_rng(12)
CASES: dict[str, tuple[tuple[int, ...], list, dict[str, Any]]] = {
    # name: (data shape, indices, attributes)
    "elements": ((4, 3), [[0, 1], [3, 2], [1, 0]], {}),
    "rows": ((5, 2, 3), [[4], [0], [2]], {}),
    "negative": ((4, 3, 2), [[-1, 0], [0, -3], [-4, -1]], {}),
    "batched indices": ((3, 4, 2), [[[0, 1], [2, 3]], [[1, 1], [0, 0]]], {}),
    "add": ((4, 3), [[1], [2], [1], [1]], {"reduction": "add"}),
    "mul": ((3, 2, 2), [[0, 1], [2, 0], [0, 1]], {"reduction": "mul"}),
    "max": ((4, 3), [[3, 2], [0, 0], [3, 2]], {"reduction": "max"}),
    "min": ((2, 5), [[-1], [1], [0]], {"reduction": "min"}),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_scatter_nd_matches_onnxruntime(case: str, dtype: type) -> None:
    shape, idx, attrs = CASES[case]
    indices = np.asarray(idx, np.int64)
    k = indices.shape[-1]
    data = (RNG.standard_normal(shape) * 8).astype(dtype)
    updates = (RNG.standard_normal((*indices.shape[:-1], *shape[k:])) * 8).astype(dtype)
    ref, got = _both(
        _model(data, indices, updates, **attrs), {"x": data, "i": indices, "u": updates}
    )
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize(
    ("dtype", "reduction"),
    [
        (np.float16, "none"),
        (np.int32, "add"),
        (np.int32, "mul"),
        (np.bool_, "none"),
        (np.float32, "max"),
    ],
)
def test_constant_indices_and_updates_match_onnxruntime(dtype: type, reduction: str) -> None:
    """Indices and updates as initializers (the usual form in exported models)."""
    data = (RNG.standard_normal((3, 4)) * 4).astype(dtype)
    indices = np.array([[2, 1], [0, 3], [2, 1]], np.int64)
    updates = (RNG.standard_normal(3) * 4).astype(dtype)
    if reduction == "none":
        indices = indices[:2]
        updates = updates[:2]
    model = _model(data, indices, updates, consts=("i", "u"), reduction=reduction)
    ref, got = _both(model, {"x": data})
    np.testing.assert_array_equal(got, ref)


def test_empty_index_tuples_replace_the_whole_tensor() -> None:
    """indices [..., 0]: each update is all of data (constant indices: a run-time input with no
    elements is another matter)."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    updates = -data[None] - 1
    model = _model(data, np.zeros((1, 0), np.int64), updates, consts=("i",), reduction="add")
    ref, got = _both(model, {"x": data, "u": updates})
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, np.full((2, 3), -1, np.float32))


def test_older_opsets_import_scatter_nd_without_a_reduction() -> None:
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    indices, updates = np.array([[3], [1]], np.int64), -np.ones((2, 3), np.float32)
    for opset in (11, 13, 16):
        ref, got = _both(
            _model(data, indices, updates, opset=opset), {"x": data, "i": indices, "u": updates}
        )
        np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, [[0, 1, 2], [-1, -1, -1], [6, 7, 8], [-1, -1, -1]])


def test_repeated_places_without_a_reduction_take_the_last_update() -> None:
    data = np.zeros((3, 2), np.float32)
    indices = np.array([[1], [0], [1], [1]], np.int64)
    updates = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
    compiled = CompiledModel(import_model(_model(data, indices, updates)), runtime=shared_runtime())
    try:
        got = compiled.run({"x": data, "i": indices, "u": updates})["y"]
    finally:
        compiled.close()
    np.testing.assert_array_equal(got, [[3, 4], [7, 8], [0, 0]])


D, U = np.zeros((4, 3), np.float32), np.ones((2, 3), np.float32)
ROWS = np.array([[0], [2]], np.int64)
BAD: dict[str, tuple[Any, type]] = {
    "unknown reduction": (_model(D, ROWS, U, reduction="sum"), ModelFormatError),
    "max before opset 18": (_model(D, ROWS, U, opset=16, reduction="max"), ModelFormatError),
    "add before opset 16": (_model(D, ROWS, U, opset=13, reduction="add"), ModelFormatError),
    "updates of the wrong shape": (
        _model(D, ROWS, np.ones((2, 2), np.float32)),
        ShapeInferenceError,
    ),
    "updates of another dtype": (_model(D, ROWS, np.ones((2, 3), np.int64)), ShapeInferenceError),
    "indices deeper than data": (
        _model(D, np.zeros((2, 3), np.int64), U[:, 0]),
        ShapeInferenceError,
    ),
    "float indices": (_model(D, ROWS.astype(np.float32), U), ShapeInferenceError),
    "constant indices out of range": (
        _model(D, np.array([[0], [4]], np.int64), U, consts=("i",)),
        ModelFormatError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_scatter_nd_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value
    assert err.value.op == "ScatterND", err.value


def test_missing_updates_is_a_typed_error_naming_the_node() -> None:
    model = _model(D, ROWS, U)
    del model.graph.node[0].input[2]
    with pytest.raises(ModelFormatError) as err:
        import_model(model)
    assert err.value.node == "n0" and err.value.op == "ScatterND"
