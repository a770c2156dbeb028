# ruff: noqa: E501 - the case tables read best one case per line
"""LinearAttention through the whole stack against onnxruntime (which runs the op) and ONNX's
reference, and its bad input as typed errors naming the node.

Every update_rule; multi-head, group-query and multi-query heads; per-head and per-key decay,
per-head and shared beta; with and without past_state (a float32 one beside float16 activations
too, against the reference); decode and prefill; the default and an explicit scale; float32 and
float16; a prefill then a decode step carrying present_state; linear attention between MatMul
projections; a constant node folded at import; the IR node's resolved
attributes and fillers."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import ort_outputs, reference_outputs, stack_outputs

OP = "LinearAttention"
RNG = np.random.default_rng(68)
TOL = {np.float32: 2e-5, np.float16: 4e-3}
NAMES = ("q", "k", "v", "s", "g", "b")


def la_model(names: list[str], arrays: dict[str, np.ndarray], outputs: tuple[str, ...] = ("y", "st"),
             opset: int = 27, consts: tuple[str, ...] = (), **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    node = helper.make_node(OP, names, list(outputs), name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(v) for v in outputs if v],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def operands(rule: str, b: int = 2, t: int = 3, hq: int = 2, hkv: int = 2, dk: int = 4, dv: int = 3, dtype: Any = np.float32,
             past: bool = True, per_key: bool = False, beta1: bool = False, state_dtype: Any = None) -> dict[str, np.ndarray]:  # fmt: skip
    out = {
        "q": RNG.standard_normal((b, t, hq * dk)).astype(dtype),
        "k": (RNG.standard_normal((b, t, hkv * dk)) / 2).astype(dtype),
        "v": RNG.standard_normal((b, t, hkv * dv)).astype(dtype),
    }
    if past:
        out["s"] = RNG.standard_normal((b, hkv, dk, dv)).astype(state_dtype or dtype)
    if "gated" in rule:
        out["g"] = -RNG.random((b, t, hkv * (dk if per_key else 1))).astype(dtype)
    if "delta" in rule:
        out["b"] = RNG.random((b, t, 1 if beta1 else hkv)).astype(dtype)
    return out


def names_of(arrays: dict[str, np.ndarray]) -> list[str]:
    """ONNX's inputs: the given ones in their places, empty names before a later one."""
    last = max(NAMES.index(n) for n in arrays)
    return [n if n in arrays else "" for n in NAMES[: last + 1]]


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], tol: float) -> None:
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("rule", "shape", "options"),
    [
        ("linear", dict(), dict()),
        ("linear", dict(t=1), dict(past=False)),
        ("gated", dict(), dict()),
        ("gated", dict(hq=4, hkv=2), dict(per_key=True, past=False)),
        ("delta", dict(t=5), dict()),
        ("delta", dict(hq=3, hkv=1), dict(beta1=True, past=False)),
        ("gated_delta", dict(), dict()),
        ("gated_delta", dict(hq=4, hkv=2), dict(per_key=True)),
        ("gated_delta", dict(hq=4, hkv=1, t=1), dict(beta1=True)),
        ("gated_delta", dict(b=1, t=6), dict(past=False)),
    ],
    ids=["linear", "linear_decode_no_past", "gated", "gated_gqa_per_key_no_past", "delta_prefill", "delta_mqa_shared_beta_no_past",
         "gated_delta", "gated_delta_gqa_per_key", "gated_delta_mqa_decode", "gated_delta_no_past"],
)  # fmt: skip
def test_linear_attention_matches_onnxruntime_and_the_reference(
    rule, shape, options, dtype
) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(rule, dtype=dtype, **shape, **options)
    model = la_model(names_of(arrays), arrays, update_rule=rule, q_num_heads=shape.get("hq", 2),
                     kv_num_heads=shape.get("hkv", 2))  # fmt: skip
    got = stack_outputs(model, arrays)
    assert_close(got, ort_outputs(model, arrays), TOL[dtype])
    assert_close(got, reference_outputs(model, arrays), TOL[dtype])


@pytest.mark.parametrize("scale", [0.0, 0.25, -1.5])
def test_scale_matches_onnxruntime_and_the_reference(scale: float) -> None:
    arrays = operands("gated_delta", hq=4, hkv=2)
    model = la_model(list(NAMES), arrays, q_num_heads=4, kv_num_heads=2, scale=scale)
    got = stack_outputs(model, arrays)
    assert_close(got, ort_outputs(model, arrays), TOL[np.float32])
    for g, r in zip(got, reference_outputs(model, arrays), strict=True):
        assert g.tobytes() == r.tobytes()  # the kernel takes the reference's steps


@pytest.mark.parametrize(
    ("dtype", "state_dtype"),
    [(np.float16, np.float32), (np.float32, np.float16)],
    ids=["f16_f32_state", "f32_f16_state"],
)
def test_a_state_of_its_own_type_matches_the_reference(dtype: Any, state_dtype: Any) -> None:
    arrays = operands("gated_delta", dtype=dtype, state_dtype=state_dtype)
    model = la_model(list(NAMES), arrays, q_num_heads=2, kv_num_heads=2)
    got = stack_outputs(model, arrays)
    assert got[1].dtype == state_dtype
    assert_close(got, reference_outputs(model, arrays), TOL[np.float16])


def test_a_prefill_then_a_decode_step_carry_present_state() -> None:
    arrays = operands("gated_delta", t=4, past=False)
    whole = stack_outputs(
        la_model(["q", "k", "v", "", "g", "b"], arrays, q_num_heads=2, kv_num_heads=2), arrays
    )
    first_in = {n: a[:, :3] for n, a in arrays.items()}
    first = stack_outputs(
        la_model(["q", "k", "v", "", "g", "b"], first_in, q_num_heads=2, kv_num_heads=2), first_in
    )
    step_in = {**{n: a[:, 3:] for n, a in arrays.items()}, "s": first[1]}
    step = stack_outputs(la_model(list(NAMES), step_in, q_num_heads=2, kv_num_heads=2), step_in)
    np.testing.assert_allclose(
        np.concatenate([first[0], step[0]], axis=1), whole[0], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(step[1], whole[1], rtol=1e-5, atol=1e-6)
    assert_close(
        step,
        ort_outputs(la_model(list(NAMES), step_in, q_num_heads=2, kv_num_heads=2), step_in),
        TOL[np.float32],
    )


def test_linear_attention_between_matmul_projections() -> None:
    x = RNG.standard_normal((2, 5, 6)).astype(np.float32)
    w = {
        n: RNG.standard_normal((6, c)).astype(np.float32) / 3
        for n, c in (("wq", 8), ("wk", 4), ("wv", 6), ("wg", 2), ("wb", 2))
    }
    wo = RNG.standard_normal((12, 6)).astype(np.float32) / 3
    nodes = [helper.make_node("MatMul", ["x", n], [n[1]]) for n in w]
    nodes += [helper.make_node("Sigmoid", ["b"], ["bs"]), helper.make_node("Neg", ["g"], ["gn"]),
              helper.make_node(OP, ["q", "k", "v", "", "gn", "bs"], ["o", "st"], q_num_heads=4, kv_num_heads=2),
              helper.make_node("MatMul", ["o", "wo"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
                              [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(a, n) for n, a in {**w, "wo": wo}.items()])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    assert_close(stack_outputs(model, {"x": x}), ort_outputs(model, {"x": x}), 1e-4)


def test_the_ir_node_resolves_its_attributes_and_fills_its_inputs() -> None:
    arrays = operands("delta", past=False)
    (node,) = import_model(
        la_model(
            ["q", "k", "v", "", "", "b"],
            arrays,
            update_rule="delta",
            q_num_heads=2,
            kv_num_heads=2,
            chunk_size=16,
        )
    ).nodes
    assert node.op is OpType.LINEAR_ATTENTION and len(node.inputs) == 6
    assert (
        node.attr("update_rule"),
        node.attr("q_num_heads"),
        node.attr("kv_num_heads"),
        node.attr("scale"),
    ) == ("delta", 2, 2, 0.0)
    assert node.attr("chunk_size", None) is None
    (default,) = import_model(
        la_model(list(NAMES), operands("gated_delta"), q_num_heads=2, kv_num_heads=2)
    ).nodes
    assert default.attr("update_rule") == "gated_delta"


def test_a_constant_node_folds_at_import() -> None:
    arrays = operands("gated")
    model = la_model(
        ["q", "k", "v", "s", "g"],
        arrays,
        consts=tuple(arrays),
        update_rule="gated",
        q_num_heads=2,
        kv_num_heads=2,
    )
    graph = import_model(model)
    assert not graph.nodes
    assert_close(stack_outputs(model, {}), reference_outputs(model, {}), TOL[np.float32])


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda a: la_model(list(NAMES), a, opset=26, q_num_heads=2, kv_num_heads=2), r"opset 27\+, model opset 26"),
        (lambda a: la_model(["q", "k"], a, q_num_heads=2, kv_num_heads=2), r"takes query, key, value"),
        (lambda a: la_model(list(NAMES), a, outputs=("y",), q_num_heads=2, kv_num_heads=2), r"and output and present_state, got"),
        (lambda a: la_model(list(NAMES), a, outputs=("y", ""), q_num_heads=2, kv_num_heads=2), r"-> \['y', ''\]"),
        (lambda a: la_model(list(NAMES), a, update_rule="softmax", q_num_heads=2, kv_num_heads=2), r"update_rule linear, gated, delta, gated_delta, got 'softmax'"),
        (lambda a: la_model(list(NAMES), a, q_num_heads=2), "needs q_num_heads and kv_num_heads"),
        (lambda a: la_model(list(NAMES), a, update_rule="linear", q_num_heads=2, kv_num_heads=2), r"'linear' takes no decay and no beta"),
        (lambda a: la_model(["q", "k", "v", "s", "g"], a, q_num_heads=2, kv_num_heads=2), r"'gated_delta' takes a decay and a beta"),
        (lambda a: la_model(list(NAMES), a, q_num_heads=3, kv_num_heads=2), "q_num_heads 3 a positive multiple of kv_num_heads 2"),
        (lambda a: la_model(list(NAMES), a, q_num_heads=4, kv_num_heads=1), r"takes key \[2, 3, 1 \* Dk\]"),
        (lambda a: la_model(list(NAMES), {**a, "s": a["s"][:, :, :2]}, q_num_heads=2, kv_num_heads=2), r"past_state \[2, 2, 4, 3\]"),
        (lambda a: la_model(list(NAMES), {**a, "g": a["g"][:, :, :1]}, q_num_heads=2, kv_num_heads=2), r"takes decay \[2, 3, 2\] or \[2, 3, 8\]"),
        (lambda a: la_model(list(NAMES), {**a, "b": np.ones((2, 3, 3), np.float32)}, q_num_heads=2, kv_num_heads=2), r"takes beta \[2, 3, 2\] or \[2, 3, 1\]"),
        (lambda a: la_model(list(NAMES), {**a, "v": a["v"].astype(np.float64)}, q_num_heads=2, kv_num_heads=2), "of one type"),
        (lambda a: la_model(list(NAMES), {n: x.astype(np.float64) for n, x in a.items()}, q_num_heads=2, kv_num_heads=2), "float16 or float32 query"),
        (lambda a: la_model(list(NAMES), {**a, "s": a["s"].astype(np.float64)}, q_num_heads=2, kv_num_heads=2), "float16 or float32 past_state"),
    ],
    ids=["opset 26", "two inputs", "one output", "unnamed present_state", "unknown rule", "no kv heads", "linear with decay", "gated_delta without beta",
         "heads not dividing", "key heads", "past_state shape", "decay shape", "beta shape", "value type", "float64", "float64 state"],
)  # fmt: skip
def test_malformed_nodes_are_model_format_errors_naming_the_node(build, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelFormatError, match=message) as info:
        import_model(build(operands("gated_delta")))
    assert info.value.node == "n0"
