"""GridSample through the whole stack against onnxruntime (and ONNX's reference where
onnxruntime has no kernel), and its bad input as typed errors naming the node.

Batch and channels > 1; grid places inside X, on its corners and far outside it; the three
modes, the three paddings and both align_corners; 4-D and 5-D X (onnxruntime has cubic for
4-D only; 3-D X and 5-D cubic against ONNX's reference); output sizes smaller and larger than
X; float32 and float64 (float16 against the float32 result on the same values, as onnxruntime
has GridSample for float and double only); models of opsets 16 (bilinear, bicubic), 20 and 22
(its bfloat16 is not one the stack carries). Cubic with border padding clamps the taps alone,
as onnxruntime (ONNX's reference clamps the place first)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(46)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 5e-3}


def grid_model(x: np.ndarray, grid: np.ndarray, opset: int = 20, **attrs: Any) -> onnx.ModelProto:
    return node_model("GridSample", {"x": x, "grid": grid}, opset, **attrs)


def run_ort(model: onnx.ModelProto, x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    return ort_run(model, {"x": x, "grid": grid})


def run_reference(model, x: np.ndarray, grid: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    (y,) = ReferenceEvaluator(model).run(None, {"x": x, "grid": grid})
    return y


def run_stack(model: onnx.ModelProto, x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    return stack_run(model, {"x": x, "grid": grid})


def places(shape: tuple[int, ...], spread: float = 1.6) -> np.ndarray:
    """Grid places in [-spread, spread] (many outside X), the first ones X's corners/centre."""
    g = RNG.uniform(-spread, spread, shape)
    g.flat[:3] = (-1.0, 1.0, 0.0)
    return g


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_grid_sample_matches_onnxruntime(mode: str, padding: str, align: int, dtype: type) -> None:
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    data, g = RNG.standard_normal((2, 3, 5, 7)), places((2, 4, 6, 2))
    ref_dtype = np.float32 if dtype is np.float16 else dtype
    xr, gr = (v.astype(dtype).astype(ref_dtype) for v in (data, g))
    ref = run_ort(grid_model(xr, gr, **attrs), xr, gr)
    x, grid = data.astype(dtype), g.astype(dtype)
    got = run_stack(grid_model(x, grid, **attrs), x, grid)
    assert got.dtype == dtype and got.shape == (2, 3, 4, 6) == ref.shape
    np.testing.assert_allclose(got.astype(ref_dtype), ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_a_volume_matches_onnxruntime(mode: str, padding: str, align: int) -> None:
    x = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = places((1, 2, 3, 4, 3)).astype(np.float32)
    model = grid_model(x, grid, 22, mode=mode, padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(
        run_stack(model, x, grid), run_ort(grid_model(x, grid, 20, mode=mode,
        padding_mode=padding, align_corners=align), x, grid), rtol=1e-5, atol=1e-5,
    )  # fmt: skip


_OTHER = [(m, p) for m in ("linear", "nearest", "cubic") for p in ("zeros", "border", "reflection")
          if (m, p) != ("cubic", "border")]  # fmt: skip


@pytest.mark.parametrize(
    "shapes", [((2, 3, 6), (2, 5, 1)), ((1, 2, 3, 4, 5), (1, 2, 2, 3, 3))], ids=["1d", "3d"]
)
@pytest.mark.parametrize(("mode", "padding"), _OTHER)
def test_other_ranks_match_the_onnx_reference(shapes: tuple, mode: str, padding: str) -> None:
    """onnxruntime samples 4-D and 5-D X only, cubic 4-D only: ONNX's reference the rest (but
    cubic with border padding, where the reference also clamps the place, onnxruntime and
    PyTorch the taps alone: the stack follows onnxruntime, checked on 4-D X above)."""
    x = RNG.standard_normal(shapes[0]).astype(np.float32)
    grid = places(shapes[1]).astype(np.float32)
    model = grid_model(x, grid, mode=mode, padding_mode=padding, align_corners=1)
    np.testing.assert_allclose(
        run_stack(model, x, grid), run_reference(model, x, grid), rtol=1e-5, atol=1e-5
    )


def test_the_defaults_and_an_upsampled_output() -> None:
    x = RNG.standard_normal((1, 4, 6, 5)).astype(np.float32)
    grid = places((1, 13, 11, 2), 1.0).astype(np.float32)
    model = grid_model(x, grid)
    np.testing.assert_allclose(run_stack(model, x, grid), run_ort(model, x, grid), rtol=1e-5,
                               atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    ("opset", "mode"),
    [
        (16, "bilinear"),
        (16, "nearest"),
        (16, "bicubic"),
        (16, None),
        (20, "cubic"),
        (20, None),
        (22, "linear"),
    ],
)
def test_every_opset_of_grid_sample_imports(opset: int, mode: str | None) -> None:
    """Opsets 16-19 name the modes bilinear, bicubic (default bilinear), 20 on linear, cubic
    (onnxruntime has no opset-22 kernel: that model is compared with opset 20's result)."""
    x = np.arange(40, dtype=np.float32).reshape(2, 1, 4, 5)
    grid = places((2, 3, 3, 2), 1.2).astype(np.float32)
    attrs = {} if mode is None else {"mode": mode}
    got = run_stack(grid_model(x, grid, opset, **attrs), x, grid)
    np.testing.assert_allclose(got, run_ort(grid_model(x, grid, min(opset, 20), **attrs), x,
                               grid), rtol=1e-5, atol=1e-5)  # fmt: skip
    centre = run_stack(grid_model(x, np.zeros((2, 1, 1, 2), np.float32), opset, **attrs), x,
                       np.zeros((2, 1, 1, 2), np.float32))  # fmt: skip
    if mode in (None, "bilinear", "linear"):  # the centre of image 0: (1.5, 2)
        np.testing.assert_allclose(centre[0, 0, 0, 0], 1.5 * 5 + 2, rtol=1e-6)


_X, _G = np.ones((1, 2, 4, 4), np.float32), np.zeros((1, 3, 3, 2), np.float32)
BAD: dict[str, tuple[Any, type]] = {
    "opset 15": (grid_model(_X, _G, 15), ModelFormatError),
    "mode bilinear at opset 20": (grid_model(_X, _G, mode="bilinear"), ModelFormatError),
    "mode linear at opset 16": (grid_model(_X, _G, 16, mode="linear"), ModelFormatError),
    "mode area": (grid_model(_X, _G, mode="area"), ModelFormatError),
    "padding_mode wrap": (grid_model(_X, _G, padding_mode="wrap"), ModelFormatError),
    "align_corners 2": (grid_model(_X, _G, align_corners=2), ModelFormatError),
    "grid of three": (grid_model(_X, np.zeros((1, 3, 3, 3), np.float32)), ModelFormatError),
    "grid of another batch": (grid_model(_X, np.zeros((2, 3, 3, 2))), ModelFormatError),
    "grid of another rank": (grid_model(_X, np.zeros((1, 3, 2), np.float32)), ModelFormatError),
    "5-D X at opset 16": (
        grid_model(np.ones((1, 1, 2, 2, 2), np.float32), np.zeros((1, 1, 1, 1, 3)), 16),
        ModelFormatError,
    ),
    "2-D X": (grid_model(np.ones((1, 2), np.float32), np.zeros((1, 0))), ModelFormatError),
    "integer grid": (grid_model(_X, _G.astype(np.int64)), ModelFormatError),
    "integer X": (grid_model(_X.astype(np.int32), _G), UnsupportedOpError),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_grid_sample_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    assert err.value.op == "GridSample", err.value


@pytest.mark.parametrize("inputs", [["x"], ["x", "grid", "grid"], ["x", ""]])
def test_missing_or_extra_inputs_are_a_model_format_error(inputs: list[str]) -> None:
    model = grid_model(_X, _G)
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(inputs)
    with pytest.raises(ModelFormatError, match="takes X and grid") as err:
        import_model(model)
    assert err.value.node == "n0"
