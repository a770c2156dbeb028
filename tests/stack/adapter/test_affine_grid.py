"""AffineGrid through the whole stack against onnxruntime (and ONNX's reference where the two
differ), and its bad input as typed errors naming the node.

Batch > 1; 2-D and 3-D grids, both align_corners, one-pixel axes, a channel count of 0 (size's
C is not read); float32 and float64 against onnxruntime, float16 against its float32 result
on the same values (onnxruntime has AffineGrid for float and double only); a one-pixel axis
with align_corners against ONNX's reference (-1; onnxruntime gives 1); the identity's grid
sampling an image back through GridSample; models of opsets 20 to 24; size an initializer (a
run-time one is a DynamicShapeError naming the node and the tensor)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(49)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-3}


def grid_model(theta: np.ndarray, size: Any, opset: int = 20, **attrs: Any) -> onnx.ModelProto:
    arrays = {"theta": theta, "size": np.asarray(size, np.int64)}
    return node_model("AffineGrid", arrays, opset, ("size",), **attrs)


def thetas(n: int, r: int, dtype: type = np.float32) -> np.ndarray:
    """Random affine matrices [n, r, r + 1] near the identity (the grids' usual range)."""
    eye = np.eye(r, r + 1)
    return (eye + 0.5 * RNG.standard_normal((n, r, r + 1))).astype(dtype)


SIZES = {  # N, C, *S
    "2-D": [2, 3, 5, 7],
    "2-D one row": [3, 1, 1, 4],
    "2-D no channels": [2, 0, 3, 2],
    "3-D": [2, 1, 3, 4, 5],
    "3-D one plane": [1, 2, 1, 3, 2],
}
#: A one-pixel axis with align_corners is -1 in ONNX's reference, 1 in onnxruntime: not here.
BOTH_ALIGNS = ["2-D", "2-D no channels", "3-D"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("case", "align"), [*((c, 0) for c in SIZES), *((c, 1) for c in BOTH_ALIGNS)]
)
def test_affine_grid_matches_onnxruntime(case: str, align: int, dtype: type) -> None:
    size = SIZES[case]
    r = len(size) - 2
    theta = thetas(size[0], r, dtype)
    model = grid_model(theta, size, align_corners=align)
    got, ref = stack_run(model, {"theta": theta}), ort_run(model, {"theta": theta})
    assert got.dtype == dtype and got.shape == (size[0], *size[2:], r) == ref.shape
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("case", ["2-D", "3-D"])
def test_float16_matches_the_float32_result(case: str, align: int) -> None:
    """onnxruntime has no float16 AffineGrid: its float32 one on the same values."""
    size = SIZES[case]
    theta = thetas(size[0], len(size) - 2, np.float16)
    got = stack_run(grid_model(theta, size, align_corners=align), {"theta": theta})
    f32 = theta.astype(np.float32)
    ref = ort_run(grid_model(f32, size, align_corners=align), {"theta": f32})
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=TOL[np.float16], atol=2e-3)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # its one-pixel step
@pytest.mark.parametrize("case", list(SIZES))
def test_align_corners_matches_the_onnx_reference(case: str) -> None:
    """With one-pixel axes too, where ONNX's reference puts the pixel at -1."""
    size = SIZES[case]
    theta = thetas(size[0], len(size) - 2)
    model = grid_model(theta, size, align_corners=1)
    (ref,) = ReferenceEvaluator(model).run(None, {"theta": theta})
    np.testing.assert_allclose(stack_run(model, {"theta": theta}), ref, rtol=1e-5, atol=1e-6)


def test_a_one_pixel_axis_with_align_corners_is_minus_one() -> None:
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)  # the identity
    got = stack_run(grid_model(theta, [1, 1, 1, 3], align_corners=1), {"theta": theta})
    np.testing.assert_allclose(got[0, 0], [[-1, -1], [0, -1], [1, -1]], atol=1e-7)


@pytest.mark.parametrize("align", [0, 1])
def test_the_identity_grid_samples_the_image_back(align: int) -> None:
    """AffineGrid of the identity, then GridSample of the same align_corners: Y = X."""
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    theta = np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    nodes = [
        helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
        helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
         for n, a in (("x", x), ("theta", theta))],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.array(x.shape, np.int64), "size")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    np.testing.assert_allclose(stack_run(model, {"x": x, "theta": theta}), x, atol=1e-5)


@pytest.mark.parametrize("opset", [20, 21, 22, 24])
def test_every_opset_of_affine_grid_imports(opset: int) -> None:
    theta = thetas(2, 3)
    model = grid_model(theta, [2, 1, 2, 3, 4], opset, align_corners=1)
    np.testing.assert_allclose(stack_run(model, {"theta": theta}),
                               ort_run(model, {"theta": theta}), rtol=1e-5, atol=1e-6)  # fmt: skip


_T2, _T3 = np.zeros((1, 2, 3), np.float32), np.zeros((1, 3, 4), np.float32)
BAD: dict[str, tuple[onnx.ModelProto, type]] = {
    "opset 19": (grid_model(_T2, [1, 1, 2, 2], 19), ModelFormatError),
    "int32 size": (
        node_model(
            "AffineGrid", {"theta": _T2, "size": np.array([1, 1, 2, 2], np.int32)}, 20, ("size",)
        ),
        ModelFormatError,
    ),
    "size of three": (grid_model(_T2, [1, 2, 2]), ModelFormatError),
    "size of six": (grid_model(_T3, [1, 1, 2, 2, 2, 2]), ModelFormatError),
    "2-D size": (grid_model(_T2, [[1, 1, 2, 2]]), ModelFormatError),
    "a spatial size 0": (grid_model(_T2, [1, 1, 0, 2]), ModelFormatError),
    "negative channels": (grid_model(_T2, [1, -1, 2, 2]), ModelFormatError),
    "3-D theta for a 2-D size": (grid_model(_T3, [1, 1, 2, 2]), ModelFormatError),
    "2-D theta for a 3-D size": (grid_model(_T2, [1, 1, 2, 2, 2]), ModelFormatError),
    "theta of another batch": (grid_model(_T2, [2, 1, 2, 2]), ModelFormatError),
    "theta [N, 2, 2]": (grid_model(_T2[:, :, :2], [1, 1, 2, 2]), ModelFormatError),
    "integer theta": (grid_model(_T2.astype(np.int64), [1, 1, 2, 2]), ModelFormatError),
    "align_corners 2": (grid_model(_T2, [1, 1, 2, 2], align_corners=2), ModelFormatError),
    "run-time size": (
        node_model("AffineGrid", {"theta": _T2, "size": np.array([1, 1, 2, 2])}, 20),
        DynamicShapeError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_affine_grid_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "AffineGrid", err.value
    if error is DynamicShapeError:
        assert err.value.tensor == "size"  # type: ignore[attr-defined]


@pytest.mark.parametrize("inputs", [["theta"], ["theta", "size", "size"], ["theta", ""]])
def test_missing_or_extra_inputs_are_a_model_format_error(inputs: list[str]) -> None:
    model = grid_model(_T2, [1, 1, 2, 2])
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(inputs)
    with pytest.raises(ModelFormatError, match="takes theta and size") as err:
        import_model(model)
    assert err.value.node == "n0"
