# ruff: noqa: E501 - the error table reads best one case per line
"""CausalConvWithState through the whole stack against onnxruntime and ONNX's reference, and its
bad input as typed errors naming the node.

With and without bias and past_state (a past_state without a bias too), each activation (none,
silu, swish), K = 1 to 4, a length shorter than the state, float32 and float16, both outputs,
against onnxruntime (opset 27, which runs the op's function body) and ONNX's reference; a
prefill then a decode step carrying present_state; the convolution of a Mamba-style block,
following a MatMul and a Transpose and followed by a Transpose; an unnamed present_state; a
constant node folded at import; the IR node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import ort_outputs, reference_outputs, stack_outputs

OP = "CausalConvWithState"
RNG = np.random.default_rng(62)
TOL = {np.float32: 1e-5, np.float16: 4e-3}
#: (input shape, K): prefill, decode (L = 1), a length shorter than the state, one tap.
GEOMETRIES = [((2, 3, 7), 4), ((2, 4, 1), 4), ((1, 2, 2), 4), ((3, 2, 5), 1), ((1, 1, 6), 3)]
OPERANDS = {"plain": ("x", "w"), "bias": ("x", "w", "b"), "past": ("x", "w", "", "p"),
            "bias_past": ("x", "w", "b", "p")}  # fmt: skip


def operands(
    shape: tuple[int, ...], k: int, names: tuple[str, ...], dtype: Any = np.float32
) -> dict[str, np.ndarray]:
    n, c, _ = shape
    shapes = {"x": shape, "w": (c, 1, k), "b": (c,), "p": (n, c, k - 1)}
    return {v: RNG.standard_normal(shapes[v]).astype(dtype) for v in names if v}


def conv_model(names: tuple[str, ...], arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (),
               outputs: tuple[str, ...] = ("y", "s"), opset: int = 27, **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(OP, list(names), list(outputs), name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(v) for v in outputs if v],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], dtype: Any) -> None:
    assert len(got) == len(ref) == 2
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=TOL[dtype], atol=TOL[dtype])
    assert got[1].tobytes() == ref[1].tobytes()  # the state is a copy of what was read


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("activation", ["none", "silu", "swish"])
@pytest.mark.parametrize("which", list(OPERANDS))
@pytest.mark.parametrize(("shape", "k"), GEOMETRIES, ids=str)
def test_matches_onnxruntime(shape, k, which, activation, dtype) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, k, OPERANDS[which], dtype)
    model = conv_model(OPERANDS[which], arrays, activation=activation)
    assert_close(stack_outputs(model, arrays), ort_outputs(model, arrays), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("activation", ["none", "silu", "swish"])
@pytest.mark.parametrize("which", list(OPERANDS))
@pytest.mark.parametrize(("shape", "k"), GEOMETRIES, ids=str)
def test_matches_the_onnx_reference(shape, k, which, activation, dtype) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, k, OPERANDS[which], dtype)
    model = conv_model(OPERANDS[which], arrays, activation=activation)
    assert_close(stack_outputs(model, arrays), reference_outputs(model, arrays), dtype)


def test_the_activation_defaults_to_none() -> None:
    arrays = operands((2, 3, 5), 3, OPERANDS["bias"])
    got = stack_outputs(conv_model(OPERANDS["bias"], arrays), arrays)
    none = stack_outputs(conv_model(OPERANDS["bias"], arrays, activation="none"), arrays)
    assert all(g.tobytes() == n.tobytes() for g, n in zip(got, none, strict=True))


def test_a_decode_step_carries_the_prefill_s_state() -> None:
    """Prefill 6 positions, then decode the 7th with present_state as past_state: the outputs
    are the 7-position prefill's."""
    arrays = operands((2, 3, 7), 4, OPERANDS["bias"])
    whole = stack_outputs(conv_model(OPERANDS["bias"], arrays, activation="silu"), arrays)
    first = {**arrays, "x": arrays["x"][:, :, :6].copy()}
    y0, s0 = stack_outputs(conv_model(OPERANDS["bias"], first, activation="silu"), first)
    step = {**arrays, "x": arrays["x"][:, :, 6:].copy(), "p": s0}
    y1, s1 = stack_outputs(conv_model(OPERANDS["bias_past"], step, activation="silu"), step)
    np.testing.assert_allclose(np.concatenate([y0, y1], axis=2), whole[0], rtol=1e-6, atol=1e-6)
    assert s1.tobytes() == whole[1].tobytes()


def test_a_mamba_style_block_runs_the_convolution_between_other_ops() -> None:
    """h = x W (a MatMul), transposed to [B, C, L], convolved with SiLU, transposed back and
    projected: the convolution follows a Transpose and feeds one, its state a graph output."""
    x = RNG.standard_normal((2, 6, 4)).astype(np.float32)
    w_in, w_out = (
        RNG.standard_normal((4, 8)).astype(np.float32),
        RNG.standard_normal((8, 4)).astype(np.float32),
    )
    taps, bias = (
        RNG.standard_normal((8, 1, 4)).astype(np.float32),
        RNG.standard_normal(8).astype(np.float32),
    )
    past = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w_in"], ["h"]),
        helper.make_node("Transpose", ["h"], ["hc"], perm=[0, 2, 1]),
        helper.make_node(
            OP, ["hc", "taps", "bias", "past"], ["c", "state"], name="conv", activation="silu"
        ),
        helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["ct", "w_out"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(a, n)
        for n, a in (("w_in", w_in), ("w_out", w_out), ("taps", taps), ("bias", bias))
    ]
    graph = helper.make_graph(
        nodes, "mamba", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 4]),
                         helper.make_tensor_value_info("past", TensorProto.FLOAT, [2, 8, 3])],
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("state")], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    feeds = {"x": x, "past": past}
    got, want = stack_outputs(model, feeds), ort_outputs(model, feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_an_unnamed_present_state_gets_a_fresh_value() -> None:
    arrays = operands((2, 3, 5), 3, OPERANDS["plain"])
    model = conv_model(OPERANDS["plain"], arrays, outputs=("y", ""), activation="silu")
    (node,) = import_model(model).nodes
    assert node.outputs[0] == "y" and node.outputs[1].startswith("n0.present_state")
    (got,) = stack_outputs(model, arrays)
    np.testing.assert_allclose(
        got,
        ort_outputs(conv_model(OPERANDS["plain"], arrays, activation="silu"), arrays)[0],
        rtol=1e-5,
        atol=1e-5,
    )


def test_a_constant_node_folds_at_import_as_onnxruntime() -> None:
    arrays = operands((2, 3, 5), 3, OPERANDS["bias_past"])
    model = conv_model(OPERANDS["bias_past"], arrays, consts=tuple(arrays), activation="swish")
    assert import_model(model).nodes == ()
    assert_close(stack_outputs(model, {}), ort_outputs(model, {}), np.float32)


def test_the_ir_node_takes_a_zero_bias_before_a_past_state() -> None:
    arrays = operands((2, 3, 5), 3, OPERANDS["past"])
    graph = import_model(conv_model(OPERANDS["past"], arrays, activation="silu"))
    (node,) = graph.nodes
    assert node.op is OpType.CAUSAL_CONV_WITH_STATE and node.outputs == ("y", "s")
    assert node.inputs[:2] == ("x", "w") and node.inputs[3] == "p"
    assert graph.constants[node.inputs[2]].tolist() == [0.0, 0.0, 0.0]
    assert node.attr("activation") == "silu"


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 2, 5]),
    w: tuple[int, list[int]] = (TensorProto.FLOAT, [2, 1, 3]),
    b: tuple[int, list[int]] | None = None,
    p: tuple[int, list[int]] | None = None,
    opset: int = 27,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = ("y", "s"),
    **attrs: Any,
) -> onnx.ModelProto:
    names = inputs or ("x", "w", "b" if b else "", "p" if p else "")
    while inputs is None and not names[-1]:
        names = names[:-1]
    node = helper.make_node(OP, list(names), list(outputs), name="n0", **attrs)
    vis = [
        helper.make_tensor_value_info(n, *t)
        for n, t in (("x", x), ("w", w), ("b", b), ("p", p))
        if t
    ]
    outs = [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    graph = helper.make_graph([node], "g", vis, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


F, H, D, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 26": (_raw(opset=26), r"\(opset 27\+, model opset 26\) takes input, weight and the optional bias and past_state"),
    "one input": (_raw(inputs=("x",)), r"got \['x'\] -> \['y', 's'\]"),
    "no weight": (_raw(inputs=("x", "")), r"got \['x', ''\]"),
    "five inputs": (_raw(inputs=("x", "w", "x", "x", "x")), "takes input, weight"),
    "three outputs": (_raw(outputs=("y", "s", "z")), "and output and present_state"),
    "no output": (_raw(outputs=("", "s")), "and output and present_state"),
    "float64": (_raw(x=(D, [1, 2, 5]), w=(D, [2, 1, 3])), r"takes a float16 or float32 input, got float64\[1, 2, 5\]"),
    "int input": (_raw(x=(I32, [1, 2, 5])), r"got int32\[1, 2, 5\]"),
    "rank 2": (_raw(x=(F, [2, 5])), r"takes a float input \[B, C, L\], got float32\[2, 5\]"),
    "weight dtype": (_raw(w=(H, [2, 1, 3])), r"takes a weight float32\[2, 1, K\] \(K >= 1\) for input float32\[1, 2, 5\], got float16\[2, 1, 3\]"),
    "weight not depthwise": (_raw(w=(F, [2, 2, 3])), r"got float32\[2, 2, 3\]"),
    "weight channels": (_raw(w=(F, [3, 1, 3])), r"got float32\[3, 1, 3\]"),
    "weight rank": (_raw(w=(F, [2, 3])), r"got float32\[2, 3\]"),
    "bias shape": (_raw(b=(F, [3])), r"takes a bias float32\[2\] for input float32\[1, 2, 5\], got float32\[3\]"),
    "bias dtype": (_raw(b=(H, [2])), r"got float16\[2\]"),
    "past_state shape": (_raw(p=(F, [1, 2, 3])), r"takes a past_state float32\[1, 2, 2\] for input float32\[1, 2, 5\] and weight float32\[2, 1, 3\], got float32\[1, 2, 3\]"),
    "past_state batch": (_raw(b=(F, [2]), p=(F, [2, 2, 2])), r"got float32\[2, 2, 2\]"),
    "unknown activation": (_raw(activation="relu"), "takes activation none, silu, swish, got 'relu'"),
    "activation case": (_raw(activation="SiLU"), "got 'SiLU'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value
