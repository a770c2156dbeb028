# ruff: noqa: E501 - the error tables read best one case per line
"""GRU through the whole stack against onnxruntime and ONNX's reference, and its bad or
unsupported input as typed errors naming the node.

Forward, reverse and bidirectional, linear_before_reset 0 and 1, with and without B,
sequence_lens (short lengths and 0) and initial_h (and each left out before a given one),
activations with their alpha and beta, clip, opsets 7, 14 and 22, against onnxruntime (float32,
layout 0: it runs no other) and ONNX's reference (the default Sigmoid and Tanh, without lengths
or clip, which it reads no further; float16, float32 and float64, layouts 0 and 1); layout 1
against onnxruntime on the transposed operands; only Y or only Y_h named; a GRU between a MatMul
and a Squeeze; a constant node folded at import; the IR node's filled operands and resolved
attributes."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.compiler import OpType
from tests.stack.adapter import recurrent
from tests.stack.adapter.recurrent import (
    DIRECTIONS,
    IN,
    H,
    N,
    S,
    assert_folds_at_import,
    assert_layout_1_matches,
    assert_matches_onnxruntime,
    assert_matches_the_reference,
    assert_model_format_error,
    assert_named_outputs_match,
    assert_runs_between_other_ops,
    assert_same_bytes,
    assert_unsupported,
    raw_model,
    recurrent_model,
)

RNG = np.random.default_rng(67)
NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h")


def operands(d: int, given: str, dtype: Any = np.float32, layout: int = 0) -> dict[str, np.ndarray]:
    """X, W and R, and those of B ("b"), sequence_lens ("l") and initial_h ("h") in ``given``."""
    return recurrent.operands(RNG, NAMES, 3, d, given, dtype, layout)


def gru_model(arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (), outputs: tuple[str, ...] = ("Y", "Y_h"),
              opset: int = 14, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    return recurrent_model("GRU", NAMES, arrays, consts, outputs, opset, **attrs)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize(
    "given", ["", "b", "l", "h", "bl", "lh", "blh"], ids=lambda g: g or "plain"
)
@pytest.mark.parametrize("linear", [0, 1])
def test_matches_onnxruntime(direction: str, given: str, linear: int) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, given)
    model = gru_model(arrays, hidden_size=H, direction=direction, linear_before_reset=linear)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize(
    ("f", "g"),
    [("Sigmoid", "Relu"), ("HardSigmoid", "Softsign"), ("Softsign", "Tanh"), ("Relu", "Sigmoid")],
    ids=["sigmoid-relu", "hardsigmoid-softsign", "softsign-tanh", "relu-sigmoid"],
)
@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_other_activations_match_onnxruntime(direction: str, f: str, g: str) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, "blh")
    attrs: dict[str, Any] = {"activations": [f, g] * d}
    if f == "HardSigmoid":  # HardSigmoid alone takes an alpha and a beta: refused (see below)
        attrs["activations"] = ["HardSigmoid", "HardSigmoid"] * d
        attrs |= {
            "activation_alpha": [0.2, 0.3, 0.25, 0.15][: 2 * d],
            "activation_beta": [0.5, 0.4, 0.6, 0.45][: 2 * d],
        }
    model = gru_model(arrays, hidden_size=H, direction=direction, **attrs)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize(
    ("f", "g", "alpha", "beta"),
    [("HardSigmoid", "ScaledTanh", (0.2, 0.7), (0.5, 1.3)), ("HardSigmoid", "Affine", (0.3, 0.5), (0.4, 0.1)),
     ("HardSigmoid", "HardSigmoid", (0.25, 0.3), (0.45, 0.55)), ("ThresholdedRelu", "LeakyRelu", (0.9, 0.1), None)],
    ids=["hardsigmoid-scaledtanh", "hardsigmoid-affine", "hardsigmoid-hardsigmoid", "thresholdedrelu-leakyrelu"],
)  # fmt: skip
def test_activations_with_their_alpha_and_beta_match_onnxruntime(
    f: str, g: str, alpha: tuple[float, float], beta: tuple[float, float] | None
) -> None:
    """Each of the four activations its own alpha (and beta), dealt out in order."""
    arrays = operands(2, "blh")
    attrs: dict[str, Any] = {
        "activations": [f, g] * 2,
        "activation_alpha": [*alpha, alpha[0] / 2, alpha[1] * 2],
    }
    if beta is not None:
        attrs["activation_beta"] = [*beta, beta[0] / 2, beta[1] * 2]
    model = gru_model(arrays, hidden_size=H, direction="bidirectional", **attrs)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("linear", [0, 1])
@pytest.mark.parametrize("clip", [0.25, 1.0, 10.0])
def test_clip_matches_onnxruntime(linear: int, clip: float) -> None:
    arrays = operands(2, "bl")
    arrays["X"] *= 3
    model = gru_model(
        arrays, hidden_size=H, direction="bidirectional", clip=clip, linear_before_reset=linear
    )
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("opset", [7, 14, 22])
def test_every_opset_matches_onnxruntime(opset: int) -> None:
    arrays = operands(2, "blh")
    model = gru_model(
        arrays, opset=opset, hidden_size=H, direction="bidirectional", linear_before_reset=1
    )
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_layout_1_is_onnxruntime_s_layout_0_transposed(direction: str) -> None:
    """onnxruntime runs no batch-first GRU: the same operands, transposed, through its layout 0."""
    d = DIRECTIONS[direction]
    arrays = operands(d, "blh", layout=1)
    assert_layout_1_matches(gru_model, arrays, hidden_size=H, direction=direction)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("linear", [0, 1])
def test_matches_the_onnx_reference(dtype, direction, layout, linear) -> None:  # type: ignore[no-untyped-def]
    d = DIRECTIONS[direction]
    arrays = operands(d, "bh", dtype, layout)
    model = gru_model(arrays, direction=direction, layout=layout, linear_before_reset=linear)
    assert_matches_the_reference(model, arrays, dtype)


def test_the_defaults_are_forward_sigmoid_tanh_without_clip() -> None:
    arrays = operands(1, "b")
    explicit = gru_model(arrays, hidden_size=H, direction="forward", activations=["Sigmoid", "Tanh"],
                         linear_before_reset=0)  # fmt: skip
    assert_same_bytes(gru_model(arrays), explicit, arrays)


@pytest.mark.parametrize(
    "outputs", [("Y", ""), ("", "Y_h"), ("Y",)], ids=["Y and blank", "Y_h only", "Y alone"]
)
def test_one_output_named_gets_a_fresh_value_for_the_other(outputs: tuple[str, ...]) -> None:
    arrays = operands(2, "l")
    attrs = {"hidden_size": H, "direction": "bidirectional"}
    assert_named_outputs_match(gru_model, arrays, outputs, ("Y", "Y_h"), **attrs)


def test_a_gru_runs_between_other_ops() -> None:
    """x W_in (a MatMul) feeds the GRU, whose Y loses its direction axis (a Squeeze) and whose
    Y_h is a graph output; W, R and B are initializers."""
    x = RNG.standard_normal((S, N, 3)).astype(np.float32)
    base = operands(1, "b")
    inits = {"w_in": RNG.standard_normal((3, IN)).astype(np.float32), "W": base["W"], "R": base["R"],
             "B": base["B"]}  # fmt: skip
    node = helper.make_node(
        "GRU", ["h", "W", "R", "B", "lens"], ["Y", "Y_h"], hidden_size=H, linear_before_reset=1
    )
    assert_runs_between_other_ops(x, inits, node, "Y_h")


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    arrays = operands(2, "blh")
    model = gru_model(
        arrays, consts=tuple(arrays), hidden_size=H, direction="bidirectional", clip=2.0
    )
    assert_folds_at_import(model)


def test_the_ir_node_takes_filled_operands_and_resolved_attributes() -> None:
    """initial_h alone: a zero B and full lengths before it; names in ONNX's spelling."""
    arrays = operands(2, "h")
    graph = import_model(gru_model(arrays, direction="bidirectional", activations=["elu", "LEAKYRELU", "Elu", "leakyrelu"],
                                   activation_alpha=[0.5, 0.25, 0.125, 2.0], clip=3, linear_before_reset=7))  # fmt: skip
    (node,) = graph.nodes
    assert node.op is OpType.GRU and node.outputs == ("Y", "Y_h")
    assert node.inputs[:3] == ("X", "W", "R") and node.inputs[5] == "initial_h"
    assert graph.constants[node.inputs[3]].tolist() == [[0.0] * 36] * 2
    assert graph.constants[node.inputs[4]].tolist() == [S] * N
    assert graph.constants[node.inputs[4]].dtype == np.int32
    assert dict(node.attrs) == {"direction": "bidirectional", "layout": 0, "linear_before_reset": 1,
                                "activations": "Elu,LeakyRelu,Elu,LeakyRelu", "activation_alpha": (0.5, 0.25, 0.125, 2.0),
                                "activation_beta": (0.0, 0.0, 0.0, 0.0), "clip": 3.0}  # fmt: skip


def test_the_ir_node_leaves_a_trailing_run_out() -> None:
    (node,) = import_model(gru_model(operands(1, "b"))).nodes
    assert node.inputs == ("X", "W", "R", "B")
    assert node.attr("activations") == "Sigmoid,Tanh" and node.attr("linear_before_reset") == 0


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [5, 3, 4]),
    w: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 18, 4]),
    r: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 18, 6]),
    b: tuple[int, list[int]] | None = None,
    lens: tuple[int, list[int]] | None = None,
    h0: tuple[int, list[int]] | None = None,
    opset: int = 14,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = ("Y", "Y_h"),
    **attrs: Any,
) -> onnx.ModelProto:
    given = {"X": x, "W": w, "R": r, "B": b, "sequence_lens": lens, "initial_h": h0}
    return raw_model("GRU", given, opset, inputs, outputs, **attrs)


F, F16, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "two inputs": (_raw(inputs=("X", "W")), r"takes X, W, R and the optional B, sequence_lens and initial_h, and the optional Y and Y_h, got \['X', 'W'\]"),
    "no R": (_raw(inputs=("X", "W", "", "B")), r"got \['X', 'W', '', 'B'\]"),
    "three outputs": (_raw(outputs=("Y", "Y_h", "Z")), r"-> \['Y', 'Y_h', 'Z'\]"),
    "layout at opset 7": (_raw(opset=7, layout=0), "has no layout before opset 14 \\(model opset 7\\)"),
    "int X": (_raw(x=(I32, [5, 3, 4])), r"takes a float16, float32 or float64 X, got int32\[5, 3, 4\]"),
    "rank 2 X": (_raw(x=(F, [5, 4])), r"takes a float X \[S, N, I\] or \[N, S, I\], got float32\[5, 4\]"),
    "W input size": (_raw(w=(F, [1, 18, 3])), r"takes a W float32\[D, 3H, 4\] \(D 1 or 2\) for X float32\[5, 3, 4\], got float32\[1, 18, 3\]"),
    "W not 3H": (_raw(w=(F, [1, 17, 4])), r"got float32\[1, 17, 4\]"),
    "W dtype": (_raw(w=(F16, [1, 18, 4])), r"got float16\[1, 18, 4\]"),
    "R shape": (_raw(r=(F, [1, 18, 5])), r"takes an R float32\[1, 18, 6\] for W float32\[1, 18, 4\], got float32\[1, 18, 5\]"),
    "B shape": (_raw(b=(F, [1, 12])), r"takes a B float32\[1, 36\] for X float32\[5, 3, 4\] and W float32\[1, 18, 4\], got float32\[1, 12\]"),
    "int64 lengths": (_raw(lens=(I64, [3])), r"takes a sequence_lens int32\[3\] .* got int64\[3\]"),
    "initial_h shape": (_raw(h0=(F, [1, 5, 6])), r"takes a initial_h float32\[1, 3, 6\] .* got float32\[1, 5, 6\]"),
    "layout 1 initial_h": (_raw(x=(F, [3, 5, 4]), h0=(F, [1, 3, 6]), layout=1), r"takes a initial_h float32\[3, 1, 6\]"),
    "hidden_size": (_raw(hidden_size=5), "hidden_size 5 is not W's 6"),
    "unknown direction": (_raw(direction="sideways"), "takes direction forward, reverse, bidirectional for W of 1 directions, got 'sideways'"),
    "bidirectional W of 1": (_raw(direction="bidirectional"), "for W of 1 directions, got 'bidirectional'"),
    "layout 2": (_raw(layout=2), "takes layout 0 or 1, got 2"),
    "one activation": (_raw(activations=["Tanh"]), r"takes 2 activations, two per direction, got 'Tanh'"),
    "unknown activation": (_raw(activations=["Sigmoid", "Gelu"]), "takes activations of Tanh, Relu, .* got 'Sigmoid,Gelu'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    assert_model_format_error("GRU", *ERRORS[case])


UNSUPPORTED: dict[str, tuple[onnx.ModelProto, str]] = {
    "alpha for one of two": (_raw(activations=["HardSigmoid", "Tanh"], activation_alpha=[0.1], activation_beta=[0.5]), "supported when every activation takes them, one value each, or none does"),
    "alpha left out": (_raw(activations=["LeakyRelu", "LeakyRelu"]), "activation_alpha None"),
    "one alpha for two": (_raw(activations=["Elu", "Elu"], activation_alpha=[0.1]), "activation_alpha \\[0.1"),
    "beta left out": (_raw(activations=["HardSigmoid", "HardSigmoid"], activation_alpha=[0.2, 0.2]), "activation_beta None"),
    "clip 0": (_raw(clip=0.0), "clip 0.0: a clip above 0 is supported"),
    "negative clip": (_raw(clip=-1.0), "clip -1.0"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_what_the_stack_does_not_run_is_an_unsupported_op_error(case: str) -> None:
    assert_unsupported("GRU", *UNSUPPORTED[case])
