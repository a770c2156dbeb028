"""CenterCropPad through the whole stack against onnxruntime and ONNX's reference, and its bad
input as typed errors naming the node.

Crops, pads and both at once, even and odd differences, every axis or a subset given by axes
(negative, out of order), a size of 0 and an unchanged axis; every element type the stack
carries; an int32 shape against ONNX's reference (onnxruntime's function body refuses one);
shape an initializer or a Constant node (a run-time one is a DynamicShapeError naming the node
and the tensor); models of opsets 18 to 24."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(51)
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.bool_]


def ccp_model(
    x: np.ndarray, shape: Any, opset: int = 18, dtype: type = np.int64, **attrs: Any
) -> onnx.ModelProto:
    arrays = {"x": x, "shape": np.asarray(shape, dtype)}
    return node_model("CenterCropPad", arrays, opset, ("shape",), **attrs)


def data(shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    return (RNG.standard_normal(shape) * 50).astype(dtype)


CASES: dict[str, tuple[tuple[int, ...], list[int], list[int] | None]] = {  # x, shape, axes
    "crop, even": ((6, 8), [2, 4], None),
    "crop, odd": ((7, 6), [2, 3], None),
    "pad, even": ((2, 4), [6, 8], None),
    "pad, odd": ((3, 2), [6, 5], None),
    "crop and pad": ((5, 3), [2, 8], None),
    "1-D": ((9,), [4], None),
    "4-D": ((2, 3, 7, 4), [1, 3, 4, 9], None),
    "unchanged": ((3, 4), [3, 4], None),
    "to zero": ((3, 4), [0, 4], None),
    "axes hw of chw": ((3, 10, 7), [6, 9], [1, 2]),
    "axes hw of hwc": ((10, 7, 3), [6, 9], [0, 1]),
    "negative axes": ((10, 7, 3), [6, 9], [-3, -2]),
    "axes out of order": ((4, 5), [7, 2], [1, 0]),
    "one axis": ((4, 5, 6), [9], [-1]),
    "3-D every axis": ((4, 5, 6), [7, 2, 6], None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_center_crop_pad_matches_onnxruntime_and_the_onnx_reference(case: str) -> None:
    src, shape, axes = CASES[case]
    x = data(src)
    model = ccp_model(x, shape, **({} if axes is None else {"axes": axes}))
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert got.dtype == np.float32 and got.shape == ref.shape == want.shape
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_element_type_matches_onnxruntime(dtype: type) -> None:
    x = data((5, 3, 4), dtype)
    model = ccp_model(x, [2, 7], axes=[0, 2])
    got = stack_run(model, {"x": x})
    assert got.dtype == dtype and got.shape == (2, 3, 7)
    np.testing.assert_array_equal(got, ort_run(model, {"x": x}))


def test_an_int32_shape_matches_the_onnx_reference() -> None:
    """onnxruntime's function body mixes the int32 target with Shape's int64 and refuses it."""
    x = data((5, 6))
    model = ccp_model(x, [3, 9], dtype=np.int32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(stack_run(model, {"x": x}), want)


def test_the_extra_element_of_an_odd_difference_goes_to_the_end() -> None:
    x = np.arange(1, 6, dtype=np.float32)
    np.testing.assert_array_equal(stack_run(ccp_model(x, [2]), {"x": x}), [2, 3])
    np.testing.assert_array_equal(stack_run(ccp_model(x, [8]), {"x": x}), [0, 1, 2, 3, 4, 5, 0, 0])


def test_a_constant_node_shape_is_read_as_the_initializer_is() -> None:
    x = data((4, 6))
    target = helper.make_tensor("t", TensorProto.INT64, [2], [6, 3])
    nodes = [
        helper.make_node("Constant", [], ["shape"], value=target),
        helper.make_node("CenterCropPad", ["x", "shape"], ["y"], name="n0"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    np.testing.assert_array_equal(stack_run(model, {"x": x}), ort_run(model, {"x": x}))


@pytest.mark.parametrize("opset", [18, 19, 21, 24])
def test_every_opset_of_center_crop_pad_imports(opset: int) -> None:
    x = data((5, 6))
    model = ccp_model(x, [8, 3], opset)
    np.testing.assert_array_equal(stack_run(model, {"x": x}), ort_run(model, {"x": x}))


_X = np.zeros((4, 6), np.float32)
BAD: dict[str, tuple[onnx.ModelProto, type, str]] = {
    "opset 17": (ccp_model(_X, [2, 2], 17), ModelFormatError, "(opset 18+, model opset 17)"),
    "float shape": (
        ccp_model(_X, [2, 2], dtype=np.float32),
        ModelFormatError,
        "must be a 1-D int64 or int32 tensor",
    ),
    "2-D shape": (ccp_model(_X, [[2, 2]]), ModelFormatError, "must be a 1-D int64 or int32"),
    "short shape": (
        ccp_model(_X, [2]),
        ModelFormatError,
        "shape [2] must be one size >= 0 for each of the 2 axes",
    ),
    "long shape": (ccp_model(_X, [2, 2], axes=[1]), ModelFormatError, "each of the 1 axes"),
    "negative size": (ccp_model(_X, [2, -1]), ModelFormatError, "shape [2, -1] must be one size"),
    "axis 2 of a 2-D input": (
        ccp_model(_X, [2], axes=[2]),
        ModelFormatError,
        "axes [2] must lie in [-2, 2) for input_data [4, 6]",
    ),
    "axis -3": (ccp_model(_X, [2], axes=[-3]), ModelFormatError, "must lie in [-2, 2)"),
    "an axis twice": (
        ccp_model(_X, [2, 3], axes=[1, -1]),
        ModelFormatError,
        "axes [1, -1] name an axis twice",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_center_crop_pad_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error, message = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "CenterCropPad", err.value
    assert message in str(err.value), err.value


def test_a_run_time_shape_is_a_dynamic_shape_error_naming_the_tensor() -> None:
    model = node_model("CenterCropPad", {"x": _X, "shape": np.array([2, 2], np.int64)}, 18)
    with pytest.raises(DynamicShapeError) as err:
        import_model(model)
    assert type(err.value) is DynamicShapeError
    assert (err.value.node, err.value.op, err.value.tensor) == ("n0", "CenterCropPad", "shape")
    assert "its shape 'shape' is only known at run time" in str(err.value)


@pytest.mark.parametrize("inputs", [["x"], ["x", "shape", "shape"], ["x", ""]])
def test_missing_or_extra_inputs_are_a_model_format_error(inputs: list[str]) -> None:
    model = ccp_model(_X, [2, 2])
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(inputs)
    with pytest.raises(ModelFormatError, match="takes input_data and shape") as err:
        import_model(model)
    assert err.value.node == "n0" and err.value.op == "CenterCropPad"


def test_the_shape_constant_is_bound_by_the_onnx_backend() -> None:
    """The ONNX node tests feed shape as a graph input: the backend binds it as a constant."""
    from stack.adapter.onnx_backend import StackBackend

    x = data((5, 6))
    model = node_model("CenterCropPad", {"x": x, "shape": np.array([3, 8], np.int64)}, 18)
    rep = StackBackend.prepare(model)
    try:
        (got,) = rep.run([x, np.array([3, 8], np.int64)])
    finally:
        rep.close()
    (want,) = ReferenceEvaluator(model).run(None, {"x": x, "shape": np.array([3, 8], np.int64)})
    np.testing.assert_array_equal(got, want)
