"""Models run through onnxruntime and through the whole stack, for the adapter tests that
compare the two: one-input ones (``x`` → ``y``: :func:`reference`, :func:`ours`), and any
named inputs (:func:`both`, or each side alone: :func:`ort_run`, :func:`stack_run`); every
output in the model's order, for those with several or another name (:func:`ort_outputs`,
:func:`stack_outputs`, and ONNX's reference, :func:`reference_outputs`, for ops onnxruntime
does not run); :func:`node_model` builds a one-node model, :func:`scatter_model` the scatter
ops'."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.compiler import CompiledModel
from stack.compiler.jit import shared_runtime


def reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """``y`` as onnxruntime computes it on the CPU."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x})
    return np.asarray(y)


def ours(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """``y`` as the stack computes it: imported, compiled, run on the shared runtime."""
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run({"x": x})["y"]
    finally:
        compiled.close()


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """``y`` as onnxruntime computes it on the CPU, for the named inputs ``feeds``."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, feeds)
    return np.asarray(y)


def stack_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """``y`` as the stack computes it, for the named inputs ``feeds``."""
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        return compiled.run(feeds)["y"]
    finally:
        compiled.close()


def ort_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Every output as onnxruntime computes it on the CPU, in the model's order."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def reference_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Every output as ONNX's reference implementation computes it, in the model's order."""
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def stack_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Every output as the stack computes it, in the model's order."""
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        out = compiled.run(feeds)
        return [out[v.name] for v in model.graph.output]
    finally:
        compiled.close()


def both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``y`` from onnxruntime and from the stack, for the named inputs ``feeds``."""
    return ort_run(model, feeds), stack_run(model, feeds)


def node_model(
    op: str,
    arrays: dict[str, np.ndarray],
    opset: int,
    consts: tuple[str, ...] = (),
    **attrs: Any,
) -> onnx.ModelProto:
    """One ``op`` node of the inputs named in ``arrays`` (in order) → ``y``; those named in
    ``consts`` are initializers instead of graph inputs."""
    node = helper.make_node(op, list(arrays), ["y"], name="n0", **attrs)
    inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in arrays.items()
        if n not in consts
    ]
    graph = helper.make_graph(
        [node],
        "g",
        inputs,
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(arrays[n], n) for n in consts],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def scatter_model(
    op: str,
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    opset: int = 18,
    consts: tuple[str, ...] = (),
    **attrs: Any,
) -> onnx.ModelProto:
    """One ``op`` node (ScatterND, ScatterElements) of inputs ``x``, ``i``, ``u`` → ``y``; the
    inputs named in ``consts`` are initializers instead of graph inputs."""
    return node_model(op, {"x": data, "i": indices, "u": updates}, opset, consts, **attrs)
