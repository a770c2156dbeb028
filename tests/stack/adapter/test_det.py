"""Det through the whole stack against onnxruntime and ONNX's reference, and its bad input as
typed errors naming the node.

float32 and float16 against onnxruntime (its CPU Det takes those two), float32 and float64
against ONNX's reference (onnxruntime has no float64 Det); models of opsets 11 and 22; batches of
every rank, 1 x 1 matrices, empty matrices (determinant 1) and empty batches; singular
matrices; a NaN in a matrix (NaN, as onnxruntime; ONNX's reference, LAPACK's, can return a
finite number); Det inside a graph (det(A B) = det(A) det(B)); a constant Det folded at import."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedTypeError
from stack.compiler import CompiledModel, OpType
from stack.compiler.jit import shared_runtime
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(56)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-3}
SHAPES = [(3, 3), (2, 4, 4), (2, 3, 5, 5), (1, 1), (6, 2, 2), (2, 1, 2, 3, 3)]


def det_model(x: np.ndarray, opset: int = 11) -> onnx.ModelProto:
    return node_model("Det", {"x": x}, opset)


def matrices(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("opset", [11, 22])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_det_matches_onnxruntime(shape: tuple[int, ...], dtype: Any, opset: int) -> None:
    x = matrices(shape, dtype)
    model = det_model(x, opset)
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    assert got.dtype == ref.dtype == dtype and got.shape == ref.shape == shape[:-2]
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_det_matches_the_onnx_reference(shape: tuple[int, ...], dtype: Any) -> None:
    x = matrices(shape, dtype)
    model = det_model(x, 22)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    got = stack_run(model, {"x": x})
    assert got.dtype == want.dtype == dtype and got.shape == want.shape == shape[:-2]
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("shape", [(3, 0, 0), (0, 0), (0, 3, 3), (2, 0, 4, 4)], ids=str)
def test_empty_matrices_are_one_and_empty_batches_empty_as_onnxruntime(
    shape: tuple[int, ...],
) -> None:
    x = np.zeros(shape, np.float32)
    model = det_model(x)
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    assert got.shape == ref.shape == shape[:-2]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, np.ones(shape[:-2], np.float32))


def test_known_and_special_determinants_match_onnxruntime() -> None:
    """A triangular matrix, a row swap, two singular ones, an infinity, and a NaN in each place
    (onnxruntime: NaN; ONNX's reference gives 0 for the first, LAPACK stepping over it)."""
    x = np.array([
        [[2, 5], [0, 3]], [[0, 1], [1, 0]], [[1, 2], [2, 4]], [[0, 0], [0, 0]],
        [[np.inf, 1], [1, 1]], [[np.nan, 1], [1, 1]], [[1, np.nan], [1, 1]],
        [[1, 1], [np.nan, 1]], [[1, 1], [1, np.nan]],
    ], np.float32)  # fmt: skip
    model = det_model(x)
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)  # NaNs in the same places
    np.testing.assert_allclose(got[:5], [6, -1, 0, 0, np.inf], rtol=1e-6, atol=1e-6)
    assert np.isnan(got[5:]).all()


def _graph_model(a: np.ndarray, b: np.ndarray) -> onnx.ModelProto:
    """det(A @ B), det(A) and det(B) of one batch of matrices."""
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["ab"], name="mm"),
        helper.make_node("Det", ["ab"], ["y"], name="det_ab"),
        helper.make_node("Det", ["a"], ["da"], name="det_a"),
        helper.make_node("Det", ["b"], ["db"], name="det_b"),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
              for n, v in (("a", a), ("b", b))]  # fmt: skip
    outputs = [helper.make_empty_tensor_value_info(n) for n in ("y", "da", "db")]
    graph = helper.make_graph(nodes, "det_of_product", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_det_inside_a_graph_is_the_product_of_the_determinants() -> None:
    a, b = matrices((3, 4, 4)), matrices((3, 4, 4))
    model = _graph_model(a, b)
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        out = compiled.run({"a": a, "b": b})
    finally:
        compiled.close()
    assert [n.op for n in import_model(model).nodes].count(OpType.DET) == 3
    np.testing.assert_allclose(out["y"], out["da"] * out["db"], rtol=1e-4, atol=1e-5)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for name, ref in zip(("y", "da", "db"), sess.run(None, {"a": a, "b": b}), strict=True):
        np.testing.assert_allclose(out[name], ref, rtol=1e-5, atol=1e-5)


def _folded_model(c: np.ndarray) -> onnx.ModelProto:
    """det of a constant batch, added to x."""
    nodes = [
        helper.make_node("Det", ["c"], ["d"], name="det"),
        helper.make_node("Add", ["x", "d"], ["y"], name="add"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(c.shape[:-2]))
    graph = helper.make_graph(nodes, "folded", [x], [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(c, "c")])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def test_a_constant_det_folds_at_import_as_onnxruntime() -> None:
    c = matrices((2, 3, 3, 3))
    model = _folded_model(c)
    assert OpType.DET not in [n.op for n in import_model(model).nodes]
    x = matrices((2, 3))
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def _raw(
    x: tuple[str, int, list[int]] = ("x", TensorProto.FLOAT, [3, 3]),
    opset: int = 11,
    inputs: tuple[str, ...] = ("x",),
    outputs: tuple[str, ...] = ("y",),
) -> onnx.ModelProto:
    node = helper.make_node("Det", list(inputs), list(outputs), name="n0")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*x)],
        [helper.make_empty_tensor_value_info(v) for v in outputs if v],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


F = TensorProto.FLOAT
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "not square": (_raw(("x", F, [2, 3, 4])), r"\(square trailing matrices\), got \[2, 3, 4\]"),
    "rank 1": (_raw(("x", F, [4])), r"got \[4\]"),
    "rank 0": (_raw(("x", F, [])), r"got \[\]"),
    "int32": (_raw(("x", TensorProto.INT32, [3, 3])), "float16, float32 or float64 X, got int32"),
    "int64": (_raw(("x", TensorProto.INT64, [2, 2, 2])), "got int64"),
    "bool": (_raw(("x", TensorProto.BOOL, [2, 2])), "got bool"),
    "uint8": (_raw(("x", TensorProto.UINT8, [2, 2])), "got uint8"),
    "opset 10": (_raw(opset=10), r"opset 11\+, model opset 10"),
    "two inputs": (_raw(inputs=("x", "x")), "takes one input and one output"),
    "no input": (_raw(inputs=("",)), "takes one input and one output"),
    "two outputs": (_raw(outputs=("y", "z")), "takes one input and one output"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == "Det", err.value


def test_a_bfloat16_input_is_refused_as_a_typed_error_naming_the_tensor() -> None:
    """ONNX's Det takes bfloat16 from opset 22; the IR has no bfloat16, so the graph input is
    refused before the node."""
    with pytest.raises(UnsupportedTypeError) as err:
        import_model(_raw(("x", TensorProto.BFLOAT16, [2, 2]), opset=22))
    assert err.value.node == "x"
