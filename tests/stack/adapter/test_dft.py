# ruff: noqa: E501 - the error table reads best one case per line
"""DFT through the whole stack against onnxruntime and ONNX's reference, and its bad input as
typed errors naming the node.

Real and complex input, forward and inverse, full and onesided (RFFT, IRFFT), dft_length by
default, shorter and longer than the signal, every signal axis (negative ones too), float32 and
float64 against onnxruntime (opset 20) and ONNX's reference, float16 against the reference;
opset 17's axis attribute; a DFT following a MatMul and a Reshape and feeding another DFT (a
round trip back to the signal); a constant node folded at import; the IR node's resolved
attributes; run-time dft_length and axis refused naming the node and the tensor."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import (
    ort_outputs,
    ort_run,
    reference_outputs,
    stack_outputs,
    stack_run,
)

OP = "DFT"
RNG = np.random.default_rng(63)
#: Allowed error per dtype, relative to the output's largest magnitude.
TOL = {np.float32: 2e-6, np.float64: 1e-12, np.float16: 2e-3}
#: onnxruntime's float64 inverse transforms are exact to about 1e-8 only (float32's twiddles, it
#: seems): against it float64 takes this tolerance; ONNX's reference checks float64 to 1e-12.
ORT_F64 = 1e-7
#: (name, inverse, onesided, the input's pair)
MODES = [("forward", 0, 0, 1), ("forward_complex", 0, 0, 2), ("inverse", 1, 0, 2),
         ("inverse_real", 1, 0, 1), ("rfft", 0, 1, 1), ("irfft", 1, 1, 2)]  # fmt: skip
#: (input shape without the pair, axis)
GEOMETRIES = [
    ((2, 6), 1),
    ((2, 6), -2),
    ((5, 3), 0),
    ((2, 3, 7), 2),
    ((2, 4, 3), 1),
    ((4, 5, 3), -3),
]


def dft_model(shape: tuple[int, ...], dtype: Any, length: int | None, axis: int | None,
              opset: int = 20, consts: dict[str, np.ndarray] | None = None, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    """One DFT node n0 of x, dft_length and axis initializers (omitted when None)."""
    inits = {"len": np.array(length, np.int64)} if length is not None else {}
    names = ["x", "len" if length is not None else ""]
    if opset >= 20 and axis is not None:
        inits["ax"], names = np.array(axis, np.int64), [*names, "ax"]
    elif axis is not None:
        attrs["axis"] = axis
    inits |= consts or {}
    while not names[-1]:
        names.pop()
    node = helper.make_node(OP, names, ["y"], name="n0", **attrs)
    inputs = (
        []
        if "x" in inits
        else [
            helper.make_tensor_value_info(
                "x", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape
            )
        ]
    )
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def assert_close(got: np.ndarray, want: np.ndarray, dtype: Any, tol: float | None = None) -> None:
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    scale = max(1.0, float(np.abs(want.astype(np.float64)).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=(tol or TOL[dtype]) * scale)


def case(signal: tuple[int, ...], axis: int, pair: int, dtype: Any, size: str, inverse: int,
         onesided: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:  # fmt: skip
    x = RNG.standard_normal((*signal, pair)).astype(dtype)
    n = x.shape[axis]
    n = 2 * (n - 1) if inverse and onesided else n
    length = {"default": None, "shorter": n - 2, "longer": n + 3}[size]
    model = dft_model(x.shape, dtype, length, axis, inverse=inverse, onesided=onesided)
    return model, {"x": x}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("size", ["default", "shorter", "longer"])
@pytest.mark.parametrize(("mode", "inverse", "onesided", "pair"), MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize(("signal", "axis"), GEOMETRIES, ids=str)
def test_matches_onnxruntime(signal, axis, mode, inverse, onesided, pair, size, dtype) -> None:  # type: ignore[no-untyped-def]
    model, feeds = case(signal, axis, pair, dtype, size, inverse, onesided)
    tol = ORT_F64 if dtype == np.float64 else None
    assert_close(stack_run(model, feeds), ort_run(model, feeds), dtype, tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("size", ["default", "shorter", "longer"])
@pytest.mark.parametrize(("mode", "inverse", "onesided", "pair"), MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize(("signal", "axis"), GEOMETRIES, ids=str)
def test_matches_the_onnx_reference(
    signal, axis, mode, inverse, onesided, pair, size, dtype
) -> None:  # type: ignore[no-untyped-def]
    model, feeds = case(signal, axis, pair, dtype, size, inverse, onesided)
    assert_close(stack_run(model, feeds), reference_outputs(model, feeds)[0], dtype)


@pytest.mark.parametrize("opset", [17, 19])
@pytest.mark.parametrize(
    ("axis", "inverse", "onesided"), [(None, 0, 0), (2, 1, 0), (1, 0, 1), (-2, 1, 1)], ids=str
)
def test_opset_17_takes_axis_as_an_attribute(opset, axis, inverse, onesided) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 5, 6, 1 if onesided and not inverse else 2)).astype(np.float32)
    model = dft_model(
        x.shape, np.float32, None, axis, opset=opset, inverse=inverse, onesided=onesided
    )
    assert_close(stack_run(model, {"x": x}), reference_outputs(model, {"x": x})[0], np.float32)


def test_the_axis_input_defaults_to_the_last_signal_axis() -> None:
    x = RNG.standard_normal((2, 5, 6, 1)).astype(np.float32)
    model = dft_model(x.shape, np.float32, 4, None)
    (node,) = import_model(model).nodes
    assert node.attr("axis") == 2 and node.attr("dft_length") == 4
    assert_close(stack_run(model, {"x": x}), ort_run(model, {"x": x}), np.float32)


def test_a_dft_follows_a_matmul_and_feeds_its_inverse() -> None:
    """signal = x W, reshaped to [B, L, 1]; its spectrum, then the inverse of the spectrum: the
    round trip gives the signal back (as a complex one), and onnxruntime agrees step by step."""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 8)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Reshape", ["h", "shape"], ["s"]),
        helper.make_node(OP, ["s", "", "ax"], ["spec"], name="forward"),
        helper.make_node(OP, ["spec", "", "ax"], ["y"], name="inverse", inverse=1),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([3, 8, 1], np.int64), "shape"),
             numpy_helper.from_array(np.array(1, np.int64), "ax")]  # fmt: skip
    graph = helper.make_graph(nodes, "round_trip", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_empty_tensor_value_info("spec"), helper.make_empty_tensor_value_info("y")], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    got_spec, got_y = stack_outputs(model, {"x": x})
    spec, y = ort_outputs(model, {"x": x})
    assert_close(got_spec, spec, np.float32)
    assert_close(got_y, y, np.float32)
    np.testing.assert_allclose(got_y[..., 0], x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_y[..., 1], 0, atol=1e-5)


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    x = RNG.standard_normal((2, 6, 1)).astype(np.float32)
    model = dft_model(x.shape, np.float32, 8, 1, consts={"x": x}, onesided=1)
    assert import_model(model).nodes == ()
    assert_close(stack_run(model, {}), ort_run(model, {}), np.float32)


@pytest.mark.parametrize(
    ("shape", "length", "axis", "attrs", "want"),
    [
        ((2, 6, 1), None, None, {}, (1, 0, 0, 6)),
        ((2, 6, 2), 4, -3, {"inverse": 1}, (0, 1, 0, 4)),
        ((2, 4, 2), None, 1, {"inverse": 1, "onesided": 1}, (1, 1, 1, 6)),
        ((2, 5, 1), 9, -2, {"onesided": 1}, (1, 0, 1, 9)),
    ],
    ids=["defaults", "negative axis", "irfft default length", "rfft"],
)  # fmt: skip
def test_the_ir_node_carries_resolved_attributes(shape, length, axis, attrs, want) -> None:  # type: ignore[no-untyped-def]
    (node,) = import_model(dft_model(shape, np.float32, length, axis, **attrs)).nodes
    assert node.op is OpType.DFT and node.inputs == ("x",) and node.outputs == ("y",)
    assert tuple(node.attr(a) for a in ("axis", "inverse", "onesided", "dft_length")) == want


def _runtime(which: str) -> onnx.ModelProto:
    """A DFT whose dft_length or axis is a graph input (known at run time only)."""
    names = ["x", "len", "ax"] if which == "len" else ["x", "", "ax"]
    node = helper.make_node(OP, names, ["y"], name="n0")
    vis = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 1]),
           helper.make_tensor_value_info(which, TensorProto.INT64, [])]  # fmt: skip
    inits = [] if which == "ax" else [numpy_helper.from_array(np.array(1, np.int64), "ax")]
    graph = helper.make_graph([node], "g", vis, [helper.make_empty_tensor_value_info("y")], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


@pytest.mark.parametrize(("which", "role"), [("len", "dft_length"), ("ax", "axis")])
def test_a_run_time_length_or_axis_is_a_dynamic_shape_error_naming_node_and_tensor(
    which: str, role: str
) -> None:
    with pytest.raises(
        DynamicShapeError, match=f"its {role} '{which}' is only known at run time"
    ) as err:
        import_model(_runtime(which))
    assert err.value.node == "n0" and err.value.op == OP


def _raw(x: tuple[int, list[int]] = (TensorProto.FLOAT, [2, 6, 1]), opset: int = 20,
         inputs: tuple[str, ...] = ("x",), outputs: tuple[str, ...] = ("y",),
         consts: dict[str, np.ndarray] | None = None, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(OP, list(inputs), list(outputs), name="n0", **attrs)
    inits = [numpy_helper.from_array(a, n) for n, a in (consts or {}).items()]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", *x)],
                              [helper.make_empty_tensor_value_info(v) for v in outputs if v], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


I64, I32 = np.int64, np.int32
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 16": (_raw(opset=16), r"\(opset 17\+, model opset 16\) takes input and the optional dft_length, axis an attribute"),
    "three inputs at opset 19": (_raw(opset=19, inputs=("x", "l", "a"), consts={"l": np.array(6, I64), "a": np.array(1, I64)}), r"got \['x', 'l', 'a'\]"),
    "axis attribute at opset 20": (_raw(axis=1), r"takes input and the optional dft_length and axis, and one output, got \['x'\] -> \['y'\], attributes \['axis'\]"),
    "no input": (_raw(inputs=("", "l"), consts={"l": np.array(6, I64)}), r"got \['', 'l'\]"),
    "two outputs": (_raw(outputs=("y", "z")), r"-> \['y', 'z'\]"),
    "int input": (_raw(x=(TensorProto.INT32, [2, 6, 1])), r"takes a float input \[\.\.\., 1 or 2\] \(real or complex\), got int32\[2, 6, 1\]"),
    "rank 1": (_raw(x=(TensorProto.FLOAT, [6])), r"got float32\[6\]"),
    "pair of 3": (_raw(x=(TensorProto.FLOAT, [2, 6, 3])), r"got float32\[2, 6, 3\]"),
    "axis of the pair": (_raw(inputs=("x", "", "a"), consts={"a": np.array(2, I64)}), r"takes an axis in \[-3, -2\] or \[0, 1\] for input float32\[2, 6, 1\], got 2"),
    "axis -1": (_raw(inputs=("x", "", "a"), consts={"a": np.array(-1, I64)}), "got -1"),
    "axis -4": (_raw(inputs=("x", "", "a"), consts={"a": np.array(-4, I64)}), "got -4"),
    "opset 17 axis of the pair": (_raw(opset=17, axis=-1), r"takes an axis in \[-3, -2\] or \[0, 1\]"),
    "axis not a scalar": (_raw(inputs=("x", "", "a"), consts={"a": np.array([1, 0], I64)}), r"axis must be one integer, got int64\[2\]"),
    "float dft_length": (_raw(inputs=("x", "l"), consts={"l": np.array(6.0, np.float32)}), r"dft_length must be one integer, got float32\[\]"),
    "dft_length 0": (_raw(inputs=("x", "l"), consts={"l": np.array(0, I32)}), r"takes a dft_length of at least 1 for input float32\[2, 6, 1\] on axis 1, got 0"),
    "irfft of one point": (_raw(x=(TensorProto.FLOAT, [2, 1, 2]), inverse=1, onesided=1), "got 0"),
    "inverse 2": (_raw(inverse=2), "takes inverse and onesided of 0 or 1, got 2 and 0"),
    "onesided -1": (_raw(onesided=-1), "got 0 and -1"),
    "complex rfft": (_raw(x=(TensorProto.FLOAT, [2, 6, 2]), onesided=1), r"takes a real input \[\.\.\., 1\] for RFFT \(onesided 1, inverse 0\), got float32\[2, 6, 2\]"),
    "real irfft": (_raw(inverse=1, onesided=1), r"takes a complex input \[\.\.\., 2\] for IRFFT \(onesided 1, inverse 1\), got float32\[2, 6, 1\]"),
}  # fmt: skip


@pytest.mark.parametrize("case_name", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case_name: str) -> None:
    model, message = ERRORS[case_name]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value
