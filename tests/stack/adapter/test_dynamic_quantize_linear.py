"""DynamicQuantizeLinear through the whole stack against onnxruntime and ONNX's reference, bit
for bit: its three outputs (uint8 y, float32 y_scale, uint8 y_zero_point) as model outputs and
as inputs of later nodes (DequantizeLinear; the MatMulInteger of a dynamically quantised
MatMul), mixed-sign, positive, negative, all-zero, scalar, empty and constant inputs, opsets 11
to 21; and its bad input as typed errors naming the node."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import CompiledModel, OpType
from stack.compiler.jit import shared_runtime

RNG = np.random.default_rng(52)
F32 = np.float32
OUTS = ("y", "y_scale", "y_zero_point")
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.float16: TensorProto.FLOAT16, np.int8: TensorProto.INT8}  # fmt: skip


def dql_model(shape: tuple[int, ...], opset: int = 11, dtype: type = F32) -> onnx.ModelProto:
    """x -> DynamicQuantizeLinear -> its three outputs, each a model output."""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], list(OUTS), name="dq")
    x = helper.make_tensor_value_info("x", ONNX_TYPE[dtype], shape)
    outs = [helper.make_tensor_value_info(n, t, s) for n, t, s in (
        ("y", TensorProto.UINT8, shape), ("y_scale", TensorProto.FLOAT, []),
        ("y_zero_point", TensorProto.UINT8, []))]  # fmt: skip
    graph = helper.make_graph([node], "g", [x], outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ort_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def stack_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs, in order, as the whole stack computes them."""
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        got = compiled.run(feeds)
    finally:
        compiled.close()
    return [got[o.name] for o in model.graph.output]


def assert_identical(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    """Same dtypes, shapes and bytes (a float32 scale equal to the last bit)."""
    assert [(g.dtype, g.shape) for g in got] == [(w.dtype, w.shape) for w in want]
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes(), (g, w)


INPUTS = {
    "mixed": RNG.standard_normal((3, 17)).astype(F32) * 4,
    "mixed 4-D": RNG.standard_normal((2, 3, 5, 4)).astype(F32),
    "large": (RNG.standard_normal((64, 1024)) * 1e3 + 250).astype(F32),
    "positive": RNG.random((5, 6)).astype(F32) + 0.1,
    "negative": -RNG.random((5, 6)).astype(F32) * 1e-3,
    "tiny": RNG.standard_normal(40).astype(F32) * 1e-30,
    "onnx node test": np.array([0, 2, -3, -2.5, 1.34, 0.5], F32),
    "ties": np.array([-127.5, -0.5, 0.5, 1.5, 2.5, 127.5], F32),
    "scalar": np.array(3.25, F32),
}


@pytest.mark.parametrize("opset", [11, 13, 21])
@pytest.mark.parametrize("case", list(INPUTS))
def test_dynamic_quantize_linear_matches_onnxruntime_bit_for_bit(case: str, opset: int) -> None:
    x = INPUTS[case]
    model = dql_model(x.shape, opset)
    assert_identical(stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x}))


@pytest.mark.parametrize("case", list(INPUTS))
def test_dynamic_quantize_linear_matches_the_onnx_reference(case: str) -> None:
    x = INPUTS[case]
    model = dql_model(x.shape)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    assert_identical(stack_outputs(model, {"x": x}), [np.asarray(w) for w in want])


@pytest.mark.parametrize("shape", [(4, 3), ()])
def test_an_all_zero_input_takes_the_onnx_references_scale(shape: tuple[int, ...]) -> None:
    """ONNX's formula divides 0 by 0 here. y and y_zero_point are 0 in the stack, ONNX's
    reference and onnxruntime; the scale is ONNX's reference's 1/255 (onnxruntime's is 1)."""
    x = np.zeros(shape, F32)
    model = dql_model(shape)
    got = stack_outputs(model, {"x": x})
    assert_identical(got, [np.asarray(w) for w in ReferenceEvaluator(model).run(None, {"x": x})])
    y, scale, zero = ort_outputs(model, {"x": x})
    assert_identical([got[0], got[2]], [y, zero])
    assert float(scale) == 1.0 and got[1] == F32(1) / F32(255)


def test_an_empty_input_is_the_empty_range() -> None:
    """No elements: the range [0, 0] of an all-zero input (ONNX's reference cannot reduce it;
    onnxruntime gives y_zero_point 0 and, as for all zeros, the scale 1)."""
    x = np.zeros((0, 5), F32)
    y, scale, zero = stack_outputs(dql_model(x.shape), {"x": x})
    assert (y.shape, y.dtype, int(zero)) == ((0, 5), np.uint8, 0)
    assert scale == F32(1) / F32(255)
    assert int(ort_outputs(dql_model(x.shape), {"x": x})[2]) == 0


def test_a_constant_input_runs_on_the_device_like_a_run_time_one() -> None:
    """Like QuantizeLinear, DynamicQuantizeLinear has no constant-folding evaluator: a constant
    x stays a node, whose outputs are those of the same x given at run time."""
    x = INPUTS["mixed"]
    node = helper.make_node("DynamicQuantizeLinear", ["c"], list(OUTS), name="dq")
    graph = helper.make_graph(
        [node], "g", [], [helper.make_empty_tensor_value_info(n) for n in OUTS],
        [numpy_helper.from_array(x, "c")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert [n.op for n in import_model(model).nodes] == [OpType.DYNAMIC_QUANTIZE_LINEAR]
    assert_identical(stack_outputs(model, {}), ort_outputs(dql_model(x.shape), {"x": x}))


def _chain(nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], out: str, shape):  # type: ignore[no-untyped-def]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info(out)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_its_outputs_feed_a_dequantize_linear() -> None:
    """y, y_scale and y_zero_point read by one node: the round trip onnxruntime computes."""
    x = INPUTS["mixed 4-D"]
    model = _chain(
        [helper.make_node("DynamicQuantizeLinear", ["x"], list(OUTS), name="dq"),
         helper.make_node("DequantizeLinear", list(OUTS), ["back"], name="deq")],
        [], "back", x.shape,
    )  # fmt: skip
    got, want = stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x})
    assert_identical(got, want)
    scale = float(stack_outputs(dql_model(x.shape), {"x": x})[1])
    assert np.abs(got[0] - x).max() <= scale / 2 + 1e-6


def test_a_dynamically_quantised_matmul_matches_onnxruntime() -> None:
    """onnxruntime's dynamic quantisation of a MatMul: DynamicQuantizeLinear of the activation,
    MatMulInteger with its zero point and the uint8 weights', Cast, then the product of the two
    scales; y_scale and y_zero_point are each read by a different node."""
    x = RNG.standard_normal((6, 16)).astype(F32)
    w = RNG.integers(0, 256, (16, 5)).astype(np.uint8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.uint8(131), "w_zero"),
             numpy_helper.from_array(F32(0.02), "w_scale")]  # fmt: skip
    model = _chain(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dq"),
         helper.make_node("MatMulInteger", ["xq", "w", "xz", "w_zero"], ["acc"], name="mm"),
         helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT, name="cast"),
         helper.make_node("Mul", ["xs", "w_scale"], ["s"], name="scales"),
         helper.make_node("Mul", ["accf", "s"], ["out"], name="rescale")],
        inits, "out", x.shape,
    )  # fmt: skip
    assert_identical(stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x}))


def test_unread_outputs_are_still_written_and_the_read_one_is_right() -> None:
    """Only y leaves the model: y_scale and y_zero_point are intermediates nobody reads."""
    x = INPUTS["mixed"]
    model = _chain(
        [helper.make_node("DynamicQuantizeLinear", ["x"], list(OUTS), name="dq"),
         helper.make_node("Identity", ["y"], ["out"], name="id")],
        [], "out", x.shape,
    )  # fmt: skip
    assert_identical(stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x})[:1])


def _node(inputs: list[str], outputs: list[str], opset: int = 11) -> onnx.ModelProto:
    node = helper.make_node("DynamicQuantizeLinear", inputs, outputs, name="dq")
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in inputs if n]
    graph = helper.make_graph(
        [node], "g", ins, [helper.make_empty_tensor_value_info(n) for n in outputs if n]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


BAD: dict[str, tuple[onnx.ModelProto, tuple[str, ...]]] = {
    "opset 10": (dql_model((4,), opset=10), ("opset 11+, model opset 10",)),
    "float64 x": (dql_model((4,), dtype=np.float64), ("takes a float32 x, got float64[4]",)),
    "float16 x": (dql_model((4,), dtype=np.float16), ("takes a float32 x, got float16[4]",)),
    "int8 x": (dql_model((4,), dtype=np.int8), ("takes a float32 x, got int8[4]",)),
    "two inputs": (_node(["x", "x2"], list(OUTS)), ("inputs ['x', 'x2']",)),
    "no output y_zero_point": (_node(["x"], ["y", "y_scale"]), ("outputs ['y', 'y_scale']",)),
    "an empty output name": (_node(["x"], ["y", "", "y_zero_point"]), ("gives y, y_scale and",)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_dynamic_quantize_linear_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, words = BAD[case]
    with pytest.raises(ModelFormatError) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "dq" and err.value.op == "DynamicQuantizeLinear"
    assert all(w in str(err.value) for w in ("DynamicQuantizeLinear", *words)), str(err.value)
