"""Col2Im through the whole stack against onnxruntime (and ONNX's reference where onnxruntime
has no kernel), and its bad input as typed errors naming the node.

Batch and channels > 1; blocks that overlap, that leave pixels unreached, strides, dilations
and pads on their own and together; 1-D, 2-D and 3-D images (ONNX's five node tests' shapes
among them); float32 and float16 against onnxruntime, float64 against ONNX's reference
(onnxruntime has Col2Im for float and float16 only), as is a dilated 1-D image (onnxruntime
1.32 misplaces its blocks' elements); the defaults; image_shape and block_shape
initializers (a run-time one is a DynamicShapeError naming the node and the tensor)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError, UnsupportedOpError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(48)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-3}


def col2im_model(
    x: np.ndarray, image: Any, block: Any, opset: int = 18, **attrs: Any
) -> onnx.ModelProto:
    arrays = {"x": x, "image": np.asarray(image, np.int64), "block": np.asarray(block, np.int64)}
    return node_model("Col2Im", arrays, opset, ("image", "block"), **attrs)


def columns(n: int, c: int, image, block, dtype=np.float32, **attrs) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Random columns of the length ONNX's Col2Im needs for these shapes and attributes."""
    r = len(image)
    d, s = attrs.get("dilations", [1] * r), attrs.get("strides", [1] * r)
    p = attrs.get("pads", [0] * 2 * r)
    places = [
        (image[a] + p[a] + p[r + a] - d[a] * (block[a] - 1) - 1) // s[a] + 1 for a in range(r)
    ]
    return RNG.standard_normal((n, c * math.prod(block), math.prod(places))).astype(dtype)


CASES = {  # (N, C, image_shape, block_shape, attributes)
    "onnx col2im": (1, 1, [5, 5], [1, 5], {}),
    "onnx dilations": (1, 1, [6, 6], [2, 2], {"dilations": [1, 5]}),
    "onnx pads": (1, 1, [5, 5], [1, 5], {"pads": [0, 1, 0, 1]}),
    "onnx strides": (1, 1, [5, 5], [3, 3], {"strides": [2, 2]}),
    "onnx 5d": (1, 2, [3, 4, 5], [1, 1, 5], {}),
    "overlapping": (2, 3, [6, 7], [2, 3], {}),
    "unreached pixels": (1, 2, [7, 8], [2, 2], {"strides": [3, 3]}),
    "all together": (
        2,
        2,
        [7, 9],
        [3, 2],
        {"dilations": [2, 1], "pads": [2, 1, 1, 2], "strides": [1, 2]},
    ),
    "1-D": (2, 3, [11], [3], {"pads": [1, 2], "strides": [2]}),
    "3-D": (1, 2, [4, 5, 6], [2, 2, 3], {"pads": [0, 1, 1, 1, 0, 1], "strides": [1, 2, 2]}),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", list(CASES))
def test_col2im_matches_onnxruntime(case: str, dtype: type) -> None:
    n, c, image, block, attrs = CASES[case]
    x = columns(n, c, image, block, dtype, **attrs)
    model = col2im_model(x, image, block, **attrs)
    got = stack_run(model, {"x": x})
    ref = ort_run(model, {"x": x})
    assert got.dtype == dtype and got.shape == (n, c, *image) == ref.shape
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


#: onnxruntime 1.32 places a dilated 1-D block's elements wrongly (2-D and 3-D agree with ONNX's
#: reference): that case is checked against the reference alone.
DILATED_1D = (2, 3, [11], [3], {"dilations": [2], "pads": [1, 2], "strides": [2]})


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["overlapping", "all together", "1-D", "3-D", "1-D dilated"])
def test_col2im_matches_the_onnx_reference(case: str, dtype: type) -> None:
    """onnxruntime has no double Col2Im, and a dilated 1-D one of its own: ONNX's reference."""
    n, c, image, block, attrs = DILATED_1D if case == "1-D dilated" else CASES[case]
    x = columns(n, c, image, block, dtype, **attrs)
    model = col2im_model(x, image, block, **attrs)
    (ref,) = ReferenceEvaluator(model).run(None, {"x": x})
    got = stack_run(model, {"x": x})
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


def test_each_column_is_one_block_of_the_image() -> None:
    """Non-overlapping 2x2 blocks tile a 4x4 image: the columns are its blocks, row-major."""
    image = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    blocks = image.reshape(2, 2, 2, 2).transpose(1, 3, 0, 2).reshape(1, 4, 4)
    model = col2im_model(blocks, [4, 4], [2, 2], strides=[2, 2])
    np.testing.assert_array_equal(stack_run(model, {"x": blocks}), image)


_X = np.ones((1, 4, 4), np.float32)  # 2x2 blocks on a 3x3 image: 4 places
BAD: dict[str, tuple[onnx.ModelProto, type]] = {
    "opset 17": (col2im_model(_X, [3, 3], [2, 2], 17), ModelFormatError),
    "int32 image_shape": (
        node_model(
            "Col2Im",
            {"x": _X, "image": np.array([3, 3], np.int32), "block": np.array([2, 2])},
            18,
            ("image", "block"),
        ),
        ModelFormatError,
    ),
    "2-D image_shape": (col2im_model(_X, [[3, 3]], [2, 2]), ModelFormatError),
    "empty image_shape": (col2im_model(_X, np.zeros(0), [2, 2]), ModelFormatError),
    "image_shape 0": (col2im_model(_X, [3, 0], [2, 2]), ModelFormatError),
    "block_shape of another rank": (col2im_model(_X, [3, 3], [2, 2, 1]), ModelFormatError),
    "block_shape 0": (col2im_model(_X, [3, 3], [2, 0]), ModelFormatError),
    "strides of one": (col2im_model(_X, [3, 3], [2, 2], strides=[1]), ModelFormatError),
    "dilations 0": (col2im_model(_X, [3, 3], [2, 2], dilations=[1, 0]), ModelFormatError),
    "negative pads": (col2im_model(_X, [3, 3], [2, 2], pads=[0, -1, 0, 0]), ModelFormatError),
    "L not the places": (
        col2im_model(np.ones((1, 4, 5), np.float32), [3, 3], [2, 2]),
        ModelFormatError,
    ),
    "channels not C x block": (
        col2im_model(np.ones((1, 6, 4), np.float32), [3, 3], [2, 2]),
        ModelFormatError,
    ),
    "a block larger than the image": (col2im_model(_X, [3, 3], [2, 4]), ModelFormatError),
    "4-D input": (
        col2im_model(np.ones((1, 4, 2, 2), np.float32), [3, 3], [2, 2]),
        ModelFormatError,
    ),
    "integer input": (col2im_model(_X.astype(np.int32), [3, 3], [2, 2]), UnsupportedOpError),
    "run-time image_shape": (
        node_model(
            "Col2Im",
            {"x": _X, "image": np.array([3, 3]), "block": np.array([2, 2])},
            18,
            ("block",),
        ),
        DynamicShapeError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_col2im_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "Col2Im", err.value
    if error is DynamicShapeError:
        assert err.value.tensor == "image"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "inputs", [["x", "image"], ["x", "image", "block", "block"], ["x", "", "block"]]
)
def test_missing_or_extra_inputs_are_a_model_format_error(inputs: list[str]) -> None:
    model = col2im_model(_X, [3, 3], [2, 2])
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(inputs)
    with pytest.raises(ModelFormatError, match="takes input, image_shape and block_shape") as err:
        import_model(model)
    assert err.value.node == "n0"
