# ruff: noqa: E501 - the error tables read best one case per line
"""LSTM through the whole stack against onnxruntime and ONNX's reference, and its bad or
unsupported input as typed errors naming the node.

Forward, reverse and bidirectional, with and without B, sequence_lens (short lengths and 0),
initial_h, initial_c and the peepholes P (and each left out before a given one), input_forget 0
and 1, activations with their alpha and beta, clip, opsets 7, 14 and 22, against onnxruntime
(float32, layout 0: it runs no other) and ONNX's reference (the default Sigmoid, Tanh and Tanh,
without lengths, clip or input_forget, which it reads no further; float16, float32 and float64,
layouts 0 and 1); layout 1 against onnxruntime on the transposed operands; only some outputs
named; an LSTM between a MatMul and a Squeeze; a constant node folded at import; the IR node's
filled operands and resolved attributes."""

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

RNG = np.random.default_rng(69)
NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
OUTS = ("Y", "Y_h", "Y_c")


def operands(d: int, given: str, dtype: Any = np.float32, layout: int = 0) -> dict[str, np.ndarray]:
    """X, W and R, and those of B ("b"), sequence_lens ("l"), initial_h ("h"), initial_c ("c")
    and P ("p") in ``given``."""
    return recurrent.operands(RNG, NAMES, 4, d, given, dtype, layout)


def lstm_model(arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (), outputs: tuple[str, ...] = OUTS,
               opset: int = 14, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    return recurrent_model("LSTM", NAMES, arrays, consts, outputs, opset, **attrs)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize(
    "given", ["", "b", "l", "h", "c", "p", "bl", "lhc", "blhcp"], ids=lambda g: g or "plain"
)
def test_matches_onnxruntime(direction: str, given: str) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, given)
    model = lstm_model(arrays, hidden_size=H, direction=direction)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("given", ["", "blhcp"], ids=lambda g: g or "plain")
def test_input_forget_matches_onnxruntime(direction: str, given: str) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, given)
    model = lstm_model(arrays, hidden_size=H, direction=direction, input_forget=1)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize(
    "acts",
    [("Sigmoid", "Relu", "Tanh"), ("Softsign", "Tanh", "Softsign"), ("Relu", "Sigmoid", "Relu"), ("Sigmoid", "Tanh", "Softplus")],
    ids=["sigmoid-relu-tanh", "softsign-tanh-softsign", "relu-sigmoid-relu", "sigmoid-tanh-softplus"],
)  # fmt: skip
@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_other_activations_match_onnxruntime(direction: str, acts: tuple[str, ...]) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, "blhcp")
    model = lstm_model(arrays, hidden_size=H, direction=direction, activations=list(acts) * d)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize(
    ("acts", "alpha", "beta"),
    [(("HardSigmoid", "ScaledTanh", "Affine"), (0.2, 0.7, 0.5), (0.5, 1.3, 0.1)),
     (("HardSigmoid", "HardSigmoid", "ScaledTanh"), (0.25, 0.3, 1.1), (0.45, 0.55, 0.9)),
     (("ThresholdedRelu", "LeakyRelu", "Elu"), (0.1, 0.1, 0.5), None)],
    ids=["hardsigmoid-scaledtanh-affine", "hardsigmoid-hardsigmoid-scaledtanh", "thresholdedrelu-leakyrelu-elu"],
)  # fmt: skip
def test_activations_with_their_alpha_and_beta_match_onnxruntime(
    acts: tuple[str, ...], alpha: tuple[float, ...], beta: tuple[float, ...] | None
) -> None:
    """Each of the six activations its own alpha (and beta), dealt out in order."""
    arrays = operands(2, "blhc")
    attrs: dict[str, Any] = {
        "activations": list(acts) * 2,
        "activation_alpha": [*alpha, *(a / 2 for a in alpha)],
    }
    if beta is not None:
        attrs["activation_beta"] = [*beta, *(b * 2 for b in beta)]
    model = lstm_model(arrays, hidden_size=H, direction="bidirectional", **attrs)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("clip", [0.25, 1.0, 10.0])
@pytest.mark.parametrize("given", ["bl", "blhcp"])
def test_clip_matches_onnxruntime(clip: float, given: str) -> None:
    arrays = operands(2, given)
    arrays["X"] *= 3
    model = lstm_model(arrays, hidden_size=H, direction="bidirectional", clip=clip)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("opset", [7, 14, 22])
def test_every_opset_matches_onnxruntime(opset: int) -> None:
    arrays = operands(2, "blhcp")
    model = lstm_model(arrays, opset=opset, hidden_size=H, direction="bidirectional")
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_layout_1_is_onnxruntime_s_layout_0_transposed(direction: str) -> None:
    """onnxruntime runs no batch-first LSTM: the same operands, transposed, through its layout 0."""
    d = DIRECTIONS[direction]
    arrays = operands(d, "blhcp", layout=1)
    assert_layout_1_matches(lstm_model, arrays, hidden_size=H, direction=direction)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("layout", [0, 1])
def test_matches_the_onnx_reference(dtype, direction, layout) -> None:  # type: ignore[no-untyped-def]
    d = DIRECTIONS[direction]
    arrays = operands(d, "bhcp", dtype, layout)
    model = lstm_model(arrays, direction=direction, layout=layout)
    assert_matches_the_reference(model, arrays, dtype)


def test_the_defaults_are_forward_sigmoid_tanh_tanh_without_clip() -> None:
    arrays = operands(1, "b")
    explicit = lstm_model(arrays, hidden_size=H, direction="forward", activations=["Sigmoid", "Tanh", "Tanh"],
                          input_forget=0)  # fmt: skip
    assert_same_bytes(lstm_model(arrays), explicit, arrays)


@pytest.mark.parametrize(
    "outputs", [("Y", "", ""), ("", "Y_h"), ("", "", "Y_c"), ("Y",)], ids=["Y and blanks", "Y_h only", "Y_c only", "Y alone"]
)  # fmt: skip
def test_the_outputs_named_get_their_values_the_others_fresh_ones(outputs: tuple[str, ...]) -> None:
    arrays = operands(2, "l")
    attrs = {"hidden_size": H, "direction": "bidirectional"}
    assert_named_outputs_match(lstm_model, arrays, outputs, OUTS, **attrs)


def test_an_lstm_runs_between_other_ops() -> None:
    """x W_in (a MatMul) feeds the LSTM, whose Y loses its direction axis (a Squeeze) and whose
    Y_c is a graph output; W, R, B and P are initializers."""
    x = RNG.standard_normal((S, N, 3)).astype(np.float32)
    base = operands(1, "bp")
    inits = {"w_in": RNG.standard_normal((3, IN)).astype(np.float32), "W": base["W"], "R": base["R"],
             "B": base["B"], "P": base["P"]}  # fmt: skip
    node = helper.make_node(
        "LSTM", ["h", "W", "R", "B", "lens", "", "", "P"], ["Y", "", "Y_c"], hidden_size=H
    )
    assert_runs_between_other_ops(x, inits, node, "Y_c")


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    arrays = operands(2, "blhcp")
    model = lstm_model(
        arrays, consts=tuple(arrays), hidden_size=H, direction="bidirectional", clip=2.0
    )
    assert_folds_at_import(model)


def test_the_ir_node_takes_filled_operands_and_resolved_attributes() -> None:
    """P alone: a zero B, full lengths and zero states before it; names in ONNX's spelling."""
    arrays = operands(2, "p")
    graph = import_model(lstm_model(arrays, direction="bidirectional", activations=["elu", "LEAKYRELU", "Elu"] * 2,
                                    activation_alpha=[0.5, 0.25, 0.125, 2.0, 1.0, 0.75], clip=3, input_forget=7))  # fmt: skip
    (node,) = graph.nodes
    assert node.op is OpType.LSTM and node.outputs == OUTS
    assert node.inputs[:3] == ("X", "W", "R") and node.inputs[7] == "P"
    assert graph.constants[node.inputs[3]].tolist() == [[0.0] * 48] * 2
    assert graph.constants[node.inputs[4]].tolist() == [S] * N
    assert graph.constants[node.inputs[4]].dtype == np.int32
    assert [graph.constants[node.inputs[j]].shape for j in (5, 6)] == [(2, N, H)] * 2
    assert not graph.constants[node.inputs[5]].any() and not graph.constants[node.inputs[6]].any()
    assert dict(node.attrs) == {"direction": "bidirectional", "layout": 0, "input_forget": 1,
                                "activations": "Elu,LeakyRelu,Elu,Elu,LeakyRelu,Elu",
                                "activation_alpha": (0.5, 0.25, 0.125, 2.0, 1.0, 0.75),
                                "activation_beta": (0.0,) * 6, "clip": 3.0}  # fmt: skip


def test_the_ir_node_leaves_a_trailing_run_out() -> None:
    (node,) = import_model(lstm_model(operands(1, "b"))).nodes
    assert node.inputs == ("X", "W", "R", "B")
    assert node.attr("activations") == "Sigmoid,Tanh,Tanh" and node.attr("input_forget") == 0


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [5, 3, 4]),
    w: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 24, 4]),
    r: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 24, 6]),
    c0: tuple[int, list[int]] | None = None,
    p: tuple[int, list[int]] | None = None,
    opset: int = 14,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = OUTS,
    **attrs: Any,
) -> onnx.ModelProto:
    given = {
        "X": x,
        "W": w,
        "R": r,
        "B": None,
        "sequence_lens": None,
        "initial_h": None,
        "initial_c": c0,
        "P": p,
    }
    return raw_model("LSTM", given, opset, inputs, outputs, **attrs)


F, F16, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "two inputs": (_raw(inputs=("X", "W")), r"takes X, W, R and the optional B, sequence_lens, initial_h, initial_c and P, and the optional Y, Y_h and Y_c, got \['X', 'W'\]"),
    "no R": (_raw(inputs=("X", "W", "", "B")), r"got \['X', 'W', '', 'B'\]"),
    "four outputs": (_raw(outputs=("Y", "Y_h", "Y_c", "Z")), r"-> \['Y', 'Y_h', 'Y_c', 'Z'\]"),
    "layout at opset 7": (_raw(opset=7, layout=0), "has no layout before opset 14 \\(model opset 7\\)"),
    "int X": (_raw(x=(I32, [5, 3, 4])), r"takes a float16, float32 or float64 X, got int32\[5, 3, 4\]"),
    "W not 4H": (_raw(w=(F, [1, 23, 4])), r"takes a W float32\[D, 4H, 4\] \(D 1 or 2\) for X float32\[5, 3, 4\], got float32\[1, 23, 4\]"),
    "W dtype": (_raw(w=(F16, [1, 24, 4])), r"got float16\[1, 24, 4\]"),
    "R shape": (_raw(r=(F, [1, 24, 5])), r"takes an R float32\[1, 24, 6\] for W float32\[1, 24, 4\], got float32\[1, 24, 5\]"),
    "initial_c shape": (_raw(c0=(F, [1, 5, 6])), r"takes a initial_c float32\[1, 3, 6\] .* got float32\[1, 5, 6\]"),
    "P shape": (_raw(p=(F, [1, 12])), r"takes a P float32\[1, 18\] .* got float32\[1, 12\]"),
    "hidden_size": (_raw(hidden_size=5), "hidden_size 5 is not W's 6"),
    "unknown direction": (_raw(direction="sideways"), "takes direction forward, reverse, bidirectional for W of 1 directions, got 'sideways'"),
    "layout 2": (_raw(layout=2), "takes layout 0 or 1, got 2"),
    "two activations": (_raw(activations=["Sigmoid", "Tanh"]), r"takes 3 activations, three per direction, got 'Sigmoid,Tanh'"),
    "unknown activation": (_raw(activations=["Sigmoid", "Gelu", "Tanh"]), "takes activations of Tanh, Relu, .* got 'Sigmoid,Gelu,Tanh'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    assert_model_format_error("LSTM", *ERRORS[case])


UNSUPPORTED: dict[str, tuple[onnx.ModelProto, str]] = {
    "alpha for one of three": (_raw(activations=["HardSigmoid", "Tanh", "Tanh"], activation_alpha=[0.1], activation_beta=[0.5]), "supported when every activation takes them, one value each, or none does"),
    "alpha left out": (_raw(activations=["LeakyRelu"] * 3), "activation_alpha None"),
    "one alpha for three": (_raw(activations=["Elu"] * 3, activation_alpha=[0.1]), "activation_alpha \\[0.1"),
    "clip 0": (_raw(clip=0.0), "clip 0.0: a clip above 0 is supported"),
    "negative clip": (_raw(clip=-1.0), "clip -1.0"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_what_the_stack_does_not_run_is_an_unsupported_op_error(case: str) -> None:
    assert_unsupported("LSTM", *UNSUPPORTED[case])
