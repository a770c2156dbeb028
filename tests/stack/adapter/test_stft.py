# ruff: noqa: E501 - the error table reads best one case per line
"""STFT through the whole stack against onnxruntime and ONNX's reference, and its bad input as
typed errors naming the node.

Real and complex signals, with and without a window and a frame_length, onesided 0 and 1, a
batch of several signals, float32 and float64 against onnxruntime and ONNX's reference, float16
against the reference (onnxruntime runs no STFT without a window or a frame_length, so those
cases are checked against the reference only); an STFT following a MatMul and a Reshape; a
window computed at run time; a constant node folded at import; the IR node's resolved
attributes; run-time frame_step and frame_length refused naming the node and the tensor."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import ort_run, reference_outputs, stack_run

OP = "STFT"
RNG = np.random.default_rng(64)
#: Allowed error per dtype, relative to the output's largest magnitude.
TOL = {np.float32: 2e-6, np.float64: 1e-12, np.float16: 2e-3}
#: (batch, signal length, frame_step, window length or None, frame_length or None)
GEOMETRIES = [
    (1, 16, 4, None, 16),
    (3, 40, 5, 8, None),
    (2, 33, 7, None, 10),
    (2, 24, 3, 6, 6),
    (4, 9, 1, 9, None),
    (2, 12, 20, None, 5),
]


def stft_model(shape: tuple[int, ...], dtype: Any, step: int, window: int | None,
               length: int | None, consts: dict[str, np.ndarray] | None = None,
               **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    """One STFT node n0 of signal x, the frame_step and frame_length initializers (the latter
    omitted when None) and the graph input window w [window] (omitted when None)."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inits = {
        "step": np.array(step, np.int64),
        **({"len": np.array(length, np.int64)} if length else {}),
    }
    inits |= consts or {}
    names = ["x", "step", "w" if window else "", "len" if length else ""]
    while not names[-1]:
        names.pop()
    vis = [] if "x" in inits else [helper.make_tensor_value_info("x", elem, shape)]
    if window and "w" not in inits:
        vis.append(helper.make_tensor_value_info("w", elem, [window]))
    node = helper.make_node(OP, names, ["y"], name="n0", **attrs)
    graph = helper.make_graph([node], "g", vis, [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def assert_close(got: np.ndarray, want: np.ndarray, dtype: Any) -> None:
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    scale = max(1.0, float(np.abs(want.astype(np.float64)).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[dtype] * scale)


def case(geometry: tuple[int, int, int, int | None, int | None], pair: int, dtype: Any,
         onesided: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:  # fmt: skip
    batch, n, step, window, length = geometry
    feeds = {"x": RNG.standard_normal((batch, n, pair)).astype(dtype)}
    if window:
        feeds["w"] = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(window) / window)).astype(dtype)
    return stft_model(feeds["x"].shape, dtype, step, window, length, onesided=onesided), feeds


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("pair", [1, 2], ids=["real", "complex"])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_matches_onnxruntime(geometry, pair, onesided, dtype) -> None:  # type: ignore[no-untyped-def]
    model, feeds = case(geometry, pair, dtype, onesided)
    assert_close(stack_run(model, feeds), ort_run(model, feeds), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("pair", [1, 2], ids=["real", "complex"])
@pytest.mark.parametrize("geometry", [*GEOMETRIES, (2, 11, 3, None, None)], ids=str)
def test_matches_the_onnx_reference(geometry, pair, onesided, dtype) -> None:  # type: ignore[no-untyped-def]
    model, feeds = case(geometry, pair, dtype, onesided)
    assert_close(stack_run(model, feeds), reference_outputs(model, feeds)[0], dtype)


def test_onesided_defaults_to_1_and_frame_length_to_the_signal_s() -> None:
    x = RNG.standard_normal((2, 10, 1)).astype(np.float32)
    model = stft_model(x.shape, np.float32, 3, None, None)
    (node,) = import_model(model).nodes
    assert (node.attr("frame_step"), node.attr("frame_length"), node.attr("onesided")) == (3, 10, 1)
    assert_close(stack_run(model, {"x": x}), reference_outputs(model, {"x": x})[0], np.float32)


def test_an_stft_follows_a_matmul_and_a_reshape_and_takes_a_computed_window() -> None:
    """signal = x W reshaped to [B, L, 1]; the window is computed at run time (Sigmoid of a
    graph input); onnxruntime agrees."""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 24)).astype(np.float32)
    v = RNG.standard_normal(8).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Reshape", ["h", "shape"], ["s"]),
        helper.make_node("Sigmoid", ["v"], ["win"]),
        helper.make_node(OP, ["s", "step", "win"], ["y"], name="stft"),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([3, 24, 1], np.int64), "shape"),
             numpy_helper.from_array(np.array(4, np.int64), "step")]  # fmt: skip
    vis = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
           helper.make_tensor_value_info("v", TensorProto.FLOAT, [8])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "chain", vis, [helper.make_empty_tensor_value_info("y")], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = stack_run(model, {"x": x, "v": v})
    assert got.shape == (3, 5, 5, 2)
    assert_close(got, ort_run(model, {"x": x, "v": v}), np.float32)


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    x = RNG.standard_normal((2, 12, 1)).astype(np.float32)
    window = np.hanning(6).astype(np.float32)
    model = stft_model(x.shape, np.float32, 2, 6, None, consts={"x": x, "w": window}, onesided=0)
    assert import_model(model).nodes == ()
    assert_close(stack_run(model, {}), ort_run(model, {}), np.float32)


@pytest.mark.parametrize(
    ("shape", "step", "window", "length", "attrs", "want"),
    [
        ((2, 10, 1), 3, None, None, {}, (3, 10, 1)),
        ((2, 10, 2), 2, 4, None, {"onesided": 0}, (2, 4, 0)),
        ((1, 10, 1), 5, None, 6, {}, (5, 6, 1)),
        ((1, 10, 1), 1, 7, 7, {"onesided": 1}, (1, 7, 1)),
    ],
    ids=["defaults", "window's length", "frame_length", "both"],
)  # fmt: skip
def test_the_ir_node_carries_resolved_attributes(shape, step, window, length, attrs, want) -> None:  # type: ignore[no-untyped-def]
    (node,) = import_model(stft_model(shape, np.float32, step, window, length, **attrs)).nodes
    assert node.op is OpType.STFT and node.inputs == (("x", "w") if window else ("x",))
    assert tuple(node.attr(a) for a in ("frame_step", "frame_length", "onesided")) == want


def _runtime(which: str) -> onnx.ModelProto:
    """An STFT whose frame_step or frame_length is a graph input (known at run time only)."""
    node = helper.make_node(OP, ["x", "step", "", "len"], ["y"], name="n0")
    vis = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 1]),
           helper.make_tensor_value_info(which, TensorProto.INT64, [])]  # fmt: skip
    other = "len" if which == "step" else "step"
    inits = [numpy_helper.from_array(np.array(4, np.int64), other)]
    graph = helper.make_graph([node], "g", vis, [helper.make_empty_tensor_value_info("y")], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("which", "role"), [("step", "frame_step"), ("len", "frame_length")])
def test_a_run_time_step_or_length_is_a_dynamic_shape_error_naming_node_and_tensor(
    which: str, role: str
) -> None:
    with pytest.raises(
        DynamicShapeError, match=f"its {role} '{which}' is only known at run time"
    ) as err:
        import_model(_runtime(which))
    assert err.value.node == "n0" and err.value.op == OP


def _raw(x: tuple[int, list[int]] = (TensorProto.FLOAT, [2, 16, 1]), opset: int = 17,
         inputs: tuple[str, ...] = ("x", "s"), outputs: tuple[str, ...] = ("y",),
         consts: dict[str, np.ndarray] | None = None, window: tuple[int, list[int]] | None = None,
         **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(OP, list(inputs), list(outputs), name="n0", **attrs)
    inits = [
        numpy_helper.from_array(a, n) for n, a in ({"s": np.array(4, I64)} | (consts or {})).items()
    ]
    vis = [helper.make_tensor_value_info("x", *x)]
    if window is not None:
        vis.append(helper.make_tensor_value_info("w", *window))
    graph = helper.make_graph(
        [node], "g", vis, [helper.make_empty_tensor_value_info(v) for v in outputs if v], inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


I64, I32 = np.int64, np.int32
F = TensorProto.FLOAT
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 16": (_raw(opset=16), r"\(opset 17\+, model opset 16\) takes signal, frame_step and the optional window and frame_length, and one output, got \['x', 's'\] -> \['y'\]"),
    "no frame_step": (_raw(inputs=("x",)), r"got \['x'\] -> \['y'\]"),
    "omitted frame_step": (_raw(inputs=("x", "", "", "l"), consts={"l": np.array(4, I64)}), r"got \['x', '', '', 'l'\]"),
    "five inputs": (_raw(inputs=("x", "s", "", "l", "l"), consts={"l": np.array(4, I64)}), r"got \['x', 's', '', 'l', 'l'\]"),
    "two outputs": (_raw(outputs=("y", "z")), r"-> \['y', 'z'\]"),
    "int signal": (_raw(x=(TensorProto.INT32, [2, 16, 1])), r"takes a float signal \[B, N, 1 or 2\] \(real or complex\), got int32\[2, 16, 1\]"),
    "rank 2": (_raw(x=(F, [16, 1])), r"got float32\[16, 1\]"),
    "rank 4": (_raw(x=(F, [1, 2, 16, 1])), r"got float32\[1, 2, 16, 1\]"),
    "pair of 3": (_raw(x=(F, [2, 16, 3])), r"got float32\[2, 16, 3\]"),
    "frame_step not a scalar": (_raw(consts={"s": np.array([4, 2], I64)}), r"frame_step must be one integer, got int64\[2\]"),
    "float frame_length": (_raw(inputs=("x", "s", "", "l"), consts={"l": np.array(4.0, np.float32)}), r"frame_length must be one integer, got float32\[\]"),
    "frame_step 0": (_raw(consts={"s": np.array(0, I32)}), "takes a frame_step of at least 1, got 0"),
    "frame_length 0": (_raw(inputs=("x", "s", "", "l"), consts={"l": np.array(0, I64)}), r"takes a frame_length from 1 to the signal's 16 for float32\[2, 16, 1\], got 0"),
    "frame_length past the signal": (_raw(inputs=("x", "s", "", "l"), consts={"l": np.array(17, I64)}), "got 17"),
    "window past the signal": (_raw(inputs=("x", "s", "w"), window=(F, [20])), "got 20"),
    "window of another length": (_raw(inputs=("x", "s", "w", "l"), consts={"l": np.array(8, I64)}, window=(F, [6])), r"takes a window float32\[8\] \(frame_length's\), got float32\[6\]"),
    "window of another type": (_raw(inputs=("x", "s", "w"), window=(TensorProto.DOUBLE, [8])), r"got float64\[8\]"),
    "2-D window": (_raw(inputs=("x", "s", "w"), window=(F, [8, 1])), r"got float32\[8, 1\]"),
    "onesided 2": (_raw(onesided=2), "takes onesided of 0 or 1, got 2"),
}  # fmt: skip


@pytest.mark.parametrize("case_name", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case_name: str) -> None:
    model, message = ERRORS[case_name]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value
