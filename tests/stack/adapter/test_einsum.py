# ruff: noqa: E501 - the case tables read best one case per line
"""Einsum through the whole stack against onnxruntime and ONNX's reference, and its bad input
as typed errors naming the node.

Matrix and batched products, transposes, diagonals and traces, sums over an axis, outer
products, ellipsis broadcasting, implicit outputs and three operands; float32 and float64
against both, int32 and int64 exactly against onnxruntime; spaces in the equation; an NHWC
activation feeding an Einsum; Einsum inside a graph; a constant Einsum folded at import."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError
from stack.compiler import OpType
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(60)
TOL = {np.float32: 1e-5, np.float64: 1e-12}

#: (equation, input shapes)
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(5,), (5,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...ij", [(2, 3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba", [(3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("nchw,cd->ndhw", [(2, 3, 4, 5), (3, 6)]),
]
IDS = [e for e, _ in CASES]


def model(
    equation: str, xs: list[np.ndarray], opset: int = 12, consts: tuple = ()
) -> onnx.ModelProto:
    arrays = {f"x{i}": x for i, x in enumerate(xs)}
    return node_model("Einsum", arrays, opset, consts, equation=equation)


def operands(shapes: list[tuple[int, ...]], dtype: Any) -> list[np.ndarray]:
    if np.dtype(dtype).kind == "i":
        return [RNG.integers(-9, 10, s).astype(dtype) for s in shapes]
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def feeds(xs: list[np.ndarray]) -> dict[str, np.ndarray]:
    return {f"x{i}": x for i, x in enumerate(xs)}


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64], ids=lambda d: d.__name__
)
@pytest.mark.parametrize(("equation", "shapes"), CASES, ids=IDS)
def test_einsum_matches_onnxruntime(equation: str, shapes: list, dtype: Any) -> None:
    xs = operands(shapes, dtype)
    m = model(equation, xs)
    got, ref = stack_run(m, feeds(xs)), ort_run(m, feeds(xs))
    assert got.dtype == ref.dtype == dtype and got.shape == ref.shape
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize(("equation", "shapes"), CASES, ids=IDS)
def test_einsum_matches_the_onnx_reference(equation: str, shapes: list, dtype: Any) -> None:
    xs = operands(shapes, dtype)
    m = model(equation, xs)
    (want,) = ReferenceEvaluator(m).run(None, feeds(xs))
    got = stack_run(m, feeds(xs))
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


def test_ellipses_of_different_widths_broadcast_as_the_onnx_reference() -> None:
    """onnxruntime's shape inference wants every ellipsis to stand for as many axes; ONNX's
    reference (NumPy's) and the stack broadcast them right-aligned, as the spec describes."""
    xs = operands([(2, 1, 3, 4), (5, 4, 2)], np.float64)
    m = model("...ij,...jk->...ik", xs)
    (want,) = ReferenceEvaluator(m).run(None, feeds(xs))
    got = stack_run(m, feeds(xs))
    assert got.shape == want.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_spaces_in_the_equation_are_ignored() -> None:
    xs = operands([(3, 4), (4, 2)], np.float32)
    m = model(" i j , j k -> i k ", xs)
    np.testing.assert_allclose(stack_run(m, feeds(xs)), xs[0] @ xs[1], rtol=1e-5)


def test_einsum_inside_a_graph_after_a_conv() -> None:
    """A 4-D activation from a Conv (which the compiler may keep NHWC) contracted over its
    channels by Einsum, then a MatMul: the equation names the logical NCHW axes."""
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    d = RNG.standard_normal((3, 4)).astype(np.float32)
    m2 = RNG.standard_normal((5, 2)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Einsum", ["c", "d"], ["e"], equation="nchw,cd->ndhw"),
        helper.make_node("MatMul", ["e", "m2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(a, n) for n, a in (("w", w), ("d", d), ("m2", m2))],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert OpType.EINSUM in [n.op for n in import_model(m).nodes]
    np.testing.assert_allclose(stack_run(m, {"x": x}), ort_run(m, {"x": x}), rtol=1e-4, atol=1e-4)


def test_a_constant_einsum_folds_at_import_as_onnxruntime() -> None:
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 3)).astype(np.float32)
    x = RNG.standard_normal((3,)).astype(np.float32)
    nodes = [
        helper.make_node("Einsum", ["a", "b"], ["c"], equation="ij,jk->ik"),
        helper.make_node("Einsum", ["c", "x"], ["y"], equation="ii,i->i"),
    ]
    graph = helper.make_graph(
        nodes, "folded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(a, "a"), numpy_helper.from_array(b, "b")],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    assert [n.op for n in import_model(m).nodes].count(OpType.EINSUM) == 1
    np.testing.assert_allclose(stack_run(m, {"x": x}), ort_run(m, {"x": x}), rtol=1e-5, atol=1e-6)


F = np.ones((2, 3), np.float32)
BAD = {
    "opset": (model("ij->ji", [F], opset=11), "opset 12+"),
    "no equation": (node_model("Einsum", {"x0": F}, 12), "needs its equation attribute"),
    "term count": (model("ij,jk->ik", [F]), "has 2 input terms for 1 inputs"),
    "digit": (model("i1->i", [F]), "term 'i1' is not letters"),
    "two ellipses": (model("...i...->i", [F]), "at most one '...'"),
    "repeated output": (model("ij->ii", [F]), "repeats a letter"),
    "unknown output": (model("ij->k", [F]), "names one no input has"),
    "rank": (model("ijk->i", [F]), "term 'ijk' does not fit input 0"),
    "diagonal sizes": (model("ii->i", [F]), "letter 'i' has size 3 on input 0"),
    "sizes clash": (model("ij,ij->i", [F, np.ones((2, 4), np.float32)]), "letter 'j' has size 4 on input 1"),
    "ellipsis clash": (model("...i,...i->...i", [np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)]), "do not broadcast"),
    "mixed types": (model("ij,ij->ij", [F, F.astype(np.float64)]), "input 1 is float64, not float32"),
    "int8": (model("ij->ji", [F.astype(np.int8)]), "takes one or more inputs of float32"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    m, message = BAD[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(m)
    assert type(err.value) is ModelFormatError
    assert "n0" in str(err.value)
