"""The compiler's convolution algorithm choice: which Convs get Winograd weights, that the
Executable records the choice, and that the compiled model still matches onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

from stack.adapter import import_model
from stack.compiler import CompiledModel, CompileOptions, QuantizeOptions, compile_graph
from stack.compiler.passes import get_pass, run_passes
from stack.compiler.passes.winograd import MIN_CHANNELS, winograd_weights
from stack.runtime import ExecOp

C = MIN_CHANNELS


def _model(mk):  # type: ignore[no-untyped-def]
    """x[1, C, 14, 14] -> A (3x3, C -> C, pads 1, Relu): Winograd; then from A's output
    B (3x3 stride 2): direct; N (3x3, C -> 64): direct (too narrow); P (1x1): direct."""
    nodes = [
        helper.make_node("Conv", ["x", "wa", "ba"], ["a"], pads=[1, 1, 1, 1], name="A"),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["ar", "wb"], ["yb"], pads=[1, 1, 1, 1], strides=[2, 2], name="B"),
        helper.make_node("Conv", ["ar", "wn"], ["yn"], pads=[1, 1, 1, 1], name="N"),
        helper.make_node("Conv", ["ar", "wp"], ["yp"], name="P"),
    ]
    scale = float(1 / np.sqrt(9 * C))
    inits = {
        "wa": mk.rand(C, C, 3, 3, seed=1) * scale, "ba": mk.rand(C, seed=2),
        "wb": mk.rand(C, C, 3, 3, seed=3) * scale, "wn": mk.rand(64, C, 3, 3, seed=4) * scale,
        "wp": mk.rand(C, C, 1, 1, seed=5) * scale,
    }  # fmt: skip
    outs = [("yb", None), ("yn", None), ("yp", None)]
    return mk.onnx_model(nodes, [("x", [1, C, 14, 14])], outs, inits)


def test_only_the_wide_stride_1_3x3_conv_runs_winograd(mk) -> None:  # type: ignore[no-untyped-def]
    result = compile_graph(import_model(_model(mk)))
    convs = {op.name: op for op in result.executable.ops if op.op is ExecOp.CONV2D}
    assert {name: op.attr_dict().get("algorithm", 0) for name, op in convs.items()} == {
        "A": 1, "B": 0, "N": 0, "P": 0,
    }  # fmt: skip
    (a,) = (n for n in result.graph.nodes if n.name == "A")
    u = result.graph.constants[a.inputs[1]]
    assert u.shape == (4, 4, C, C) and u.dtype == np.float32
    assert a.inputs[1] == "A.winograd" and "wa" not in result.graph.constants  # W was dropped


def test_the_winograd_model_matches_onnxruntime(mk) -> None:  # type: ignore[no-untyped-def]
    model = _model(mk)
    x = mk.rand(1, C, 14, 14, seed=9)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = dict(zip(("yb", "yn", "yp"), session.run(None, {"x": x}), strict=True))
    with CompiledModel(import_model(model)) as compiled:
        assert sum(op.attr_dict().get("algorithm", 0) for op in compiled.executable.ops) == 1
        ours = compiled.run({"x": x})
    for key, value in ref.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-3, atol=1e-4)


def test_no_winograd_when_quantizing_or_below_the_thresholds(mk) -> None:  # type: ignore[no-untyped-def]
    graph, _ = run_passes(import_model(_model(mk)), ("infer_shapes",), CompileOptions())
    quantizing = CompileOptions(quantize=QuantizeOptions(calibration=({"x": np.zeros(1)},)))
    assert get_pass("winograd")(graph, quantizing) is graph
    small = mk.graph_of(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        [("x", [1, C, 7, 7])], [("y", None)], {"w": mk.rand(C, C, 3, 3)},
    )  # fmt: skip
    small, _ = run_passes(small, ("infer_shapes",), CompileOptions())
    assert get_pass("winograd")(small, CompileOptions()) is small  # 7x7 outputs: too few pixels


def test_winograd_weights_are_g_w_gt_in_float64() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    u = winograd_weights(w)
    for m in range(3):
        for c in range(2):
            np.testing.assert_allclose(u[:, :, m, c], g @ w[m, c] @ g.T, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError):
        winograd_weights(w[:, :, :2])
