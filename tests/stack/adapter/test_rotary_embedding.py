# ruff: noqa: E501 - the error table reads best one case per line
"""RotaryEmbedding through the whole stack against onnxruntime and ONNX's reference, and its bad
input as typed errors naming the node.

4-D [B, H, S, D] and 3-D [B, S, H * D] X, halves and interleaved pairs, the whole head and a
partial rotary_embedding_dim, with and without position_ids, against onnxruntime (float32 and
float16, opset 23) and ONNX's reference (float32, float16); position ids repeating and out of
order; a rotation inside a graph (the query and key of one head product); a constant Y folded
at import; a position id out of range at run time (a fault naming the node) and in a constant
(a ModelFormatError)."""

from __future__ import annotations

from typing import Any

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
from stack.runtime.errors import ExecutionFaultError

OP = "RotaryEmbedding"
RNG = np.random.default_rng(59)
TOL = {np.float32: 1e-5, np.float16: 4e-3}
#: (X shape, num_heads, rotary_embedding_dim): 4-D and 3-D, whole and partial heads.
GEOMETRIES = [((2, 3, 5, 8), 0, 0), ((2, 3, 5, 8), 0, 4), ((2, 5, 24), 3, 0), ((1, 4, 16), 2, 2)]
MAX_POS = 12


def operands(
    shape: tuple[int, ...], num_heads: int, rot: int, ids: bool, dtype: Any = np.float32
) -> dict[str, np.ndarray]:
    """X, the caches of positions' angles ([MAX_POS, R/2] and position_ids, or [B, S, R/2])."""
    b, s = (shape[0], shape[2]) if len(shape) == 4 else shape[:2]
    head = shape[3] if len(shape) == 4 else shape[2] // num_heads
    half = (rot or head) // 2
    rows = (MAX_POS, half) if ids else (b, s, half)
    theta = RNG.uniform(0, 2 * np.pi, rows)
    arrays = {"X": RNG.standard_normal(shape).astype(dtype),
              "cos": np.cos(theta).astype(dtype), "sin": np.sin(theta).astype(dtype)}  # fmt: skip
    if ids:
        arrays["pos"] = RNG.integers(0, MAX_POS, (b, s)).astype(np.int64)
    return arrays


def rope_model(
    arrays: dict[str, np.ndarray], consts: tuple[str, ...] = (), **attrs: Any
) -> onnx.ModelProto:
    node = helper.make_node(OP, list(arrays), ["Y"], name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("Y")],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def stack_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        out = compiled.run(feeds)
        return [out[v.name] for v in model.graph.output]
    finally:
        compiled.close()


def attrs_of(num_heads: int, rot: int, interleaved: int) -> dict[str, int]:
    given = {"num_heads": num_heads, "rotary_embedding_dim": rot, "interleaved": interleaved}
    return {k: v for k, v in given.items() if v}


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], dtype: Any) -> None:
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("ids", [False, True], ids=["no_ids", "ids"])
@pytest.mark.parametrize("interleaved", [0, 1], ids=["halves", "interleaved"])
@pytest.mark.parametrize(("shape", "num_heads", "rot"), GEOMETRIES, ids=str)
def test_matches_onnxruntime(shape, num_heads, rot, interleaved, ids, dtype) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, num_heads, rot, ids, dtype)
    model = rope_model(arrays, **attrs_of(num_heads, rot, interleaved))
    assert_close(stack_run(model, arrays), ort_run(model, arrays), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("ids", [False, True], ids=["no_ids", "ids"])
@pytest.mark.parametrize("interleaved", [0, 1], ids=["halves", "interleaved"])
@pytest.mark.parametrize(("shape", "num_heads", "rot"), GEOMETRIES, ids=str)
def test_matches_the_onnx_reference(shape, num_heads, rot, interleaved, ids, dtype) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, num_heads, rot, ids, dtype)
    model = rope_model(arrays, **attrs_of(num_heads, rot, interleaved))
    want = ReferenceEvaluator(model).run(None, arrays)
    assert_close(stack_run(model, arrays), [np.asarray(w) for w in want], dtype)


def test_the_channels_past_the_rotary_dim_pass_through_unchanged() -> None:
    arrays = operands((2, 2, 3, 10), 0, 4, True)
    (got,) = stack_run(rope_model(arrays, rotary_embedding_dim=4), arrays)
    assert got[..., 4:].tobytes() == arrays["X"][..., 4:].tobytes()


def test_repeated_and_unordered_position_ids_read_their_rows() -> None:
    arrays = operands((1, 2, 4, 6), 0, 0, True)
    arrays["pos"] = np.array([[5, 5, 0, 11]], np.int64)
    model = rope_model(arrays)
    (got,) = stack_run(model, arrays)
    assert_close([got], ort_run(model, arrays), np.float32)
    rotated = stack_run(model, {**arrays, "X": arrays["X"][:, :, [1, 0, 2, 3]].copy()})[0]
    np.testing.assert_array_equal(rotated[:, :, 0], got[:, :, 1])  # same position, same angle


def test_query_and_key_rotated_inside_a_graph() -> None:
    """q = Wq x and k = Wk x rotated, then q k^T: the rotation runs between MatMuls."""
    x = RNG.standard_normal((1, 1, 6, 8)).astype(np.float32)
    wq, wk = (RNG.standard_normal((8, 8)).astype(np.float32) for _ in range(2))
    theta = np.arange(6)[:, None] / 10_000 ** (np.arange(4) / 4)
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node(OP, ["q", "cos", "sin", "pos"], ["qr"], name="rq"),
        helper.make_node(OP, ["k", "cos", "sin", "pos"], ["kr"], name="rk"),
        helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qr", "kt"], ["scores"]),
    ]
    inits = [numpy_helper.from_array(a, n) for n, a in
             (("wq", wq), ("wk", wk), ("cos", cos), ("sin", sin), ("pos", np.arange(6)[None]))]  # fmt: skip
    graph = helper.make_graph(
        nodes, "attn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 8])],
        [helper.make_empty_tensor_value_info("scores")], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    got, want = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)


def test_a_constant_rotation_folds_at_import_as_onnxruntime() -> None:
    arrays = operands((2, 5, 24), 3, 4, True)
    model = rope_model(arrays, consts=tuple(arrays), num_heads=3, rotary_embedding_dim=4)
    assert import_model(model).nodes == ()
    assert_close(stack_run(model, {}), ort_run(model, {}), np.float32)


def test_the_ir_node_carries_every_attribute() -> None:
    arrays = operands((2, 3, 5, 8), 0, 0, False)
    (node,) = import_model(rope_model(arrays)).nodes
    assert node.op is OpType.ROTARY_EMBEDDING and node.inputs == ("X", "cos", "sin")
    assert {a: node.attr(a) for a in ("interleaved", "num_heads", "rotary_embedding_dim")} == {
        "interleaved": 0, "num_heads": 0, "rotary_embedding_dim": 0,
    }  # fmt: skip


def test_a_position_id_out_of_range_at_run_time_is_a_fault_naming_the_node() -> None:
    arrays = operands((1, 2, 3, 4), 0, 0, True)
    arrays["pos"][0, 2] = MAX_POS
    with pytest.raises(ExecutionFaultError, match="position id out of") as err:
        stack_run(rope_model(arrays), arrays)
    assert err.value.details["ops"] == ["n0"]


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 2, 3, 4]),
    c: tuple[int, list[int]] = (TensorProto.FLOAT, [1, 3, 2]),
    s: tuple[int, list[int]] | None = None,
    p: tuple[int, list[int]] | None = None,
    opset: int = 23,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = ("y",),
    **attrs: Any,
) -> onnx.ModelProto:
    names = inputs or (("x", "c", "s") if p is None else ("x", "c", "s", "p"))
    node = helper.make_node(OP, list(names), list(outputs), name="n0", **attrs)
    vis = [helper.make_tensor_value_info("x", *x), helper.make_tensor_value_info("c", *c),
           helper.make_tensor_value_info("s", *(s or c))]  # fmt: skip
    if p is not None:
        vis.append(helper.make_tensor_value_info("p", *p))
    outs = [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    graph = helper.make_graph([node], "g", vis, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _const_ids(values: list[int]) -> onnx.ModelProto:
    node = helper.make_node(OP, ["x", "c", "s", "p"], ["y"], name="n0")
    vis = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 4]),
           helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 2]),
           helper.make_tensor_value_info("s", TensorProto.FLOAT, [4, 2])]  # fmt: skip
    graph = helper.make_graph([node], "g", vis, [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(np.array([values], np.int64), "p")])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


F, H, D, I32, I64 = (
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.DOUBLE,
    TensorProto.INT32,
    TensorProto.INT64,
)
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 22": (_raw(opset=22), r"\(opset 23\+, model opset 22\) takes X, cos_cache, sin_cache"),
    "two inputs": (_raw(inputs=("x", "c")), "takes X, cos_cache, sin_cache and an optional position_ids"),
    "no cos": (_raw(inputs=("x", "", "s")), "takes X, cos_cache, sin_cache"),
    "two outputs": (_raw(outputs=("y", "z")), "and one output Y"),
    "float64 X": (_raw(x=(D, [1, 2, 3, 4]), c=(D, [1, 3, 2])), r"takes a float16 or float32 X, got float64\[1, 2, 3, 4\]"),
    "int X": (_raw(x=(I32, [1, 2, 3, 4])), r"got int32\[1, 2, 3, 4\]"),
    "rank 2": (_raw(x=(F, [3, 4])), r"float X \[B, H, S, D\] or \[B, S, H \* D\], got float32\[3, 4\]"),
    "3-D no heads": (_raw(x=(F, [1, 3, 8])), r"num_heads that divides the hidden size of the 3-D X float32\[1, 3, 8\], got 0"),
    "3-D heads": (_raw(x=(F, [1, 3, 8]), num_heads=3), "got 3"),
    "interleaved 2": (_raw(interleaved=2), "takes interleaved 0 or 1"),
    "negative dim": (_raw(rotary_embedding_dim=-2), "rotary_embedding_dim >= 0, got 0, 0, -2"),
    "odd dim": (_raw(rotary_embedding_dim=3), "even rotary_embedding_dim at most the head size 4, got 3"),
    "dim past head": (_raw(rotary_embedding_dim=6), "got 6"),
    "cos width": (_raw(c=(F, [1, 3, 4])), r"cos_cache float32\[1, 3, 2\] for X float32\[1, 2, 3, 4\], got float32\[1, 3, 4\]"),
    "sin dtype": (_raw(s=(H, [1, 3, 2])), r"sin_cache float32\[1, 3, 2\] .* got float16\[1, 3, 2\]"),
    "cos with ids": (_raw(p=(I64, [1, 3])), r"cos_cache float32\[P, 2\]"),
    "ids dtype": (_raw(c=(F, [5, 2]), p=(I32, [1, 3])), r"int64 position_ids \[1, 3\] for X float32\[1, 2, 3, 4\], got int32\[1, 3\]"),
    "ids shape": (_raw(c=(F, [5, 2]), p=(I64, [3])), r"got int64\[3\]"),
    "constant ids": (_const_ids([0, 4, 1]), r"constant position_ids hold 4, not a row of the caches \[0, 4\)"),
    "negative ids": (_const_ids([0, 1, -1]), "constant position_ids hold -1"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value
