# ruff: noqa: E501 - the error table reads best one case per line
"""SoftmaxCrossEntropyLoss through the whole stack against onnxruntime and ONNX's reference,
and its bad input as typed errors naming the node.

Every reduction (none, sum, mean), with and without weights, without ignore_index and with one
among the classes, a negative one and one past them, for k = 0, 1 and 3 trailing axes, with
and without the log_prob output, against onnxruntime (float32, opset 13); float16, float32 and
float64 with int32 and int64 labels on opsets 12 and 13 against onnxruntime; float32 and float64
against ONNX's reference, both outputs; a constant loss folded at import; a label out of range
at run time (a fault naming the node) and in a constant (a ModelFormatError)."""

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

OP = "SoftmaxCrossEntropyLoss"
RNG = np.random.default_rng(58)
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
    """Scores, labels (a third of them ii when given) and the weights if asked."""
    t = RNG.integers(0, shape[1], (shape[0], *shape[2:]))
    if ii is not None:
        t = np.where(RNG.random(t.shape) < 1 / 3, ii, t)
    arrays = {"scores": (RNG.standard_normal(shape) * 2).astype(dtype), "labels": t.astype(tdtype)}
    if weighted:
        arrays["weights"] = (RNG.random(shape[1]) + 0.5).astype(dtype)
    return arrays


def loss_model(
    arrays: dict[str, np.ndarray],
    opset: int = 13,
    log_prob: bool = False,
    consts: tuple[str, ...] = (),
    **attrs: Any,
) -> onnx.ModelProto:
    outs = ["y", "lp"] if log_prob else ["y"]
    node = helper.make_node(OP, list(arrays), outs, name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in arrays.items() if n not in consts]  # fmt: skip
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info(v) for v in outs],
                              [numpy_helper.from_array(arrays[n], n) for n in consts])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


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


def attrs_of(reduction: str, ii: int | None) -> dict[str, Any]:
    return {"reduction": reduction, **({} if ii is None else {"ignore_index": ii})}


def assert_close(got: list[np.ndarray], ref: list[np.ndarray], dtype: Any) -> None:
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype == dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("log_prob", [False, True], ids=["output", "log_prob"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weights", "weights"])
@pytest.mark.parametrize("ii", [None, 1, -1, 10], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"k{len(s) - 2}")
def test_matches_onnxruntime(shape, ii, weighted, reduction, log_prob) -> None:  # type: ignore[no-untyped-def]
    arrays = operands(shape, weighted, ii)
    model = loss_model(arrays, log_prob=log_prob, **attrs_of(reduction, ii))
    assert_close(stack_run(model, arrays), ort_run(model, arrays), np.float32)


@pytest.mark.parametrize("opset", [12, 13])
@pytest.mark.parametrize("tdtype", [np.int32, np.int64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64], ids=lambda d: d.__name__)
def test_every_type_and_opset_matches_onnxruntime(dtype, tdtype, opset) -> None:  # type: ignore[no-untyped-def]
    for reduction in REDUCTIONS:
        arrays = operands((4, 6, 3), True, 2, dtype, tdtype)
        model = loss_model(arrays, opset, log_prob=True, **attrs_of(reduction, 2))
        assert_close(stack_run(model, arrays), ort_run(model, arrays), dtype)


@pytest.mark.parametrize("log_prob", [False, True], ids=["output", "log_prob"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weights", "weights"])
@pytest.mark.parametrize("ii", [None, 0, -5], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_matches_the_onnx_reference(dtype, ii, weighted, reduction, log_prob) -> None:  # type: ignore[no-untyped-def]
    arrays = operands((3, 5, 2, 3), weighted, ii, dtype)
    model = loss_model(arrays, log_prob=log_prob, **attrs_of(reduction, ii))
    want = ReferenceEvaluator(model).run(None, arrays)
    assert_close(stack_run(model, arrays), [np.asarray(w) for w in want], dtype)


def test_the_default_reduction_is_mean_and_log_prob_is_fresh_when_not_asked() -> None:
    arrays = operands((3, 5, 2), False, None)
    model = loss_model(arrays)
    (node,) = import_model(model).nodes
    assert node.op is OpType.SOFTMAX_CROSS_ENTROPY_LOSS and len(node.outputs) == 2
    (got,) = stack_run(model, arrays)
    assert got.shape == ()
    np.testing.assert_allclose(got, ort_run(model, arrays)[0], rtol=1e-6)


def test_a_constant_loss_folds_at_import_as_onnxruntime() -> None:
    arrays = operands((3, 5, 2), True, 1)
    model = loss_model(
        arrays, log_prob=True, consts=tuple(arrays), reduction="none", ignore_index=1
    )
    assert import_model(model).nodes == ()
    assert_close(stack_run(model, {}), ort_run(model, {}), np.float32)


def test_a_label_out_of_range_at_run_time_is_a_fault_naming_the_node() -> None:
    arrays = {"scores": np.zeros((2, 3), np.float32), "labels": np.array([0, 3])}
    with pytest.raises(ExecutionFaultError, match="target out of range for 3 classes") as err:
        stack_run(loss_model(arrays), arrays)
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


def _const_labels(values: list[int], **attrs: Any) -> onnx.ModelProto:
    node = helper.make_node(OP, ["x", "t"], ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.array(values, np.int64), "t")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
ERRORS: dict[str, tuple[onnx.ModelProto, str]] = {
    "opset 11": (_raw(opset=11), r"\(opset 12\+, model opset 11\) takes scores, labels"),
    "one input": (_raw(inputs=("x",)), "takes scores, labels and optional weights"),
    "no labels": (_raw(inputs=("x", "", "t")), "takes scores, labels and optional weights"),
    "three outputs": (_raw(outputs=("y", "z", "q")), "and output and an optional log_prob"),
    "no output": (_raw(outputs=("", "z")), "and output and an optional log_prob"),
    "int scores": (_raw(x=(I32, [3, 5]), t=(I64, [3])), r"float64 scores \[N, C, d1..dk\], got int32\[3, 5\]"),
    "rank 1": (_raw(x=(F, [5]), t=(I64, [])), r"got float32\[5\]"),
    "float labels": (_raw(t=(F, [3])), r"int32 or int64 labels \[3\] for scores \[3, 5\], got float32\[3\]"),
    "labels shape": (_raw(x=(F, [3, 5, 2]), t=(I64, [3, 5])), r"labels \[3, 2\] for scores \[3, 5, 2\], got int64\[3, 5\]"),
    "weights shape": (_raw(w=(F, [3])), r"takes float32 weights \[5\], got float32\[3\]"),
    "weights dtype": (_raw(w=(TensorProto.DOUBLE, [5])), r"got float64\[5\]"),
    "reduction": (_raw(reduction="max"), "reduction 'max' is not one of none, sum, mean"),
    "constant labels": (_const_labels([0, 5, 1]), r"constant labels hold 5, not a class in \[0, 5\)"),
    "constant labels ii": (_const_labels([0, -1, 1], ignore_index=7), "constant labels hold -1"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_model_format_error_naming_the_node(case: str) -> None:
    model, message = ERRORS[case]
    with pytest.raises(ModelFormatError, match=message) as err:
        import_model(model)
    assert type(err.value) is ModelFormatError
    assert err.value.node == "n0" and err.value.op == OP, err.value


def test_an_omitted_log_prob_name_is_a_fresh_value() -> None:
    model = _raw(outputs=("y", ""))
    (node,) = import_model(model).nodes
    assert node.outputs[0] == "y" and node.outputs[1]
