"""RoiAlign through the whole stack against onnxruntime, and its bad input as typed errors
naming the node.

Batch and channels > 1; rois inside X, reaching outside it, inverted and fractional; output
sizes 1x1 to 4x4, sampling ratios 0 (ceil of the bin) and 2, spatial scales 1 and 0.5; both
modes and both coordinate transformations; float32 and float64 (float16 against the float32
result on the same values, as onnxruntime has RoiAlign for float and double only); models of
opsets 10 (output_half_pixel, no coordinate_transformation_mode), 11, 16, 21 and 22 (its
bfloat16 is not one the stack carries)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import ShapeInferenceError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(45)
ROIS = np.array(
    [[0, 0, 7, 5], [2, 1, 5, 6], [3.3, 2.2, 4.1, 3.9], [-2, -1, 9, 12], [6, 4, 2, 1], [3, 3, 3, 3]],
    np.float32,
)
BATCH = np.array([0, 1, 0, 1, 0, 1], np.int64)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-3}


def roi_model(
    x: np.ndarray, rois: np.ndarray, batch: np.ndarray, opset: int = 21, **attrs: Any
) -> onnx.ModelProto:
    return node_model("RoiAlign", feeds(x, rois, batch), opset, **attrs)


def feeds(x: np.ndarray, rois: np.ndarray, batch: np.ndarray) -> dict[str, np.ndarray]:
    return {"x": x, "rois": rois, "batch": batch}


def run_ort(
    model: onnx.ModelProto, x: np.ndarray, rois: np.ndarray, batch: np.ndarray
) -> np.ndarray:
    return ort_run(model, feeds(x, rois, batch))


def run_stack(
    model: onnx.ModelProto, x: np.ndarray, rois: np.ndarray, batch: np.ndarray
) -> np.ndarray:
    return stack_run(model, feeds(x, rois, batch))


SHAPES = [  # output_height, output_width, sampling_ratio, spatial_scale
    (1, 1, 0, 1.0),
    (2, 3, 2, 0.5),
    (4, 4, 0, 1.0),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "out{}x{}_ratio{}_scale{}".format(*s))
@pytest.mark.parametrize("ct", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_roi_align_matches_onnxruntime(shape: tuple, ct: str, mode: str, dtype: type) -> None:
    oh, ow, ratio, scale = shape
    attrs = {"output_height": oh, "output_width": ow, "sampling_ratio": ratio, "mode": mode,
             "spatial_scale": scale, "coordinate_transformation_mode": ct}  # fmt: skip
    data = RNG.standard_normal((2, 3, 6, 8)).astype(dtype)
    ref_dtype = np.float32 if dtype is np.float16 else dtype
    xr, rr = data.astype(ref_dtype), ROIS.astype(dtype).astype(ref_dtype)
    ref = run_ort(roi_model(xr, rr, BATCH, **attrs), xr, rr, BATCH)
    x, rois = data, ROIS.astype(dtype)
    got = run_stack(roi_model(x, rois, BATCH, **attrs), x, rois, BATCH)
    assert got.dtype == dtype and got.shape == (len(ROIS), 3, oh, ow) == ref.shape
    np.testing.assert_allclose(got.astype(ref_dtype), ref, rtol=TOL[dtype], atol=TOL[dtype])


def test_the_defaults_and_a_larger_image() -> None:
    x = RNG.standard_normal((1, 4, 17, 11)).astype(np.float32)
    rois = np.array([[1.5, 2.5, 9.0, 15.5], [0, 0, 10, 16]], np.float32)
    batch = np.zeros(2, np.int64)
    model = roi_model(x, rois, batch, output_height=5, output_width=3)
    np.testing.assert_allclose(
        run_stack(model, x, rois, batch), run_ort(model, x, rois, batch), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("opset", [10, 11, 16, 21, 22])
def test_every_opset_of_roi_align_imports(opset: int) -> None:
    """Before opset 16 the coordinates are output_half_pixel; from 16 half_pixel by default
    (onnxruntime has no opset-22 kernel: that model is compared with opset 21's result)."""
    x = np.arange(32, dtype=np.float32).reshape(2, 1, 4, 4)
    rois = np.array([[0, 0, 3, 3], [0.5, 1, 2.5, 3]], np.float32)
    batch = np.array([1, 0], np.int64)
    model = roi_model(x, rois, batch, opset, output_height=2, output_width=2, sampling_ratio=1)
    got = run_stack(model, x, rois, batch)
    older = roi_model(x, rois, batch, min(opset, 21), output_height=2, output_width=2,
                      sampling_ratio=1)  # fmt: skip
    np.testing.assert_allclose(got, run_ort(older, x, rois, batch), rtol=1e-6)
    offset = 0.0 if opset < 16 else -0.5  # the first sample of roi 0 in image 1: (0.75, 0.75)
    np.testing.assert_allclose(got[0, 0, 0, 0], 16 + 5 * (0.75 + offset), rtol=1e-6)


_X, _R, _B = np.ones((1, 2, 4, 4), np.float32), np.zeros((2, 4), np.float32), np.zeros(2, np.int64)
BAD: dict[str, tuple[Any, type]] = {
    "output_height 0": (roi_model(_X, _R, _B, output_height=0), ModelFormatError),
    "sampling_ratio -1": (roi_model(_X, _R, _B, sampling_ratio=-1), ModelFormatError),
    "mode sum": (roi_model(_X, _R, _B, mode="sum"), ModelFormatError),
    "asymmetric": (
        roi_model(_X, _R, _B, coordinate_transformation_mode="asymmetric"),
        ModelFormatError,
    ),
    "coordinate mode at opset 10": (
        roi_model(_X, _R, _B, 10, coordinate_transformation_mode="half_pixel"),
        ModelFormatError,
    ),
    "rois of five": (roi_model(_X, np.zeros((2, 5), np.float32), _B), ModelFormatError),
    "batch_indices too short": (roi_model(_X, _R, np.zeros(1, np.int64)), ModelFormatError),
    "3-D X": (roi_model(np.ones((1, 2, 4), np.float32), _R, _B), ModelFormatError),
    "integer X": (roi_model(_X.astype(np.int32), _R, _B), ShapeInferenceError),
    "float64 rois": (roi_model(_X, _R.astype(np.float64), _B), ShapeInferenceError),
    "int32 batch_indices": (roi_model(_X, _R, _B.astype(np.int32)), ShapeInferenceError),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_roi_align_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "RoiAlign", err.value


def test_missing_batch_indices_is_a_model_format_error() -> None:
    model = roi_model(_X, _R, _B)
    del model.graph.node[0].input[2]
    with pytest.raises(ModelFormatError, match="takes X, rois and batch_indices") as err:
        import_model(model)
    assert err.value.node == "n0"
