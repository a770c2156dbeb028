"""MaxUnpool through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

X and I come from onnxruntime's MaxPool with its Indices output (the stack's MaxPool computes
values only), so the indices are the flat places MaxPool returns: 1-D, 2-D and 3-D windows,
strides other than the kernel (overlapping windows name a place twice, gaps leave zeros),
padding, an explicit output_shape (the pooled input's size, which the default cannot recover),
batch and channels > 1, opsets 9, 11 and 22. onnxruntime's MaxUnpool has no float64 kernel: that
dtype is compared with its float32 result on the same values (unpooling only moves them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from stack.compiler import CompiledModel, ShapeInferenceError
from stack.compiler.jit import shared_runtime

ELEM = {np.dtype(t): e for t, e in ((np.float32, TensorProto.FLOAT),
        (np.float16, TensorProto.FLOAT16), (np.float64, TensorProto.DOUBLE),
        (np.int32, TensorProto.INT32), (np.int64, TensorProto.INT64))}  # fmt: skip


def _session(model) -> ort.InferenceSession:  # type: ignore[no-untyped-def]
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _graph_model(node, inputs: dict[str, np.ndarray], consts: dict[str, np.ndarray], opset: int):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape) for n, a in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in node.output],
        [numpy_helper.from_array(a, n) for n, a in consts.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def max_pool(data: np.ndarray, **window: Any) -> tuple[np.ndarray, np.ndarray]:
    """onnxruntime's MaxPool of ``data``: the pooled values and their flat indices."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **window)
    values, indices = _session(_graph_model(node, {"x": data}, {}, 12)).run(None, {"x": data})
    return values, indices


def unpool_model(  # type: ignore[no-untyped-def]
    x: np.ndarray,
    i: np.ndarray,
    output_shape: Any = None,
    opset: int = 11,
    consts: tuple[str, ...] = (),
    **attrs: Any,
):
    arrays = {"x": x, "i": i}
    names = ["x", "i"]
    if output_shape is not None:
        arrays["s"] = np.asarray(output_shape)
        names.append("s")
        consts = (*consts, "s")
    node = helper.make_node("MaxUnpool", names, ["y"], name="n0", **attrs)
    inputs = {n: a for n, a in arrays.items() if n not in consts}
    return _graph_model(node, inputs, {n: arrays[n] for n in consts}, opset)


def run_stack(model, feeds: dict[str, np.ndarray]) -> np.ndarray:  # type: ignore[no-untyped-def]
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run(feeds)["y"]
    finally:
        compiled.close()


RNG = np.random.default_rng(31)
# name: (input shape of the MaxPool, window: kernel_shape, strides, pads; output_shape given)
CASES: dict[str, tuple[tuple[int, ...], dict[str, list[int]], bool]] = {
    "1-D": ((2, 3, 8), {"kernel_shape": [2], "strides": [2]}, False),
    "1-D strides > kernel": ((2, 3, 11), {"kernel_shape": [2], "strides": [3]}, False),
    "1-D pads": ((1, 2, 7), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, False),
    "2-D": ((2, 3, 6, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}, False),
    "2-D overlapping": ((2, 3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2]}, False),
    "2-D stride 1": ((1, 2, 5, 6), {"kernel_shape": [2, 3], "strides": [1, 1]}, False),
    "2-D pads": ((2, 2, 5, 6),
                 {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 1]}, False),
    "2-D output_shape": ((2, 3, 5, 7), {"kernel_shape": [2, 2], "strides": [2, 2]}, True),
    "2-D pads output_shape": ((1, 3, 7, 6),
                              {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 1, 1, 0]},
                              True),
    "3-D": ((2, 2, 4, 6, 4), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}, False),
    "3-D strides pads": ((1, 3, 5, 5, 5),
                         {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2],
                          "pads": [0, 1, 1, 1, 1, 0]}, False),
    "3-D output_shape": ((2, 2, 5, 5, 7), {"kernel_shape": [2, 2, 3], "strides": [2, 2, 3]}, True),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_max_unpool_of_max_pool_matches_onnxruntime(case: str, dtype: type) -> None:
    shape, window, explicit = CASES[case]
    data = RNG.standard_normal(shape).astype(np.float32)
    pooled, indices = max_pool(data, **window)
    out_shape = list(shape) if explicit else None
    ref_x = pooled.astype(np.float16) if dtype is np.float16 else pooled
    (ref,) = _session(unpool_model(ref_x, indices, out_shape, **window)).run(
        None, {"x": ref_x, "i": indices}
    )
    x = pooled.astype(dtype)
    got = run_stack(unpool_model(x, indices, out_shape, **window), {"x": x, "i": indices})
    assert ref.shape == shape  # the default size recovers the input unless output_shape is set
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, ref.astype(dtype))
    # the maxima are back where they were, everything else is 0
    kept = np.zeros(data.size, bool)
    kept[indices.ravel()] = True
    want = np.where(kept, data.ravel(), 0).reshape(shape).astype(dtype)
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) == np.count_nonzero(kept)


def test_default_output_size_is_in_minus_one_times_stride_plus_kernel_minus_pads() -> None:
    x = np.arange(1, 1 + 2 * 3 * 2 * 3, dtype=np.float32).reshape(2, 3, 2, 3)
    indices = np.zeros(x.shape, np.int64)  # every value to place 0 of the output
    indices.reshape(-1)[:] = np.arange(x.size) * 3
    window = {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 0, 1]}
    got = run_stack(unpool_model(x, indices, **window), {"x": x, "i": indices})
    # H: (2 - 1) * 2 + 3 - 1 - 0 = 4; W: (3 - 1) * 3 + 2 - 0 - 1 = 7
    assert got.shape == (2, 3, 4, 7)
    np.testing.assert_array_equal(got.reshape(-1)[indices.ravel()], x.ravel())
    assert np.count_nonzero(got) == x.size


@pytest.mark.parametrize("opset", [9, 11, 22])
def test_every_opset_of_max_unpool_imports(opset: int) -> None:
    x = np.array([[[[5, 6], [7, 8]]]], np.float32)
    i = np.array([[[[5, 7], [13, 15]]]], np.int64)
    window = {"kernel_shape": [2, 2], "strides": [2, 2]}
    got = run_stack(unpool_model(x, i, opset=opset, **window), {"x": x, "i": i})
    want = np.zeros((1, 1, 4, 4), np.float32)
    want[0, 0, 1, 1], want[0, 0, 1, 3], want[0, 0, 3, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
    np.testing.assert_array_equal(got, want)


def test_output_shape_places_the_indices_in_its_own_flat_order() -> None:
    """As onnxruntime does: the indices are flat places of the output_shape tensor (the pooled
    input), not of the default one."""
    x = np.array([[[[5, 6], [7, 8]]]], np.float32)
    i = np.array([[[[6, 8], [16, 18]]]], np.int64)
    model = unpool_model(x, i, [1, 1, 5, 5], kernel_shape=[2, 2], strides=[2, 2])
    got = run_stack(model, {"x": x, "i": i})
    want = np.zeros((1, 1, 5, 5), np.float32)
    want[0, 0, 1, 1], want[0, 0, 1, 3], want[0, 0, 3, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
    np.testing.assert_array_equal(got, want)
    (ref,) = _session(model).run(None, {"x": x, "i": i})
    np.testing.assert_array_equal(got, ref)


def test_a_place_named_twice_takes_the_last_value() -> None:
    x = np.array([[[1, 2, 3, 4]]], np.float32)
    i = np.array([[[2, 0, 2, 2]]], np.int64)
    got = run_stack(unpool_model(x, i, kernel_shape=[2], strides=[2]), {"x": x, "i": i})
    np.testing.assert_array_equal(got, [[[2, 0, 4, 0, 0, 0, 0, 0]]])


def test_constant_indices_and_constant_inputs_fold() -> None:
    x = np.array([[[1.5, -2.0]]], np.float32)
    i = np.array([[[3, 0]]], np.int64)
    consts = unpool_model(x, i, kernel_shape=[2], strides=[2], consts=("x", "i"))
    graph = import_model(consts)
    assert graph.nodes == ()  # folded at import
    np.testing.assert_array_equal(graph.constants["y"], [[[-2.0, 0, 0, 1.5]]])
    model = unpool_model(x, i, kernel_shape=[2], strides=[2], consts=("i",))
    np.testing.assert_array_equal(run_stack(model, {"x": x}), [[[-2.0, 0, 0, 1.5]]])


X2 = np.zeros((1, 2, 2, 2), np.float32)
I2 = np.arange(8, dtype=np.int64).reshape(1, 2, 2, 2)
K2 = {"kernel_shape": [2, 2], "strides": [2, 2]}
BAD: dict[str, tuple[Any, type]] = {
    "X of rank 2": (unpool_model(X2[0, 0], I2[0, 0], kernel_shape=[2]), ShapeInferenceError),
    "integer X": (unpool_model(I2.astype(np.int32), I2, **K2), ShapeInferenceError),
    "int32 indices": (unpool_model(X2, I2.astype(np.int32), **K2), ShapeInferenceError),
    "indices of another shape": (unpool_model(X2, I2[:, :1], **K2), ShapeInferenceError),
    "no kernel_shape": (unpool_model(X2, I2, strides=[2, 2]), ModelFormatError),
    "kernel_shape of the wrong length": (
        unpool_model(X2, I2, kernel_shape=[2], strides=[2, 2]),
        ShapeInferenceError,
    ),
    "a zero stride": (unpool_model(X2, I2, kernel_shape=[2, 2], strides=[0, 2]),
                      ShapeInferenceError),
    "negative pads": (unpool_model(X2, I2, pads=[0, -1, 0, 0], **K2), ShapeInferenceError),
    "pads of the wrong length": (unpool_model(X2, I2, pads=[1, 1], **K2), ShapeInferenceError),
    "pads leaving no output": (
        unpool_model(X2[..., :1, :1], I2[..., :1, :1], kernel_shape=[1, 1], pads=[1, 0, 0, 0]),
        ShapeInferenceError,
    ),
    "output_shape smaller than needed": (
        unpool_model(X2, I2, np.array([1, 2, 4, 3], np.int64), **K2),
        ShapeInferenceError,
    ),
    "output_shape with other channels": (
        unpool_model(X2, I2, np.array([1, 3, 4, 4], np.int64), **K2),
        ShapeInferenceError,
    ),
    "output_shape of another rank": (
        unpool_model(X2, I2, np.array([2, 4, 4], np.int64), **K2),
        ShapeInferenceError,
    ),
    "int32 output_shape": (
        unpool_model(X2, I2, np.array([1, 2, 4, 4], np.int32), **K2),
        ModelFormatError,
    ),
    "constant indices out of range": (
        unpool_model(X2, I2 + 30, consts=("i",), **K2),
        ModelFormatError,
    ),
    "negative constant indices": (unpool_model(X2, I2 - 1, consts=("i",), **K2), ModelFormatError),
    "opset 8": (unpool_model(X2, I2, opset=8, **K2), ModelFormatError),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_max_unpool_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "MaxUnpool", err.value


def test_a_run_time_output_shape_is_refused_naming_the_tensor() -> None:
    model = unpool_model(X2, I2, np.array([1, 2, 4, 4], np.int64), **K2)
    model.graph.input.append(helper.make_tensor_value_info("s", TensorProto.INT64, [4]))
    del model.graph.initializer[:]
    with pytest.raises(DynamicShapeError) as err:
        import_model(model)
    assert (err.value.node, err.value.op, err.value.tensor) == ("n0", "MaxUnpool", "s")


def test_missing_indices_is_a_typed_error_naming_the_node() -> None:
    model = unpool_model(X2, I2, **K2)
    del model.graph.node[0].input[1]
    with pytest.raises(ModelFormatError) as err:
        import_model(model)
    assert err.value.node == "n0" and err.value.op == "MaxUnpool"
