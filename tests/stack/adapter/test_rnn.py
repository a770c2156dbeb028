# ruff: noqa: E501 - the error tables read best one case per line
"""RNN through the whole stack against onnxruntime and ONNX's reference, and its bad or
unsupported input as typed errors naming the node.

Forward, reverse and bidirectional, with and without B, sequence_lens (short lengths and 0) and
initial_h (and each left out before a given one), every activation with its alpha and beta,
clip, hidden_size given or not, opsets 7, 14 and 22, against onnxruntime (float32, layout 0: it
runs no other) and ONNX's reference (Tanh and Affine, without lengths or clip, which it reads
no further; float16, float32 and float64, layouts 0 and 1); layout 1 against onnxruntime on the
transposed operands; only Y or only Y_h named; an RNN between a MatMul and a Squeeze; a constant
node folded at import; the IR node's filled operands and resolved attributes."""

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

RNG = np.random.default_rng(66)
NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h")


def operands(d: int, given: str, dtype: Any = np.float32, layout: int = 0) -> dict[str, np.ndarray]:
    """X, W and R, and those of B ("b"), sequence_lens ("l") and initial_h ("h") in ``given``."""
    return recurrent.operands(RNG, NAMES, 1, d, given, dtype, layout)


def rnn_model(arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (), outputs: tuple[str, ...] = ("Y", "Y_h"),
              opset: int = 14, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    return recurrent_model("RNN", NAMES, arrays, consts, outputs, opset, **attrs)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize(
    "given", ["", "b", "l", "h", "bl", "lh", "blh"], ids=lambda g: g or "plain"
)
@pytest.mark.parametrize(
    "acts", [("Tanh", "Tanh"), ("Relu", "Sigmoid"), ("Softsign", "Softplus")], ids="-".join
)
def test_matches_onnxruntime(direction: str, given: str, acts: tuple[str, str]) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, given)
    model = rnn_model(arrays, hidden_size=H, direction=direction, activations=list(acts[:d]))
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize(
    ("act", "alpha", "beta"),
    [("Affine", 0.5, 0.1), ("LeakyRelu", 0.1, None), ("ThresholdedRelu", 0.3, None), ("ScaledTanh", 0.7, 1.3),
     ("HardSigmoid", 0.3, 0.4), ("Elu", 0.8, None)],
)  # fmt: skip
@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_every_activation_with_its_alpha_and_beta_matches_onnxruntime(
    direction: str, act: str, alpha: float, beta: float | None
) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, "blh")
    attrs = {"activations": [act] * d, "activation_alpha": [alpha, alpha * 2][:d]}
    if beta is not None:
        attrs["activation_beta"] = [beta, beta / 2][:d]
    model = rnn_model(arrays, hidden_size=H, direction=direction, **attrs)
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("clip", [0.25, 1.0, 10.0])
def test_clip_matches_onnxruntime(direction: str, clip: float) -> None:
    d = DIRECTIONS[direction]
    arrays = operands(d, "bl")
    arrays["X"] *= 3
    model = rnn_model(
        arrays, hidden_size=H, direction=direction, clip=clip, activations=["Relu"] * d
    )
    got = assert_matches_onnxruntime(model, arrays)
    assert got[0].max() <= clip


@pytest.mark.parametrize("opset", [7, 14, 22])
def test_every_opset_matches_onnxruntime(opset: int) -> None:
    arrays = operands(2, "blh")
    model = rnn_model(arrays, opset=opset, hidden_size=H, direction="bidirectional")
    assert_matches_onnxruntime(model, arrays)


@pytest.mark.parametrize("direction", list(DIRECTIONS))
def test_layout_1_is_onnxruntime_s_layout_0_transposed(direction: str) -> None:
    """onnxruntime runs no batch-first RNN: the same operands, transposed, through its layout 0."""
    d = DIRECTIONS[direction]
    arrays = operands(d, "blh", layout=1)
    attrs = {"hidden_size": H, "direction": direction, "activations": ["Relu"] * d}
    assert_layout_1_matches(rnn_model, arrays, **attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("direction", list(DIRECTIONS))
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("act", ["Tanh", "Affine"])
def test_matches_the_onnx_reference(dtype, direction, layout, act) -> None:  # type: ignore[no-untyped-def]
    d = DIRECTIONS[direction]
    arrays = operands(d, "bh", dtype, layout)
    attrs: dict[str, Any] = {"activations": [act] * d}
    if act == "Affine":
        # one alpha and beta for both directions: the reference runs each with the first's
        attrs |= {"activation_alpha": [0.5] * d, "activation_beta": [0.25] * d}
    model = rnn_model(arrays, direction=direction, layout=layout, **attrs)
    assert_matches_the_reference(model, arrays, dtype)


def test_the_defaults_are_forward_tanh_without_clip() -> None:
    arrays = operands(1, "b")
    explicit = rnn_model(arrays, hidden_size=H, direction="forward", activations=["Tanh"])
    assert_same_bytes(rnn_model(arrays), explicit, arrays)


@pytest.mark.parametrize(
    "outputs", [("Y", ""), ("", "Y_h"), ("Y",)], ids=["Y and blank", "Y_h only", "Y alone"]
)
def test_one_output_named_gets_a_fresh_value_for_the_other(outputs: tuple[str, ...]) -> None:
    arrays = operands(2, "l")
    attrs = {"hidden_size": H, "direction": "bidirectional"}
    assert_named_outputs_match(rnn_model, arrays, outputs, ("Y", "Y_h"), **attrs)


def test_an_rnn_runs_between_other_ops() -> None:
    """x W_in (a MatMul) feeds the RNN, whose Y loses its direction axis (a Squeeze) and whose
    Y_h is a graph output; W, R and B are initializers."""
    x = RNG.standard_normal((S, N, 3)).astype(np.float32)
    inits = {"w_in": RNG.standard_normal((3, IN)).astype(np.float32), "W": operands(1, "")["W"],
             "R": operands(1, "")["R"], "B": RNG.standard_normal((1, 2 * H)).astype(np.float32)}  # fmt: skip
    node = helper.make_node(
        "RNN", ["h", "W", "R", "B", "lens"], ["Y", "Y_h"], hidden_size=H, activations=["Relu"]
    )
    assert_runs_between_other_ops(x, inits, node, "Y_h")


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    arrays = operands(2, "blh")
    model = rnn_model(
        arrays, consts=tuple(arrays), hidden_size=H, direction="bidirectional", clip=2.0
    )
    assert_folds_at_import(model)


def test_the_ir_node_takes_filled_operands_and_resolved_attributes() -> None:
    """initial_h alone: a zero B and full lengths before it; names in ONNX's spelling."""
    arrays = operands(2, "h")
    graph = import_model(rnn_model(arrays, direction="bidirectional", activations=["elu", "LEAKYRELU"],
                                   activation_alpha=[0.5, 0.25], clip=3))  # fmt: skip
    (node,) = graph.nodes
    assert node.op is OpType.RNN and node.outputs == ("Y", "Y_h")
    assert node.inputs[:3] == ("X", "W", "R") and node.inputs[5] == "initial_h"
    assert graph.constants[node.inputs[3]].tolist() == [[0.0] * 12] * 2
    assert graph.constants[node.inputs[4]].tolist() == [S] * N
    assert graph.constants[node.inputs[4]].dtype == np.int32
    assert dict(node.attrs) == {"direction": "bidirectional", "layout": 0, "activations": "Elu,LeakyRelu",
                                "activation_alpha": (0.5, 0.25), "activation_beta": (0.0, 0.0), "clip": 3.0}  # fmt: skip


def test_the_ir_node_leaves_a_trailing_run_out() -> None:
    (node,) = import_model(rnn_model(operands(1, "b"))).nodes
    assert node.inputs == ("X", "W", "R", "B")


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [5, 3, 4]),
    w: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 6, 4]),
    r: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 6, 6]),
    b: tuple[int, list[int]] | None = None,
    lens: tuple[int, list[int]] | None = None,
    h0: tuple[int, list[int]] | None = None,
    opset: int = 14,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = ("Y", "Y_h"),
    **attrs: Any,
) -> onnx.ModelProto:
    given = {"X": x, "W": w, "R": r, "B": b, "sequence_lens": lens, "initial_h": h0}
    return raw_model("RNN", given, opset, inputs, outputs, **attrs)


F, F16, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "two inputs": (_raw(inputs=("X", "W")), r"takes X, W, R and the optional B, sequence_lens and initial_h, and the optional Y and Y_h, got \['X', 'W'\]"),
    "no R": (_raw(inputs=("X", "W", "", "B")), r"got \['X', 'W', '', 'B'\]"),
    "seven inputs": (_raw(inputs=("X", "W", "R", "X", "X", "X", "X")), "takes X, W, R"),
    "three outputs": (_raw(outputs=("Y", "Y_h", "Z")), r"-> \['Y', 'Y_h', 'Z'\]"),
    "layout at opset 7": (_raw(opset=7, layout=0), "has no layout before opset 14 \\(model opset 7\\)"),
    "int X": (_raw(x=(I32, [5, 3, 4])), r"takes a float16, float32 or float64 X, got int32\[5, 3, 4\]"),
    "rank 2 X": (_raw(x=(F, [5, 4])), r"takes a float X \[S, N, I\] or \[N, S, I\], got float32\[5, 4\]"),
    "W input size": (_raw(w=(F, [1, 6, 3])), r"takes a W float32\[D, H, 4\] \(D 1 or 2\) for X float32\[5, 3, 4\], got float32\[1, 6, 3\]"),
    "W dtype": (_raw(w=(F16, [1, 6, 4])), r"got float16\[1, 6, 4\]"),
    "R shape": (_raw(r=(F, [1, 6, 5])), r"takes an R float32\[1, 6, 6\] for W float32\[1, 6, 4\], got float32\[1, 6, 5\]"),
    "B shape": (_raw(b=(F, [1, 6])), r"takes a B float32\[1, 12\] for X float32\[5, 3, 4\] and W float32\[1, 6, 4\], got float32\[1, 6\]"),
    "int64 lengths": (_raw(lens=(I64, [3])), r"takes a sequence_lens int32\[3\] .* got int64\[3\]"),
    "lengths shape": (_raw(lens=(I32, [5])), r"got int32\[5\]"),
    "initial_h shape": (_raw(h0=(F, [1, 5, 6])), r"takes a initial_h float32\[1, 3, 6\] .* got float32\[1, 5, 6\]"),
    "layout 1 initial_h": (_raw(x=(F, [3, 5, 4]), h0=(F, [1, 3, 6]), layout=1), r"takes a initial_h float32\[3, 1, 6\]"),
    "hidden_size": (_raw(hidden_size=5), "hidden_size 5 is not W's 6"),
    "unknown direction": (_raw(direction="sideways"), "takes direction forward, reverse, bidirectional for W of 1 directions, got 'sideways'"),
    "bidirectional W of 1": (_raw(direction="bidirectional"), "for W of 1 directions, got 'bidirectional'"),
    "layout 2": (_raw(layout=2), "takes layout 0 or 1, got 2"),
    "two activations": (_raw(activations=["Tanh", "Relu"]), r"takes 1 activations, got 'Tanh,Relu'"),
    "unknown activation": (_raw(activations=["Gelu"]), "takes activations of Tanh, Relu, .* got 'Gelu'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    assert_model_format_error("RNN", *ERRORS[case])


W2, R2 = (F, [2, 6, 4]), (F, [2, 6, 6])
UNSUPPORTED: dict[str, tuple[onnx.ModelProto, str]] = {
    "alpha for one of two": (_raw(w=W2, r=R2, direction="bidirectional", activations=["Tanh", "LeakyRelu"], activation_alpha=[0.1]), "supported when every activation takes them, one value each, or none does"),
    "alpha for one of two, both given": (_raw(w=W2, r=R2, direction="bidirectional", activations=["Tanh", "Elu"], activation_alpha=[0.1, 0.2]), "for activations \\['Tanh', 'Elu'\\]"),
    "alpha left out": (_raw(activations=["LeakyRelu"]), "activation_alpha None"),
    "one alpha for two": (_raw(w=W2, r=R2, direction="bidirectional", activations=["Elu", "Elu"], activation_alpha=[0.1]), "activation_alpha \\[0.1"),
    "beta for one of two": (_raw(w=W2, r=R2, direction="bidirectional", activations=["Affine", "LeakyRelu"], activation_alpha=[0.1, 0.2], activation_beta=[0.3]), "activation_beta \\[0.3"),
    "beta left out": (_raw(activations=["HardSigmoid"], activation_alpha=[0.2]), "activation_beta None"),
    "clip 0": (_raw(clip=0.0), "clip 0.0: a clip above 0 is supported"),
    "negative clip": (_raw(clip=-1.0), "clip -1.0"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNSUPPORTED))
def test_what_the_stack_does_not_run_is_an_unsupported_op_error(case: str) -> None:
    assert_unsupported("RNN", *UNSUPPORTED[case])
