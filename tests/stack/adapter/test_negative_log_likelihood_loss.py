# ruff: noqa: E501 - the error table reads best one case per line
"""NegativeLogLikelihoodLoss through the whole stack against onnxruntime and ONNX's reference,
and its bad input as typed errors naming the node.

Every reduction (none, sum, mean), with and without weight, without ignore_index and with one
among the classes, a negative one and one past them, for k = 0, 1 and 3 trailing axes, against
onnxruntime (float32, opset 22); float16, float32 and float64 with int32 and int64 targets on
opsets 12, 13 and 22 against onnxruntime; float32 and float64 against ONNX's reference; a mean
over places all ignored (NaN, as both); the op after a LogSoftmax (onnxruntime's
SoftmaxCrossEntropyLoss); a constant loss folded at import; a target out of range at run time
(a fault naming the node) and in a constant (a ModelFormatError)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedTypeError
from stack.compiler import OpType
from stack.runtime.errors import ExecutionFaultError
from tests.stack.adapter.both import node_model, ort_run, stack_run

OP = "NegativeLogLikelihoodLoss"
RNG = np.random.default_rng(57)
TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 2e-3}
REDUCTIONS = ("none", "sum", "mean")
SHAPES = [(3, 5), (3, 5, 2), (2, 4, 3, 2, 2)]  # k = 0, 1, 3


def operands(
    shape: tuple[int, ...],
    weighted: bool,
    ii: int | None,
    dtype: Any = np.float32,
    tdtype: Any = np.int64,
) -> dict[str, np.ndarray]:
    """Log-probabilities, targets (a third of them ii when given) and the weight if asked."""
    x = np.log(RNG.random(shape) + 0.05).astype(dtype)
    t = RNG.integers(0, shape[1], (shape[0], *shape[2:]))
    if ii is not None:
        t = np.where(RNG.random(t.shape) < 1 / 3, ii, t)
    arrays = {"input": x, "target": t.astype(tdtype)}
    if weighted:
        arrays["weight"] = (RNG.random(shape[1]) + 0.5).astype(dtype)
    return arrays


def loss_model(arrays: dict[str, np.ndarray], opset: int = 22, **attrs: Any) -> onnx.ModelProto:
    return node_model(OP, arrays, opset, **attrs)


def attrs_of(reduction: str, ii: int | None) -> dict[str, Any]:
    return {"reduction": reduction, **({} if ii is None else {"ignore_index": ii})}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weight", "weight"])
@pytest.mark.parametrize("ii", [None, 1, -1, 10], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"k{len(s) - 2}")
def test_matches_onnxruntime(shape, ii, weighted, reduction) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, weighted, ii)
    model = loss_model(arrays, **attrs_of(reduction, ii))
    got, ref = stack_run(model, arrays), ort_run(model, arrays)
    assert got.dtype == ref.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [12, 13, 22])
@pytest.mark.parametrize("tdtype", [np.int32, np.int64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
def test_every_type_and_opset_matches_onnxruntime(dtype, tdtype, opset) -> None:  # type: ignore[no-untyped-def]
    for reduction in REDUCTIONS:
        arrays = operands((4, 6, 3), True, 2, dtype, tdtype)
        model = loss_model(arrays, opset, **attrs_of(reduction, 2))
        got, ref = stack_run(model, arrays), ort_run(model, arrays)
        assert got.dtype == ref.dtype == dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weight", "weight"])
@pytest.mark.parametrize("ii", [None, 0, -5], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_matches_the_onnx_reference(dtype, ii, weighted, reduction) -> None:  # type: ignore[no-untyped-def]
    arrays = operands((3, 5, 2, 3), weighted, ii, dtype)
    model = loss_model(arrays, **attrs_of(reduction, ii))
    (want,) = ReferenceEvaluator(model).run(None, arrays)
    got = stack_run(model, arrays)
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


def test_the_default_reduction_is_mean() -> None:
    arrays = operands((3, 5, 2), False, None)
    model = loss_model(arrays)
    got = stack_run(model, arrays)
    assert got.shape == ()
    np.testing.assert_allclose(got, ort_run(model, arrays), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weight", "weight"])
def test_a_mean_over_places_all_ignored_is_nan_as_both(weighted: bool) -> None:
    arrays = operands((2, 3), weighted, None)
    arrays["target"] = np.array([1, 1])
    model = loss_model(arrays, reduction="mean", ignore_index=1)
    got = stack_run(model, arrays)
    assert np.isnan(got) and np.isnan(ort_run(model, arrays))
    assert np.isnan(ReferenceEvaluator(model).run(None, arrays)[0])


def _sce_model(x: np.ndarray, t: np.ndarray, w: np.ndarray, opset: int) -> onnx.ModelProto:
    """LogSoftmax over the classes, then the loss: SoftmaxCrossEntropyLoss's function body."""
    nodes = [
        helper.make_node("LogSoftmax", ["x"], ["lp"], name="ls", axis=1),
        helper.make_node(OP, ["lp", "t", "w"], ["y"], name="nll", ignore_index=0),
    ]
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
              for n, v in (("x", x), ("t", t), ("w", w))]  # fmt: skip
    graph = helper.make_graph(nodes, "sce", inputs, [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _ort_sce(x: np.ndarray, t: np.ndarray, w: np.ndarray) -> np.ndarray:
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y"], ignore_index=0)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
              for n, v in (("x", x), ("t", t), ("w", w))]  # fmt: skip
    graph = helper.make_graph([node], "ort", inputs, [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return ort_run(model, {"x": x, "t": t, "w": w})


@pytest.mark.parametrize("opset", [13, 22])
def test_after_a_log_softmax_it_is_onnxruntime_softmax_cross_entropy(opset: int) -> None:
    x = RNG.standard_normal((4, 6, 3)).astype(np.float32)
    t, w = RNG.integers(0, 6, (4, 3)), (RNG.random(6) + 0.5).astype(np.float32)
    model = _sce_model(x, t, w, opset)
    assert OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS in [n.op for n in import_model(model).nodes]
    got = stack_run(model, {"x": x, "t": t, "w": w})
    np.testing.assert_allclose(got, _ort_sce(x, t, w), rtol=1e-5, atol=1e-6)


def _folded_model(x: np.ndarray, t: np.ndarray, w: np.ndarray) -> onnx.ModelProto:
    """The loss of constant operands (reduction none), added to z."""
    nodes = [
        helper.make_node(OP, ["c", "t", "w"], ["l"], name="nll", reduction="none", ignore_index=1),
        helper.make_node("Add", ["z", "l"], ["y"], name="add"),
    ]
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, list(t.shape))
    inits = [numpy_helper.from_array(v, n) for n, v in (("c", x), ("t", t), ("w", w))]
    graph = helper.make_graph(nodes, "folded", [z], [helper.make_empty_tensor_value_info("y")],
                              inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_constant_loss_folds_at_import_as_onnxruntime() -> None:
    arrays = operands((3, 5, 2), True, 1)
    model = _folded_model(arrays["input"], arrays["target"], arrays["weight"])
    assert OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS not in [n.op for n in import_model(model).nodes]
    z = RNG.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_allclose(stack_run(model, {"z": z}), ort_run(model, {"z": z}), rtol=1e-6)


def test_a_target_out_of_range_at_run_time_is_a_fault_naming_the_node() -> None:
    arrays = {"input": np.zeros((2, 3), np.float32), "target": np.array([0, 3])}
    with pytest.raises(ExecutionFaultError, match="target out of range for 3 classes") as err:
        stack_run(loss_model(arrays, 13), arrays)
    assert err.value.details["ops"] == ["n0"]


def _raw(
    x: tuple[int, list[int]] = (TensorProto.FLOAT, [3, 5]),
    t: tuple[int, list[int]] = (TensorProto.INT64, [3]),
    w: tuple[int, list[int]] | None = None,
    opset: int = 13,
    inputs: tuple[str, ...] | None = None,
    outputs: tuple[str, ...] = ("y",),
    **attrs: Any,
) -> onnx.ModelProto:
    names = inputs or (("x", "t") if w is None else ("x", "t", "w"))
    node = helper.make_node(OP, list(names), list(outputs), name="n0", **attrs)
    vis = [helper.make_tensor_value_info("x", *x), helper.make_tensor_value_info("t", *t)]
    if w is not None:
        vis.append(helper.make_tensor_value_info("w", *w))
    outs = [helper.make_empty_tensor_value_info(v) for v in outputs if v]
    graph = helper.make_graph([node], "g", vis, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _const_target(values: list[int], **attrs: Any) -> onnx.ModelProto:
    node = helper.make_node(OP, ["x", "t"], ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.array(values, np.int64), "t")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 11": (_raw(opset=11), r"\(opset 12\+, model opset 11\) takes input, target"),
    "one input": (_raw(inputs=("x",)), "takes input, target and an optional weight"),
    "no target": (_raw(inputs=("x", "", "t")), "takes input, target and an optional weight"),
    "two outputs": (_raw(outputs=("y", "z")), "and one output"),
    "int input": (_raw(x=(I32, [3, 5]), t=(I64, [3])), r"float64 input \[N, C, d1..dk\], got int32\[3, 5\]"),
    "rank 1": (_raw(x=(F, [5]), t=(I64, [])), r"got float32\[5\]"),
    "float target": (_raw(t=(F, [3])), r"int32 or int64 target \[3\] for input \[3, 5\], got float32\[3\]"),
    "uint8 target": (_raw(t=(TensorProto.UINT8, [3])), r"got uint8\[3\]"),
    "target shape": (_raw(x=(F, [3, 5, 2]), t=(I64, [3, 5])), r"target \[3, 2\] for input \[3, 5, 2\], got int64\[3, 5\]"),
    "weight shape": (_raw(w=(F, [3])), r"takes a float32 weight \[5\], got float32\[3\]"),
    "weight dtype": (_raw(w=(TensorProto.DOUBLE, [5])), r"got float64\[5\]"),
    "reduction": (_raw(reduction="max"), "reduction 'max' is not one of none, sum, mean"),
    "constant target": (_const_target([0, 5, 1]), r"constant target holds 5, not a class in \[0, 5\)"),
    "constant target ii": (_const_target([0, -1, 1], ignore_index=7), "constant target holds -1"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value


def test_a_constant_target_whose_places_out_of_range_are_ignored_imports() -> None:
    model = _const_target([2, 9, 9], ignore_index=9, reduction="sum")
    assert [n.op for n in import_model(model).nodes] == [OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS]
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(stack_run(model, {"x": x}), -x[0, 2], rtol=1e-6)


def test_a_bfloat16_input_is_refused_as_a_typed_error_naming_the_tensor() -> None:
    """ONNX's NegativeLogLikelihoodLoss takes bfloat16 from opset 22; the IR has no bfloat16,
    so the graph input is refused before the node."""
    with pytest.raises(UnsupportedTypeError) as err:
        import_model(_raw(x=(TensorProto.BFLOAT16, [3, 5]), opset=22))
    assert err.value.node == "x"
