# ruff: noqa: E501 - the case tables read best one case per line
"""Attention through the whole stack against onnxruntime and ONNX's reference, and its bad or
unsupported input as typed errors naming the node.

4-D and 3-D operands; multi-head, group-query and multi-query heads; a larger value head; bool
and float masks of rank 2 to 4 (and one shorter than the keys); is_causal; a KV cache (past_key
and past_value, present_key and present_value); scale, softcap; every qk_matmul_output_mode;
softmax_precision; float32, float16 and float64 — against onnxruntime (which runs the op, float64
at about float32's precision) and ONNX's reference (a scale whose root float32 holds exactly:
the reference takes the root of a given scale in float32, the stack in float64); nonpad_kv_seqlen (opset 24) and the windows (opset 25) too; a prefill then a
decode step carrying present_key and present_value; a transformer block whose attention follows
MatMul projections and feeds one; unnamed outputs; a constant node folded at import; the IR
node's resolved attributes and fillers."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from stack.compiler import OpType
from tests.stack.adapter.both import ort_outputs, reference_outputs, stack_outputs

OP = "Attention"
RNG = np.random.default_rng(65)
TOL = {np.float32: 2e-5, np.float16: 4e-3, np.float64: 1e-10}
#: onnxruntime computes float64 attention at about float32's precision.
ORT_TOL = {**TOL, np.float64: 5e-5}
ALL_OUTS = ("y", "pk_out", "pv_out", "qk")


def attention_model(names: list[str], arrays: dict[str, np.ndarray], outputs: tuple[str, ...] = ("y",),
                    opset: int = 23, consts: tuple[str, ...] = (), **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(OP, names, list(outputs), name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(v) for v in outputs if v],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def operands(shapes: dict[str, tuple[int, ...]], dtype: Any = np.float32) -> dict[str, np.ndarray]:
    out = {}
    for name, shape in shapes.items():
        if name == "mb":
            out[name] = RNG.random(shape) > 0.3
        elif name == "n":
            out[name] = np.array(shape, np.int64)
        else:
            out[name] = RNG.standard_normal(shape).astype(dtype)
    return out


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], dtype: Any, tol: dict = TOL) -> None:
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=tol[dtype], atol=tol[dtype])


#: name -> (operand shapes by input name, the node's inputs, outputs, attributes).
CASES = {
    "4d": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8)}, ["q", "k", "v"], ("y",), {}),
    "4d_v_head": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 10)}, ["q", "k", "v"], ("y",), {"scale": 0.25}),
    "4d_gqa_causal": ({"q": (2, 6, 4, 8), "k": (2, 2, 6, 8), "v": (2, 2, 6, 8)}, ["q", "k", "v"], ("y",), {"is_causal": 1}),
    "4d_mqa_softcap": ({"q": (1, 4, 3, 8), "k": (1, 1, 5, 8), "v": (1, 1, 5, 8)}, ["q", "k", "v"], ("y",), {"softcap": 2.0}),
    "3d": ({"q": (2, 4, 24), "k": (2, 6, 24), "v": (2, 6, 24)}, ["q", "k", "v"], ("y",), {"q_num_heads": 3, "kv_num_heads": 3}),
    "3d_gqa_mask": ({"q": (2, 4, 72), "k": (2, 6, 24), "v": (2, 6, 30), "m": (4, 6)}, ["q", "k", "v", "m"], ("y",), {"q_num_heads": 9, "kv_num_heads": 3}),
    "bool_mask_4d": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "mb": (2, 3, 4, 6)}, ["q", "k", "v", "mb"], ("y",), {}),
    "float_mask_3d": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "m": (3, 4, 6)}, ["q", "k", "v", "m"], ("y",), {"is_causal": 1}),
    "past": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "m": (2, 1, 4, 18), "pk": (2, 3, 12, 8), "pv": (2, 3, 12, 8)}, ["q", "k", "v", "m", "pk", "pv"], ("y", "pk_out", "pv_out"), {}),
    "past_gqa_3d": ({"q": (2, 4, 72), "k": (2, 6, 24), "v": (2, 6, 24), "m": (4, 18), "pk": (2, 3, 12, 8), "pv": (2, 3, 12, 8)}, ["q", "k", "v", "m", "pk", "pv"], ("y", "pk_out", "pv_out"), {"q_num_heads": 9, "kv_num_heads": 3}),
    "qk_mode0": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8)}, ["q", "k", "v"], ("y", "", "", "qk"), {}),
    "qk_mode1_softcap": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "m": (4, 6)}, ["q", "k", "v", "m"], ("y", "", "", "qk"), {"qk_matmul_output_mode": 1, "softcap": 2.0}),
    "qk_mode2_past": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "m": (2, 3, 4, 18), "pk": (2, 3, 12, 8), "pv": (2, 3, 12, 8)}, ["q", "k", "v", "m", "pk", "pv"], ALL_OUTS, {"qk_matmul_output_mode": 2}),
    "qk_mode3_bool": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "mb": (4, 6)}, ["q", "k", "v", "mb"], ("y", "", "", "qk"), {"qk_matmul_output_mode": 3}),
    "softmax_double": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8)}, ["q", "k", "v"], ("y",), {"softmax_precision": 11}),
}  # fmt: skip
#: Cases onnxruntime computes another way or refuses: a mask shorter than the keys (it
#: refuses; ONNX pads it with -inf), a causal KV cache at opset 23.
REFERENCE_ONLY = {
    "short_mask": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "m": (4, 4)}, ["q", "k", "v", "m"], ("y",), {}),
    "rank1_bool_mask": ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8), "mb": (6,)}, ["q", "k", "v", "mb"], ("y",), {}),
    "past_causal": ({"q": (2, 3, 4, 8), "k": (2, 3, 4, 8), "v": (2, 3, 4, 8), "pk": (2, 3, 3, 8), "pv": (2, 3, 3, 8)}, ["q", "k", "v", "", "pk", "pv"], ("y", "pk_out", "pv_out"), {"is_causal": 1}),
}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_onnxruntime(case: str, dtype: Any) -> None:
    shapes, names, outs, attrs = CASES[case]
    arrays = operands(shapes, dtype)
    model = attention_model(names, arrays, outs, **attrs)
    assert_close(stack_outputs(model, arrays), ort_outputs(model, arrays), dtype, ORT_TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", [*CASES, *REFERENCE_ONLY])
def test_matches_the_onnx_reference(case: str, dtype: Any) -> None:
    shapes, names, outs, attrs = {**CASES, **REFERENCE_ONLY}[case]
    arrays = operands(shapes, dtype)
    model = attention_model(names, arrays, outs, **attrs)
    assert_close(stack_outputs(model, arrays), reference_outputs(model, arrays), dtype)


@pytest.mark.parametrize(
    ("shapes", "names", "opset", "attrs"),
    [
        ({"q": (2, 2, 1, 8), "k": (2, 2, 8, 8), "v": (2, 2, 8, 8), "n": (3, 8)}, ["q", "k", "v", "", "", "", "n"], 24, {"is_causal": 1}),
        ({"q": (2, 4, 3, 8), "k": (2, 2, 6, 8), "v": (2, 2, 6, 8), "mb": (2, 1, 3, 6), "n": (4, 6)}, ["q", "k", "v", "mb", "", "", "n"], 24, {"is_causal": 1}),
        ({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 8)}, ["q", "k", "v"], 25, {"is_causal": 1, "left_window_size": 2}),
        ({"q": (1, 1, 5, 4), "k": (1, 1, 5, 4), "v": (1, 1, 5, 4)}, ["q", "k", "v"], 25, {"left_window_size": 1, "right_window_size": 2}),
        ({"q": (2, 3, 4, 8), "k": (2, 3, 8, 8), "v": (2, 3, 8, 8), "m": (3, 4, 8), "n": (5, 8)}, ["q", "k", "v", "m", "", "", "n"], 25, {"is_causal": 1, "left_window_size": 2}),
    ],
    ids=["nonpad_decode", "nonpad_gqa_bool_mask", "left_window", "bidirectional_window", "window_nonpad_mask"],
)  # fmt: skip
def test_nonpad_and_windows_match_onnxruntime_and_the_reference(
    shapes, names, opset, attrs
) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shapes)
    model = attention_model(names, arrays, opset=opset, **attrs)
    got = stack_outputs(model, arrays)
    assert_close(got, ort_outputs(model, arrays), np.float32)
    assert_close(got, reference_outputs(model, arrays), np.float32)


def test_a_decode_step_carries_the_prefill_s_cache() -> None:
    """Prefill 5 causal positions, then decode the 6th with present_key and present_value as
    the past: the same outputs and cache as a 6-position prefill."""
    a = operands({"q": (1, 4, 6, 8), "k": (1, 2, 6, 8), "v": (1, 2, 6, 8)})
    whole = stack_outputs(
        attention_model(["q", "k", "v"], a, ("y", "pk_out", "pv_out"), is_causal=1), a
    )
    first = {n: t[:, :, :5].copy() for n, t in a.items()}
    y0, k0, v0 = stack_outputs(
        attention_model(["q", "k", "v"], first, ("y", "pk_out", "pv_out"), is_causal=1), first
    )
    step = {**{n: t[:, :, 5:].copy() for n, t in a.items()}, "pk": k0, "pv": v0}
    model = attention_model(
        ["q", "k", "v", "", "pk", "pv"], step, ("y", "pk_out", "pv_out"), is_causal=1
    )
    y1, k1, v1 = stack_outputs(model, step)
    np.testing.assert_allclose(np.concatenate([y0, y1], axis=2), whole[0], rtol=1e-5, atol=1e-6)
    assert k1.tobytes() == whole[1].tobytes() and v1.tobytes() == whole[2].tobytes()


def test_a_transformer_block_runs_attention_between_projections() -> None:
    """x [B, S, E] projected by three MatMuls to 3-D Q, K and V, causal group-query attention,
    then an output projection: against onnxruntime."""
    x = RNG.standard_normal((2, 5, 16)).astype(np.float32)
    weights = {n: RNG.standard_normal(s).astype(np.float32) * 0.3
               for n, s in (("wq", (16, 16)), ("wk", (16, 8)), ("wv", (16, 8)), ("wo", (16, 16)))}  # fmt: skip
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node(
            OP, ["q", "k", "v"], ["a"], name="attn", is_causal=1, q_num_heads=4, kv_num_heads=2
        ),
        helper.make_node("MatMul", ["a", "wo"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 5, 16))],
                              [numpy_helper.from_array(w, n) for n, w in weights.items()])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    assert_close(stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x}), np.float32)


def test_the_ir_node_has_resolved_attributes_four_outputs_and_fillers() -> None:
    a = operands(
        {
            "q": (2, 3, 4, 8),
            "k": (2, 3, 6, 8),
            "v": (2, 3, 6, 8),
            "pk": (2, 3, 2, 8),
            "pv": (2, 3, 2, 8),
        }
    )
    graph = import_model(attention_model(["q", "k", "v", "", "pk", "pv"], a, ("y",), opset=24))
    (node,) = [n for n in graph.nodes if n.op is OpType.ATTENTION]
    assert dict(node.attrs) == {
        "is_causal": 0, "q_num_heads": 3, "kv_num_heads": 3, "qk_matmul_output_mode": 0,
        "softmax_precision": 0, "left_window_size": -1, "right_window_size": -1,
        "scale": 1 / np.sqrt(8), "softcap": 0.0,
    }  # fmt: skip
    assert len(node.outputs) == 4 and node.outputs[0] == "y" and all(node.outputs)
    mask = graph.constants[node.inputs[3]]
    assert mask.shape == (4, 8) and mask.dtype == np.float32 and not mask.any()
    nonpad = operands({"q": (2, 3, 4, 8), "k": (2, 3, 6, 8), "v": (2, 3, 6, 10), "n": (6, 6)})
    graph = import_model(attention_model(["q", "k", "v", "", "", "", "n"], nonpad, opset=24))
    (node,) = [n for n in graph.nodes if n.op is OpType.ATTENTION]
    shapes = [graph.constants[v].shape for v in node.inputs[3:6]]
    assert shapes == [(4, 6), (2, 3, 0, 8), (2, 3, 0, 10)] and node.inputs[6] == "n"


def test_a_constant_node_folds_at_import() -> None:
    a = operands({"q": (1, 2, 3, 4), "k": (1, 2, 5, 4), "v": (1, 2, 5, 4)})
    model = attention_model(["q", "k", "v"], a, ("y",), consts=("q", "k", "v"), is_causal=1)
    graph = import_model(model)
    assert not [n for n in graph.nodes if n.op is OpType.ATTENTION]
    np.testing.assert_allclose(graph.constants["y"], reference_outputs(model, {})[0], rtol=1e-6)


Q, KV = {"q": (1, 2, 3, 4)}, {"k": (1, 2, 5, 4), "v": (1, 2, 5, 4)}


@pytest.mark.parametrize(
    ("shapes", "names", "outs", "opset", "attrs", "err", "message"),
    [
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 22, {}, ModelFormatError, r"opset 23\+, model opset 22"),
        ({**Q, **KV}, ["q", "k"], ("y",), 23, {}, ModelFormatError, "takes Q, K, V"),
        ({**Q, **KV, "n": (5,)}, ["q", "k", "v", "", "", "", "n"], ("y",), 23, {}, ModelFormatError, "takes Q, K, V"),
        ({**Q, **KV}, ["q", "k", "v"], ("y", "a", "b", "c", "d"), 23, {}, ModelFormatError, "takes Q, K, V"),
        ({"q": (1, 3, 8), "k": (1, 5, 8), "v": (1, 5, 8)}, ["q", "k", "v"], ("y",), 23, {"q_num_heads": 3, "kv_num_heads": 2}, ModelFormatError, "splitting Q, K and V"),
        ({"q": (1, 3, 3, 4), **KV}, ["q", "k", "v"], ("y",), 23, {}, ModelFormatError, "kv heads dividing the query heads, got 2 for 3"),
        ({**Q, **KV, "m": (3, 7)}, ["q", "k", "v", "m"], ("y",), 23, {}, ModelFormatError, r"attn_mask broadcast to \[1, 2, 3, 5\]"),
        ({**Q, **KV, "pk": (1, 2, 2, 4)}, ["q", "k", "v", "", "pk"], ("y",), 23, {}, ModelFormatError, "past_key and past_value together"),
        ({**Q, **KV, "pk": (1, 2, 2, 4), "pv": (1, 2, 2, 4), "n": (5,)}, ["q", "k", "v", "", "pk", "pv", "n"], ("y",), 24, {}, ModelFormatError, "nonpad_kv_seqlen without past_key"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 23, {"is_causal": 2}, ModelFormatError, "is_causal 0 or 1"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 23, {"qk_matmul_output_mode": 4}, ModelFormatError, "qk_matmul_output_mode 0 to 3"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 23, {"softmax_precision": 6}, ModelFormatError, "softmax_precision 1, 10, 11 or 16, got 6"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 24, {"left_window_size": 2}, ModelFormatError, "from opset 25, model opset 24"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 25, {"right_window_size": -3}, ModelFormatError, "window sizes of -1 or more"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 25, {"q_num_heads": 2, "kv_num_heads": 2}, ModelFormatError, "with 3-D operands only"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 23, {"softmax_precision": 16}, UnsupportedOpError, "a bfloat16 softmax_precision"),
        ({**Q, **KV}, ["q", "k", "v"], ("y",), 23, {"scale": 0.0}, UnsupportedOpError, "a scale of 0.0"),
        ({**Q, **KV}, ["q", "k", "v"], ("y", "", "", "qk"), 23, {"softcap": 2.0}, UnsupportedOpError, "qk_matmul_output_mode 0 with a softcap"),
    ],
    ids=["opset 22", "two inputs", "nonpad at opset 23", "five outputs", "3-D heads",
         "heads not dividing", "mask too long", "past_key alone", "nonpad with a past", "is_causal 2",
         "mode 4", "precision 6", "window at opset 24", "window -3", "4-D heads at opset 25",
         "bfloat16 precision", "scale 0", "mode 0 softcap"],
)  # fmt: skip
def test_bad_or_unsupported_nodes_are_typed_errors_naming_the_node(
    shapes, names, outs, opset, attrs, err, message
) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shapes)
    with pytest.raises(err, match=message) as info:
        import_model(attention_model(names, arrays, outs, opset=opset, **attrs))
    assert info.value.node == "n0" and info.value.op == OP


def test_an_int_mask_is_unsupported_naming_the_node() -> None:
    arrays = {**operands({**Q, **KV}), "m": np.zeros((3, 5), np.int32)}
    with pytest.raises(UnsupportedOpError, match="an attn_mask of int32") as info:
        import_model(attention_model(["q", "k", "v", "m"], arrays))
    assert info.value.node == "n0"


def test_a_mode_0_softcap_runs_when_qk_matmul_output_is_not_read() -> None:
    arrays = operands({**Q, **KV})
    model = attention_model(["q", "k", "v"], arrays, ("y",), softcap=2.0)
    assert_close(stack_outputs(model, arrays), ort_outputs(model, arrays), np.float32)
